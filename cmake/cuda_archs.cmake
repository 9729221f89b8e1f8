# CUDA architectures, decided before project() so that the first configure already uses them: the user's
# CMAKE_CUDA_ARCHITECTURES or CUDAARCHS if given; else `native` when a GPU is visible; else every real
# architecture from Turing (sm_75) up that the installed nvcc can compile, Blackwell included (releases,
# run_all.sh), or with MH_ARCH_CLASSES=ON one of each launch-bounds class of harness/arch.hpp
# (tests/run.sh and CI; cmake/arch_classes.cpp says which). tests/compile_all_archs.sh checks them all.
option(MH_ARCH_CLASSES "without a GPU: compile one architecture per launch-bounds class, not every one nvcc lists" OFF)
set(_mh_mode all)
if(MH_ARCH_CLASSES)
  set(_mh_mode classes)
endif()

# A list this file chose for the other mode is chosen again, so that a build folder of tests/run.sh turns
# back into a full one with -DMH_ARCH_CLASSES=OFF; a list the user gave is never touched.
if(DEFINED CACHE{_MH_ARCHS_CHOSEN} AND "$CACHE{CMAKE_CUDA_ARCHITECTURES}" STREQUAL "${_MH_ARCHS_CHOSEN}"
   AND NOT _MH_ARCHS_MODE STREQUAL _mh_mode)
  unset(CMAKE_CUDA_ARCHITECTURES CACHE)
endif()

function(_mh_nvcc_archs nvcc out)
  execute_process(COMMAND ${nvcc} --list-gpu-code OUTPUT_VARIABLE codes ERROR_QUIET)
  string(REGEX MATCHALL "sm_[0-9]+" codes "${codes}")
  set(archs "")
  foreach(c IN LISTS codes)
    string(REPLACE "sm_" "" a "${c}")
    if(a GREATER_EQUAL 75)
      list(APPEND archs ${a})
    endif()
  endforeach()
  list(REMOVE_DUPLICATES archs)
  if(NOT archs)
    message(FATAL_ERROR "no GPU visible and `${nvcc} --list-gpu-code` listed no sm_75 or newer: "
                        "pass -DCMAKE_CUDA_ARCHITECTURES=...")
  endif()
  set(${out} ${archs} PARENT_SCOPE)
endfunction()

# One architecture per launch-bounds class out of `archs`, by cmake/arch_classes.cpp compiled against
# harness/arch.hpp (so that the classes are written once, there).
function(_mh_class_archs nvcc archs out)
  list(SORT archs COMPARE NATURAL)
  set(exe ${CMAKE_BINARY_DIR}/mh_arch_classes)
  execute_process(COMMAND ${nvcc} -std=c++17 -x c++ -I${CMAKE_CURRENT_SOURCE_DIR}
                          ${CMAKE_CURRENT_SOURCE_DIR}/cmake/arch_classes.cpp -o ${exe}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "MH_ARCH_CLASSES: cmake/arch_classes.cpp did not compile:\n${err}")
  endif()
  execute_process(COMMAND ${exe} ${archs} OUTPUT_VARIABLE picked RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR picked STREQUAL "")
    message(FATAL_ERROR "MH_ARCH_CLASSES: ${exe} picked no architecture out of ${archs}")
  endif()
  set(${out} ${picked} PARENT_SCOPE)
endfunction()

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  execute_process(COMMAND nvidia-smi -L OUTPUT_VARIABLE _gpus RESULT_VARIABLE _smi ERROR_QUIET)
  if(_smi EQUAL 0 AND _gpus MATCHES "GPU [0-9]")
    set(_archs native)
  else()
    find_program(_mh_nvcc NAMES nvcc HINTS ENV CUDACXX ENV CUDA_PATH PATH_SUFFIXES bin PATHS /usr/local/cuda/bin)
    if(DEFINED ENV{CUDACXX})
      set(_mh_nvcc $ENV{CUDACXX})
    endif()
    _mh_nvcc_archs(${_mh_nvcc} _archs)
    if(MH_ARCH_CLASSES)
      _mh_class_archs(${_mh_nvcc} "${_archs}" _archs)
    endif()
  endif()
  set(CMAKE_CUDA_ARCHITECTURES ${_archs} CACHE STRING "CUDA architectures")
  set(_MH_ARCHS_CHOSEN "${_archs}" CACHE INTERNAL "the CUDA architectures cmake/cuda_archs.cmake chose")
  set(_MH_ARCHS_MODE ${_mh_mode} CACHE INTERNAL "the MH_ARCH_CLASSES mode they were chosen in")
endif()

# CUDA architectures, decided before project() so that the first configure already uses them: the user's
# CMAKE_CUDA_ARCHITECTURES or CUDAARCHS if given; else by MH_ARCH_SET:
#   default: `native` when a GPU is visible, else every real architecture from Turing (sm_75) up that the
#            installed nvcc can compile, Blackwell included (releases, run_all.sh);
#   classes: `native` when a GPU is visible, else one of each launch-bounds class of harness/arch.hpp
#            (tests/run.sh and CI; cmake/arch_classes.cpp says which);
#   nvcc:    every architecture nvcc lists, GPU or not (tests/compile_all_archs.sh).
set(MH_ARCH_SET default CACHE STRING "CUDA architectures when none are given: default, classes or nvcc")
set_property(CACHE MH_ARCH_SET PROPERTY STRINGS default classes nvcc)
if(NOT MH_ARCH_SET MATCHES "^(default|classes|nvcc)$")
  message(FATAL_ERROR "MH_ARCH_SET='${MH_ARCH_SET}': not one of default, classes, nvcc")
endif()

# A list this file chose under another MH_ARCH_SET is chosen again, so that a build folder of tests/run.sh
# turns back into a full one with -DMH_ARCH_SET=default; a list the user gave is never touched.
if(DEFINED CACHE{_MH_ARCHS_CHOSEN} AND "$CACHE{CMAKE_CUDA_ARCHITECTURES}" STREQUAL "${_MH_ARCHS_CHOSEN}"
   AND NOT _MH_ARCHS_SET STREQUAL MH_ARCH_SET)
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
    message(FATAL_ERROR "`${nvcc} --list-gpu-code` listed no sm_75 or newer: "
                        "pass -DCMAKE_CUDA_ARCHITECTURES=...")
  endif()
  set(${out} ${archs} PARENT_SCOPE)
endfunction()

# One architecture per launch-bounds class out of `archs`, by cmake/arch_classes.cpp compiled against
# harness/arch.hpp (so that the classes are written once, there).
function(_mh_class_archs nvcc archs out)
  list(SORT archs COMPARE NATURAL)
  set(exe ${CMAKE_BINARY_DIR}/CMakeFiles/mh_arch_classes)
  execute_process(COMMAND ${nvcc} -std=c++17 -x c++ -I${CMAKE_CURRENT_SOURCE_DIR}
                          ${CMAKE_CURRENT_SOURCE_DIR}/cmake/arch_classes.cpp -o ${exe}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "MH_ARCH_SET=classes: cmake/arch_classes.cpp did not compile:\n${err}")
  endif()
  execute_process(COMMAND ${exe} ${archs} OUTPUT_VARIABLE picked RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR picked STREQUAL "")
    message(FATAL_ERROR "MH_ARCH_SET=classes: ${exe} picked no architecture out of ${archs}")
  endif()
  set(${out} ${picked} PARENT_SCOPE)
endfunction()

if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  execute_process(COMMAND nvidia-smi -L OUTPUT_VARIABLE _gpus RESULT_VARIABLE _smi ERROR_QUIET)
  if(_smi EQUAL 0 AND _gpus MATCHES "GPU [0-9]" AND NOT MH_ARCH_SET STREQUAL "nvcc")
    set(_archs native)
  else()
    find_program(_mh_nvcc NAMES nvcc HINTS ENV CUDACXX ENV CUDA_PATH PATH_SUFFIXES bin PATHS /usr/local/cuda/bin)
    if(DEFINED ENV{CUDACXX})
      set(_mh_nvcc $ENV{CUDACXX})
    endif()
    _mh_nvcc_archs(${_mh_nvcc} _archs)
    if(MH_ARCH_SET STREQUAL "classes")
      _mh_class_archs(${_mh_nvcc} "${_archs}" _archs)
    endif()
  endif()
  set(CMAKE_CUDA_ARCHITECTURES ${_archs} CACHE STRING "CUDA architectures")
  set(_MH_ARCHS_CHOSEN "${_archs}" CACHE INTERNAL "the CUDA architectures cmake/cuda_archs.cmake chose")
  set(_MH_ARCHS_SET ${MH_ARCH_SET} CACHE INTERNAL "the MH_ARCH_SET they were chosen under")
endif()

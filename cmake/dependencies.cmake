# Google Benchmark and GoogleTest: the system packages when present, else fetched sources.
include(FetchContent)

find_package(benchmark QUIET)
if(NOT benchmark_FOUND)
  message(STATUS "Google Benchmark not found: fetching v1.8.3")
  set(BENCHMARK_ENABLE_TESTING OFF CACHE BOOL "" FORCE)
  set(BENCHMARK_ENABLE_GTEST_TESTS OFF CACHE BOOL "" FORCE)
  FetchContent_Declare(googlebenchmark
    URL https://github.com/google/benchmark/archive/refs/tags/v1.8.3.tar.gz)
  FetchContent_MakeAvailable(googlebenchmark)
endif()

find_package(GTest QUIET)
if(NOT GTest_FOUND)
  message(STATUS "GoogleTest not found: fetching v1.14.0")
  set(INSTALL_GTEST OFF CACHE BOOL "" FORCE)
  FetchContent_Declare(googletest
    URL https://github.com/google/googletest/archive/refs/tags/v1.14.0.tar.gz)
  FetchContent_MakeAvailable(googletest)
endif()

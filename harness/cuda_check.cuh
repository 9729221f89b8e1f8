// Error checks that name the failing call, the file and the line.
// Errors throw mh::CudaError: GTest reports it as a test failure, and the benchmark
// runner's main turns it into one line on stderr and exit code 1.
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace mh {

struct CudaError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throw_cuda_error(cudaError_t err, const char* call, const char* file, int line) {
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                  cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")");
}

// A launch fails in two ways: at launch (bad configuration) and while running (a fault).
// The second is only seen at the next synchronization, which the timers do.
inline void check_launch(const char* kernel, const char* file, int line) {
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw_cuda_error(err, (std::string("launch of ") + kernel).c_str(), file, line);
}

}  // namespace mh

#define CUDA_CHECK(call)                                                   \
  do {                                                                     \
    cudaError_t mh_err_ = (call);                                          \
    if (mh_err_ != cudaSuccess) ::mh::throw_cuda_error(mh_err_, #call, __FILE__, __LINE__); \
  } while (0)

// Use right after every <<<...>>>: CUDA_CHECK_LAUNCH("kernel_name").
#define CUDA_CHECK_LAUNCH(kernel) ::mh::check_launch(kernel, __FILE__, __LINE__)

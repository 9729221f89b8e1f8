// cuBLAS SGEMM in strict FP32 for the same row-major problems, with a checked RAII handle.
#pragma once
#include <cublas_v2.h>

#include <algorithm>
#include <cstdlib>
#include <string>

#include "gemm/gemm.cuh"

namespace mh {

[[noreturn]] inline void throw_cublas_error(cublasStatus_t st, const char* call, const char* file, int line) {
  throw CudaError(std::string(file) + ":" + std::to_string(line) + ": " + call + " failed: " +
                  cublasGetStatusName(st) + " (" + cublasGetStatusString(st) + ")");
}

}  // namespace mh

#define CUBLAS_CHECK(call)                                                                     \
  do {                                                                                         \
    cublasStatus_t mh_st_ = (call);                                                            \
    if (mh_st_ != CUBLAS_STATUS_SUCCESS) ::mh::throw_cublas_error(mh_st_, #call, __FILE__, __LINE__); \
  } while (0)

namespace mh::gemm {

// CUBLAS_PEDANTIC_MATH: SGEMM computes with CUBLAS_COMPUTE_32F_PEDANTIC, "standard arithmetic and exact
// specified internal storage format": IEEE FP32 products and sums, never TF32 tensor cores nor BF16x9
// emulation. CUBLAS_DEFAULT_MATH is also FP32 for SGEMM today, but leaves cuBLAS free to honour
// process-wide switches (NVIDIA_TF32_OVERRIDE, the emulation variables); pedantic makes FP32 the contract.
// Belt and braces: tests/gpu/test_gemm.cu checks cuBLAS against fp64 at K = 1024 with a tolerance that
// a TF32 result fails (and shows that it does), and the benchmarks' cross-check would flag TF32 on the
// shapes with K <= 512 (gemm/accuracy.hpp).
constexpr cublasMath_t kCublasMath = CUBLAS_PEDANTIC_MATH;

// The "cublas_math" JSON context value, with NVIDIA_TF32_OVERRIDE's value when the variable is set.
inline std::string cublas_math_context() {
  std::string s = "CUBLAS_PEDANTIC_MATH";
  if (const char* v = std::getenv("NVIDIA_TF32_OVERRIDE")) s += std::string("; NVIDIA_TF32_OVERRIDE=") + v;
  return s;
}

class CublasHandle {
 public:
  explicit CublasHandle(cublasMath_t math = kCublasMath) {
    CUBLAS_CHECK(cublasCreate(&h_));
    const cublasStatus_t st = cublasSetMathMode(h_, math);
    if (st != CUBLAS_STATUS_SUCCESS) {
      cublasDestroy(h_);
      throw_cublas_error(st, "cublasSetMathMode(h_, math)", __FILE__, __LINE__);
    }
  }
  ~CublasHandle() { cublasDestroy(h_); }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  operator cublasHandle_t() const { return h_; }

 private:
  cublasHandle_t h_{};
};

// cuBLAS is column-major, and a row-major matrix is its transpose in column-major. So row-major
// C = A B is column-major C^T = B^T A^T: pass B first, swap M and N, and every leading dimension is a
// row length (N, K, N). Runs on the handle's stream (the default stream, as run_timed's events).
inline void cublas_sgemm(cublasHandle_t h, const Gemm& g) {
  CUBLAS_CHECK(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, g.N, g.M, g.K, &g.alpha, g.B, std::max(g.N, 1), g.A,
                           std::max(g.K, 1), &g.beta, g.C, std::max(g.N, 1)));
}

}  // namespace mh::gemm

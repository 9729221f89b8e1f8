// cuBLAS BF16, the ladder's reference: cublasGemmEx with BF16 A and B, FP32 C, CUBLAS_COMPUTE_32F (FP32
// accumulation, never the reduced-precision _FAST_ compute types), on a handle in CUBLAS_DEFAULT_MATH (the
// suite's strict-FP32 CUBLAS_PEDANTIC_MATH may keep GemmEx off the tensor cores).
#pragma once
#include <algorithm>

#include "gemm/cublas.cuh"
#include "gemm/tc_gemm.cuh"

namespace mh::gemm {

constexpr cublasMath_t kTcCublasMath = CUBLAS_DEFAULT_MATH;
inline const char* tc_cublas_context() { return "cublasGemmEx, CUBLAS_DEFAULT_MATH, CUBLAS_COMPUTE_32F, BF16 A/B, FP32 C"; }

// Row-major C = A B is column-major C^T = B^T A^T. Our B (column-major K x N, ld K) read as column-major
// is K x N, so op T gives B^T (N x K); our row-major A (ld K) read as column-major is A^T (K x M), op N.
// cuBLAS's "TN" case: both operands K-major, as in the kernels. Runs on the handle's stream (the default).
inline void cublas_bf16(cublasHandle_t h, const TcGemm& g) {
  const float one = 1.f, zero = 0.f;
  CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, g.N, g.M, g.K, &one, g.B, CUDA_R_16BF, std::max(g.K, 1), g.A,
                            CUDA_R_16BF, std::max(g.K, 1), &zero, g.C, CUDA_R_32F, std::max(g.N, 1), CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
}

}  // namespace mh::gemm

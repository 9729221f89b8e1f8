// Verification of the BF16 ladder, shared by gemm/bench_tc_gemm.cu and tests/gpu/test_tc_gemm.cu: random
// BF16 inputs, a NaN-poisoned FP32 output, an FP64 reference of the BF16 inputs (cuBLAS DGEMM on the device
// for benchmark sizes, the CPU for the tests), and gemm/verify.cuh's checker and metric (|C - ref| over
// sum_k |A||B|, gemm/accuracy.hpp).
//
// Tolerance. A product of two BF16 (8-bit significands) is exact in FP32 (16 bits), so the only errors are
// the FP32 additions of the K products. Tensor cores add a group of m products and the accumulator at once,
// aligning every addend to the largest one and truncating (Fasi, Higham, Mikaitis, Pranesh, "Numerical
// behavior of NVIDIA tensor cores", PeerJ CS 2021): each addend then loses less than one unit in the last
// place of the largest, 2^-23 of it: at most (m + 1) 2^-23 max|addend| per group of m, and the largest
// addend (a product or the running sum) is at most the element's scale sum_k |A||B|. Over K / m groups that
// is (m + 1) / m K 2^-23 <= 2K 2^-23 of the scale for any m >= 1: 2K truncations of relative size 2^-23,
// and with the second-order terms the worst-case bound (Higham's gamma_n, of the truncation unit 2^-23):
//   tolerance(K) = gamma_2K = 2K 2^-23 / (1 - 2K 2^-23)          (9.8e-4 at K = 4096, 1.5e-5 at K = 64).
// Worst case, not probabilistic: truncation errors are biased, so the random-walk bound of the FP32 ladder
// does not apply. It catches what the FP32 ladder's does at small K (the GPU tests run K <= 1000): a
// dropped 16-deep slice (err ~ 5 / K), a wrong fragment row or column (err ~ 1 / sqrt(K)), an unwritten
// element (NaN), a result rounded to BF16 (err ~ 2^-9 |C| / scale).
#pragma once
#include <cstdint>

#include "gemm/tc_gemm.cuh"
#include "gemm/verify.cuh"
#include "harness/device_buffer.cuh"

namespace mh::gemm {

inline double tc_tolerance(int K) {
  const double n_u = 2.0 * K * 0x1p-23;
  return n_u / (1 - n_u);
}

// One shape's device data: A (M x K row-major) and B (K x N column-major) uniform in [-1, 1], rounded to
// BF16 (gemm/verify.cuh's fill_uniform, then round to nearest), seeded by the shape; the FP32 output C.
struct TcProblem {
  TcProblem(int M, int N, int K);
  int M, N, K;
  DeviceBuffer<bf16> A, B;
  DeviceBuffer<float> C;
  // Poisons C with NaN (every byte 0xFF) and returns the call: an element no kernel writes stays NaN.
  TcGemm prepare();
};

// Device memory the benchmark holds at its peak, while the device reference exists: A, B, C, the
// reference's value and scale (FP64) and A, B widened to FP64.
inline size_t tc_device_bytes(int M, int N, int K) {
  const double mk = double(M) * K, nk = double(N) * K, mn = double(M) * N;
  return static_cast<size_t>((2 + 8) * (mk + nk) + (4 + 16) * mn);
}

// FP64 reference of the BF16 inputs: value = A B and scale = |A||B| by two cuBLAS DGEMMs of the inputs
// widened to FP64 (exact), on a handle in CUBLAS_PEDANTIC_MATH (no emulation); tolerance tc_tolerance(K).
Reference<double> tc_device_reference(const TcProblem& p, cublasHandle_t pedantic);
// The same on the CPU (gemm/accuracy.hpp's reference_gemm), for test sizes.
Reference<double> tc_host_reference(const TcProblem& p);

}  // namespace mh::gemm

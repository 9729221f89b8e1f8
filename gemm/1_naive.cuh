// Kernel 1, naive: one thread per element of C, threadIdx.x -> row, threadIdx.y -> column (32x32 blocks).
// A warp is 32 consecutive threadIdx.x: 32 rows of C in one column. Per step k its loads are
//   A[row][k]: 32 rows, K floats apart -> 32 sectors per request (nothing coalesces);
//   B[k][col]: one address -> broadcast;
// and its stores to C are N floats apart: 32 sectors each. (The seed worklog says B coalesces here;
// it does not: along a warp only the row changes.)
// Included once, by gemm/gemm.cu (the table); the tests reach it through gemm_kernels().
#pragma once
#include "gemm/gemm.cuh"

namespace mh::gemm {

__global__ void __launch_bounds__(kTileThreads, MH_MIN_BLOCKS(kTileThreads))
naive_kernel(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B, float beta,
             float* __restrict__ C) {
  const int row = blockIdx.x * kTile + threadIdx.x;
  const int col = blockIdx.y * kTile + threadIdx.y;
  if (row >= M || col >= N) return;
  const float* a = A + size_t(row) * K;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += a[k] * B[size_t(k) * N + col];
  store_c(C + size_t(row) * N + col, acc, alpha, beta);
}

inline void launch_naive(const Gemm& g, cudaStream_t s = nullptr) {
  launch_tiles(naive_kernel, dim3(kTile, kTile), g, s, "naive_kernel");
}

}  // namespace mh::gemm

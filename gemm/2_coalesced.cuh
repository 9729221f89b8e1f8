// Kernel 2, coalesced: kernel 1 with the thread -> element map turned around. A 1-D block of 1024,
// threadIdx.x % 32 -> column, threadIdx.x / 32 -> row, so a warp is 32 consecutive columns of one row:
//   A[row][k]: one address -> broadcast;
//   B[k][col]: 32 consecutive floats -> one 128-byte line, 4 sectors;
//   the C stores: 32 consecutive floats as well.
// Same instructions as kernel 1, only the addresses each warp presents change.
// Included once, by gemm/gemm.cu (the table); the tests reach it through gemm_kernels().
#pragma once
#include "gemm/gemm.cuh"

namespace mh::gemm {

__global__ void __launch_bounds__(kTileThreads, MH_MIN_BLOCKS(kTileThreads))
coalesced_kernel(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
                 float beta, float* __restrict__ C) {
  const int row = blockIdx.x * kTile + threadIdx.x / kTile;
  const int col = blockIdx.y * kTile + threadIdx.x % kTile;
  if (row >= M || col >= N) return;
  const float* a = A + size_t(row) * K;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += a[k] * B[size_t(k) * N + col];
  store_c(C + size_t(row) * N + col, acc, alpha, beta);
}

inline void launch_coalesced(const Gemm& g, cudaStream_t s = nullptr) {
  launch_tiles(coalesced_kernel, dim3(kTile * kTile), g, s, "coalesced_kernel");
}

}  // namespace mh::gemm

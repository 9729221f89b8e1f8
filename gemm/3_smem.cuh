// Kernel 3, shared-memory tiling, BM = BN = BK = 32: the block walks K one 32-wide tile at a time,
// staging a 32x32 tile of A and of B in shared memory, so each global element is loaded once per block
// instead of once per thread (32x less global traffic than kernel 2).
// Thread (ty, tx) = (tid / 32, tid % 32) owns C[row][col]; a warp is one row of the C tile.
//   Global loads: a warp reads 32 consecutive floats of one row of A and of B -> coalesced.
//   Shared reads, per k: As[ty][k] is one address per warp (broadcast; the unrolled loop reads a row
//   of As four words at a time), Bs[k][tx] is 32 consecutive words -> 32 banks, conflict-free.
// Out-of-range tile elements are zero-filled, so any M, N, K works; stores are guarded.
// As many blocks per SM as the architecture's threads allow (two, 2048 threads, on sm_80/sm_90: 32
// registers by __launch_bounds__).
// The thread map is gemm/tile_maps.hpp's smem_tile_thread, which the counting model walks too.
// Included once, by gemm/gemm.cu (the table); the tests reach it through gemm_kernels().
#pragma once
#include "gemm/gemm.cuh"

namespace mh::gemm {

__global__ void __launch_bounds__(kTileThreads, MH_MIN_BLOCKS(kTileThreads))
smem_kernel(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B, float beta,
            float* __restrict__ C) {
  __shared__ float As[kTile][kTile];  // As[r][k] = A[tile row r][t + k]
  __shared__ float Bs[kTile][kTile];  // Bs[k][c] = B[t + k][tile column c]
  const TileElem me = smem_tile_thread(threadIdx.x, false);  // gemm/tile_maps.hpp, shared with the model
  const int ty = me.row, tx = me.col;
  const int row = blockIdx.x * kTile + ty, col = blockIdx.y * kTile + tx;
  float acc = 0.f;
  for (int t = 0; t < K; t += kTile) {
    As[ty][tx] = row < M && t + tx < K ? A[size_t(row) * K + t + tx] : 0.f;
    Bs[ty][tx] = t + ty < K && col < N ? B[size_t(t + ty) * N + col] : 0.f;
    __syncthreads();  // the tiles are complete before anyone reads them
#pragma unroll
    for (int k = 0; k < kTile; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();  // everyone is done reading before the next loads overwrite them
  }
  if (row < M && col < N) store_c(C + size_t(row) * N + col, acc, alpha, beta);
}

inline void launch_smem(const Gemm& g, cudaStream_t s = nullptr) {
  launch_tiles(smem_kernel, dim3(kTile * kTile), g, s, "smem_kernel");
}

}  // namespace mh::gemm

// Kernel 3a, bank-conflict ablation of kernel 3: the same tiles, loads and C stores, with the COMPUTE
// mapping transposed: thread (ty, tx) = (tid % 32, tid / 32), so a warp is one COLUMN of the C tile.
// In the inner loop, per k:
//   As[ty][k]: the 32 lanes read 32 rows, kAsStride words apart. With kAsStride = 32 every lane hits
//              bank k % 32: a 32-way conflict. (As in kernel 3 the compiler reads k..k+3 with one
//              LDS.128; here each of those costs 32 wavefronts instead of kernel 3's one broadcast.)
//   Bs[k][tx]: one address per warp -> broadcast.
// Kernel 3b (3b_smem_padded.cuh) is this kernel with kAsStride = 33: lane r then hits bank (r + k) % 32,
// all 32 banks, conflict-free again, at the price of one unused word per row.
// To keep the C stores coalesced, the results go back through As (one write and one read per thread,
// against 2 * K shared reads in the loop), read back with kernel 3's row-per-warp mapping.
#pragma once
#include "gemm/gemm.cuh"

namespace mh::gemm {

template <int kAsStride>
__global__ void __launch_bounds__(kTileThreads, MH_MIN_BLOCKS(kTileThreads))
smem_transposed_kernel(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
                       float beta, float* __restrict__ C) {
  __shared__ float As[kTile][kAsStride];
  __shared__ float Bs[kTile][kTile];
  const TileElem io = smem_tile_thread(threadIdx.x, false), me = smem_tile_thread(threadIdx.x, true);
  const int ly = io.row, lx = io.col;  // loads and stores: kernel 3's mapping
  const int ty = me.row, tx = me.col;  // compute: transposed (gemm/tile_maps.hpp, shared with the model)
  const int row = blockIdx.x * kTile + ly, col = blockIdx.y * kTile + lx;
  float acc = 0.f;
  for (int t = 0; t < K; t += kTile) {
    As[ly][lx] = row < M && t + lx < K ? A[size_t(row) * K + t + lx] : 0.f;
    Bs[ly][lx] = t + ly < K && col < N ? B[size_t(t + ly) * N + col] : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) acc += As[ty][k] * Bs[k][tx];
    __syncthreads();
  }
  As[ty][tx] = acc;  // safe: the loop ended on a barrier
  __syncthreads();
  if (row < M && col < N) store_c(C + size_t(row) * N + col, As[ly][lx], alpha, beta);
}

inline void launch_smem_conflicted(const Gemm& g, cudaStream_t s = nullptr) {
  launch_tiles(smem_transposed_kernel<kTile>, dim3(kTile * kTile), g, s, "smem_transposed_kernel<32>");
}

}  // namespace mh::gemm

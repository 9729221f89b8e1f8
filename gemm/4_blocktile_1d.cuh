// Kernel 4, 1D block tiling: a 64x64 tile of C per block of 512 threads, each thread a column of
// TM = 8 elements, so each value of B read from shared memory feeds 8 FFMAs (kernel 3: one).
// BM = BN = 64, BK = 8; thread t = (tr, tc) = (t / 64, t % 64) owns C[8 tr .. 8 tr + 7][tc].
//   Global loads, one float of each tile per thread: As from A[t / 8][t % 8] (a warp reads 4 rows x
//   32 bytes: 4 requests' worth of sectors, each fully used), Bs from B[t / 64][t % 64] (32 consecutive
//   floats) -> coalesced. The stores to shared memory are 32 consecutive words: conflict-free.
//   Shared reads, per k: Bs[k][tc] is 32 consecutive words (conflict-free); As[8 tr + m][k] is one
//   address per warp (all its lanes share tr): a broadcast. nvcc reads each As row's 8 floats with two
//   LDS.128 (cuobjdump -sass), so per tile a warp issues 16 LDS.128 for A and 8 LDS for B, for 64 FFMA.
// Out-of-range tile elements are zero-filled, so any M, N, K works; stores are guarded.
// 512 threads x 8 accumulators: __launch_bounds__(512, 2) lets ptxas use up to 64 registers; it takes
// fewer (the benchmark reports regs_per_thread and blocks_per_sm from the compiled kernel).
// Included once, by gemm/gemm.cu; the tests reach it through gemm_kernels().
#pragma once
#include "gemm/blocktile.cuh"

namespace mh::gemm {

namespace blocktile_1d {
// The shape and the index maps are gemm/tile_maps.hpp's (kBlocktile1d), shared with the counting model.
constexpr int BM = kBlocktile1d.BM, BN = kBlocktile1d.BN, BK = kBlocktile1d.BK, TM = kBlocktile1d.TM;
constexpr int kThreads = kBlocktile1d.threads;
static_assert(a_loads(kBlocktile1d) == 1 && b_loads(kBlocktile1d) == 1 && kBlocktile1d.TN == 1 && !kBlocktile1d.a_transposed,
              "one element of each tile per thread, a column of C; As is [BM][BK]");
}  // namespace blocktile_1d

__global__ void __launch_bounds__(blocktile_1d::kThreads, 2)
blocktile_1d_kernel(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
                    float beta, float* __restrict__ C) {
  using namespace blocktile_1d;
  constexpr TileShape kShape = kBlocktile1d;
  __shared__ float As[as_rows(kShape)][as_cols(kShape)];  // As[r][k] = A[row0 + r][t + k]
  __shared__ float Bs[BK][BN];                            // Bs[k][c] = B[t + k][col0 + c]
  const TileElem a = a_load(kShape, threadIdx.x, 0), b = b_load(kShape, threadIdx.x, 0);  // this thread's elements
  const TileElem p = thread_patch(kShape, threadIdx.x);  // C elements patch_elem(p, m, 0), m < TM: a column
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM] = {};
  for (int t = 0; t < K; t += BK) {
    As[a.row][a.col] = row0 + a.row < M && t + a.col < K ? A[size_t(row0 + a.row) * K + t + a.col] : 0.f;
    Bs[b.row][b.col] = t + b.row < K && col0 + b.col < N ? B[size_t(t + b.row) * N + col0 + b.col] : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float bk = Bs[k][patch_elem(kShape, p, 0, 0).col];
#pragma unroll
      for (int m = 0; m < TM; ++m) acc[m] += As[patch_elem(kShape, p, m, 0).row][k] * bk;
    }
    __syncthreads();
  }
  for (int m = 0; m < TM; ++m) {
    const TileElem e = patch_elem(kShape, p, m, 0);
    const int row = row0 + e.row, col = col0 + e.col;
    if (row < M && col < N) store_c(C + size_t(row) * N + col, acc[m], alpha, beta);
  }
}

inline void launch_blocktile_1d(const Gemm& g, cudaStream_t s = nullptr) {
  using namespace blocktile_1d;
  launch_blocktiles(blocktile_1d_kernel, BM, BN, kThreads, 0, g, s, "blocktile_1d_kernel");
}

inline KernelLaunch describe_blocktile_1d(const Gemm&) {
  using namespace blocktile_1d;
  return {reinterpret_cast<const void*>(blocktile_1d_kernel), kThreads, 0, "BM=64 BN=64 BK=8 TM=8 threads=512"};
}

}  // namespace mh::gemm

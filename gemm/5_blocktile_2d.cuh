// Kernel 5, 2D block tiling: a 128x128 tile of C per block of 256 threads, each thread an 8x8 patch,
// so per k a thread reads 8 values of A and 8 of B from shared memory for 64 FFMAs (kernel 4: 9 for 8).
// BM = BN = 128, BK = 8; thread t = (tr, tc) = (t / 16, t % 16) owns C[8 tr + m][8 tc + n], m, n < 8.
//   Global loads, 4 floats of each tile per thread, element e = t + 256 i: As from A[e / 8][e % 8]
//   (a warp: 4 rows x 32 bytes), Bs from B[e / 128][e % 128] (32 consecutive floats) -> coalesced;
//   both shared stores are 32 consecutive words, conflict-free.
//   Shared reads, per k: a warp holds tr = 2w, 2w + 1 and tc = 0..15.
//     As[8 tr + m][k]: two addresses per warp (broadcast within each half); nvcc reads a row's 8 floats
//       as two LDS.128, 16 per tile.
//     Bs[k][8 tc .. 8 tc + 7]: two LDS.128 per k; in a quarter-warp the 8 lanes are 32 bytes apart, so
//       lanes tc and tc + 4 share banks: 2-way conflicts, and no two quarter-warps of a pair ask for the
//       same words: 8 wavefronts per LDS.128 where 4 would do (kernel 6 keeps this, kernel 7 fixes it).
//   So per k a warp spends 2 (A) + 16 (B) wavefronts on 64 FFMA (model/gemm_model.hpp counts them).
// Out-of-range tile elements are zero-filled; stores are guarded.
// 64 accumulators: __launch_bounds__(256, 2) caps registers at 128, two blocks (16 warps) per SM.
// Included once, by gemm/gemm.cu; the tests reach it through gemm_kernels().
#pragma once
#include "gemm/blocktile.cuh"

namespace mh::gemm {

namespace blocktile_2d {
// The shape and the index maps are gemm/tile_maps.hpp's (kBlocktile2d), shared with the counting model.
constexpr int BM = kBlocktile2d.BM, BN = kBlocktile2d.BN, BK = kBlocktile2d.BK, TM = kBlocktile2d.TM, TN = kBlocktile2d.TN;
constexpr int kThreads = kBlocktile2d.threads;
constexpr int kLoads = a_loads(kBlocktile2d);  // elements of each tile per thread
static_assert(b_loads(kBlocktile2d) == kLoads && kBlocktile2d.load_floats == 1 && !kBlocktile2d.a_transposed,
              "square tiles: the same count of A and B elements per thread, one float each; As is [BM][BK]");
}  // namespace blocktile_2d

__global__ void __launch_bounds__(blocktile_2d::kThreads, min_blocks_for(blocktile_2d::kThreads, 128))
blocktile_2d_kernel(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
                    float beta, float* __restrict__ C) {
  using namespace blocktile_2d;
  constexpr TileShape kShape = kBlocktile2d;
  __shared__ float As[as_rows(kShape)][as_cols(kShape)];  // As[r][k] = A[row0 + r][t + k]
  __shared__ float Bs[BK][BN];                            // Bs[k][c] = B[t + k][col0 + c]
  const TileElem p = thread_patch(kShape, threadIdx.x);  // C elements patch_elem(p, m, n), m < TM, n < TN
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM][TN] = {};
  for (int t = 0; t < K; t += BK) {
#pragma unroll
    for (int i = 0; i < kLoads; ++i) {  // element threadIdx.x + 256 i of each tile
      const TileElem a = a_load(kShape, threadIdx.x, i), b = b_load(kShape, threadIdx.x, i);
      As[a.row][a.col] = row0 + a.row < M && t + a.col < K ? A[size_t(row0 + a.row) * K + t + a.col] : 0.f;
      Bs[b.row][b.col] = t + b.row < K && col0 + b.col < N ? B[size_t(t + b.row) * N + col0 + b.col] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int m = 0; m < TM; ++m) a[m] = As[patch_elem(kShape, p, m, 0).row][k];
#pragma unroll
      for (int n = 0; n < TN; ++n) b[n] = Bs[k][patch_elem(kShape, p, 0, n).col];
#pragma unroll
      for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n) acc[m][n] += a[m] * b[n];
    }
    __syncthreads();
  }
#pragma unroll
  for (int m = 0; m < TM; ++m)
#pragma unroll
    for (int n = 0; n < TN; ++n) {
      const TileElem e = patch_elem(kShape, p, m, n);
      const int row = row0 + e.row, col = col0 + e.col;
      if (row < M && col < N) store_c(C + size_t(row) * N + col, acc[m][n], alpha, beta);
    }
}

inline void launch_blocktile_2d(const Gemm& g, cudaStream_t s = nullptr) {
  using namespace blocktile_2d;
  launch_blocktiles(blocktile_2d_kernel, BM, BN, kThreads, 0, g, s, "blocktile_2d_kernel");
}

inline KernelLaunch describe_blocktile_2d(const Gemm&) {
  using namespace blocktile_2d;
  return {reinterpret_cast<const void*>(blocktile_2d_kernel), kThreads, 0, "BM=128 BN=128 BK=8 TM=8 TN=8 threads=256"};
}

}  // namespace mh::gemm

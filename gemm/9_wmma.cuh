// Kernel 9, the first tensor-core step: WMMA fragments (nvcuda::wmma, 16 x 16 x 16, BF16 in, FP32
// accumulate) from shared-memory tiles. Against the FP32 ladder's CUDA-core kernels, one mma_sync does
// 16 x 16 x 16 = 4096 multiply-adds of a warp in one tensor-core instruction sequence instead of 128 FFMA
// instructions, so the math stops being the limit; shared memory and the copies become it.
// Block tile 128 x 128, BK = 64, 8 warps of 64 x 32 (gemm/tc_tile.cuh): per 16-deep step a warp loads 4 A and
// 2 B fragments and issues 4 x 2 mma_sync. One shared buffer: copy (16-byte loads through registers),
// barrier, compute, barrier. The tiles are PADDED to 72 elements a row (WMMA's ldm): the 8 rows a fragment
// load reads at one k land in 8 different bank groups. The epilogue goes through a per-warp 16 x 16 staging
// tile in shared memory (store_matrix_sync has no per-element guard), so any M and N work; K % 8 == 0.
// Included once, by gemm/tc_gemm.cu (the table); the tests reach it through tc_kernels().
#pragma once
#include <mma.h>

#include "gemm/tc_tile.cuh"

namespace mh::gemm::tc {

constexpr int kWmmaLd = kRowBytes<Layout::padded> / 2;  // elements per padded row
constexpr int kWmmaStage = 16 * 16;                     // floats of one warp's staging tile
constexpr size_t kWmmaSmemBytes = 2 * kTileBytes<Layout::padded> + kThreads / 32 * kWmmaStage * sizeof(float);

// The warp's 64 x 32 of C through its staging tile: one 16 x 16 fragment at a time, 8 elements a lane.
template <class Acc>
__device__ __forceinline__ void store_wmma(const TcGemm& g, const Acc& acc, float* stage, int row0, int col0) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int mi = 0; mi < WM / 16; ++mi)
#pragma unroll
    for (int ni = 0; ni < WN / 16; ++ni) {
      nvcuda::wmma::store_matrix_sync(stage, acc[mi][ni], 16, nvcuda::wmma::mem_row_major);
      __syncwarp();
#pragma unroll
      for (int i = 0; i < kWmmaStage / 32; ++i) {
        const int e = lane + 32 * i, row = row0 + mi * 16 + e / 16, col = col0 + ni * 16 + e % 16;
        if (row < g.M && col < g.N) g.C[size_t(row) * g.N + col] = stage[e];
      }
      __syncwarp();  // read before the next fragment overwrites it
    }
}

__global__ void __launch_bounds__(kThreads, kMinBlocks) wmma_kernel(TcGemm g) {
#if MH_TC_SM80
  using namespace nvcuda;
  __shared__ __align__(128) uint8_t As[kTileBytes<Layout::padded>];
  __shared__ __align__(128) uint8_t Bs[kTileBytes<Layout::padded>];
  __shared__ __align__(32) float stage[kThreads / 32][kWmmaStage];
  const int warp = threadIdx.x / 32, wm0 = warp_m0(warp), wn0 = warp_n0(warp);
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const bf16* as = reinterpret_cast<const bf16*>(As);
  const bf16* bs = reinterpret_cast<const bf16*>(Bs);
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[WM / 16][WN / 16];
#pragma unroll
  for (int mi = 0; mi < WM / 16; ++mi)
#pragma unroll
    for (int ni = 0; ni < WN / 16; ++ni) wmma::fill_fragment(acc[mi][ni], 0.f);
  for (int k0 = 0; k0 < g.K; k0 += BK) {
    load_tile<Layout::padded>(As, g.A, g.M, g.K, m0, k0);
    load_tile<Layout::padded>(Bs, g.B, g.N, g.K, n0, k0);
    __syncthreads();  // the tiles are complete before any warp reads them
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, bf16, wmma::row_major> a[WM / 16];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, bf16, wmma::col_major> b[WN / 16];  // Bs rows are n: B column-major
#pragma unroll
      for (int mi = 0; mi < WM / 16; ++mi) wmma::load_matrix_sync(a[mi], as + (wm0 + mi * 16) * kWmmaLd + ks * 16, kWmmaLd);
#pragma unroll
      for (int ni = 0; ni < WN / 16; ++ni) wmma::load_matrix_sync(b[ni], bs + (wn0 + ni * 16) * kWmmaLd + ks * 16, kWmmaLd);
#pragma unroll
      for (int mi = 0; mi < WM / 16; ++mi)
#pragma unroll
        for (int ni = 0; ni < WN / 16; ++ni) wmma::mma_sync(acc[mi][ni], a[mi], b[ni], acc[mi][ni]);
    }
    __syncthreads();  // every warp is done reading before the next copy overwrites the tiles
  }
  store_wmma(g, acc, stage[warp], m0 + wm0, n0 + wn0);
#endif
}

inline void launch_wmma(const TcGemm& g) { launch_block_tiles(wmma_kernel, 0, g, "wmma_kernel"); }

}  // namespace mh::gemm::tc

// Kernel 10: kernel 9 with the tensor cores driven by hand: mma.sync m16n8k16 (BF16 in, FP32 accumulate)
// on fragments loaded with ldmatrix, from a SWIZZLED shared layout (chunk c of row r stored at c ^ (r % 8),
// gemm/tc_tile.cuh), and the accumulators written to C straight from the C fragments' registers.
// What changes against kernel 9: the fragment layouts are ours (PTX ISA), not WMMA's opaque ones, so the
// epilogue needs no staging tile and each A fragment serves 4 n8 tiles from registers; the swizzle gives
// the conflict-free ldmatrix phases that kernel 9 bought with padding, without the 1/8 extra shared memory,
// in the layout TMA writes (kernel 12). Per 16-deep step a warp issues 4 + 2 ldmatrix.x4 and 16 mma.sync.
// Still one shared buffer and synchronous copies. Kernel 10a (10a_mma_conflicted.cuh) is this kernel with
// the plain layout. Any M and N; K % 8 == 0.
// Included once, by gemm/tc_gemm.cu (the table); the tests reach it through tc_kernels().
#pragma once
#include "gemm/tc_tile.cuh"

namespace mh::gemm::tc {

template <Layout L>
__global__ void __launch_bounds__(kThreads, kMinBlocks) mma_kernel(TcGemm g) {
#if MH_TC_SM80
  __shared__ __align__(128) uint8_t As[kTileBytes<L>];
  __shared__ __align__(128) uint8_t Bs[kTileBytes<L>];
  const int warp = threadIdx.x / 32, wm0 = warp_m0(warp), wn0 = warp_n0(warp);
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  WarpAcc acc = {};
  for (int k0 = 0; k0 < g.K; k0 += BK) {
    load_tile<L>(As, g.A, g.M, g.K, m0, k0);
    load_tile<L>(Bs, g.B, g.N, g.K, n0, k0);
    __syncthreads();  // the tiles are complete before any warp reads them
    mma_block_tile<L>(As, Bs, acc, wm0, wn0);
    __syncthreads();  // every warp is done reading before the next copy overwrites them
  }
  store_acc(g, acc, m0 + wm0, n0 + wn0);
#endif
}

inline void launch_mma_swizzled(const TcGemm& g) {
  launch_block_tiles(mma_kernel<Layout::swizzled>, 0, g, "mma_kernel<swizzled>");
}

}  // namespace mh::gemm::tc

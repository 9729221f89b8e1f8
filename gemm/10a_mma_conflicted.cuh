// Kernel 10a, bank-conflict ablation of kernel 10: the same kernel with the PLAIN shared layout (row r at
// 128 r bytes, no swizzle). An ldmatrix phase reads 8 rows at the same chunk: 8 addresses 128 bytes apart,
// all in the same 4 banks, so each 8x8 matrix takes 8 wavefronts instead of 1 (the copies' 16-byte stores
// stay conflict-free: a quarter-warp writes one whole row). Everything else is kernel 10's.
// Included once, by gemm/tc_gemm.cu (the table); the tests reach it through tc_kernels().
#pragma once
#include "gemm/10_mma_swizzled.cuh"

namespace mh::gemm::tc {

inline void launch_mma_conflicted(const TcGemm& g) {
  launch_block_tiles(mma_kernel<Layout::plain>, 0, g, "mma_kernel<plain>");
}

}  // namespace mh::gemm::tc

// Kernel 11: kernel 10 with a multi-stage cp.async pipeline. kCpAsyncStages = 3 shared buffers (each an
// A and a B tile, 32 KiB): while the warps compute tile t, the copies of tiles t+1 and t+2 are in flight,
// and they go global -> shared directly (cp.async.cg, 16 bytes, no registers, L1 bypassed) instead of
// through registers and a store. In kernel 10 every block waits out a whole global-load latency per tile,
// hidden only by the one other block on its SM; here the wait is for a copy issued two tiles earlier.
// The loop is gemm/tc_tile.cuh's cp_async_pipeline (per tile: issue the copy kStages - 1 tiles ahead, wait
// for this tile's, barrier, compute, barrier), shared with the tensor family's copy micro that times it.
// 3 stages x 32 KiB = 96 KiB of dynamic shared memory: two blocks per SM on an H200 (4 stages would leave
// one). Kernel 11a (11a_cp_async_1stage.cuh) is this kernel with one stage. Any M and N; K % 8 == 0.
// Included once, by gemm/tc_gemm.cu (the table); the tests reach it through tc_kernels().
#pragma once
#include "gemm/tc_tile.cuh"

namespace mh::gemm::tc {

template <int kStages>
constexpr size_t kCpAsyncSmemBytes = size_t(kStages) * kStageBytes;  // kStageBytes: gemm/tc_shape.hpp

template <int kStages>
__global__ void __launch_bounds__(kThreads, kMinBlocks) cp_async_kernel(TcGemm g) {
#if MH_TC_SM80
  extern __shared__ __align__(128) uint8_t smem[];
  const int warp = threadIdx.x / 32, wm0 = warp_m0(warp), wn0 = warp_n0(warp);
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  WarpAcc acc = {};
  cp_async_pipeline<kStages>(
      smem, (g.K + BK - 1) / BK,
      [&](int t, uint8_t* stage) { load_stage_async(stage, g.A, g.M, g.B, g.N, g.K, m0, n0, t * BK); },
      [&](const uint8_t* stage) {
        mma_block_tile<Layout::swizzled>(stage, stage + kTileBytes<Layout::swizzled>, acc, wm0, wn0);
      });
  store_acc(g, acc, m0 + wm0, n0 + wn0);
#endif
}

// Dynamic shared memory above 48 KiB needs the kernel's opt-in, before a launch or an occupancy query.
template <int kStages>
void prepare_cp_async() {
  CUDA_CHECK(cudaFuncSetAttribute(cp_async_kernel<kStages>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kCpAsyncSmemBytes<kStages>)));
}

template <int kStages>
void launch_cp_async(const TcGemm& g) {
  launch_block_tiles(cp_async_kernel<kStages>, kCpAsyncSmemBytes<kStages>, g, "cp_async_kernel", prepare_cp_async<kStages>);
}

}  // namespace mh::gemm::tc

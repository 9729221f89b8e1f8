// Kernel 13 (sm_90a): warp specialization and a 128 x 256 tile. Kernel 12 had every thread both wait for
// data and multiply, closing each k-tile with wgmma.wait_group 0 and a block barrier before thread 0 refilled
// the stage: the tensor cores idled once per k-tile, and its 128 x 128 tile fetched 1/64 byte per FLOP from L2.
// Here warpgroup 0 only produces (one thread issues the TMA loads into a ring of 4 stages of 48 KiB, pacing
// itself on per-stage "empty" mbarriers) and gives its registers away (setmaxnreg 40); warpgroups 1 and 2 only
// consume (setmaxnreg 232), each multiplying 64 rows of A by the 256 x 64 B tile with wgmma m64n256k16, waiting
// for a k-tile's "full" mbarrier and keeping one wgmma group in flight while they hand the previous stage back.
// No block barrier in the main loop.
// Why faster: (1) L2 -> SM bytes per FLOP fall from 1/64 to 1/85.3 (tile BM BN / (BM + BN) = 85.3 FLOP/byte):
// at the ~8.5 TB/s L2 roof the cap rises from ~545 to ~725 TFLOP/s; (2) the tensor cores see an unbroken
// stream of wgmma (the producer runs up to 4 k-tiles ahead; no wait_group 0 per k-tile); (3) a wgmma
// m64n256k16 is 128 tensor-core clocks per SM for 10 KiB of shared-memory operand reads (80 B/clock), and TMA
// writes 48 KiB per 1,024 clocks (48 B/clock): 128 B/clock, just at the shared-memory limit at full tensor rate,
// where kernel 12 needed 160 (96 + 64) and so could not exceed 80 % of peak. Expected: ~650-720 TFLOP/s at 4096^3
// (0.8-0.85 of cuBLAS BF16), bound by L2 -> SM bytes and the non-overlapped epilogue (64 MiB of FP32 C, ~10 %).
// One block per SM (193 KiB of ring); the epilogue stores straight from the accumulators, guarded.
#include <stdexcept>
#include <string>

#include "gemm/tc_ws.cuh"

namespace mh::gemm::tc {
namespace {

__global__ void __launch_bounds__(kWsThreads, kWsMinBlocks)
    wgmma_ws_kernel(TcGemm g, const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full[kWsStages], empty[kWsStages];
  // One output tile per block: blockIdx.x its row of tiles (M), blockIdx.y its column (N).
  ws::run_ws_block<1>(g, &map_a, &map_b, smem_raw, full, empty, [](int i, int& tm, int& tn) {
    tm = blockIdx.x;
    tn = blockIdx.y;
    return i == 0;
  });
#endif
}

}  // namespace

void prepare_wgmma_ws() {
  CUDA_CHECK(cudaFuncSetAttribute(wgmma_ws_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kWsDynSmemBytes)));
}

void launch_wgmma_ws(const TcGemm& g) {
  if (!ws::ws_needs_launch(g, "wgmma_ws_kernel")) return;
  prepare_wgmma_ws();
  const CUtensorMap a = sm90::tile_map(g.A, g.M, g.K, kWsBM), b = sm90::tile_map(g.B, g.N, g.K, kWsBN);
  const dim3 grid((g.M + kWsBM - 1) / kWsBM, (g.N + kWsBN - 1) / kWsBN);
  wgmma_ws_kernel<<<grid, kWsThreads, kWsDynSmemBytes>>>(g, a, b);
  CUDA_CHECK_LAUNCH("wgmma_ws_kernel");
}

const void* wgmma_ws_kernel_ptr() { return reinterpret_cast<const void*>(wgmma_ws_kernel); }

}  // namespace mh::gemm::tc

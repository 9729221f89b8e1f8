// Kernel 14 (sm_90a): kernel 13 made persistent. Kernel 13 launches one block per 128 x 256 output tile; each
// block sets up its ring, waits for its first loads with the tensor cores idle (a TMA round trip, ~1-2 us), and
// its SM idles again while the consumers store 128 KiB of C with nothing in flight. Here the grid is one block
// per SM (SMs x resident blocks from the occupancy API, at most the tiles), and each block walks the output
// tiles i = blockIdx.x, + gridDim.x, ...: the ring and its phases carry over from tile to tile, so while the
// consumers store tile i the producer already loads tile i + 1's first 4 k-tiles, and the next tile starts on
// full stages. The walk is grouped: tiles in groups of kPersistentGroupM = 16 tile rows (2,048 rows of A),
// column by column inside a group, so the 132 tiles in flight span ~16 x 8 tiles of C and read ~2,048 rows of A
// and ~2,048 of B (32 MiB at K = 8192, within the 50 MiB L2) rather than all of A.
// Why faster: at 4096^3, 512 tiles over 132 SMs are 3.9 waves of kernel 13's ~45 us blocks; the per-tile fill
// (~1.5 us) and epilogue (~4 us of 128 KiB stores per SM at ~4 TB/s over 132 SMs) are ~10 % of a block, half of
// which (the producer's share) now overlaps. Expected ~5-8 % over kernel 13: ~700-760 TFLOP/s at 4096^3, still
// bound by L2 -> SM bytes (85.3 FLOP/byte) and the consumers' own epilogue; more at 8192^3, where the grouped
// order keeps the operands in L2. Wave quantization stays (3.9 waves: the last is 0.9 full). Next: clusters of
// 2 with TMA multicast of the shared B tile (kernel 15). Not done: overlapping the consumers' epilogue with the
// next tile's wgmma (two accumulator sets do not fit 232 registers at n256: ping-pong consumers would).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "gemm/tc_ws.cuh"

namespace mh::gemm::tc {
namespace {

__global__ void __launch_bounds__(kWsThreads, kWsMinBlocks)
    wgmma_persistent_kernel(TcGemm g, const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full[kWsStages], empty[kWsStages];
  const int tiles_m = (g.M + kWsBM - 1) / kWsBM, tiles_n = (g.N + kWsBN - 1) / kWsBN;
  ws::run_ws_block<1>(g, &map_a, &map_b, smem_raw, full, empty, [=](int i, int& tm, int& tn) {
    const long long t = blockIdx.x + static_cast<long long>(i) * gridDim.x;
    if (t >= static_cast<long long>(tiles_m) * tiles_n) return false;
    ws::grouped_tile(static_cast<int>(t), tiles_m, tiles_n, kPersistentGroupM, tm, tn);
    return true;
  });
#endif
}

}  // namespace

void prepare_wgmma_persistent() {
  CUDA_CHECK(cudaFuncSetAttribute(wgmma_persistent_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kWsDynSmemBytes)));
}

void launch_wgmma_persistent(const TcGemm& g) {
  if (!ws::ws_needs_launch(g, "wgmma_persistent_kernel")) return;
  prepare_wgmma_persistent();
  int device = 0, sms = 0, resident = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, wgmma_persistent_kernel, kWsThreads, kWsDynSmemBytes));
  if (resident < 1) throw CudaError("wgmma_persistent_kernel: no block fits an SM (occupancy API)");
  const long long tiles = static_cast<long long>((g.M + kWsBM - 1) / kWsBM) * ((g.N + kWsBN - 1) / kWsBN);
  if (tiles > (1ll << 31) - 1) throw std::invalid_argument("wgmma_persistent_kernel: more than 2^31 tiles");
  const int blocks = static_cast<int>(std::min<long long>(tiles, static_cast<long long>(sms) * resident));
  const CUtensorMap a = sm90::tile_map(g.A, g.M, g.K, kWsBM), b = sm90::tile_map(g.B, g.N, g.K, kWsBN);
  wgmma_persistent_kernel<<<blocks, kWsThreads, kWsDynSmemBytes>>>(g, a, b);
  CUDA_CHECK_LAUNCH("wgmma_persistent_kernel");
}

const void* wgmma_persistent_kernel_ptr() { return reinterpret_cast<const void*>(wgmma_persistent_kernel); }

}  // namespace mh::gemm::tc

// Kernel 15 (sm_90a): kernel 14 in clusters of 2 with TMA multicast. Kernels 13 and 14 read 48 KiB from L2 per
// block and k-tile (a 128 x 64 A tile, a 256 x 64 B tile): 85.3 FLOP per byte, ~725 TFLOP/s at the ~8.5 TB/s L2
// roof, below the tensor cores' ~950 at a loaded clock. Here the two blocks of a cluster compute vertically
// adjacent 128 x 256 tiles (a 256 x 256 pair), which need the same B tile: each block loads its own A tile and
// one 128-row half of B, multicast into both blocks' shared memory. L2 -> SM reads fall to 32 KiB per block and
// k-tile: 128 FLOP per byte, ~1,090 TFLOP/s at 8.5 TB/s, no longer the bound. What is left: the tensor-core
// rate, shared memory (wgmma's 80 B/clock + TMA's 48 B/clock = the 128 B/clock limit at full rate, unchanged)
// and the consumers' epilogue. Expected ~760-830 TFLOP/s at 4096^3, 0.9-1.0 of cuBLAS BF16.
// Costs: a stage is refilled only when the consumers of both blocks released it (16 arrivals on its empty
// barrier, 8 of them remote), so the slower block paces the pair; the grid is 2 x the clusters that fit
// (cudaOccupancyMaxActiveClusters: GPCs whose SM count is odd leave an SM idle), and the pairs walk the grouped
// order in groups of 8 pairs (16 tile rows, as kernel 14).
#include <algorithm>
#include <stdexcept>
#include <string>

#include "gemm/tc_ws.cuh"

namespace mh::gemm::tc {
namespace {

constexpr int kGroupPairs = kPersistentGroupM / kMulticastCluster;

__global__ void __launch_bounds__(kWsThreads, kWsMinBlocks)
    wgmma_multicast_kernel(TcGemm g, const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full[kWsStages], empty[kWsStages];
  const int tiles_m = (g.M + kWsBM - 1) / kWsBM, tiles_n = (g.N + kWsBN - 1) / kWsBN;
  const int pairs_m = (tiles_m + 1) / 2;
  // Clusters are consecutive pairs of blocks of the 1-D grid; both blocks of one walk the same pairs.
  const int cluster = blockIdx.x / kMulticastCluster, clusters = gridDim.x / kMulticastCluster;
  const int rank = static_cast<int>(sm90::cluster_rank());
  ws::run_ws_block<kMulticastCluster>(g, &map_a, &map_b, smem_raw, full, empty, [=](int i, int& tm, int& tn) {
    const long long t = cluster + static_cast<long long>(i) * clusters;
    if (t >= static_cast<long long>(pairs_m) * tiles_n) return false;
    int pm;
    ws::grouped_tile(static_cast<int>(t), pairs_m, tiles_n, kGroupPairs, pm, tn);
    tm = 2 * pm + rank;  // may lie below the matrix (odd tiles_m): TMA reads zeros, the stores are guarded
    return true;
  });
#endif
}

// A launch configuration of `blocks` blocks in clusters of kMulticastCluster.
struct ClusterLaunch {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attr{};
  explicit ClusterLaunch(int blocks) {
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(kWsThreads);
    config.dynamicSmemBytes = kWsDynSmemBytes;
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = kMulticastCluster;
    attr.val.clusterDim.y = 1;
    attr.val.clusterDim.z = 1;
    config.attrs = &attr;
    config.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;  // config.attrs points at attr
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

}  // namespace

void prepare_wgmma_multicast() {
  CUDA_CHECK(cudaFuncSetAttribute(wgmma_multicast_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kWsDynSmemBytes)));
}

void launch_wgmma_multicast(const TcGemm& g) {
  if (!ws::ws_needs_launch(g, "wgmma_multicast_kernel")) return;
  prepare_wgmma_multicast();
  int active = 0;
  {
    const ClusterLaunch probe(kMulticastCluster);
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&active, wgmma_multicast_kernel, &probe.config));
  }
  if (active < 1) throw CudaError("wgmma_multicast_kernel: no cluster of 2 blocks fits (occupancy API)");
  const long long pairs =
      static_cast<long long>(((g.M + kWsBM - 1) / kWsBM + 1) / 2) * ((g.N + kWsBN - 1) / kWsBN);
  if (pairs > (1ll << 30)) throw std::invalid_argument("wgmma_multicast_kernel: more than 2^30 tile pairs");
  const int clusters = static_cast<int>(std::min<long long>(pairs, active));
  const CUtensorMap a = sm90::tile_map(g.A, g.M, g.K, kWsBM), b = sm90::tile_map(g.B, g.N, g.K, kWsBN / 2);
  const ClusterLaunch launch(clusters * kMulticastCluster);
  CUDA_CHECK(cudaLaunchKernelEx(&launch.config, wgmma_multicast_kernel, g, a, b));
  CUDA_CHECK_LAUNCH("wgmma_multicast_kernel");
}

const void* wgmma_multicast_kernel_ptr() { return reinterpret_cast<const void*>(wgmma_multicast_kernel); }

}  // namespace mh::gemm::tc

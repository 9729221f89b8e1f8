// TMA multicast: 1-D bulk copies (cp.async.bulk) from global memory into the shared memory of every block
// of a cluster, against each block copying its own. Built for sm_90a alone (CMakeLists.txt): the PTX ISA
// says .multicast::cluster is optimized for sm_90a and may be substantially slower in plain sm_90 code.
#include <stdexcept>

#include "micro/cluster.cuh"

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define MH_TMA_DEVICE 1
#endif

namespace mh::cluster {
namespace {
using namespace detail;

#ifdef MH_TMA_DEVICE
__device__ __forceinline__ void mbar_init(uint32_t bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
}
// One arrival (the phase's only one) that also expects `bytes` of transfers.
__device__ __forceinline__ void mbar_arm(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}
// Waits for the phase of `parity` to complete, at most kTimeoutCycles; false when it gave up.
__device__ bool mbar_wait(uint32_t bar, uint32_t parity) {
  const long long t0 = clock64();
  while (!mbar_try_wait(bar, parity))
    if (clock64() - t0 > kTimeoutCycles) return false;
  return true;
}
// `bytes` from src to the same shared-memory offset `dst` in every block of the cluster (ctaMask), each
// block's mbarrier at offset `bar` receiving the bytes it got.
__device__ __forceinline__ void bulk_multicast(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1], %2, [%3], %4;" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar), "h"(mask)
      : "memory");
}
__device__ __forceinline__ void bulk_copy(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst), "l"(src),
               "r"(bytes), "r"(bar)
               : "memory");
}

// Lane 0: arm this block's barrier of iteration i's stage and issue this block's part of the tile.
template <bool kMulticast>
__device__ void issue(int i, const uint32_t* src, uint32_t stages, uint32_t bars) {
  const uint32_t rank = cluster_rank(), size = cluster_size(), stage = i % kTmaStages;
  const uint32_t bar = bars + 8 * stage, dst = stages + stage * kTmaTile;
  const uint32_t* tile = src + static_cast<size_t>(tma_tile(blockIdx.x / size, i)) * (kTmaTile / 4);
  mbar_arm(bar, kTmaTile);  // every block receives a whole tile, from one copy or from C slices
  if constexpr (kMulticast) {
    const uint32_t slice = kTmaTile / size;
    bulk_multicast(dst + rank * slice, tile + rank * slice / 4, slice, bar, static_cast<uint16_t>((1u << size) - 1));
  } else {
    bulk_copy(dst, tile, kTmaTile, bar);
  }
}
#endif

template <bool kMulticast>
__global__ void __launch_bounds__(kTmaThreads, 1) tma_kernel(int iterations, const uint32_t* src, BlockRecord* out) {
#ifdef MH_TMA_DEVICE
  extern __shared__ __align__(128) uint32_t stage_buf[];
  __shared__ __align__(8) uint64_t full[kTmaStages];
  __shared__ uint32_t sum;
  const uint32_t stages = smem_addr(stage_buf), bars = smem_addr(full);
  const bool leader = threadIdx.x == 0;
  if (leader) {
    for (int s = 0; s < kTmaStages; ++s) mbar_init(bars + 8 * s);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");  // visible to the peers' copies
    sum = 0;
  }
  cluster_sync();  // every block's barriers exist before any copy signals them
  const long long c0 = clock64(), t0 = global_ns();
  if (leader)
    for (int i = 0; i < kTmaStages - 1 && i < iterations; ++i) issue<kMulticast>(i, src, stages, bars);
  uint32_t timeouts = 0;
  for (int i = 0; i < iterations; ++i) {
    if (!mbar_wait(bars + 8 * (i % kTmaStages), (i / kTmaStages) & 1)) ++timeouts;
    // The arrive of iteration i - 1 completed: every block has its data of iteration i - 1, so that
    // iteration's stage may be refilled in all of them (i + kTmaStages - 1 uses the same stage).
    if (i > 0) cluster_wait();
    if (leader && i + kTmaStages - 1 < iterations) issue<kMulticast>(i + kTmaStages - 1, src, stages, bars);
    __syncwarp();
    cluster_arrive();
  }
  cluster_wait();
  const long long c1 = clock64(), t1 = global_ns();
  uint32_t acc = 0;
  for (uint32_t w = threadIdx.x; w < kTmaStages * kTmaTile / 4; w += blockDim.x) acc += stage_buf[w];
  atomicAdd(&sum, acc);
  __syncwarp();
  if (leader) out[blockIdx.x] = {{c1 - c0, t1 - t0}, sum, sm_id(), timeouts, 0};
  cluster_sync();  // no block leaves while a peer's copy may still signal it
#endif
}

auto tma_kernel_of(bool multicast) { return multicast ? tma_kernel<true> : tma_kernel<false>; }

}  // namespace

std::string tma_unavailable_reason() {
  cudaFuncAttributes a{};
  const cudaError_t e = cudaFuncGetAttributes(&a, reinterpret_cast<const void*>(tma_kernel<true>));
  if (e == cudaSuccess) return compiled_out_reason(reinterpret_cast<const void*>(tma_kernel<true>), kMinArch, "the TMA kernels");
  (void)cudaGetLastError();  // a missing image is not a sticky error: clear it
  return std::string("the TMA kernels are built for sm_90a alone and have no image for this device (") + cudaGetErrorName(e) + ")";
}

void launch_tma(bool multicast, const Grid& g, int iterations, const uint32_t* src, BlockRecord* out, cudaStream_t s) {
  if (g.threads != kTmaThreads || g.smem < kTmaStages * kTmaTile || iterations < kTmaStages || g.cluster > kMaxCluster ||
      kTmaTile % (16 * g.cluster))
    throw std::invalid_argument("launch_tma: 32 threads, >= 64 KiB of shared memory, iterations >= 4, cluster size <= 16");
  launch(tma_kernel_of(multicast), "tma_kernel", g, s, iterations, src, out);
}

int tma_max_active_clusters(bool multicast, const Grid& g) {
  return max_active_clusters(reinterpret_cast<const void*>(tma_kernel_of(multicast)), g);
}

}  // namespace mh::cluster

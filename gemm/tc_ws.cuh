// The warp-specialized pipeline of kernels 13 and 14 (included by their *_sm90a.cu files only): a ring of
// kWsStages shared buffers, each with a "full" mbarrier (the producer's arrive.expect_tx of the stage's bytes,
// completed by its two TMA loads) and an "empty" mbarrier (one arrival from each of the 8 consumer warps once
// their wgmma stopped reading it). One k-tile counter `it`, kept alike by producer and consumers across all the
// tiles a block computes, names the stage (it % stages) and the parity of its phase ((it / stages) % 2).
// kCluster = 2 (kernel 15): the two blocks of a cluster compute vertically adjacent tiles that share the B tile;
// each loads its own A and one 128-row half of B, multicast into both blocks' rings, so a stage of either block
// fills from both producers and may be refilled only when the consumers of both released it: every empty
// barrier counts 16 arrivals, 8 local and 8 from the peer.
#pragma once
#include <stdexcept>
#include <string>

#include "gemm/13_wgmma_ws.cuh"
#include "gemm/tc_sm90a.cuh"
#include "harness/arch.hpp"

namespace mh::gemm::tc::ws {

using namespace sm90;

constexpr int kConsumerWarps = 8;
// setmaxnreg: the producer warpgroup keeps 40 registers a thread, the consumers (128 accumulators each) get
// 232; together exactly the 168 x 384 the launch holds, so the consumers' increase never waits.
constexpr int kProducerRegs = 40, kConsumerRegs = 232;
static_assert(kWsThreads == 3 * 128, "one producer and two consumer warpgroups");
static_assert(128 * kProducerRegs + 2 * 128 * kConsumerRegs <= kWsThreads * arch_register_cap(kWsThreads, kWsMinBlocks),
              "the register moves fit the launch's register file");
static_assert(kWsBK * 2 == 128, "one tile row is one 128-byte swizzle row");
static_assert(kWsATileBytes % 1024 == 0 && kWsStageBytes % 1024 == 0, "every tile starts on a 1024-byte boundary");

struct Ring {
  uint32_t tiles;        // stage s: the A tile at tiles + s * kWsStageBytes, the B tile right after it
  uint32_t full, empty;  // the barrier arrays (8 bytes a stage)
  __device__ uint32_t a(int s) const { return tiles + s * uint32_t(kWsStageBytes); }
  __device__ uint32_t b(int s) const { return a(s) + uint32_t(kWsATileBytes); }
  __device__ uint32_t full_bar(int s) const { return full + 8 * s; }
  __device__ uint32_t empty_bar(int s) const { return empty + 8 * s; }
};

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

__device__ __forceinline__ Ring make_ring(uint8_t* smem_raw, uint64_t* full, uint64_t* empty) {
  return {(smem_addr(smem_raw) + 1023) & ~1023u, smem_addr(full), smem_addr(empty)};
}

// One thread, before any other touches the ring (a block or cluster barrier follows).
template <int kCluster>
__device__ __forceinline__ void init_ring(const Ring& r) {
  for (int s = 0; s < kWsStages; ++s) {
    mbar_init(r.full_bar(s), 1);
    mbar_init(r.empty_bar(s), kConsumerWarps * kCluster);
  }
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // the inits visible to TMA
}

// The producer waits before the fill at counter `it`: a stage's u-th fill (u > 0) waits for the consumers'
// u-th release of it, the phase of parity (u - 1) % 2 of its empty barrier.
__device__ __forceinline__ void wait_stage_free(const Ring& r, uint32_t it, long long deadline) {
  const uint32_t use = it / kWsStages;
  if (use > 0) mbar_wait(r.empty_bar(it % kWsStages), (use - 1) % 2, deadline);
}

// The producer thread: the k-tiles of the output tile at (m0, n0) into the ring. kCluster 1: map_b's boxes
// are 256 rows (the whole B tile); 2: 128 rows, this block's half (rank r: rows n0 + 128 r) to both blocks.
// The full barrier expects the stage's 48 KiB either way (zero-filled parts of the boxes included); with
// kCluster 2 the peer's half may land before this arrive.expect_tx: the tx-count goes transiently negative,
// and the phase cannot complete before the arrival.
template <int kCluster>
__device__ __forceinline__ void produce_tile(const Ring& r, const CUtensorMap* map_a, const CUtensorMap* map_b, int m0,
                                             int n0, int ktiles, uint32_t& it, long long deadline) {
  for (int kt = 0; kt < ktiles; ++kt, ++it) {
    const int s = it % kWsStages;
    wait_stage_free(r, it, deadline);
    mbar_expect_tx(r.full_bar(s), int(kWsStageBytes));
    tma_load(r.a(s), map_a, kt * kWsBK, m0, r.full_bar(s));
    if constexpr (kCluster == 1) {
      tma_load(r.b(s), map_b, kt * kWsBK, n0, r.full_bar(s));
    } else {
      static_assert(kCluster == 2, "pairs of blocks");
      const uint32_t rank = cluster_rank();
      tma_load_multicast(r.b(s) + rank * uint32_t(kWsBTileBytes / 2), map_b, kt * kWsBK, n0 + int(rank) * (kWsBN / 2),
                         r.full_bar(s), 0x3);
    }
  }
}

// After this warp's wgmma_wait its reads of stage s are done: lane 0 tells the stage's producer(s).
template <int kCluster>
__device__ __forceinline__ void release(const Ring& r, int s) {
  if (threadIdx.x % 32 != 0) return;
  if constexpr (kCluster == 1) {
    mbar_arrive(r.empty_bar(s));
  } else {
    for (uint32_t rank = 0; rank < kCluster; ++rank) mbar_arrive_cluster(r.empty_bar(s), rank);
  }
}

// A consumer warpgroup (half 0 or 1: rows 64 half ... of the block tile): d = its 64 x 256 slice of the output
// tile. Each k-tile's 4 wgmma form one group; waiting until at most one group is pending keeps the tensor cores
// fed while the previous k-tile's stage goes back to the producer.
template <int kCluster>
__device__ __forceinline__ void consume_tile(const Ring& r, float (&d)[kAcc256], int half, int ktiles, uint32_t& it,
                                             long long deadline) {
  for (int kt = 0; kt < ktiles; ++kt, ++it) {
    const int s = it % kWsStages;
    mbar_wait(r.full_bar(s), (it / kWsStages) % 2, deadline);
    __syncwarp();  // converged again after the polling loop: the wgmma instructions are .sync.aligned
    const uint32_t a = r.a(s) + half * 64 * 128, b = r.b(s);
    wgmma_fence();  // orders the registers' earlier accesses (the last tile's stores) before the wgmma
#pragma unroll
    for (int ks = 0; ks < kWsBK / 16; ++ks)
      wgmma_m64n256k16(d, smem_desc(a + 32 * ks), smem_desc(b + 32 * ks), kt > 0 || ks > 0);
    wgmma_commit();
    wgmma_wait<1>();
    if (kt > 0) release<kCluster>(r, (it - 1) % kWsStages);
  }
  wgmma_wait<0>();
  fence_acc(d);
  if (ktiles > 0) release<kCluster>(r, (it - 1) % kWsStages);
}

// The kernels' body around the pipeline: ring set-up, the register moves, and per output tile (tile_at(i) for
// i = 0, 1, ... until it returns false: its row and column of tiles) the producer's loads or the consumers'
// wgmma and stores. kCluster 2: the two blocks of a cluster must walk the same number of tiles; the producer
// ends by waiting for the last release of every stage, so no remote arrival or multicast of the peer's can
// target this block after it exited.
template <int kCluster, class TileAt>
__device__ __forceinline__ void run_ws_block(const TcGemm& g, const CUtensorMap* map_a, const CUtensorMap* map_b,
                                             uint8_t* smem_raw, uint64_t* full, uint64_t* empty, TileAt tile_at) {
  const Ring r = make_ring(smem_raw, full, empty);
  if (threadIdx.x == 0) init_ring<kCluster>(r);
  if constexpr (kCluster == 1)
    __syncthreads();
  else
    cluster_sync();  // the peer's barriers are initialized before this block multicasts or arrives on them
  __syncwarp();      // warp 0 converged again after thread 0's init: setmaxnreg is .sync.aligned
  const long long deadline = global_ns() + kWaitBudgetNs;
  const int wg = threadIdx.x / 128, ktiles = (g.K + kWsBK - 1) / kWsBK;
  uint32_t it = 0;
  int tm, tn;
  if (wg == 0) {
    regs_dealloc<kProducerRegs>();
    if (threadIdx.x == 0) {
      for (int i = 0; tile_at(i, tm, tn); ++i)
        produce_tile<kCluster>(r, map_a, map_b, tm * kWsBM, tn * kWsBN, ktiles, it, deadline);
      if constexpr (kCluster > 1)
        for (int s = 0; s < kWsStages; ++s, ++it) wait_stage_free(r, it, deadline);
    }
  } else {
    regs_alloc<kConsumerRegs>();
    const int half = wg - 1;
    float d[kAcc256];  // not zeroed: each tile's first wgmma ignores d (scale-d 0); zeroing it here would be a
                       // non-wgmma definition of the accumulators that makes ptxas serialize the wgmma (C7515)
    for (int i = 0; tile_at(i, tm, tn); ++i) {
      consume_tile<kCluster>(r, d, half, ktiles, it, deadline);
      store_acc256(g, d, tm * kWsBM + 64 * half, tn * kWsBN);
    }
  }
}

// The i-th tile of a grouped walk over a tiles_m x tiles_n grid of output tiles (kernels 14, 15): groups of
// `group` tile rows (the last group may be narrower), column-major inside a group. A bijection of
// [0, tiles_m tiles_n).
__device__ __forceinline__ void grouped_tile(int t, int tiles_m, int tiles_n, int group, int& tm, int& tn) {
  const int g = t / (group * tiles_n);
  const int first_m = g * group;
  const int rows = min(group, tiles_m - first_m);
  const int in_group = t - g * group * tiles_n;
  tm = first_m + in_group % rows;
  tn = in_group / rows;
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// Host: refuses K % 8 != 0 (TMA's 16-byte row pitch); false when there is nothing to launch (an empty C, or
// K = 0, whose C = 0 is written here: a tensor map of zero width does not exist).
inline bool ws_needs_launch(const TcGemm& g, const char* name) {
  if (g.K % 8 != 0)
    throw std::invalid_argument(std::string(name) + ": K = " + std::to_string(g.K) + " is not a multiple of 8");
  if (g.M == 0 || g.N == 0) return false;
  if (g.K == 0) {
    CUDA_CHECK(cudaMemsetAsync(g.C, 0, size_t(g.M) * g.N * sizeof(float)));
    return false;
  }
  return true;
}

}  // namespace mh::gemm::tc::ws

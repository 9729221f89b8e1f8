// Counting model of the BF16 tensor-core GEMM ladder (kernels 9-15, gemm/9_wmma.cuh ... gemm/15_wgmma_multicast_sm90a.cu):
// what each kernel asks of each unit at a shape, counted on the host from the kernels' own geometry
// (gemm/tc_shape.hpp: tiles, warps, stages, layouts and the ldmatrix lane addressing, shared with the kernels).
// gemm/bench_tc_gemm.cu exports the counts as model_* predictions; gpubench/analysis/predict.py turns them into
// a time with unit costs measured in the same run; gpubench/analysis/ncu_table.py sets them beside ncu's counters.
//
// What is counted (whole grid):
//   tensor-core instructions by shape: WMMA m16n16k16 (warp), mma.sync m16n8k16 (warp), wgmma m64nNk16
//     (warpgroup); FLOPs executed (whole tiles: tile quantization's padding included);
//   bytes delivered into shared memory per copy path (ld.global + st.shared, cp.async, TMA, TMA multicast) and
//     the bytes L2 sends (a multicast tile is read once for the cluster); compulsory DRAM bytes; C store bytes;
//   shared-memory wavefronts: ldmatrix (model/bank_model.hpp on the kernels' lane addresses), WMMA fragment loads
//     and staging (conflict-free by the padded layout: 128 bytes a wavefront), the tiles' fill (st.shared through
//     the bank model; asynchronous copies write whole 128-byte rows);
//   barriers: __syncthreads / cluster barriers per block, mbarrier waits per warp;
//   blocks launched, waves (work units over resident slots) and tile quantization (useful / computed C).
#pragma once
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemm/tc_shape.hpp"
#include "model/bank_model.hpp"

namespace mh::model {

enum class TcKernel {
  wmma, mma_swizzled, mma_conflicted, cp_async, cp_async_1stage,
  wgmma_tma, wgmma_ws, wgmma_persistent, wgmma_multicast
};
enum class TcMath { wmma, mma_sync, wgmma };
enum class TcCopy { ld_global, cp_async, tma, tma_multicast };

// One kernel's geometry, every number from gemm/tc_shape.hpp.
struct TcPlan {
  const char* name;  // as the ladder's table (gemm/tc_gemm.cu) and the benchmarks name it
  int BM, BN, BK, threads, stages;
  TcMath math;
  TcCopy copy;
  gemm::tc::Layout layout;  // kernels 9-11's shared layout (the TMA kernels write the swizzled one)
  int wgmma_n = 0;          // wgmma's n (0: no wgmma)
  int warpgroups = 0;       // warpgroups issuing wgmma
  bool warp_specialized = false;
  bool persistent = false;
  int cluster = 1;
};

inline std::vector<TcPlan> tc_plans() {
  namespace t = gemm::tc;
  using L = gemm::tc::Layout;
  const auto block = [](const char* name, int stages, TcMath math, TcCopy copy, L layout) {
    return TcPlan{name, t::BM, t::BN, t::BK, t::kThreads, stages, math, copy, layout};
  };
  const auto ws = [](const char* name, bool persistent, int cluster) {
    return TcPlan{name, t::kWsBM, t::kWsBN, t::kWsBK, t::kWsThreads, t::kWsStages, TcMath::wgmma,
                  cluster > 1 ? TcCopy::tma_multicast : TcCopy::tma, L::swizzled, t::kWsN, t::kWsConsumerWarpgroups,
                  true, persistent, cluster};
  };
  return {
      block("wmma", 1, TcMath::wmma, TcCopy::ld_global, L::padded),
      block("mma_swizzled", 1, TcMath::mma_sync, TcCopy::ld_global, L::swizzled),
      block("mma_conflicted", 1, TcMath::mma_sync, TcCopy::ld_global, L::plain),
      block("cp_async", t::kCpAsyncStages, TcMath::mma_sync, TcCopy::cp_async, L::swizzled),
      block("cp_async_1stage", t::kCpAsyncAblationStages, TcMath::mma_sync, TcCopy::cp_async, L::swizzled),
      TcPlan{"wgmma_tma", t::BM, t::BN, t::BK, t::kWgmmaThreads, t::kWgmmaStages, TcMath::wgmma, TcCopy::tma,
             L::swizzled, t::kWgmmaN, t::kWgmmaThreads / 128},
      ws("wgmma_ws", false, 1),
      ws("wgmma_persistent", true, 1),
      ws("wgmma_multicast", true, t::kMulticastCluster),
  };
}

inline TcPlan tc_plan(TcKernel k) { return tc_plans().at(static_cast<size_t>(k)); }

// The plan named `name`; throws for a name the model does not know (cuBLAS).
inline TcPlan tc_plan(const std::string& name) {
  for (const TcPlan& p : tc_plans())
    if (name == p.name) return p;
  throw std::invalid_argument("no tensor-core GEMM model for '" + name + "'");
}

struct TcCounts {
  double tiles = 0, computed_tiles = 0, blocks = 0, k_tiles = 0;
  double waves = 0;              // work units (tiles; tile pairs with clusters) per resident slot
  double tile_quantization = 0;  // M N / (computed tiles x BM x BN)
  double flops = 0;              // executed, whole tiles
  double wmma = 0, mma_sync = 0, wgmma = 0;
  int wgmma_n = 0;
  double ld_global_bytes = 0, cp_async_bytes = 0, tma_bytes = 0, tma_multicast_bytes = 0;
  double smem_fill_bytes = 0, l2_read_bytes = 0, dram_bytes = 0, c_store_bytes = 0;
  double ldmatrix_inst = 0, ldmatrix_wavefronts = 0;
  double wmma_load_wavefronts = 0, wmma_stage_wavefronts = 0;
  double sts_inst = 0, smem_fill_wavefronts = 0;
  double block_barriers = 0, mbarrier_waits = 0;
  int blocks_per_sm = 0, threads_per_block = 0, stages = 0;
  bool warp_specialized = false;
};

// Wavefronts of one warp's ldmatrix .x4 (four 8-lane phases of 16-byte rows) at k16 step ks: A fragment
// `frag` (b = false) or B fragment pair `frag` (b = true) of the warp at (wm0, wn0), tile layout L.
template <gemm::tc::Layout L>
int ldmatrix_wavefronts(bool b, int wm0, int wn0, int frag, int ks) {
  std::vector<uint64_t> addr(kWarpSize);
  for (int lane = 0; lane < kWarpSize; ++lane) {
    const gemm::tc::TilePos p = b ? gemm::tc::ldsm_b_pos(wn0, frag, ks, lane) : gemm::tc::ldsm_a_pos(wm0, frag, ks, lane);
    addr[lane] = gemm::tc::chunk_offset<L>(p.row, p.chunk);
  }
  return smem_wavefronts(addr, 16);
}

// One block-tile's ldmatrix wavefronts (every warp, every k16 step, A and B), layout L.
template <gemm::tc::Layout L>
double block_tile_ldmatrix_wavefronts() {
  namespace t = gemm::tc;
  double wf = 0;
  for (int warp = 0; warp < t::kThreads / kWarpSize; ++warp) {
    const int wm0 = t::warp_m0(warp), wn0 = t::warp_n0(warp);
    for (int ks = 0; ks < t::BK / 16; ++ks) {
      for (int mi = 0; mi < t::kLdsmA; ++mi) wf += ldmatrix_wavefronts<L>(false, wm0, wn0, mi, ks);
      for (int nj = 0; nj < t::kLdsmB; ++nj) wf += ldmatrix_wavefronts<L>(true, wm0, wn0, nj, ks);
    }
  }
  return wf;
}

inline double block_tile_ldmatrix_wavefronts(gemm::tc::Layout l) {
  using L = gemm::tc::Layout;
  return l == L::plain ? block_tile_ldmatrix_wavefronts<L::plain>()
         : l == L::padded ? block_tile_ldmatrix_wavefronts<L::padded>()
                          : block_tile_ldmatrix_wavefronts<L::swizzled>();
}

// One tile's st.shared (load_tile: thread t's i-th chunk is chunk t + 256 i of the tile, 16-byte stores):
// {instructions, wavefronts} per tile of BM rows, layout L, through the bank model.
template <gemm::tc::Layout L>
std::pair<double, double> tile_store_wavefronts() {
  namespace t = gemm::tc;
  double inst = 0, wf = 0;
  std::vector<uint64_t> addr(kWarpSize);
  for (int warp = 0; warp < t::kThreads / kWarpSize; ++warp)
    for (int i = 0; i < t::kChunksPerThread; ++i) {
      for (int lane = 0; lane < kWarpSize; ++lane) {
        const int idx = warp * kWarpSize + lane + i * t::kThreads;
        addr[lane] = t::chunk_offset<L>(idx / t::kRowChunks, idx % t::kRowChunks);
      }
      inst += 1;
      wf += smem_wavefronts(addr, 16, 0xffffffffu, SmemOp::store);
    }
  return {inst, wf};
}

inline std::pair<double, double> tile_store_wavefronts(gemm::tc::Layout l) {
  using L = gemm::tc::Layout;
  return l == L::plain ? tile_store_wavefronts<L::plain>()
         : l == L::padded ? tile_store_wavefronts<L::padded>()
                          : tile_store_wavefronts<L::swizzled>();
}

// The grid: computed tiles, blocks launched and waves. Persistent kernels launch one block per resident slot
// (at most the tiles); kernel 15 launches clusters of `cluster` blocks, as many as fit (approximated here by the
// slots over the cluster size: cudaOccupancyMaxActiveClusters may give fewer where a GPC's SM count is odd).
inline void count_grid(const TcPlan& p, int64_t M, int64_t N, int sm_count, int blocks_per_sm, TcCounts& c) {
  const int64_t tiles_m = (M + p.BM - 1) / p.BM, tiles_n = (N + p.BN - 1) / p.BN;
  const int64_t units = (tiles_m + p.cluster - 1) / p.cluster * tiles_n;  // what one block (cluster) computes at once
  const int64_t slots = int64_t(sm_count) * blocks_per_sm / p.cluster;
  c.tiles = double(tiles_m * tiles_n);
  c.computed_tiles = double(units * p.cluster);
  c.blocks = double((p.persistent ? std::min(units, slots) : units) * p.cluster);
  c.waves = double(units) / double(slots);
  c.tile_quantization = double(M) * N / (c.computed_tiles * p.BM * p.BN);
}

// Bytes of the copies: delivered into shared memory per path, read from L2 (in-bounds bytes: zero-filled chunks
// read nothing; a multicast B tile once per cluster), compulsory DRAM bytes and C's stores.
inline void count_bytes(const TcPlan& p, int64_t M, int64_t N, int64_t K, TcCounts& c) {
  const int64_t tiles_m = (M + p.BM - 1) / p.BM, tiles_n = (N + p.BN - 1) / p.BN;
  const double a_fill = c.computed_tiles * c.k_tiles * p.BM * p.BK * 2, b_fill = c.computed_tiles * c.k_tiles * p.BN * p.BK * 2;
  c.smem_fill_bytes = a_fill + b_fill;
  switch (p.copy) {
    case TcCopy::ld_global: c.ld_global_bytes = c.smem_fill_bytes; break;
    case TcCopy::cp_async: c.cp_async_bytes = c.smem_fill_bytes; break;
    case TcCopy::tma: c.tma_bytes = c.smem_fill_bytes; break;
    case TcCopy::tma_multicast: c.tma_bytes = a_fill, c.tma_multicast_bytes = b_fill; break;
  }
  const double b_readers = p.copy == TcCopy::tma_multicast ? double((tiles_m + p.cluster - 1) / p.cluster) : double(tiles_m);
  c.l2_read_bytes = 2.0 * K * (double(tiles_n) * M + b_readers * N);
  c.dram_bytes = 2.0 * K * (M + N) + 4.0 * M * N;
  c.c_store_bytes = 4.0 * M * N;
}

// Tensor-core instructions and shared-memory wavefronts of the whole grid.
inline void count_math(const TcPlan& p, TcCounts& c) {
  namespace t = gemm::tc;
  const double block_tiles = c.computed_tiles * c.k_tiles, k16 = p.BK / 16.0;
  const double warps = p.threads / double(kWarpSize);
  c.flops = block_tiles * 2.0 * p.BM * p.BN * p.BK;
  if (p.math == TcMath::wgmma) {
    c.wgmma = block_tiles * k16 * p.warpgroups;
    c.wgmma_n = p.wgmma_n;
  } else if (p.math == TcMath::mma_sync) {
    c.mma_sync = block_tiles * k16 * warps * t::kMTiles * t::kNTiles;
    c.ldmatrix_inst = block_tiles * k16 * warps * (t::kLdsmA + t::kLdsmB);
    c.ldmatrix_wavefronts = block_tiles * block_tile_ldmatrix_wavefronts(p.layout);
  } else {
    // WMMA's fragment loads are the compiler's: each 16 x 16 BF16 fragment is 512 bytes, conflict-free in the
    // padded layout (8 rows 144 bytes apart: 8 bank groups), so 4 wavefronts. The epilogue stages each
    // 16 x 16 FP32 fragment through shared memory: 1 KiB stored and read back, 8 + 8 wavefronts.
    const int fa = t::WM / t::kWmmaEdge, fb = t::WN / t::kWmmaEdge;
    const int frag_bytes = t::kWmmaEdge * t::kWmmaEdge * 2, stage_bytes = t::kWmmaEdge * t::kWmmaEdge * 4;
    c.wmma = block_tiles * k16 * warps * fa * fb;
    c.wmma_load_wavefronts = block_tiles * k16 * warps * (fa + fb) * frag_bytes / double(kTileRowBytes);
    c.wmma_stage_wavefronts = c.computed_tiles * warps * fa * fb * 2.0 * stage_bytes / kTileRowBytes;
  }
  if (p.copy == TcCopy::ld_global) {
    const auto [inst, wf] = tile_store_wavefronts(p.layout);  // per 128-row tile; A and B alike (BM == BN)
    c.sts_inst = block_tiles * 2 * inst;
    c.smem_fill_wavefronts = block_tiles * 2 * wf;
  } else {
    c.smem_fill_wavefronts = c.smem_fill_bytes / kTileRowBytes;
  }
}

// Barriers: kernels 9-11 two __syncthreads per k-tile (tile complete; every warp done reading); kernel 12 one
// after the mbarrier init and one per k-tile, and every warp waits on the stage's mbarrier per k-tile; kernels
// 13-15 one block (cluster) barrier after the init, the consumer warps wait on the full barrier per k-tile,
// the producer thread on the empty barrier per k-tile but the first fill of each stage (kernel 15's producer
// also waits out the last release of every stage before it exits).
inline void count_barriers(const TcPlan& p, TcCounts& c) {
  const double warps = p.threads / double(kWarpSize), block_tiles = c.computed_tiles * c.k_tiles;
  if (p.copy == TcCopy::ld_global || p.copy == TcCopy::cp_async) {
    c.block_barriers = block_tiles * 2;
  } else if (!p.warp_specialized) {
    c.block_barriers = c.blocks + block_tiles;
    c.mbarrier_waits = block_tiles * warps;
  } else {
    const double fills_per_block = block_tiles / c.blocks;
    const double producer = std::max(0.0, fills_per_block - p.stages) + (p.cluster > 1 ? p.stages : 0);
    c.block_barriers = c.blocks;
    c.mbarrier_waits = block_tiles * p.warpgroups * 4 + c.blocks * producer;
  }
}

// blocks_per_sm: resident blocks per SM (the caller's: the compiled kernel's on the GPU, the facts' otherwise).
inline TcCounts count_tc_gemm(const TcPlan& p, int64_t M, int64_t N, int64_t K, int sm_count, int blocks_per_sm) {
  if (M < 1 || N < 1 || K < 1) throw std::invalid_argument("tensor-core GEMM model needs M, N, K >= 1");
  if (K % 8 != 0) throw std::invalid_argument("tensor-core GEMM model needs K % 8 == 0, as the kernels do");
  if (sm_count < 1 || blocks_per_sm < 1) throw std::invalid_argument("tensor-core GEMM model needs SMs and blocks per SM >= 1");
  if (int64_t(sm_count) * blocks_per_sm < p.cluster) throw std::invalid_argument("no cluster fits the GPU");
  TcCounts c;
  c.blocks_per_sm = blocks_per_sm;
  c.threads_per_block = p.threads;
  c.stages = p.stages;
  c.warp_specialized = p.warp_specialized;
  c.k_tiles = double((K + p.BK - 1) / p.BK);
  count_grid(p, M, N, sm_count, blocks_per_sm, c);
  count_bytes(p, M, N, K, c);
  count_math(p, c);
  count_barriers(p, c);
  return c;
}

}  // namespace mh::model

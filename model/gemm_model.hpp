// GEMM counting model: what kernels 1-8 and the two bank ablations (gemm/*.cuh) ask of each unit,
// counted on the host from their index arithmetic, for row-major A (MxK), B (KxN), C (MxN), beta = 0.
// Kernels 3-8's index maps and kernels 4-8's shapes are gemm/tile_maps.hpp's: the kernels compile from the
// same functions this model walks (count_tiled, count_smem_shared), so they are not restated here. What is
// the model's own: the loop order it enumerates a kernel's accesses in, how nvcc compiled the shared reads
// (as_read_width, kBlocktileReadWidth), and the counting rules below.
// The report multiplies each count by a unit cost measured in the same run (plots/bounds.py).
//
// Counts are warp-level instructions and requests, as ncu counts them:
//   global loads/stores: requests, 32-byte sectors and 128-byte lines (model/access_model.hpp);
//   shared loads/stores: instructions and wavefronts (model/bank_model.hpp; loads of 8 and 16 bytes with
//   the pair rule ncu showed for kernels 7-8, gemm_lds_wavefronts);
//   FFMA: thread instructions (ncu: smsp__sass_thread_inst_executed_op_ffma_pred_on.sum);
//   barriers: __syncthreads per block;
//   load rounds: per block, the tiles whose global loads it waits for at a barrier with nothing of its
//   own to do meanwhile (every tile with one shared buffer; with two, only the first: the next tile's
//   loads are in flight while it computes this one); kernels 1-2 have none;
//   L2 sectors read by L1: each block's tiles once (L1 keeps what the warps of one block share);
//   DRAM bytes: compulsory, A and B read once and C written once (L2 keeps every reuse);
//   DRAM bytes with L2 reuse, and the global-load requests whose L1 misses DRAM serves: kernels 1-3 by the
//   re-read rule of tile_reuse below; kernels 4-8 keep the compulsory count and no DRAM requests.
// The last three are assumptions; where ncu disagrees, the report says which cost the model lacks.
#pragma once
#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemm/tile_maps.hpp"
#include "model/access_model.hpp"
#include "model/bank_model.hpp"

namespace mh::model {

enum class GemmKernel {
  naive, coalesced, smem, smem_conflicted, smem_padded,
  blocktile_1d, blocktile_2d, vectorized, warptile, warptile_tuned
};

struct GemmCounts {
  double blocks = 0, warps = 0;
  double ffma_thread = 0, ffma_warp = 0;
  double ld_requests = 0, ld_sectors = 0, ld_lines = 0;
  double st_requests = 0, st_sectors = 0;
  double lds_inst = 0, lds_wavefronts = 0;
  double sts_inst = 0, sts_wavefronts = 0;
  double block_barriers = 0;
  double load_rounds = 0;  // summed over blocks, as block_barriers
  double l2_read_sectors = 0;
  double dram_bytes = 0;
  double dram_bytes_reuse = 0;  // with tile_reuse's rule (kernels 1-3; kernels 4-8: = dram_bytes)
  double ld_requests_dram = 0;  // of ld_requests: those of operands whose L1 misses DRAM serves (tile_reuse)
  int blocks_per_sm = 0;  // resident 1024-thread blocks per SM: the caller's, from the device facts
  int threads_per_block = 1024;
};

// 32-byte sectors and 128-byte lines of `count` contiguous floats from element `first`.
inline Footprint contiguous_floats(uint64_t first, uint64_t count) {
  if (count == 0) return {};
  const uint64_t b = first * 4, e = (first + count) * 4 - 1;
  return {static_cast<int>(e / kSectorBytes - b / kSectorBytes + 1), static_cast<int>(e / kLineBytes - b / kLineBytes + 1)};
}

// `count` lanes reading one float each, `ld` floats apart, from element `first`.
inline Footprint strided_floats(uint64_t first, uint64_t ld, int count) {
  if (ld * 4 >= kLineBytes) return {count, count};  // every lane its own line
  std::vector<uint64_t> a(count);
  for (int i = 0; i < count; ++i) a[i] = (first + i * ld) * 4;
  return global_footprint(a, 4);
}

// How nvcc (13.0, sm_90) compiled the shared-memory reads of kernel 3's inner loop: the As row reads are
// 16-byte LDS.128 where a row is 16-byte aligned (smem, smem_conflicted) and 4-byte LDS with padding.
// Read off `cuobjdump -sass`; README "GEMM model" shows the lines.
inline int as_read_width(GemmKernel k) { return k == GemmKernel::smem_padded ? 4 : 16; }

// Kernels 4-8 (gemm/4_blocktile_1d.cuh .. gemm/8_warptile_tuned.cuh): a BM x BN tile of C per block, K walked
// BK at a time through shared memory. Their shapes (named fields) and index maps are gemm/tile_maps.hpp's: the
// kernels compile from the same constants and functions this model walks.
using gemm::LaneMap;
using gemm::TileElem;
using gemm::TileShape;

constexpr TileShape tiled_shape(GemmKernel k) {
  switch (k) {
    case GemmKernel::blocktile_1d: return gemm::kBlocktile1d;
    case GemmKernel::blocktile_2d: return gemm::kBlocktile2d;
    case GemmKernel::vectorized: return gemm::kVectorized;
    case GemmKernel::warptile: return gemm::kWarptile;
    case GemmKernel::warptile_tuned: return gemm::kWarptileTuned;
    default: return TileShape{};
  }
}

// How nvcc compiled the scalar shared reads of kernels 4 and 5: each thread's 8 consecutive floats of
// an As row (and, in kernel 5, of a Bs row) as two LDS.128 (cuobjdump -sass; the run records the counts).
constexpr int kBlocktileReadWidth = 16;

// One warp-wide global access: the byte addresses of its active lanes, `width` bytes each.
struct WarpAccess {
  uint64_t addr[32];
  int n = 0;
};
// Sectors and lines of one warp access without allocating (the model counts millions of them).
inline Footprint warp_footprint(const WarpAccess& w, int width) {
  uint64_t sec[64], lin[64];
  int ns = 0, nl = 0;
  for (int i = 0; i < w.n; ++i) {
    const uint64_t a = w.addr[i], e = a + width - 1;
    for (uint64_t x = a / kSectorBytes; x <= e / kSectorBytes; ++x) sec[ns++] = x;
    for (uint64_t x = a / kLineBytes; x <= e / kLineBytes; ++x) lin[nl++] = x;
  }
  std::sort(sec, sec + ns);
  std::sort(lin, lin + nl);
  return {static_cast<int>(std::unique(sec, sec + ns) - sec), static_cast<int>(std::unique(lin, lin + nl) - lin)};
}

// Wavefronts of one warp-wide shared LOAD in the GEMM kernels. model/bank_model.hpp serves each phase
// (W / 4 phases of 32 * 4 / W lanes) on its own and lets the second phase of a pair ride along only when
// it asks for the first one's words. ncu on the H200 (results/h200/20261130T222947Z/ncu.csv) says that is
// wrong for two LDS.128 shapes of kernels 7-8: per k, kernel 7 issues 2 A + 2 B reads and spends 12
// wavefronts, kernel 8 2 A + 4 B and spends 20, so an A read (one float4 per quarter-warp, four distinct:
// 4 + 4 words per pair) takes 2, and a B read (the same 128 bytes in every quarter-warp) takes 4, where
// the bank model says 4 and 2. The rule here fits both and every pattern bank_model.hpp was checked on:
// a wavefront delivers 32 words and does not multicast across phases, so a pair of phases is served
// as one wavefront when its words, counted per phase, are at most 32 and no bank holds two different
// words of the pair; otherwise each phase as the bank model says. Pairs of 8 to 16 words per phase
// (kernel 7's checkerboard and LN = 4 maps, the sweep only) are not pinned by any ncu measurement.
inline int gemm_lds_wavefronts(const std::vector<uint64_t>& addrs, int width) {
  if (width == kBankBytes) return smem_wavefronts(addrs, width);
  const int lanes = kWarpSize * kBankBytes / width;  // per phase
  int wavefronts = 0;
  for (int first = 0; first < kWarpSize; first += 2 * lanes) {
    const uint32_t p0 = ((1u << lanes) - 1) << first, p1 = p0 << lanes;
    std::vector<uint64_t> words[2];
    for (int h = 0; h < 2; ++h) {
      for (int lane = first + h * lanes; lane < first + (h + 1) * lanes; ++lane)
        for (int k = 0; k < width / kBankBytes; ++k) words[h].push_back(addrs[lane] / kBankBytes + k);
      std::sort(words[h].begin(), words[h].end());
      words[h].erase(std::unique(words[h].begin(), words[h].end()), words[h].end());
    }
    std::vector<uint64_t> pair_bytes;  // the pair's words as one 4-byte access each: conflict-free = 1 wavefront
    for (const auto& ws : words)
      for (uint64_t x : ws) pair_bytes.push_back(x * kBankBytes);
    std::sort(pair_bytes.begin(), pair_bytes.end());
    pair_bytes.erase(std::unique(pair_bytes.begin(), pair_bytes.end()), pair_bytes.end());
    const bool one = words[0].size() + words[1].size() <= size_t(kWarpSize) && smem_wavefronts(pair_bytes, kBankBytes) == 1;
    wavefronts += one ? 1 : smem_wavefronts(addrs, width, p0) + smem_wavefronts(addrs, width, p1);
  }
  return wavefronts;
}

// What count_tiled's parts share: the kernel, its shape and the problem in tiles.
struct TiledGrid {
  GemmKernel kernel;
  TileShape s;
  int64_t M, N, K, Mt, Nt, Kt;
  bool vec;   // the 16-byte path (gemm/blocktile.cuh vectorizable(); cudaMalloc'd buffers are aligned)
  int warps;  // per block
};
inline bool warp_tiled(GemmKernel k) { return k == GemmKernel::warptile || k == GemmKernel::warptile_tuned; }

// Launch-level counts: blocks, warps, FFMA, barriers, load rounds, compulsory DRAM bytes.
inline GemmCounts tiled_launch(const TiledGrid& g, int blocks_per_sm) {
  const TileShape& s = g.s;
  GemmCounts c;
  c.blocks = double(g.Mt * g.Nt);
  c.warps = c.blocks * g.warps;
  c.threads_per_block = s.threads;
  c.blocks_per_sm = blocks_per_sm;
  c.dram_bytes = 4.0 * (g.M * g.K + g.K * g.N + g.M * g.N);
  // Every thread of every block runs every tile (edge tiles zero-filled): whole tiles of FFMA.
  c.ffma_thread = c.blocks * g.Kt * double(s.BM) * s.BN * s.BK;
  c.ffma_warp = c.ffma_thread / 32;
  c.block_barriers = c.blocks * (s.stages == 2 ? g.Kt + 1 : warp_tiled(g.kernel) ? 2 * g.Kt + 1 : 2 * g.Kt);
  c.load_rounds = c.blocks * (s.stages == 2 ? 1 : g.Kt);
  return c;
}

enum class Operand { a, b };
// Requests, sectors and lines over every warp load of one tile, and the distinct sectors the block fetches
// from L2 (L1 serves repeats within the block). requests < 0: not counted yet.
struct TileCount {
  double requests = -1, sectors = 0, lines = 0, l2 = 0;
};

// One tile of X (rows x cols, row-major) at (r0, c0): thread t's i-th load reads the tile element of the
// kernel's map (a_load, b_load), load_floats wide (one float4, or on the scalar path four 4-byte loads).
inline TileCount count_tile(const TiledGrid& g, Operand op, int64_t rows, int64_t cols, int64_t r0, int64_t c0,
                            std::vector<uint64_t>& sectors) {
  const TileShape& s = g.s;
  const int loads = op == Operand::a ? gemm::a_loads(s) : gemm::b_loads(s), w = s.load_floats;
  const int parts = g.vec || w == 1 ? 1 : 4, width = g.vec ? 4 * w : 4;
  TileCount tc{0, 0, 0, 0};
  sectors.clear();
  for (int warp = 0; warp < g.warps; ++warp)
    for (int i = 0; i < loads; ++i)
      for (int part = 0; part < parts; ++part) {
        WarpAccess a;
        for (int lane = 0; lane < 32; ++lane) {
          const unsigned t = warp * 32 + lane;
          const TileElem e = op == Operand::a ? gemm::a_load(s, t, i) : gemm::b_load(s, t, i);
          const int64_t r = r0 + e.row, col = c0 + e.col + part;
          if (r < rows && col < cols) a.addr[a.n++] = uint64_t(r * cols + col) * 4;
        }
        const Footprint f = warp_footprint(a, width);
        tc.requests += 1;
        tc.sectors += f.sectors;
        tc.lines += f.lines;
        for (int j = 0; j < a.n; ++j)
          for (uint64_t x = a.addr[j] / kSectorBytes; x <= (a.addr[j] + width - 1) / kSectorBytes; ++x) sectors.push_back(x);
      }
  std::sort(sectors.begin(), sectors.end());
  tc.l2 = double(std::unique(sectors.begin(), sectors.end()) - sectors.begin());
  return tc;
}

// Every block's loads of one operand: A's tile (by, t) is read by the Nt blocks of row by, B's (t, bx) by the
// Mt of column bx. A tile inside X (no lane guarded off) depends only on where its first element falls in a
// 128-byte line: those are counted once per alignment.
inline void add_tile_loads(const TiledGrid& g, Operand op, GemmCounts& c) {
  const bool is_a = op == Operand::a;
  const int64_t rows = is_a ? g.M : g.K, cols = is_a ? g.K : g.N, across = is_a ? g.Mt : g.Nt;
  const int tile_rows = is_a ? g.s.BM : g.s.BK, tile_cols = is_a ? g.s.BK : g.s.BN;
  const double times = double(is_a ? g.Nt : g.Mt);
  TileCount cache[32];
  std::vector<uint64_t> sectors;
  for (int64_t t = 0; t < g.Kt; ++t)
    for (int64_t b = 0; b < across; ++b) {
      const int64_t r0 = is_a ? b * g.s.BM : t * g.s.BK, c0 = is_a ? t * g.s.BK : b * g.s.BN;
      const bool inside = r0 + tile_rows <= rows && c0 + tile_cols <= cols;
      const int key = int((r0 * cols + c0) % 32);
      TileCount tc;
      if (inside && cache[key].requests >= 0) {
        tc = cache[key];
      } else {
        tc = count_tile(g, op, rows, cols, r0, c0, sectors);
        if (inside) cache[key] = tc;
      }
      c.ld_requests += tc.requests * times;
      c.ld_sectors += tc.sectors * times;
      c.ld_lines += tc.lines * times;
      c.l2_read_sectors += tc.l2 * times;
    }
}

// The C stores of one thread, as the kernels' epilogues loop over the shared patch maps: kernels 4-6 their
// TM x TN patch row by row, `width` floats at a time (STG.128 or, scalar, 4 STG; kernels 4-5 one STG per
// float); kernels 7-8 (i, r, j): sub-tile row i, patch row r, sub-tile column j, a float4 each.
struct CStores {
  int count, width;
};
inline CStores c_stores(const TiledGrid& g) {
  const TileShape& s = g.s;
  if (warp_tiled(g.kernel)) return {s.WM / gemm::sub_m(s) * s.TM * (s.WN / gemm::sub_n(s)), 4};
  const int width = g.kernel == GemmKernel::vectorized ? 4 : 1;
  return {s.TM * s.TN / width, width};
}
inline TileElem c_store_elem(const TiledGrid& g, const CStores& cs, unsigned t, int j) {
  const TileShape& s = g.s;
  if (warp_tiled(g.kernel)) {
    const int niter = s.WN / gemm::sub_n(s), i = j / (s.TM * niter), r = j / niter % s.TM, jn = j % niter;
    const TileElem e = gemm::warptile_patch(s, gemm::warptile_origin(s, t), i, jn);
    return {e.row + r, e.col};
  }
  const int per_row = s.TN / cs.width;
  return gemm::patch_elem(s, gemm::thread_patch(s, t), j / per_row, j % per_row * cs.width);
}

// Requests and sectors of every block's C stores; an inside tile's sectors are counted once per alignment.
inline void add_c_stores(const TiledGrid& g, GemmCounts& c) {
  const CStores cs = c_stores(g);
  const int parts = g.vec || cs.width == 1 ? 1 : 4;
  double cache[32];
  std::fill(cache, cache + 32, -1.0);
  for (int64_t by = 0; by < g.Mt; ++by)
    for (int64_t bx = 0; bx < g.Nt; ++bx) {
      const int64_t r0 = by * g.s.BM, c0 = bx * g.s.BN;
      const bool inside = r0 + g.s.BM <= g.M && c0 + g.s.BN <= g.N;
      const int key = int((r0 * g.N + c0) % 32);
      c.st_requests += double(g.warps) * cs.count * parts;
      if (inside && cache[key] >= 0) {
        c.st_sectors += cache[key];
        continue;
      }
      double sectors = 0;
      for (int warp = 0; warp < g.warps; ++warp)
        for (int j = 0; j < cs.count; ++j)
          for (int part = 0; part < parts; ++part) {
            WarpAccess a;
            for (int lane = 0; lane < 32; ++lane) {
              const TileElem e = c_store_elem(g, cs, warp * 32 + lane, j);
              const int64_t r = r0 + e.row, col = c0 + e.col + part;
              if (r < g.M && col < g.N) a.addr[a.n++] = uint64_t(r * g.N + col) * 4;
            }
            sectors += warp_footprint(a, g.vec ? 4 * cs.width : 4).sectors;
          }
      if (inside) cache[key] = sectors;
      c.st_sectors += sectors;
    }
}

// Shared-memory instructions and wavefronts of one warp and tile. Byte addresses from the start of a
// stage: As (gemm::as_word), then Bs (gemm::bs_word, BM BK words on).
struct SmemTally {
  double lds_inst = 0, lds_wf = 0, sts_inst = 0, sts_wf = 0;
};
inline uint64_t bs_bytes(const TileShape& s, TileElem e) { return 4 * (uint64_t(s.BM) * s.BK + gemm::bs_word(s, e)); }

// The stores of the loaded tiles: A one STS per float (transposed: four per float4), B one STS (STS.128) per load.
inline void add_tile_stores(const TiledGrid& g, int warp, SmemTally& m) {
  const TileShape& s = g.s;
  std::vector<uint64_t> addr(32);
  for (int i = 0; i < gemm::a_loads(s); ++i)
    for (int j = 0; j < s.load_floats; ++j) {
      for (int lane = 0; lane < 32; ++lane) {
        const TileElem e = gemm::a_load(s, warp * 32 + lane, i);
        addr[lane] = 4 * uint64_t(gemm::as_word(s, {e.row, e.col + j}));
      }
      m.sts_inst += 1;
      m.sts_wf += smem_wavefronts(addr, 4, 0xffffffffu, SmemOp::store);
    }
  for (int i = 0; i < gemm::b_loads(s); ++i) {
    for (int lane = 0; lane < 32; ++lane) addr[lane] = bs_bytes(s, gemm::b_load(s, warp * 32 + lane, i));
    m.sts_inst += 1;
    m.sts_wf += smem_wavefronts(addr, 4 * s.load_floats, 0xffffffffu, SmemOp::store);
  }
}

// The reads of k-step k: each thread's row of A and column of B from the shared patch maps, read as nvcc
// compiled them (kernels 4-5: kBlocktileReadWidth bytes of an As row cover that many k; 6-8: LDS.128).
inline void add_tile_reads(const TiledGrid& g, int warp, int k, SmemTally& m) {
  const TileShape& s = g.s;
  std::vector<uint64_t> addr(32);
  auto reads = [&](int count, int width, auto bytes) {  // bytes(t, q): where thread t's read q starts
    for (int q = 0; q < count; ++q) {
      for (int lane = 0; lane < 32; ++lane) addr[lane] = bytes(unsigned(warp * 32 + lane), q);
      m.lds_inst += 1;
      m.lds_wf += gemm_lds_wavefronts(addr, width);
    }
  };
  auto a_at = [&](TileElem e) { return 4 * uint64_t(gemm::as_word(s, e)); };
  if (warp_tiled(g.kernel)) {
    auto patch = [&](unsigned t, int i, int j) { return gemm::warptile_patch(s, gemm::warptile_origin(s, t), i, j); };
    reads(s.WM / gemm::sub_m(s), 16, [&](unsigned t, int i) { return a_at({patch(t, i, 0).row, k}); });
    reads(s.WN / gemm::sub_n(s), 16, [&](unsigned t, int j) { return bs_bytes(s, {k, patch(t, 0, j).col}); });
    return;
  }
  auto elem = [&](unsigned t, int m_, int n) { return gemm::patch_elem(s, gemm::thread_patch(s, t), m_, n); };
  if (g.kernel == GemmKernel::vectorized) {
    reads(s.TM / 4, 16, [&](unsigned t, int q) { return a_at({elem(t, 4 * q, 0).row, k}); });
    reads(s.TN / 4, 16, [&](unsigned t, int q) { return bs_bytes(s, {k, elem(t, 0, 4 * q).col}); });
    return;
  }
  const int per = kBlocktileReadWidth / 4;  // kernels 4-5
  if (k % per == 0) reads(s.TM, kBlocktileReadWidth, [&](unsigned t, int m_) { return a_at({elem(t, m_, 0).row, k}); });
  if (s.TN == 1)
    reads(1, 4, [&](unsigned t, int) { return bs_bytes(s, {k, elem(t, 0, 0).col}); });
  else
    reads(s.TN * 4 / kBlocktileReadWidth, kBlocktileReadWidth,
          [&](unsigned t, int q) { return bs_bytes(s, {k, elem(t, 0, q * per).col}); });
}

// Shared memory per block and tile is the same for every tile: the tile stores, then BK k-steps of reads.
inline void add_tile_smem(const TiledGrid& g, GemmCounts& c) {
  SmemTally m;
  for (int warp = 0; warp < g.warps; ++warp) {
    add_tile_stores(g, warp, m);
    for (int k = 0; k < g.s.BK; ++k) add_tile_reads(g, warp, k, m);
  }
  const double block_tiles = c.blocks * g.Kt;
  c.lds_inst = m.lds_inst * block_tiles;
  c.lds_wavefronts = m.lds_wf * block_tiles;
  c.sts_inst = m.sts_inst * block_tiles;
  c.sts_wavefronts = m.sts_wf * block_tiles;
}

// `s`: the kernel's shape (tiled_shape), or another candidate of the same kernel (the sweep's, a test's).
// blocks_per_sm: resident blocks per SM on the device (the caller's, from its facts), carried like count_gemm's.
inline GemmCounts count_tiled(GemmKernel kernel, const TileShape& s, int64_t M, int64_t N, int64_t K,
                              int blocks_per_sm) {
  if (!gemm::tiles_evenly(s)) throw std::invalid_argument("GEMM model: a tile shape that does not tile evenly");
  const TiledGrid g{kernel, s, M, N, K, (M + s.BM - 1) / s.BM, (N + s.BN - 1) / s.BN, (K + s.BK - 1) / s.BK,
                    kernel >= GemmKernel::vectorized && K % 4 == 0 && N % 4 == 0, s.threads / 32};
  GemmCounts c = tiled_launch(g, blocks_per_sm);
  add_tile_loads(g, Operand::a, c);
  add_tile_loads(g, Operand::b, c);
  add_c_stores(g, c);
  add_tile_smem(g, c);
  return c;
}

// An L2 that keeps every reuse: count_gemm's default, the compulsory-only count.
constexpr double kL2KeepsAll = std::numeric_limits<double>::infinity();

// Where the L1 misses of each operand are served, for kernels 1-3: a grid of T x T tiles of C (T = 32), Mt row
// blocks by Nt column panels, blockIdx.x (the row block) fastest, so block (bx, by) is launched bx + by * Mt-th
// and reads A's row strip bx and B's column panel by, all of K. The L2 reuse rule: a line is next read by the
// next block in launch order that reads its strip or panel (A: Mt blocks later, B: the next block); between the
// two reads the grid touches the distinct bytes of the blocks launched from the one to the other (their A
// strips, B panels and C tiles): the line's re-read distance. When it exceeds L2 (the device facts), L2 has
// evicted the line and DRAM serves the re-read; else L2 does. An operand read by one block only is read once.
// Residency does not shorten A's distance although the resident grid (2 x 132 blocks on the H200) spans
// two column panels: ncu counts 7.7-8.5 GB of DRAM traffic for kernels 1-3 at 4096^3, A once per panel
// (8.6 GB), not the half of that which panels sharing A's lines in L2 would leave (docs/families/gemm.md).
struct TileReuse {
  double a_distance = 0, b_distance = 0;  // bytes; 0: never re-read
  bool a_dram = false, b_dram = false;    // DRAM serves the operand's L1 misses
};
inline TileReuse tile_reuse(int64_t M, int64_t N, int64_t K, double l2_bytes) {
  constexpr int64_t T = 32;
  const int64_t Mt = (M + T - 1) / T, Nt = (N + T - 1) / T;
  auto window = [&](int64_t strips, int64_t panels, int64_t blocks) {  // bytes of consecutive blocks
    return 4.0 * (double(K) * std::min(M, strips * T) + double(K) * std::min(N, panels * T) +
                  double(std::min(M * N, blocks * T * T)));
  };
  TileReuse r;
  if (Nt > 1) r.a_distance = window(Mt, 2, Mt + 1);  // (bx, by) .. (bx, by + 1): every strip, two panels
  if (Mt > 1) r.b_distance = window(2, 1, 2);        // (bx, by), (bx + 1, by)
  r.a_dram = r.a_distance > l2_bytes;
  r.b_dram = r.b_distance > l2_bytes;
  return r;
}

// Kernels 1-3's grid: T x T tiles of C (T = gemm::kTile, also the warp size), Mt row blocks by Nt column panels.
struct SimpleGrid {
  static constexpr int T = gemm::kTile;
  int64_t M, N, K, Mt, Nt, Kt;
  SimpleGrid(int64_t m, int64_t n, int64_t k) : M(m), N(n), K(k), Mt((m + T - 1) / T), Nt((n + T - 1) / T), Kt((k + T - 1) / T) {}
  int rows_in(int64_t bx) const { return static_cast<int>(std::min<int64_t>(T, M - bx * T)); }
  int cols_in(int64_t by) const { return static_cast<int>(std::min<int64_t>(T, N - by * T)); }
};
inline void add_ld(GemmCounts& c, Footprint f, double times) {
  c.ld_requests += times;
  c.ld_sectors += f.sectors * times;
  c.ld_lines += f.lines * times;
}
inline void add_st(GemmCounts& c, Footprint f, double times) {
  c.st_requests += times;
  c.st_sectors += f.sectors * times;
}
// Each operand's load requests (A's, B's): what serve() splits by where their misses are served.
struct OperandRequests {
  double a = 0, b = 0;
};

// Kernel 1: a warp is 32 rows (threadIdx.x) of one column. A[row][k] strided by K, B[k][col] a broadcast.
inline OperandRequests count_naive(const SimpleGrid& g, GemmCounts& c) {
  constexpr int T = SimpleGrid::T;
  c.ffma_warp = double(g.Mt) * g.N * g.K;  // warps whose column is inside C
  for (int64_t bx = 0; bx < g.Mt; ++bx) {
    for (int64_t k = 0; k < g.K; ++k) add_ld(c, strided_floats(bx * T * g.K + k, g.K, g.rows_in(bx)), double(g.N));
    add_st(c, strided_floats(bx * T * g.N, g.N, g.rows_in(bx)), double(g.N));
  }
  const double a_req = c.ld_requests;
  for (int64_t bx = 0; bx < g.Mt; ++bx) add_ld(c, {1, 1}, double(g.N) * g.K);
  return {a_req, c.ld_requests - a_req};
}

// Kernel 2: a warp is 32 columns of one row. A[row][k] a broadcast, B[k][col] one row segment.
inline OperandRequests count_coalesced(const SimpleGrid& g, GemmCounts& c) {
  constexpr int T = SimpleGrid::T;
  c.ffma_warp = double(g.M) * g.Nt * g.K;
  add_ld(c, {1, 1}, double(g.M) * g.Nt * g.K);
  const double a_req = c.ld_requests;
  for (int64_t by = 0; by < g.Nt; ++by) {
    for (int64_t k = 0; k < g.K; ++k) add_ld(c, contiguous_floats(k * g.N + by * T, g.cols_in(by)), double(g.M));
    for (int64_t x = 0; x < g.M; ++x) add_st(c, contiguous_floats(x * g.N + by * T, g.cols_in(by)), 1);
  }
  return {a_req, c.ld_requests - a_req};
}

// Kernel 3 and its ablations, global side: warp ly loads row ly of the A tile and row ly of the B tile
// (predicated per lane) and stores row ly of the C tile (gemm::smem_tile_thread).
inline OperandRequests count_smem_global(const SimpleGrid& g, GemmCounts& c) {
  constexpr int T = SimpleGrid::T;
  for (int64_t x = 0; x < g.M; ++x)
    for (int64_t t = 0; t < g.K; t += T) add_ld(c, contiguous_floats(x * g.K + t, std::min<int64_t>(T, g.K - t)), double(g.Nt));
  const double a_req = c.ld_requests;
  for (int64_t by = 0; by < g.Nt; ++by)
    for (int64_t k = 0; k < g.K; ++k) add_ld(c, contiguous_floats(k * g.N + by * T, g.cols_in(by)), double(g.Mt));
  c.l2_read_sectors = c.ld_sectors;  // one block never re-reads a tile; no reuse across blocks assumed
  for (int64_t by = 0; by < g.Nt; ++by)
    for (int64_t x = 0; x < g.M; ++x) add_st(c, contiguous_floats(x * g.N + by * T, g.cols_in(by)), 1);
  return {a_req, c.ld_requests - a_req};
}

// Kernel 3 and its ablations, shared side, per warp and tile: two conflict-free STS (a row of each tile),
// then 32 k-steps reading As[ty][k] and Bs[k][tx], (ty, tx) the compute map of gemm::smem_tile_thread
// (kernel 3: a warp is a row of C, As a broadcast; ablations: a column, Bs a broadcast).
inline void count_smem_shared(GemmKernel kernel, const SimpleGrid& g, GemmCounts& c) {
  constexpr int T = SimpleGrid::T;
  const bool transposed = kernel != GemmKernel::smem;
  const int as_stride = kernel == GemmKernel::smem_padded ? T + 1 : T;  // words per As row
  const int w = as_read_width(kernel);
  std::vector<uint64_t> as_addr(T), bs_addr(T), epi(T), back(T);
  for (int lane = 0; lane < T; ++lane) {  // warp 0, k = 0
    const TileElem me = gemm::smem_tile_thread(lane, transposed), io = gemm::smem_tile_thread(lane, false);
    as_addr[lane] = uint64_t(me.row) * as_stride * 4;
    bs_addr[lane] = uint64_t(me.col) * 4;
    epi[lane] = (uint64_t(me.row) * as_stride + me.col) * 4;  // the ablations' epilogue: As[ty][tx] = acc
    back[lane] = (uint64_t(io.row) * as_stride + io.col) * 4;  // ... read back as As[ly][lx]
  }
  const double as_inst = T * 4 / w, as_wf = gemm_lds_wavefronts(as_addr, w);
  const double bs_inst = T, bs_wf = gemm_lds_wavefronts(bs_addr, 4);
  const double per_warp_tiles = c.warps * g.Kt;
  c.sts_inst = 2 * per_warp_tiles;
  c.sts_wavefronts = 2 * per_warp_tiles;
  c.lds_inst = per_warp_tiles * (as_inst + bs_inst);
  c.lds_wavefronts = per_warp_tiles * (as_inst * as_wf + bs_inst * bs_wf);
  c.block_barriers = c.blocks * 2 * g.Kt;
  c.load_rounds = c.blocks * g.Kt;  // one shared buffer: every tile's loads, then a barrier
  if (!transposed) return;
  // Epilogue: C goes back through As and out with kernel 3's mapping.
  c.sts_inst += c.warps;
  c.sts_wavefronts += c.warps * smem_wavefronts(epi, 4, 0xffffffffu, SmemOp::store);
  c.lds_inst += c.warps;
  c.lds_wavefronts += c.warps * smem_wavefronts(back, 4);
  c.block_barriers += c.blocks;
}

// blocks_per_sm: resident blocks per SM on the device (gemm/bench_gemm.cu: from its facts), carried
// for the barrier bound (plots/bounds.py) and the occupancy; nothing else here depends on it.
// l2_bytes: the device's L2 (its facts), for tile_reuse; the default keeps every reuse in L2.
inline GemmCounts count_gemm(GemmKernel kernel, int64_t M, int64_t N, int64_t K, int blocks_per_sm,
                             double l2_bytes = kL2KeepsAll) {
  if (M < 1 || N < 1 || K < 1) throw std::invalid_argument("GEMM model needs M, N, K >= 1");
  if (blocks_per_sm < 1) throw std::invalid_argument("GEMM model needs blocks_per_sm >= 1");
  if (kernel >= GemmKernel::blocktile_1d) {
    GemmCounts c = count_tiled(kernel, tiled_shape(kernel), M, N, K, blocks_per_sm);
    c.dram_bytes_reuse = c.dram_bytes;  // tile_reuse's grid is kernels 1-3's; these keep the compulsory count
    return c;
  }
  constexpr int T = SimpleGrid::T;
  const SimpleGrid g(M, N, K);
  GemmCounts c;
  c.blocks = static_cast<double>(g.Mt * g.Nt);
  c.blocks_per_sm = blocks_per_sm;
  c.dram_bytes = 4.0 * (M * K + K * N + M * N);
  // The distinct sectors of every block's 32 rows of A and 32-column strip of B, summed over the blocks:
  // what L1 fetches once per block, and what DRAM sends for an operand whose misses it serves.
  double a_l2 = 0, b_l2 = 0;
  for (int64_t bx = 0; bx < g.Mt; ++bx)
    for (int64_t x = bx * T; x < bx * T + g.rows_in(bx); ++x) a_l2 += g.Nt * contiguous_floats(x * K, K).sectors;
  for (int64_t by = 0; by < g.Nt; ++by)
    for (int64_t k = 0; k < K; ++k) b_l2 += g.Mt * contiguous_floats(k * N + by * T, g.cols_in(by)).sectors;

  OperandRequests req;
  if (kernel == GemmKernel::naive || kernel == GemmKernel::coalesced) {
    c.ffma_thread = double(M) * N * K;  // one thread per element of C; threads outside C return at once
    c.l2_read_sectors = a_l2 + b_l2;    // L2: each block reads its rows of A and its strip of B once
    c.warps = double(g.Mt * g.Nt) * T;  // warps launched (whole 32x32 blocks)
    req = kernel == GemmKernel::naive ? count_naive(g, c) : count_coalesced(g, c);
  } else {
    // Kernel 3 and its ablations: every thread of every block runs every tile (out-of-range elements are
    // zero-filled), so FFMA, shared accesses and barriers count whole tiles.
    c.warps = c.blocks * T;
    c.ffma_warp = c.warps * g.Kt * T;
    c.ffma_thread = c.ffma_warp * T;
    req = count_smem_global(g, c);
    count_smem_shared(kernel, g, c);
  }
  // Each operand's requests, and where tile_reuse says its misses are served.
  const TileReuse reuse = tile_reuse(M, N, K, l2_bytes);
  c.ld_requests_dram = (reuse.a_dram ? req.a : 0) + (reuse.b_dram ? req.b : 0);
  c.dram_bytes_reuse = 4.0 * M * N + (reuse.a_dram ? 32 * a_l2 : 4.0 * M * K) + (reuse.b_dram ? 32 * b_l2 : 4.0 * K * N);
  return c;
}

}  // namespace mh::model

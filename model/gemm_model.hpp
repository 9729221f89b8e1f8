// GEMM counting model: what kernels 1-8 and the two bank ablations (gemm/*.cuh) ask of each unit,
// counted on the host from their index arithmetic, for row-major A (MxK), B (KxN), C (MxN), beta = 0.
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
#include <functional>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

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

// Kernels 4-8 (gemm/4_blocktile_1d.cuh .. gemm/8_warptile_tuned.cuh): a BM x BN tile of C per block,
// K walked BK at a time through shared memory. The shape of each, as its header states it; the tuned
// kernel's is checked against the compiled configuration by a static_assert in tests/gpu/test_gemm.cu.
struct TiledShape {
  int BM, BN, BK, threads;
  int stages;    // shared buffers: 1 -> two barriers per tile, 2 -> one (plus one before the loop)
  int WM, WN;    // warp tile (kernels 7-8; 0 otherwise)
  int regs;      // registers per thread, ptxas -v (nvcc 13.0, sm_90): documentation; the run reads the real ones
  int smem_bytes;
  int LN = 8;                 // lanes along N in a warp's sub-tile (kernels 7-8)
  bool checkerboard = false;  // gemm/7_warptile.cuh LaneMap::checkerboard
};

// Kernels 7-8: lane -> (lm, ln) in a sub-tile, as gemm/7_warptile.cuh maps it.
inline std::pair<int, int> warptile_lane(const TiledShape& s, int lane) {
  const int q = lane % 8, p = lane / 8 % 2;
  if (s.checkerboard) return {lane / 16 * 4 + q / 2, q % 2 * 2 + (q / 2 + p) % 2};
  return {lane / s.LN, lane % s.LN};
}

constexpr TiledShape tiled_shape(GemmKernel k) {
  switch (k) {
    case GemmKernel::blocktile_1d: return {64, 64, 8, 512, 1, 0, 0, 64, 4096};
    case GemmKernel::blocktile_2d: return {128, 128, 8, 256, 1, 0, 0, 127, 8192};
    case GemmKernel::vectorized: return {128, 128, 8, 256, 1, 0, 0, 111, 8192};
    case GemmKernel::warptile: return {128, 128, 16, 256, 1, 32, 64, 124, 16384, 8, false};
    case GemmKernel::warptile_tuned: return {128, 128, 8, 128, 2, 32, 128, 201, 16384, 8, false};
    default: return {0, 0, 0, 0, 0, 0, 0, 0, 0, 8, false};
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

// `s`: the kernel's shape (tiled_shape), or another candidate of the same kernel (the sweep's, a test's).
// blocks_per_sm: resident blocks per SM on the device (the caller's, from its facts), carried like count_gemm's.
inline GemmCounts count_tiled(GemmKernel kernel, const TiledShape& s, int64_t M, int64_t N, int64_t K,
                              int blocks_per_sm) {
  const bool warp_tiled = kernel == GemmKernel::warptile || kernel == GemmKernel::warptile_tuned;
  // The 16-byte path (gemm/blocktile.cuh vectorizable(); cudaMalloc'd buffers are aligned).
  const bool vec = kernel >= GemmKernel::vectorized && K % 4 == 0 && N % 4 == 0;
  const int64_t Mt = (M + s.BM - 1) / s.BM, Nt = (N + s.BN - 1) / s.BN, Kt = (K + s.BK - 1) / s.BK;
  const int warps = s.threads / 32;

  GemmCounts c;
  c.blocks = double(Mt * Nt);
  c.warps = c.blocks * warps;
  c.threads_per_block = s.threads;
  c.blocks_per_sm = blocks_per_sm;
  c.dram_bytes = 4.0 * (M * K + K * N + M * N);
  // Every thread of every block runs every tile (edge tiles zero-filled): whole tiles of FFMA.
  c.ffma_thread = c.blocks * Kt * double(s.BM) * s.BN * s.BK;
  c.ffma_warp = c.ffma_thread / 32;
  c.block_barriers = c.blocks * (s.stages == 2 ? Kt + 1 : warp_tiled ? 2 * Kt + 1 : 2 * Kt);
  c.load_rounds = c.blocks * (s.stages == 2 ? 1 : Kt);

  // The tile loads: thread t's i-th load is element (r, k) of the A tile ((k, col) of the B tile),
  // `w` floats wide (w = 4: one float4; on the scalar path, four 4-byte loads).
  struct Elem {
    int r, c;
  };
  int a_loads, b_loads, w;
  std::function<Elem(int, int)> a_elem, b_elem;
  if (kernel == GemmKernel::blocktile_1d || kernel == GemmKernel::blocktile_2d) {
    a_loads = b_loads = s.BM * s.BK / s.threads;
    w = 1;
    a_elem = [&](int t, int i) { const int e = t + i * s.threads; return Elem{e / s.BK, e % s.BK}; };
    b_elem = [&](int t, int i) { const int e = t + i * s.threads; return Elem{e / s.BN, e % s.BN}; };
  } else {
    a_loads = s.BM * s.BK / 4 / s.threads;
    b_loads = s.BK * s.BN / 4 / s.threads;
    w = 4;
    a_elem = [&](int t, int i) { const int f = t + i * s.threads; return Elem{f / (s.BK / 4), f % (s.BK / 4) * 4}; };
    b_elem = [&](int t, int i) { const int f = t + i * s.threads; return Elem{f / (s.BN / 4), f % (s.BN / 4) * 4}; };
  }
  // One tile of X (rows x cols, row-major) at (r0, c0): requests, sectors and lines over every warp
  // load, and the distinct sectors the block fetches from L2 (L1 serves repeats within the block).
  // A tile inside X (no lane guarded off) depends only on where its first element falls in a 128-byte
  // line: those are counted once per alignment.
  struct TileCount {
    double requests = -1, sectors = 0, lines = 0, l2 = 0;
  };
  std::vector<uint64_t> tile_sectors;
  auto count_tile = [&](const std::function<Elem(int, int)>& elem, int loads, int64_t rows, int64_t cols, int64_t r0,
                        int64_t c0) {
    TileCount tc{0, 0, 0, 0};
    tile_sectors.clear();
    const int parts = vec || w == 1 ? 1 : 4, width = vec ? 4 * w : 4;
    for (int warp = 0; warp < warps; ++warp)
      for (int i = 0; i < loads; ++i)
        for (int part = 0; part < parts; ++part) {
          WarpAccess a;
          for (int lane = 0; lane < 32; ++lane) {
            const Elem e = elem(warp * 32 + lane, i);
            const int64_t r = r0 + e.r, col = c0 + e.c + part;
            if (r < rows && col < cols) a.addr[a.n++] = uint64_t(r * cols + col) * 4;
          }
          const Footprint f = warp_footprint(a, width);
          tc.requests += 1;
          tc.sectors += f.sectors;
          tc.lines += f.lines;
          for (int j = 0; j < a.n; ++j)
            for (uint64_t x = a.addr[j] / kSectorBytes; x <= (a.addr[j] + width - 1) / kSectorBytes; ++x)
              tile_sectors.push_back(x);
        }
    std::sort(tile_sectors.begin(), tile_sectors.end());
    tc.l2 = double(std::unique(tile_sectors.begin(), tile_sectors.end()) - tile_sectors.begin());
    return tc;
  };
  auto load_tiles = [&](const std::function<Elem(int, int)>& elem, int loads, int64_t rows, int64_t cols, int tr,
                        int tcols, int64_t r0, int64_t c0, double times, TileCount (&cache)[32]) {
    const bool inside = r0 + tr <= rows && c0 + tcols <= cols;
    const int key = int((r0 * cols + c0) % 32);
    TileCount tc;
    if (inside && cache[key].requests >= 0) {
      tc = cache[key];
    } else {
      tc = count_tile(elem, loads, rows, cols, r0, c0);
      if (inside) cache[key] = tc;
    }
    c.ld_requests += tc.requests * times;
    c.ld_sectors += tc.sectors * times;
    c.ld_lines += tc.lines * times;
    c.l2_read_sectors += tc.l2 * times;
  };
  TileCount a_cache[32], b_cache[32];
  for (int64_t t = 0; t < Kt; ++t) {
    for (int64_t by = 0; by < Mt; ++by) load_tiles(a_elem, a_loads, M, K, s.BM, s.BK, by * s.BM, t * s.BK, double(Nt), a_cache);
    for (int64_t bx = 0; bx < Nt; ++bx) load_tiles(b_elem, b_loads, K, N, s.BK, s.BN, t * s.BK, bx * s.BN, double(Mt), b_cache);
  }

  // The C stores: thread t's j-th store is C[r0 + r][c0 + col .. + sw) (sw = 4: STG.128, or 4 STG).
  int stores, sw;
  std::function<Elem(int, int)> c_elem;
  if (kernel == GemmKernel::blocktile_1d) {
    stores = 8, sw = 1;
    c_elem = [](int t, int j) { return Elem{t / 64 * 8 + j, t % 64}; };
  } else if (kernel == GemmKernel::blocktile_2d) {
    stores = 64, sw = 1;
    c_elem = [](int t, int j) { return Elem{t / 16 * 8 + j / 8, t % 16 * 8 + j % 8}; };
  } else if (kernel == GemmKernel::vectorized) {
    stores = 16, sw = 4;
    c_elem = [](int t, int j) { return Elem{t / 16 * 8 + j / 2, t % 16 * 8 + j % 2 * 4}; };
  } else {  // (i, r, j) of gemm/7_warptile.cuh's epilogue
    const int subm = 32 / s.LN * 4, subn = s.LN * 4, miter = s.WM / subm, niter = s.WN / subn;
    stores = miter * 4 * niter, sw = 4;
    c_elem = [s, subm, subn, niter](int t, int j) {
      const int warp = t / 32, wm0 = warp / (s.BN / s.WN) * s.WM, wn0 = warp % (s.BN / s.WN) * s.WN;
      const auto [lm, ln] = warptile_lane(s, t % 32);
      const int i = j / (4 * niter), r = j / niter % 4, jn = j % niter;
      return Elem{wm0 + i * subm + lm * 4 + r, wn0 + jn * subn + ln * 4};
    };
  }
  double st_cache[32];
  std::fill(st_cache, st_cache + 32, -1.0);
  for (int64_t by = 0; by < Mt; ++by)
    for (int64_t bx = 0; bx < Nt; ++bx) {
      const int64_t r0 = by * s.BM, c0 = bx * s.BN;
      const bool inside = r0 + s.BM <= M && c0 + s.BN <= N;
      const int key = int((r0 * N + c0) % 32);
      c.st_requests += double(warps) * stores * (vec || sw == 1 ? 1 : 4);
      if (inside && st_cache[key] >= 0) {
        c.st_sectors += st_cache[key];
        continue;
      }
      double sectors = 0;
      for (int warp = 0; warp < warps; ++warp)
        for (int j = 0; j < stores; ++j)
          for (int part = 0; part < (vec || sw == 1 ? 1 : 4); ++part) {
            WarpAccess a;
            for (int lane = 0; lane < 32; ++lane) {
              const Elem e = c_elem(warp * 32 + lane, j);
              const int64_t r = r0 + e.r, col = c0 + e.c + part;
              if (r < M && col < N) a.addr[a.n++] = uint64_t(r * N + col) * 4;
            }
            sectors += warp_footprint(a, vec ? 4 * sw : 4).sectors;
          }
      if (inside) st_cache[key] = sectors;
      c.st_sectors += sectors;
    }

  // Shared memory, per block and tile (the same for every tile): the stores of the loaded tile, then
  // BK k-steps of reads. Byte addresses from the start of a stage: As first, then Bs.
  const uint64_t bs0 = uint64_t(s.BM) * s.BK * 4;
  const bool a_transposed = kernel >= GemmKernel::vectorized;
  double lds_inst = 0, lds_wf = 0, sts_inst = 0, sts_wf = 0;
  auto smem = [&](double& inst, double& wf, const std::vector<uint64_t>& addr, int width, SmemOp op) {
    inst += 1;
    wf += smem_wavefronts(addr, width, 0xffffffffu, op);
  };
  std::vector<uint64_t> addr(32);
  for (int warp = 0; warp < warps; ++warp) {
    for (int i = 0; i < a_loads; ++i)
      for (int j = 0; j < w; ++j) {  // A: one STS per float (transposed: four per float4)
        for (int lane = 0; lane < 32; ++lane) {
          const Elem e = a_elem(warp * 32 + lane, i);
          addr[lane] = 4 * (a_transposed ? uint64_t(e.c + j) * s.BM + e.r : uint64_t(e.r) * s.BK + e.c);
        }
        smem(sts_inst, sts_wf, addr, 4, SmemOp::store);
      }
    for (int i = 0; i < b_loads; ++i) {  // B: one STS (or STS.128) per load
      for (int lane = 0; lane < 32; ++lane) {
        const Elem e = b_elem(warp * 32 + lane, i);
        addr[lane] = bs0 + 4 * (uint64_t(e.r) * s.BN + e.c);
      }
      smem(sts_inst, sts_wf, addr, 4 * w, SmemOp::store);
    }
    for (int k = 0; k < s.BK; ++k) {
      // Per k: the reads of A and of B, each as (width, per-lane float offset of read q).
      auto reads = [&](int count, int width, const std::function<uint64_t(int, int)>& byte) {
        for (int q = 0; q < count; ++q) {
          for (int lane = 0; lane < 32; ++lane) addr[lane] = byte(warp * 32 + lane, q);
          lds_inst += 1;
          lds_wf += gemm_lds_wavefronts(addr, width);
        }
      };
      if (kernel == GemmKernel::blocktile_1d || kernel == GemmKernel::blocktile_2d) {
        // As rows read kBlocktileReadWidth bytes at a time: one read covers that many k of a row.
        const int per = kBlocktileReadWidth / 4, tm = 8;
        const int tn = kernel == GemmKernel::blocktile_1d ? 1 : 8, tr_div = kernel == GemmKernel::blocktile_1d ? 64 : 16;
        if (k % per == 0)
          reads(tm, kBlocktileReadWidth, [&](int t, int m) { return 4 * (uint64_t(t / tr_div * tm + m) * s.BK + k); });
        if (tn == 1)
          reads(1, 4, [&](int t, int) { return bs0 + 4 * (uint64_t(k) * s.BN + t % 64); });
        else
          reads(tn * 4 / kBlocktileReadWidth, kBlocktileReadWidth,
                [&](int t, int q) { return bs0 + 4 * (uint64_t(k) * s.BN + t % 16 * 8 + q * kBlocktileReadWidth / 4); });
      } else if (kernel == GemmKernel::vectorized) {
        reads(2, 16, [&](int t, int q) { return 4 * (uint64_t(k) * s.BM + t / 16 * 8 + 4 * q); });
        reads(2, 16, [&](int t, int q) { return bs0 + 4 * (uint64_t(k) * s.BN + t % 16 * 8 + 4 * q); });
      } else {
        const int wm0 = warp / (s.BN / s.WN) * s.WM, wn0 = warp % (s.BN / s.WN) * s.WN;
        const int subm = 32 / s.LN * 4, subn = s.LN * 4;
        reads(s.WM / subm, 16, [&](int t, int i) {
          return 4 * (uint64_t(k) * s.BM + wm0 + i * subm + warptile_lane(s, t % 32).first * 4);
        });
        reads(s.WN / subn, 16, [&](int t, int j) {
          return bs0 + 4 * (uint64_t(k) * s.BN + wn0 + j * subn + warptile_lane(s, t % 32).second * 4);
        });
      }
    }
  }
  const double block_tiles = c.blocks * Kt;
  c.lds_inst = lds_inst * block_tiles;
  c.lds_wavefronts = lds_wf * block_tiles;
  c.sts_inst = sts_inst * block_tiles;
  c.sts_wavefronts = sts_wf * block_tiles;
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
  constexpr int T = 32;  // tile edge and warp size
  const int64_t Mt = (M + T - 1) / T, Nt = (N + T - 1) / T, Kt = (K + T - 1) / T;
  auto rows_in = [&](int64_t bx) { return static_cast<int>(std::min<int64_t>(T, M - bx * T)); };
  auto cols_in = [&](int64_t by) { return static_cast<int>(std::min<int64_t>(T, N - by * T)); };
  auto add_ld = [](GemmCounts& c, Footprint f, double times) {
    c.ld_requests += times;
    c.ld_sectors += f.sectors * times;
    c.ld_lines += f.lines * times;
  };
  auto add_st = [](GemmCounts& c, Footprint f, double times) {
    c.st_requests += times;
    c.st_sectors += f.sectors * times;
  };


  GemmCounts c;
  c.blocks = static_cast<double>(Mt * Nt);
  c.blocks_per_sm = blocks_per_sm;
  c.dram_bytes = 4.0 * (M * K + K * N + M * N);
  // The distinct sectors of every block's 32 rows of A and 32-column strip of B, summed over the blocks:
  // what L1 fetches once per block, and what DRAM sends for an operand whose misses it serves.
  double a_l2 = 0, b_l2 = 0;
  for (int64_t bx = 0; bx < Mt; ++bx)
    for (int64_t x = bx * T; x < bx * T + rows_in(bx); ++x) a_l2 += Nt * contiguous_floats(x * K, K).sectors;
  for (int64_t by = 0; by < Nt; ++by)
    for (int64_t k = 0; k < K; ++k) b_l2 += Mt * contiguous_floats(k * N + by * T, cols_in(by)).sectors;
  // Each operand's requests, and where tile_reuse says its misses are served.
  const TileReuse reuse = tile_reuse(M, N, K, l2_bytes);
  auto serve = [&](double a_req, double b_req) {
    c.ld_requests_dram = (reuse.a_dram ? a_req : 0) + (reuse.b_dram ? b_req : 0);
    c.dram_bytes_reuse = 4.0 * M * N + (reuse.a_dram ? 32 * a_l2 : 4.0 * M * K) + (reuse.b_dram ? 32 * b_l2 : 4.0 * K * N);
  };

  if (kernel == GemmKernel::naive || kernel == GemmKernel::coalesced) {
    c.ffma_thread = double(M) * N * K;  // one thread per element of C; threads outside C return at once
    c.l2_read_sectors = a_l2 + b_l2;    // L2: each block reads its rows of A and its strip of B once
  }
  if (kernel == GemmKernel::naive) {
    // A warp: 32 rows (threadIdx.x) of one column. A[row][k] strided by K, B[k][col] a broadcast.
    c.ffma_warp = double(Mt) * N * K;  // warps whose column is inside C
    for (int64_t bx = 0; bx < Mt; ++bx) {
      for (int64_t k = 0; k < K; ++k) add_ld(c, strided_floats(bx * T * K + k, K, rows_in(bx)), double(N));
      add_st(c, strided_floats(bx * T * N, N, rows_in(bx)), double(N));
    }
    const double a_req = c.ld_requests;
    for (int64_t bx = 0; bx < Mt; ++bx) add_ld(c, {1, 1}, double(N) * K);
    c.warps = double(Mt * Nt) * T;  // warps launched (whole 32x32 blocks)
    serve(a_req, c.ld_requests - a_req);
    return c;
  }
  if (kernel == GemmKernel::coalesced) {
    // A warp: 32 columns of one row. A[row][k] a broadcast, B[k][col] one row segment.
    c.ffma_warp = double(M) * Nt * K;
    add_ld(c, {1, 1}, double(M) * Nt * K);
    const double a_req = c.ld_requests;
    for (int64_t by = 0; by < Nt; ++by) {
      for (int64_t k = 0; k < K; ++k) add_ld(c, contiguous_floats(k * N + by * T, cols_in(by)), double(M));
      for (int64_t x = 0; x < M; ++x) add_st(c, contiguous_floats(x * N + by * T, cols_in(by)), 1);
    }
    const double b_req = c.ld_requests - a_req;
    c.warps = double(Mt * Nt) * T;
    serve(a_req, b_req);
    return c;
  }

  // Kernel 3 and its ablations: every thread of every block runs every tile (out-of-range elements are
  // zero-filled), so FFMA, shared accesses and barriers count whole tiles.
  c.warps = c.blocks * T;
  c.ffma_warp = c.warps * Kt * T;
  c.ffma_thread = c.ffma_warp * T;
  // Tile loads: warp ly loads row ly of the A tile and row ly of the B tile (predicated per lane).
  for (int64_t x = 0; x < M; ++x)
    for (int64_t t = 0; t < K; t += T) add_ld(c, contiguous_floats(x * K + t, std::min<int64_t>(T, K - t)), double(Nt));
  const double a_req = c.ld_requests;
  for (int64_t by = 0; by < Nt; ++by)
    for (int64_t k = 0; k < K; ++k) add_ld(c, contiguous_floats(k * N + by * T, cols_in(by)), double(Mt));
  c.l2_read_sectors = c.ld_sectors;  // one block never re-reads a tile; no reuse across blocks assumed
  serve(a_req, c.ld_requests - a_req);
  for (int64_t by = 0; by < Nt; ++by)
    for (int64_t x = 0; x < M; ++x) add_st(c, contiguous_floats(x * N + by * T, cols_in(by)), 1);

  // Shared memory, per warp and tile: two conflict-free STS (a row of each tile), then 32 k-steps.
  const int as_stride = kernel == GemmKernel::smem_padded ? T + 1 : T;  // words per As row
  const int w = as_read_width(kernel);
  std::vector<uint64_t> as_addr(T), bs_addr(T);
  for (int lane = 0; lane < T; ++lane) {
    // kernel 3: the warp is one row of C (As broadcast, Bs consecutive); ablations: one column of C.
    const bool row_warp = kernel == GemmKernel::smem;
    as_addr[lane] = uint64_t(row_warp ? 0 : lane) * as_stride * 4;
    bs_addr[lane] = uint64_t(row_warp ? lane : 0) * 4;
  }
  const double as_inst = T * 4 / w, as_wf = gemm_lds_wavefronts(as_addr, w);
  const double bs_inst = T, bs_wf = gemm_lds_wavefronts(bs_addr, 4);
  const double per_warp_tiles = c.warps * Kt;
  c.sts_inst = 2 * per_warp_tiles;
  c.sts_wavefronts = 2 * per_warp_tiles;
  c.lds_inst = per_warp_tiles * (as_inst + bs_inst);
  c.lds_wavefronts = per_warp_tiles * (as_inst * as_wf + bs_inst * bs_wf);
  c.block_barriers = c.blocks * 2 * Kt;
  c.load_rounds = c.blocks * Kt;  // one shared buffer: every tile's loads, then a barrier
  if (kernel != GemmKernel::smem) {
    // Epilogue: C goes back through As (lane = row: As[lane][col]) and out with kernel 3's mapping.
    std::vector<uint64_t> epi(T);
    for (int lane = 0; lane < T; ++lane) epi[lane] = uint64_t(lane) * as_stride * 4;
    c.sts_inst += c.warps;
    c.sts_wavefronts += c.warps * smem_wavefronts(epi, 4, 0xffffffffu, SmemOp::store);
    c.lds_inst += c.warps;
    c.lds_wavefronts += c.warps;
    c.block_barriers += c.blocks;
  }
  return c;
}

}  // namespace mh::model

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "harness/arch.hpp"
#include "model/gemm_model.hpp"

using namespace mh::model;

TEST(GemmModel, ContiguousFloatsCountsSectorsAndLines) {
  EXPECT_EQ(contiguous_floats(0, 32).sectors, 4);
  EXPECT_EQ(contiguous_floats(0, 32).lines, 1);
  EXPECT_EQ(contiguous_floats(8, 32).sectors, 4);  // bytes 32..159: sectors 1-4, lines 0-1
  EXPECT_EQ(contiguous_floats(8, 32).lines, 2);
  EXPECT_EQ(contiguous_floats(4, 32).sectors, 5);  // bytes 16..143
  EXPECT_EQ(contiguous_floats(0, 0).sectors, 0);
}

TEST(GemmModel, ShortcutsAgreeWithTheAccessModel) {
  for (uint64_t first = 0; first < 80; first += 3)
    for (int count = 1; count <= 32; count += 5) {
      std::vector<uint64_t> a;
      for (int i = 0; i < count; ++i) a.push_back((first + i) * 4);
      const Footprint ref = global_footprint(a, 4), got = contiguous_floats(first, count);
      EXPECT_EQ(got.sectors, ref.sectors) << first << " " << count;
      EXPECT_EQ(got.lines, ref.lines) << first << " " << count;
      for (uint64_t ld : {2u, 4u, 9u, 32u, 4092u}) {
        std::vector<uint64_t> b;
        for (int i = 0; i < count; ++i) b.push_back((first + i * ld) * 4);
        EXPECT_EQ(strided_floats(first, ld, count).sectors, global_footprint(b, 4).sectors) << ld;
        EXPECT_EQ(strided_floats(first, ld, count).lines, global_footprint(b, 4).lines) << ld;
      }
    }
}

TEST(GemmModel, NaiveAt32IsOneSectorPerLaneForA) {
  const GemmCounts c = count_gemm(GemmKernel::naive, 32, 32, 32, 2);
  EXPECT_EQ(c.ffma_thread, 32.0 * 32 * 32);
  EXPECT_EQ(c.ffma_warp, 32.0 * 32);             // 32 warps (columns) x 32 k
  EXPECT_EQ(c.ld_requests, 2.0 * 32 * 32);       // A and B per warp and k
  EXPECT_EQ(c.ld_sectors, 32.0 * 32 * 32 + 32 * 32);  // A: 32 rows 128 B apart; B: a broadcast
  EXPECT_EQ(c.ld_lines, c.ld_sectors);
  EXPECT_EQ(c.st_sectors, 32.0 * 32);            // C: one sector per lane
  EXPECT_EQ(c.dram_bytes, 4.0 * 3 * 32 * 32);
}

TEST(GemmModel, CoalescedAt32IsFourSectorsForB) {
  const GemmCounts c = count_gemm(GemmKernel::coalesced, 32, 32, 32, 2);
  EXPECT_EQ(c.ffma_warp, 32.0 * 32);
  EXPECT_EQ(c.ld_requests, 2.0 * 32 * 32);
  EXPECT_EQ(c.ld_sectors, 32.0 * 32 * (1 + 4));
  EXPECT_EQ(c.ld_lines, 32.0 * 32 * 2);
  EXPECT_EQ(c.st_sectors, 32.0 * 4);
}

TEST(GemmModel, CoalescedMisalignedRowsCostAFifthSector) {
  // N = 36: row k of B starts at 144 k bytes, so a 32-float segment straddles an extra sector when
  // 144 k mod 32 != 0 (odd k) and an extra line unless 144 k mod 128 == 0 (k = 0, 8, ...).
  const GemmCounts c = count_gemm(GemmKernel::coalesced, 1, 36, 8, 2);
  // column tile 0 (32 floats): k = 0..7 -> 4,5,4,5,4,5,4,5 sectors; tile 1: 4 floats, 16 B at 144k + 128.
  double b_sectors = 0;
  for (int k = 0; k < 8; ++k) b_sectors += contiguous_floats(36 * k, 32).sectors + contiguous_floats(36 * k + 32, 4).sectors;
  EXPECT_EQ(b_sectors, 36 + 8);  // the 16-byte tail never straddles a sector
  EXPECT_EQ(c.ld_sectors, 2.0 * 8 + b_sectors);  // plus one broadcast A sector per warp and k
}

TEST(GemmModel, SmemWavefrontsPerTile) {
  // 64^3: 4 blocks x 32 warps x 2 tiles. Per warp and tile: As 8 LDS.128 broadcasts (2 wavefronts each:
  // quarter-warp phases asking for the same words pair up) and 32 conflict-free Bs LDS.
  const GemmCounts c = count_gemm(GemmKernel::smem, 64, 64, 64, 2);
  EXPECT_EQ(c.ffma_thread, 64.0 * 64 * 64);
  EXPECT_EQ(c.lds_inst, 256.0 * (8 + 32));
  EXPECT_EQ(c.lds_wavefronts, 256.0 * (8 * 2 + 32));  // ncu on the H200: 1.2 wavefronts per LDS
  EXPECT_EQ(c.sts_wavefronts, 256.0 * 2);
  EXPECT_EQ(c.block_barriers, 4.0 * 2 * 2);
  EXPECT_EQ(c.ld_sectors, 2.0 * 4 * 256);         // two 4-sector rows per warp and tile
  EXPECT_EQ(c.l2_read_sectors, c.ld_sectors);
}

TEST(GemmModel, TransposedAblationIsThirtyTwoWayAndPaddingFixesIt) {
  const GemmCounts bad = count_gemm(GemmKernel::smem_conflicted, 64, 64, 64, 2);
  const GemmCounts pad = count_gemm(GemmKernel::smem_padded, 64, 64, 64, 2);
  // conflicted: As rows 128 B apart read as LDS.128: per quarter-warp 8 lanes, 8 words in each of 4 banks.
  EXPECT_EQ(bad.lds_wavefronts, 256.0 * (8 * 32 + 32) + 128);  // + epilogue LDS per warp
  EXPECT_EQ(bad.sts_wavefronts, 256.0 * 2 + 128 * 32);         // epilogue STS As[lane][col]: 32-way
  // padded: rows 33 words apart, scalar LDS, lane r in bank (r + k) % 32.
  EXPECT_EQ(pad.lds_wavefronts, 256.0 * (32 + 32) + 128);
  EXPECT_EQ(pad.sts_wavefronts, 256.0 * 2 + 128);
  EXPECT_EQ(bad.block_barriers, 4.0 * (2 * 2 + 1));
}

TEST(GemmModel, PartialTilesStillRunWholeTiles) {
  const GemmCounts c = count_gemm(GemmKernel::smem, 33, 33, 33, 2);
  EXPECT_EQ(c.blocks, 4);
  EXPECT_EQ(c.ffma_thread, 4.0 * 1024 * 2 * 32);  // zero-filled tiles are multiplied too
  EXPECT_EQ(c.dram_bytes, 4.0 * 3 * 33 * 33);
}

TEST(GemmModel, RejectsWhatItCannotModel) {
  EXPECT_THROW(count_gemm(GemmKernel::smem, 0, 1, 1, 2), std::invalid_argument);
  EXPECT_THROW(count_gemm(GemmKernel::smem, 1, 1, 1, 0), std::invalid_argument);  // blocks per SM from the facts
}

// ---------------------------------------------------------------------------------------------------
// Non-square shapes, every field. Two independent counts: numbers worked out by hand for one shape,
// and a walk over every lane of every warp of every block with the kernels' own index arithmetic
// (gemm/1_naive.cuh, 2_coalesced.cuh, 3_smem.cuh, 3a_smem_conflicted.cuh), counting sectors with sets.

namespace {

constexpr int kT = 32;

struct Walked {
  double blocks = 0, warps = 0, ffma_thread = 0, ffma_warp = 0;
  double ld_requests = 0, ld_sectors = 0, ld_lines = 0, st_requests = 0, st_sectors = 0, l2_read_sectors = 0;
  double block_barriers = 0;
};

// One warp-wide request of 4-byte elements of one array (element indices of its active lanes).
struct Request {
  int sectors = 0, lines = 0;
};
Request request(const std::vector<uint64_t>& elems) {
  std::set<uint64_t> s, l;
  for (uint64_t e : elems) s.insert(e * 4 / 32), l.insert(e * 4 / 128);
  return {static_cast<int>(s.size()), static_cast<int>(l.size())};
}

Walked walk(GemmKernel kernel, int64_t M, int64_t N, int64_t K) {
  const int64_t Mt = (M + kT - 1) / kT, Nt = (N + kT - 1) / kT;
  const bool tiled = kernel != GemmKernel::naive && kernel != GemmKernel::coalesced;
  Walked w;
  w.blocks = double(Mt * Nt);
  w.warps = w.blocks * kT;  // 1024 threads a block, every block launched whole
  auto load = [&](const std::vector<uint64_t>& elems, std::set<uint64_t>& seen) {
    if (elems.empty()) return;  // every lane predicated off: no request
    const Request r = request(elems);
    w.ld_requests += 1, w.ld_sectors += r.sectors, w.ld_lines += r.lines;
    for (uint64_t e : elems) seen.insert(e * 4 / 32);
  };
  for (int64_t bx = 0; bx < Mt; ++bx)
    for (int64_t by = 0; by < Nt; ++by) {
      std::set<uint64_t> a_seen, b_seen;  // sectors of A and of B this block reads
      for (int warp = 0; warp < kT; ++warp) {
        // The C element lane `lane` owns (loads and stores): naive has threadIdx.x (the lane) -> row,
        // threadIdx.y (the warp) -> column; the others tid / 32 (the warp) -> row, tid % 32 -> column.
        auto row = [&](int lane) { return kernel == GemmKernel::naive ? bx * kT + lane : bx * kT + warp; };
        auto col = [&](int lane) { return kernel == GemmKernel::naive ? by * kT + warp : by * kT + lane; };
        std::vector<uint64_t> c;
        for (int lane = 0; lane < kT; ++lane)
          if (row(lane) < M && col(lane) < N) c.push_back(uint64_t(row(lane) * N + col(lane)));
        if (!tiled) {
          if (c.empty()) continue;  // the whole warp returned at once
          w.ffma_warp += double(K);
          w.ffma_thread += double(c.size()) * K;
          for (int64_t k = 0; k < K; ++k) {
            std::vector<uint64_t> a, b;
            for (int lane = 0; lane < kT; ++lane)
              if (row(lane) < M && col(lane) < N) {
                a.push_back(uint64_t(row(lane) * K + k));
                b.push_back(uint64_t(k * N + col(lane)));
              }
            load(a, a_seen);
            load(b, b_seen);
          }
        } else {
          for (int64_t t = 0; t < K; t += kT) {
            // Tile loads: warp ly reads row ly of the A tile (A[row][t + lane]) and of the B tile
            // (B[t + ly][col]); out-of-range lanes are predicated off (they store a zero).
            std::vector<uint64_t> a, b;
            for (int lane = 0; lane < kT; ++lane) {
              if (bx * kT + warp < M && t + lane < K) a.push_back(uint64_t((bx * kT + warp) * K + t + lane));
              if (t + warp < K && by * kT + lane < N) b.push_back(uint64_t((t + warp) * N + by * kT + lane));
            }
            // A block never re-reads a tile: L2 serves each tile's sectors once.
            std::set<uint64_t> a_tile, b_tile;
            load(a, a_tile);
            load(b, b_tile);
            w.l2_read_sectors += double(a_tile.size() + b_tile.size());
            w.ffma_warp += kT;  // every warp runs every k of every tile, zeros included
            w.ffma_thread += kT * kT;
          }
        }
        if (!c.empty()) {
          w.st_requests += 1;
          w.st_sectors += request(c).sectors;
        }
      }
      if (!tiled) w.l2_read_sectors += double(a_seen.size() + b_seen.size());  // each once per block
    }
  return w;
}

Walked walk_blocktiled(GemmKernel kernel, int64_t M, int64_t N, int64_t K);

void expect_matches_walk(GemmKernel kernel, int64_t M, int64_t N, int64_t K) {
  const GemmCounts c = count_gemm(kernel, M, N, K, 2);
  const Walked w = kernel >= GemmKernel::blocktile_1d ? walk_blocktiled(kernel, M, N, K) : walk(kernel, M, N, K);
  const std::string at = std::to_string(M) + "x" + std::to_string(N) + "x" + std::to_string(K);
  EXPECT_EQ(c.blocks, w.blocks) << at;
  EXPECT_EQ(c.warps, w.warps) << at;
  EXPECT_EQ(c.ffma_thread, w.ffma_thread) << at;
  EXPECT_EQ(c.ffma_warp, w.ffma_warp) << at;
  EXPECT_EQ(c.ld_requests, w.ld_requests) << at;
  EXPECT_EQ(c.ld_sectors, w.ld_sectors) << at;
  EXPECT_EQ(c.ld_lines, w.ld_lines) << at;
  EXPECT_EQ(c.st_requests, w.st_requests) << at;
  EXPECT_EQ(c.st_sectors, w.st_sectors) << at;
  EXPECT_EQ(c.l2_read_sectors, w.l2_read_sectors) << at;
  if (kernel >= GemmKernel::blocktile_1d) EXPECT_EQ(c.block_barriers, w.block_barriers) << at;
  // Compulsory traffic: A and B read once, C written once.
  EXPECT_EQ(c.dram_bytes, 4.0 * (M * K + K * N + M * N)) << at;
  EXPECT_EQ(c.blocks_per_sm, 2) << at;
}

// Kernels 4-8, walked as their sources (gemm/4_blocktile_1d.cuh .. 7_warptile.cuh, blocktile.cuh's
// load4/store4) index them: every lane of every warp of every block, every K tile. A request is one warp
// instruction, issued whether or not a lane is inside the matrix (the zero-filled tile edges and the
// guarded stores); its sectors and lines are those of its lanes inside. Written out per kernel, from the
// kernels' constants, not from model/gemm_model.hpp.
struct Lane {
  bool in = false;
  int64_t elem = 0;  // element index in its matrix
};
struct Walker {
  int64_t M, N, K;
  bool vec;  // blocktile.cuh vectorizable(): K % 4 == 0 and N % 4 == 0 (kernels 6-8 only)
  Walked w;
  std::set<uint64_t> tile_a, tile_b;  // the sectors of one block's current A and B tiles
  // One warp instruction over `width`-byte lanes; `seen` collects the tile's sectors (loads only).
  void request(const Lane (&lanes)[32], int width, bool store, std::set<uint64_t>* seen) {
    std::set<uint64_t> sec, lin;
    for (const Lane& l : lanes)
      if (l.in)
        for (uint64_t b = uint64_t(l.elem) * 4; b < uint64_t(l.elem) * 4 + width; b += 4) sec.insert(b / 32), lin.insert(b / 128);
    if (store) {
      w.st_requests += 1, w.st_sectors += double(sec.size());
      return;
    }
    w.ld_requests += 1, w.ld_sectors += double(sec.size()), w.ld_lines += double(lin.size());
    seen->insert(sec.begin(), sec.end());
  }
  // load4 / store4 of X (rows x cols) at (r[lane], c[lane]): one 16-byte access when vec, else four
  // guarded 4-byte ones (x[0] .. x[3]).
  void quad(const int64_t (&r)[32], const int64_t (&c)[32], int64_t rows, int64_t cols, bool store, std::set<uint64_t>* seen) {
    for (int j = 0; j < (vec ? 1 : 4); ++j) {
      Lane lanes[32];
      for (int lane = 0; lane < 32; ++lane)
        lanes[lane] = {r[lane] < rows && c[lane] + j < cols, r[lane] * cols + c[lane] + j};
      request(lanes, vec ? 16 : 4, store, seen);
    }
  }
  // One float: X[r][c] when inside.
  void single(const int64_t (&r)[32], const int64_t (&c)[32], int64_t rows, int64_t cols, bool store, std::set<uint64_t>* seen) {
    Lane lanes[32];
    for (int lane = 0; lane < 32; ++lane) lanes[lane] = {r[lane] < rows && c[lane] < cols, r[lane] * cols + c[lane]};
    request(lanes, 4, store, seen);
  }
};

Walked walk_blocktiled(GemmKernel kernel, int64_t M, int64_t N, int64_t K) {
  // The kernels' constants (their headers): tile, threads, accumulators per thread, barriers per tile.
  int BM = 128, BN = 128, BK = 8, threads = 256, acc = 64, WM = 0, WN = 0, stages = 1;
  if (kernel == GemmKernel::blocktile_1d) BM = BN = 64, threads = 512, acc = 8;
  if (kernel == GemmKernel::warptile) BK = 16, WM = 32, WN = 64;                                   // WarptileDefault
  if (kernel == GemmKernel::warptile_tuned) threads = 128, acc = 128, WM = 32, WN = 128, stages = 2;  // WarptileTuned
  const bool warp_tiled = WM > 0;
  Walker k{M, N, K, kernel >= GemmKernel::vectorized && K % 4 == 0 && N % 4 == 0, {}, {}, {}};
  Walked& w = k.w;
  const int64_t tiles = (K + BK - 1) / BK;
  double barriers_per_block = warp_tiled ? 1 : 0;  // kernels 7-8: one after the first tile's stash
  for (int64_t t = 0; t < tiles; ++t) barriers_per_block += stages == 2 ? 1 : 2;
  for (int64_t by = 0; by * BM < M; ++by)
    for (int64_t bx = 0; bx * BN < N; ++bx) {
      const int64_t row0 = by * BM, col0 = bx * BN;
      w.blocks += 1, w.warps += threads / 32;
      w.ffma_thread += double(threads) * acc * BK * tiles;
      for (int64_t t0 = 0; t0 < K; t0 += BK) {
        k.tile_a.clear(), k.tile_b.clear();
        for (int warp = 0; warp < threads / 32; ++warp) {
          int64_t ar[32], ac[32], br[32], bc[32];
          auto each = [&](auto fill) {  // fills (ar, ac) and (br, bc) of lane `lane`
            for (int lane = 0; lane < 32; ++lane) fill(warp * 32 + lane, lane);
          };
          if (kernel == GemmKernel::blocktile_1d) {
            each([&](int tid, int l) { ar[l] = row0 + tid / 8, ac[l] = t0 + tid % 8, br[l] = t0 + tid / 64, bc[l] = col0 + tid % 64; });
            k.single(ar, ac, M, K, false, &k.tile_a);
            k.single(br, bc, K, N, false, &k.tile_b);
          } else if (kernel == GemmKernel::blocktile_2d) {
            for (int i = 0; i < 4; ++i) {  // A then B, element tid + 256 i of each tile
              each([&](int tid, int l) {
                ar[l] = row0 + tid / 8 + 32 * i, ac[l] = t0 + tid % 8, br[l] = t0 + tid / 128 + 2 * i, bc[l] = col0 + tid % 128;
              });
              k.single(ar, ac, M, K, false, &k.tile_a);
              k.single(br, bc, K, N, false, &k.tile_b);
            }
          } else if (kernel == GemmKernel::vectorized) {
            each([&](int tid, int l) { ar[l] = row0 + tid / 2, ac[l] = t0 + tid % 2 * 4, br[l] = t0 + tid / 32, bc[l] = col0 + tid % 32 * 4; });
            k.quad(ar, ac, M, K, false, &k.tile_a);
            k.quad(br, bc, K, N, false, &k.tile_b);
          } else {  // fetch(): kALoads float4s of A, then kBLoads of B
            for (int i = 0; i < BM * BK / 4 / threads; ++i) {
              each([&](int tid, int l) { const int f = tid + i * threads; ar[l] = row0 + f / (BK / 4), ac[l] = t0 + f % (BK / 4) * 4; });
              k.quad(ar, ac, M, K, false, &k.tile_a);
            }
            for (int i = 0; i < BK * BN / 4 / threads; ++i) {
              each([&](int tid, int l) { const int f = tid + i * threads; br[l] = t0 + f / (BN / 4), bc[l] = col0 + f % (BN / 4) * 4; });
              k.quad(br, bc, K, N, false, &k.tile_b);
            }
          }
        }
        w.l2_read_sectors += double(k.tile_a.size() + k.tile_b.size());  // L1 serves a tile's repeats
      }
      for (int warp = 0; warp < threads / 32; ++warp) {  // the epilogue's stores
        int64_t r[32], c[32];
        auto each = [&](auto fill) {
          for (int lane = 0; lane < 32; ++lane) fill(warp * 32 + lane, lane);
        };
        if (kernel == GemmKernel::blocktile_1d) {
          for (int m = 0; m < 8; ++m) {
            each([&](int tid, int l) { r[l] = row0 + tid / 64 * 8 + m, c[l] = col0 + tid % 64; });
            k.single(r, c, M, N, true, nullptr);
          }
        } else if (kernel == GemmKernel::blocktile_2d) {
          for (int m = 0; m < 8; ++m)
            for (int n = 0; n < 8; ++n) {
              each([&](int tid, int l) { r[l] = row0 + tid / 16 * 8 + m, c[l] = col0 + tid % 16 * 8 + n; });
              k.single(r, c, M, N, true, nullptr);
            }
        } else if (kernel == GemmKernel::vectorized) {
          for (int m = 0; m < 8; ++m)
            for (int n = 0; n < 8; n += 4) {
              each([&](int tid, int l) { r[l] = row0 + tid / 16 * 8 + m, c[l] = col0 + tid % 16 * 8 + n; });
              k.quad(r, c, M, N, true, nullptr);
            }
        } else {  // row-major lanes, LN = 8: lane (lm, ln) = (lane / 8, lane % 8), sub-tiles 16 x 32
          const int wm0 = warp / (BN / WN) * WM, wn0 = warp % (BN / WN) * WN;
          for (int i = 0; i < WM / 16; ++i)
            for (int rr = 0; rr < 4; ++rr)
              for (int j = 0; j < WN / 32; ++j) {
                each([&](int, int l) { r[l] = row0 + wm0 + i * 16 + l / 8 * 4 + rr, c[l] = col0 + wn0 + j * 32 + l % 8 * 4; });
                k.quad(r, c, M, N, true, nullptr);
              }
        }
      }
    }
  w.ffma_warp = w.ffma_thread / 32;
  w.block_barriers = w.blocks * barriers_per_block;
  return w;
}

}  // namespace

// M = 40, N = 24, K = 8: a 2 x 1 grid of blocks (rows 0-31 and 32-39, columns 0-23). A row of A is 8
// floats = one 32-byte sector; a row of B and of C is 24 floats = 96 bytes = three sectors.
TEST(GemmModel, NaiveNonSquareByHand) {
  const GemmCounts c = count_gemm(GemmKernel::naive, 40, 24, 8, 2);
  EXPECT_EQ(c.blocks, 2);
  EXPECT_EQ(c.warps, 64);           // 2 blocks x 32 warps launched
  EXPECT_EQ(c.ffma_warp, 48.0 * 8); // warp = column: 24 of each block's 32 are inside C
  EXPECT_EQ(c.ffma_thread, 40.0 * 24 * 8);
  EXPECT_EQ(c.ld_requests, 2.0 * 48 * 8);
  // A: lanes = rows 32 B apart, a sector each: 32 (block 0) + 8 (block 1) per column and k; B: a broadcast.
  EXPECT_EQ(c.ld_sectors, 24.0 * 8 * (32 + 8) + 48 * 8);
  EXPECT_EQ(c.ld_lines, 24.0 * 8 * (8 + 2) + 48 * 8);  // four rows to a line: 8 lines + 2 lines
  EXPECT_EQ(c.st_requests, 48);
  EXPECT_EQ(c.st_sectors, 24.0 * (32 + 8));  // C rows 96 B apart
  // L2, each block once: block 0 reads 32 A sectors and 8 x 3 B sectors, block 1 8 A sectors and the same 24.
  EXPECT_EQ(c.l2_read_sectors, (32 + 24) + (8 + 24));
  EXPECT_EQ(c.dram_bytes, 4.0 * (40 * 8 + 8 * 24 + 40 * 24));
  EXPECT_EQ(c.blocks_per_sm, 2);
  EXPECT_EQ(c.lds_inst + c.lds_wavefronts + c.sts_inst + c.sts_wavefronts + c.block_barriers + c.load_rounds, 0);
}

TEST(GemmModel, CoalescedNonSquareByHand) {
  const GemmCounts c = count_gemm(GemmKernel::coalesced, 40, 24, 8, 2);
  EXPECT_EQ(c.blocks, 2);
  EXPECT_EQ(c.warps, 64);
  EXPECT_EQ(c.ffma_warp, 40.0 * 8);  // warp = row: 32 + 8 rows inside C
  EXPECT_EQ(c.ffma_thread, 40.0 * 24 * 8);
  EXPECT_EQ(c.ld_requests, 2.0 * 40 * 8);
  // A: a broadcast; B: row k = bytes 96k..96k+95, three sectors, and 1,2,2,1,1,2,2,1 lines for k = 0..7.
  EXPECT_EQ(c.ld_sectors, 40.0 * 8 + 40 * 8 * 3);
  EXPECT_EQ(c.ld_lines, 40.0 * 8 + 40 * 12);
  EXPECT_EQ(c.st_requests, 40);
  EXPECT_EQ(c.st_sectors, 40.0 * 3);
  EXPECT_EQ(c.l2_read_sectors, (32 + 24) + (8 + 24));
  EXPECT_EQ(c.dram_bytes, 4.0 * (40 * 8 + 8 * 24 + 40 * 24));
  EXPECT_EQ(c.blocks_per_sm, 2);
}

TEST(GemmModel, SmemNonSquareByHand) {
  // One K tile: every one of the 64 warps runs it; 40 rows of A (one sector each) and 8 rows of B (three
  // sectors; 12 lines) are loaded, B's by both blocks; C: 40 rows of three sectors.
  const GemmCounts c = count_gemm(GemmKernel::smem, 40, 24, 8, 2);
  EXPECT_EQ(c.blocks, 2);
  EXPECT_EQ(c.warps, 64);
  EXPECT_EQ(c.ffma_warp, 64.0 * 32);
  EXPECT_EQ(c.ffma_thread, 64.0 * 32 * 32);
  EXPECT_EQ(c.ld_requests, 40 + 2 * 8);
  EXPECT_EQ(c.ld_sectors, 40 + 2 * 8 * 3);
  EXPECT_EQ(c.ld_lines, 40 + 2 * 12);
  EXPECT_EQ(c.st_requests, 40);
  EXPECT_EQ(c.st_sectors, 40 * 3);
  EXPECT_EQ(c.l2_read_sectors, 40 + 2 * 8 * 3);
  EXPECT_EQ(c.lds_inst, 64.0 * (8 + 32));            // per warp and tile: 8 LDS.128 of As, 32 LDS of Bs
  EXPECT_EQ(c.lds_wavefronts, 64.0 * (8 * 2 + 32));
  EXPECT_EQ(c.sts_inst, 64.0 * 2);
  EXPECT_EQ(c.sts_wavefronts, 64.0 * 2);
  EXPECT_EQ(c.block_barriers, 2.0 * 2);
  EXPECT_EQ(c.dram_bytes, 4.0 * (40 * 8 + 8 * 24 + 40 * 24));
  EXPECT_EQ(c.blocks_per_sm, 2);
  // K = 40: two tiles, the second 8 wide; shared-memory work and barriers double.
  const GemmCounts k2 = count_gemm(GemmKernel::smem, 40, 24, 40, 2);
  EXPECT_EQ(k2.lds_inst, 2 * c.lds_inst);
  EXPECT_EQ(k2.block_barriers, 2.0 * 2 * 2);
  EXPECT_EQ(k2.ffma_warp, 64.0 * 2 * 32);
}

TEST(GemmModel, AblationsNonSquareByHand) {
  const GemmCounts bad = count_gemm(GemmKernel::smem_conflicted, 40, 24, 8, 2);
  const GemmCounts pad = count_gemm(GemmKernel::smem_padded, 40, 24, 8, 2);
  // Per warp: As read down a column, 8 LDS.128 of 32 wavefronts (conflicted) or 32 LDS of one (padded);
  // Bs a broadcast, 32 LDS of one; then the epilogue: one STS and one LDS through As.
  EXPECT_EQ(bad.lds_inst, 64.0 * (8 + 32) + 64);
  EXPECT_EQ(bad.lds_wavefronts, 64.0 * (8 * 32 + 32) + 64);
  EXPECT_EQ(bad.sts_inst, 64.0 * 2 + 64);
  EXPECT_EQ(bad.sts_wavefronts, 64.0 * 2 + 64 * 32);
  EXPECT_EQ(pad.lds_inst, 64.0 * (32 + 32) + 64);
  EXPECT_EQ(pad.lds_wavefronts, 64.0 * (32 + 32) + 64);
  EXPECT_EQ(pad.sts_wavefronts, 64.0 * 2 + 64);
  for (const GemmCounts* c : {&bad, &pad}) {
    EXPECT_EQ(c->block_barriers, 2.0 * (2 + 1));
    EXPECT_EQ(c->warps, 64);
    EXPECT_EQ(c->ld_sectors, 40 + 2 * 8 * 3);  // the loads and stores are kernel 3's
    EXPECT_EQ(c->st_sectors, 40 * 3);
    EXPECT_EQ(c->blocks_per_sm, 2);
  }
}

// Shapes with M != N and partial tiles. For the naive kernels, K and N keep rows of A and of B from
// sharing a sector (K a multiple of 8; N a multiple of 8 or more than 40), where the model's per-row
// count and a block's distinct sectors agree.
TEST(GemmModel, NaiveAndCoalescedMatchAWalkOverEveryLane) {
  for (auto kernel : {GemmKernel::naive, GemmKernel::coalesced})
    for (auto [m, n, k] : {std::tuple<int, int, int>{40, 24, 8}, {24, 72, 16}, {72, 40, 24}, {1, 104, 8}, {100, 8, 32},
                           {65, 48, 40}, {33, 97, 16}})
      expect_matches_walk(kernel, m, n, k);
}

TEST(GemmModel, TiledKernelsMatchAWalkOverEveryLane) {
  for (auto kernel : {GemmKernel::smem, GemmKernel::smem_conflicted, GemmKernel::smem_padded})
    for (auto [m, n, k] : {std::tuple<int, int, int>{40, 24, 8}, {24, 72, 16}, {72, 40, 48}, {1, 104, 8}, {100, 8, 72},
                           {65, 48, 40}, {33, 97, 36}})
      expect_matches_walk(kernel, m, n, k);
  // Kernels 4-8: partial tiles on every side, rows of A and B that start at every offset within a
  // 128-byte line (K and N not multiples of 32: N = 130 puts B tiles at 0 and 16 floats into a line in
  // turn), the 16-byte path (K, N multiples of 4) and the scalar one.
  for (auto kernel : {GemmKernel::blocktile_1d, GemmKernel::blocktile_2d, GemmKernel::vectorized, GemmKernel::warptile,
                      GemmKernel::warptile_tuned})
    for (auto [m, n, k] : {std::tuple<int, int, int>{72, 130, 40}, {130, 68, 36}, {200, 264, 20}, {64, 256, 48},
                           {33, 97, 17}, {260, 132, 44}})
      expect_matches_walk(kernel, m, n, k);
}

TEST(GemmModel, BlocksPerSmFollowTheDevice) {
  // The caller's figure (from the device facts) is carried, and nothing else depends on it.
  EXPECT_EQ(count_gemm(GemmKernel::smem, 64, 32, 32, 2).blocks_per_sm, 2);
  EXPECT_EQ(count_gemm(GemmKernel::naive, 64, 32, 32, 1).blocks_per_sm, 1);
  const GemmCounts a = count_gemm(GemmKernel::smem_padded, 40, 24, 40, 2), b = count_gemm(GemmKernel::smem_padded, 40, 24, 40, 1);
  EXPECT_EQ(a.lds_wavefronts, b.lds_wavefronts);
  EXPECT_EQ(a.l2_read_sectors, b.l2_read_sectors);
  // __launch_bounds__(1024, MH_MIN_BLOCKS(1024)): two blocks where an SM holds 2048 threads, one where it
  // holds 1024 or 1536, and the register cap that follows.
  EXPECT_EQ(mh::arch_min_blocks(900, 1024), 2);
  EXPECT_EQ(mh::arch_min_blocks(800, 1024), 2);
  EXPECT_EQ(mh::arch_min_blocks(750, 1024), 1);
  EXPECT_EQ(mh::arch_min_blocks(860, 1024), 1);
  EXPECT_EQ(mh::arch_min_blocks(1200, 1024), 1);
  EXPECT_EQ(mh::arch_register_cap(1024, 2), 32);
  EXPECT_EQ(mh::arch_register_cap(1024, 1), 64);
}

// Kernels 4-8 (block-tiled, model/gemm_model.hpp count_tiled).

TEST(GemmModelTiled, BlocktileOneDReadsAsBroadcastsAndBsRows) {
  // 64^3: one block of 512 threads (16 warps), 8 tiles of BK = 8. Per warp and tile: 16 LDS.128 of As
  // rows (one address per warp: a broadcast, 2 wavefronts) and 8 conflict-free LDS of Bs.
  const GemmCounts c = count_gemm(GemmKernel::blocktile_1d, 64, 64, 64, 2);
  EXPECT_EQ(c.ffma_thread, 64.0 * 64 * 64);
  EXPECT_EQ(c.lds_inst, 8.0 * 16 * (16 + 8));
  EXPECT_EQ(c.lds_wavefronts, 8.0 * 16 * (16 * 2 + 8));
  EXPECT_EQ(c.sts_wavefronts, c.sts_inst);  // 32 consecutive words per warp
  EXPECT_EQ(c.block_barriers, 2.0 * 8);
  EXPECT_EQ(c.threads_per_block, 512);
}

TEST(GemmModelTiled, WarptileSharedReadsPerK) {
  // 128^3, kernel 7: one block, 8 warps, 8 tiles of BK = 16; per warp and k 2 A reads (2 wavefronts:
  // one float4 per quarter-warp, a pair of quarters in one) and 2 B reads (4: the same 128 bytes in
  // every quarter-warp, no multicast across quarters; gemm_lds_wavefronts).
  const GemmCounts c = count_gemm(GemmKernel::warptile, 128, 128, 128, 2);
  EXPECT_EQ(c.lds_inst, 8.0 * 8 * 16 * 4);
  EXPECT_EQ(c.lds_wavefronts, 8.0 * 8 * 16 * (2 * 2 + 2 * 4));
  EXPECT_EQ(c.block_barriers, 2.0 * 8 + 1);
  // The A tile goes in transposed: 4 STS per float4, the 4 lanes of one row in one bank (4-way);
  // B as STS.128 of 512 consecutive bytes (4 wavefronts).
  EXPECT_EQ(c.sts_inst, 8.0 * 8 * (2 * 4 + 2));
  EXPECT_EQ(c.sts_wavefronts, 8.0 * 8 * (2 * 4 * 4 + 2 * 4));
}

TEST(GemmModelTiled, CheckerboardLanesPairTheAReadsToo) {
  // 8 x 4 lanes, 2 x 2 sub-tiles of 32 x 16. Checkerboard: each pair of quarter-warps asks for the same
  // 16 words (A and B), one wavefront per pair. Row-major lanes: an A pair asks for 8 + 8 different
  // conflict-free words, a B pair for the same 16 twice: at most 32 per pair, one wavefront too
  // (gemm_lds_wavefronts; no ncu measurement pins pairs of this size).
  TileShape row = tiled_shape(GemmKernel::warptile_tuned);
  row.BM = row.BN = 128, row.BK = 16, row.threads = 256, row.WM = 64, row.WN = 32, row.LN = 4, row.lanes = LaneMap::row_major;
  TileShape cb = row;
  cb.lanes = LaneMap::checkerboard;
  const GemmCounts r = count_tiled(GemmKernel::warptile_tuned, row, 256, 256, 256, 2);
  const GemmCounts c = count_tiled(GemmKernel::warptile_tuned, cb, 256, 256, 256, 2);
  EXPECT_EQ(r.lds_inst, c.lds_inst);
  EXPECT_EQ(c.lds_wavefronts, 2 * c.lds_inst);
  EXPECT_EQ(r.lds_wavefronts, 2 * c.lds_inst);
  EXPECT_EQ(r.ffma_thread, c.ffma_thread);
  EXPECT_EQ(r.st_sectors, c.st_sectors);  // the same elements of C, stored by other lanes
}

// The index maps the kernels compile from and count_tiled walks (gemm/tile_maps.hpp), pinned by hand from the
// kernels' comments: a change to a shared map changes what a kernel does, and this says so.
TEST(GemmTileMaps, MapsByHand) {
  using namespace mh::gemm;
  auto is = [](TileElem e, int row, int col) { return e.row == row && e.col == col; };
  EXPECT_TRUE(is(smem_tile_thread(37, false), 1, 5));  // kernel 3: warp = row
  EXPECT_TRUE(is(smem_tile_thread(37, true), 5, 1));   // 3a/3b's compute: warp = column
  // Kernel 5: element 37 + 256 i of each tile: A[e / 8][e % 8], B[e / 128][e % 128].
  EXPECT_TRUE(is(a_load(kBlocktile2d, 37, 2), 68, 5));
  EXPECT_TRUE(is(b_load(kBlocktile2d, 200, 3), 7, 72));
  // Kernel 8: float4 f = 77 + 128 i: A[f / 2][4 (f % 2)], B[f / 32][4 (f % 32)].
  EXPECT_TRUE(is(a_load(kWarptileTuned, 77, 1), 102, 4));
  EXPECT_TRUE(is(b_load(kWarptileTuned, 77, 1), 6, 52));
  EXPECT_EQ(as_word(kBlocktile1d, {5, 3}), 5 * 8 + 3);   // As[BM][BK]
  EXPECT_EQ(as_word(kVectorized, {5, 3}), 3 * 128 + 5);  // As[BK][BM]: transposed
  EXPECT_EQ(bs_word(kVectorized, {3, 5}), 3 * 128 + 5);
  // Kernels 4-6: thread t's patch (t / (BN / TN), t % (BN / TN)), element (TM row + m, TN col + n).
  EXPECT_TRUE(is(thread_patch(kBlocktile1d, 200), 3, 8));
  EXPECT_TRUE(is(patch_elem(kBlocktile1d, {3, 8}, 2, 0), 26, 8));
  EXPECT_TRUE(is(patch_elem(kBlocktile2d, thread_patch(kBlocktile2d, 37), 1, 3), 17, 43));
  // Kernels 7-8: lane 13 = (13 / 8, 13 % 8); checkerboard (LN = 4) 13 = 16 * 0 + 8 * 1 + 5 -> (5 / 2, 2 + (2 + 1) % 2).
  EXPECT_TRUE(is(warptile_lane(kWarptile, 13), 1, 5));
  TileShape cb = kWarptile;
  cb.LN = 4, cb.lanes = LaneMap::checkerboard;
  EXPECT_TRUE(is(warptile_lane(cb, 13), 2, 3));
  // Thread 77: warp 2, lane 13. Kernel 7 (2 warp tiles across): warp tile (1, 0) at (32, 0); kernel 8 (one
  // across): (2, 0) at (64, 0); plus the lane's 4 x 4 patch (4, 20); sub-tile (i, j) 16 i rows, 32 j columns on.
  EXPECT_TRUE(is(warptile_origin(kWarptile, 77), 36, 20));
  EXPECT_TRUE(is(warptile_origin(kWarptileTuned, 77), 68, 20));
  EXPECT_TRUE(is(warptile_patch(kWarptileTuned, {68, 20}, 1, 2), 84, 84));
}

TEST(GemmTileMaps, TunedKernelCountsByHand) {
  // Kernel 8 at 128^3: one block of 4 warps, 16 tiles of BK = 8. Per warp and tile: 2 LDG.128 of A (16 rows x
  // 32 bytes: 16 sectors, 16 lines) and 2 of B (512 consecutive bytes: 16 sectors, 4 lines); 2 float4s of A
  // stored transposed as 8 STS, the two lanes of a row 4 x 128 words apart in one bank (2 wavefronts each),
  // and 2 STS.128 of B (4 each). C: 32 STG.128 per thread, 4 rows x 128 bytes per warp store (16 sectors).
  const GemmCounts c = count_gemm(GemmKernel::warptile_tuned, 128, 128, 128, 2);
  EXPECT_EQ(c.ld_requests, 4.0 * 16 * 4);
  EXPECT_EQ(c.ld_sectors, 4.0 * 16 * 64);
  EXPECT_EQ(c.ld_lines, 4.0 * 16 * 40);
  EXPECT_EQ(c.sts_inst, 4.0 * 16 * 10);
  EXPECT_EQ(c.sts_wavefronts, 4.0 * 16 * (8 * 2 + 2 * 4));
  EXPECT_EQ(c.st_requests, 4.0 * 32);
  EXPECT_EQ(c.st_sectors, 4.0 * 32 * 16);
}

TEST(GemmTileMaps, UnevenShapeIsRefused) {
  TileShape s = tiled_shape(GemmKernel::warptile);
  s.threads = 128;  // not the 8 warps its 128 x 128 tile in 32 x 64 warp tiles needs
  EXPECT_THROW(count_tiled(GemmKernel::warptile, s, 256, 256, 256, 2), std::invalid_argument);
}

TEST(GemmModelTiled, FfmaPerSharedWavefrontClimbsTheLadder) {
  auto ratio = [](GemmKernel k) {
    const GemmCounts c = count_gemm(k, 1024, 1024, 1024, 2);
    return c.ffma_warp / (c.lds_wavefronts + c.sts_wavefronts);
  };
  EXPECT_LT(ratio(GemmKernel::smem), ratio(GemmKernel::blocktile_1d));
  EXPECT_LT(ratio(GemmKernel::blocktile_1d), ratio(GemmKernel::blocktile_2d));
  EXPECT_LT(ratio(GemmKernel::vectorized), ratio(GemmKernel::warptile));
}

TEST(GemmModelTiled, L2TrafficIsEachBlocksPanels) {
  // Aligned shapes: every block reads its BM x K panel of A and K x BN panel of B once.
  for (GemmKernel k : {GemmKernel::blocktile_1d, GemmKernel::blocktile_2d, GemmKernel::vectorized,
                       GemmKernel::warptile, GemmKernel::warptile_tuned}) {
    const TileShape s = tiled_shape(k);
    const double n = 1024, blocks = (n / s.BM) * (n / s.BN);
    const GemmCounts c = count_gemm(k, 1024, 1024, 1024, 2);
    EXPECT_EQ(c.l2_read_sectors, blocks * n * (s.BM + s.BN) * 4 / 32) << s.BM << "x" << s.BN;
    EXPECT_EQ(c.ld_sectors, c.l2_read_sectors);  // whole sectors, none read twice within a block
  }
}

TEST(GemmModelTiled, ScalarPathWhenRowsAreNotSixteenByteAligned) {
  // N = 1022: rows of B and C are not 16-byte aligned, so kernel 6 loads each float4 as four LDG.
  const GemmCounts v = count_gemm(GemmKernel::vectorized, 256, 1024, 256, 2);
  const GemmCounts s = count_gemm(GemmKernel::vectorized, 256, 1022, 256, 2);
  EXPECT_EQ(s.ld_requests, 4 * v.ld_requests);
  EXPECT_EQ(s.st_requests, 4 * v.st_requests);
  EXPECT_EQ(s.ffma_thread, v.ffma_thread);  // the same tiles
}

TEST(GemmModelTiled, EdgeTilesLoadOnlyWhatIsInside) {
  // 130 x 130 x 20 in 128 x 128 x 8 tiles: 4 blocks, 3 k-tiles; the zero-filled parts cost no sectors.
  const GemmCounts c = count_gemm(GemmKernel::blocktile_2d, 130, 130, 20, 2);
  EXPECT_EQ(c.blocks, 4);
  EXPECT_EQ(c.ffma_thread, 4.0 * 3 * 128 * 128 * 8);
  EXPECT_LT(c.l2_read_sectors, 4.0 * 3 * (128 + 128) * 8 * 4 / 32);
  EXPECT_GE(c.l2_read_sectors, (130.0 * 20 * 2 + 20 * 130 * 2) * 4 / 32);  // every element, each block pair
}


TEST(GemmModelTiled, BarriersAndDramBytesByHand) {
  // 128 x 256 x 40. Barriers per block: kernels 4-6 two per K tile (after the stores, after the math);
  // kernel 7 one after the first tile's stash, then two per tile; kernel 8 (two buffers) that one, then one per tile.
  EXPECT_EQ(count_gemm(GemmKernel::blocktile_1d, 128, 256, 40, 2).block_barriers, 8.0 * 5 * 2);  // 2 x 4 blocks of 64^2, 5 tiles
  EXPECT_EQ(count_gemm(GemmKernel::blocktile_2d, 128, 256, 40, 2).block_barriers, 2.0 * 5 * 2);  // 2 blocks of 128^2
  EXPECT_EQ(count_gemm(GemmKernel::vectorized, 128, 256, 40, 2).block_barriers, 2.0 * 5 * 2);
  EXPECT_EQ(count_gemm(GemmKernel::warptile, 128, 256, 40, 2).block_barriers, 2.0 * (1 + 3 * 2));  // BK = 16: 3 tiles
  EXPECT_EQ(count_gemm(GemmKernel::warptile_tuned, 128, 256, 40, 2).block_barriers, 2.0 * (1 + 5));
  // Load rounds per block: every tile with one shared buffer; with two (kernel 8) the first tile only.
  EXPECT_EQ(count_gemm(GemmKernel::blocktile_1d, 128, 256, 40, 2).load_rounds, 8.0 * 5);
  EXPECT_EQ(count_gemm(GemmKernel::blocktile_2d, 128, 256, 40, 2).load_rounds, 2.0 * 5);
  EXPECT_EQ(count_gemm(GemmKernel::vectorized, 128, 256, 40, 2).load_rounds, 2.0 * 5);
  EXPECT_EQ(count_gemm(GemmKernel::warptile, 128, 256, 40, 2).load_rounds, 2.0 * 3);
  EXPECT_EQ(count_gemm(GemmKernel::warptile_tuned, 128, 256, 40, 2).load_rounds, 2.0 * 1);
  for (GemmKernel k : {GemmKernel::smem, GemmKernel::smem_conflicted, GemmKernel::smem_padded})  // 32-wide tiles
    EXPECT_EQ(count_gemm(k, 128, 256, 40, 2).load_rounds, 4.0 * 8 * 2) << static_cast<int>(k);
  // Compulsory DRAM bytes: A (128 x 40) and B (40 x 256) read once, C (128 x 256) written once.
  for (GemmKernel k : {GemmKernel::blocktile_1d, GemmKernel::blocktile_2d, GemmKernel::vectorized, GemmKernel::warptile,
                       GemmKernel::warptile_tuned})
    EXPECT_EQ(count_gemm(k, 128, 256, 40, 2).dram_bytes, 4.0 * (5120 + 10240 + 32768));
}

namespace {
// Brute force, written from the kernels' compute() and the ncu-derived rule (model/gemm_model.hpp
// gemm_lds_wavefronts): one LDS.128 by a warp, lanes -> float index in shared memory. Quarter-warps
// pair up (0-1, 2-3); a pair is one wavefront when its per-quarter distinct words number at most 32 and
// no bank is asked for two different words; otherwise each quarter takes its worst bank's word count.
int lds128_by_lanes(const int (&floats)[32]) {
  int total = 0;
  for (int pair = 0; pair < 2; ++pair) {
    std::set<int> quarter[2], bank_words[32];
    for (int h = 0; h < 2; ++h)
      for (int lane = 16 * pair + 8 * h; lane < 16 * pair + 8 * h + 8; ++lane)
        for (int c = 0; c < 4; ++c) quarter[h].insert(floats[lane] + c);
    bool clash = false;
    for (const auto& q : quarter)
      for (int word : q) bank_words[word % 32].insert(word), clash |= bank_words[word % 32].size() > 1;
    if (quarter[0].size() + quarter[1].size() <= 32 && !clash) {
      total += 1;
      continue;
    }
    for (const auto& q : quarter) {
      int per_bank[32] = {}, worst = 0;
      for (int word : q) worst = std::max(worst, ++per_bank[word % 32]);
      total += worst;
    }
  }
  return total;
}
}  // namespace

TEST(GemmModelTiled, WarptileTunedSharedReadsMatchNcu) {
  // Kernel 8 (WarptileTuned: BM = BN = 128, BK = 8, WM = 32, WN = 128, LN = 8, 4 warps): per warp and k,
  // MITER = 2 reads of As[k][wm0 + 16 i + 4 lm] and NITER = 4 of Bs[k][32 j + 4 ln], lm = lane / 8,
  // ln = lane % 8. Walk every lane of every read of one tile.
  int wavefronts = 0, reads = 0;
  for (int warp = 0; warp < 4; ++warp)
    for (int k = 0; k < 8; ++k) {
      int a[32], b[32];
      for (int i = 0; i < 2; ++i, ++reads) {
        for (int lane = 0; lane < 32; ++lane) a[lane] = k * 128 + warp * 32 + i * 16 + lane / 8 * 4;
        wavefronts += lds128_by_lanes(a);
      }
      for (int j = 0; j < 4; ++j, ++reads) {
        for (int lane = 0; lane < 32; ++lane) b[lane] = 8 * 128 + k * 128 + j * 32 + lane % 8 * 4;
        wavefronts += lds128_by_lanes(b);
      }
    }
  EXPECT_EQ(wavefronts, 4 * 8 * 20);  // 2 A reads x 2 + 4 B reads x 4 per warp and k
  // 128^3: one block, 16 tiles.
  const GemmCounts c = count_gemm(GemmKernel::warptile_tuned, 128, 128, 128, 2);
  EXPECT_EQ(c.lds_inst, 16.0 * reads);
  EXPECT_EQ(c.lds_wavefronts, 16.0 * wavefronts);
  // ncu at 4096^3 (results/h200/20261130T222947Z/ncu.csv): 335559492 wavefronts / 100663296 LDS = 3.3335.
  EXPECT_NEAR(c.lds_wavefronts / c.lds_inst, 335559492.0 / 100663296.0, 0.001);
  // Kernel 7 keeps its measured 3: 2 A reads x 2 + 2 B reads x 4 per k (ncu 402668989 / 134217728).
  const GemmCounts k7 = count_gemm(GemmKernel::warptile, 128, 128, 128, 2);
  EXPECT_NEAR(k7.lds_wavefronts / k7.lds_inst, 402668989.0 / 134217728.0, 0.001);
}

TEST(GemmModelTiled, LdsPairRuleKeepsTheBankModelsCheckedPatterns) {
  // The patterns the bank model was checked on with ncu (lane i: element i * stride, padded or swizzled):
  // only broadcasts have a pair of phases small enough to share a wavefront, as the bank model has it.
  for (int width : {4, 8, 16})
    for (int stride = 0; stride <= 64; ++stride)
      for (int variant = 0; variant < 4; ++variant) {
        SmemPattern p{width, stride, variant < 3 ? variant : 0, variant == 3};
        EXPECT_EQ(gemm_lds_wavefronts(smem_pattern_addresses(p), width), smem_pattern_wavefronts(p))
            << width << " " << stride << " " << variant;
      }
}

// The L2 reuse rule (tile_reuse) of kernels 1-3: re-read distances by hand, DRAM past L2 (strictly).
TEST(GemmModel, TileReuseDistancesByHand) {
  // 4096^3: A's line is next read Mt = 128 blocks later; in between every strip of A (64 MiB), two panels of B
  // and 129 tiles of C. B's is next read by the next block: two strips of A, one panel, two tiles.
  const TileReuse r = tile_reuse(4096, 4096, 4096, 62914560.0);  // the H200's L2
  EXPECT_EQ(r.a_distance, 4.0 * (4096.0 * 4096 + 4096 * 64 + 129 * 1024));
  EXPECT_EQ(r.b_distance, 4.0 * (4096 * 64 + 4096 * 32 + 2 * 1024));
  EXPECT_TRUE(r.a_dram);
  EXPECT_FALSE(r.b_dram);
  EXPECT_FALSE(tile_reuse(4096, 4096, 4096, r.a_distance).a_dram);  // exactly L2: still held
  EXPECT_TRUE(tile_reuse(4096, 4096, 4096, r.a_distance - 1).a_dram);
  EXPECT_FALSE(tile_reuse(4096, 4096, 1024, 62914560.0).a_dram);  // K = 1024: A is 16 MiB
  // One column panel: A is read by one block only, never re-read, whatever L2 is; likewise B with one row block.
  const TileReuse one = tile_reuse(4096, 32, 64, 0);
  EXPECT_EQ(one.a_distance, 0);
  EXPECT_FALSE(one.a_dram);
  EXPECT_TRUE(one.b_dram);
  EXPECT_FALSE(tile_reuse(32, 4096, 64, 0).b_dram);
  // Partial tiles: the window's strips and panels are capped by M and N (40 x 24: one panel of 24 columns).
  EXPECT_EQ(tile_reuse(40, 24, 8, 0).b_distance, 4.0 * (8 * 40 + 8 * 24 + 40 * 24));
}

// 64 x 64 x 8: 2 x 2 blocks. A's distance 4 (8 x 64 + 8 x 64 + 64 x 48) = 16384 B, B's 4 (8 x 64 + 8 x 32 + 2048)
// = 11264 B: an L2 of 12000 B sends A's misses to DRAM and keeps B's.
TEST(GemmModel, DirectLoadRequestsAndDramBytesByLevel) {
  for (auto kernel : {GemmKernel::naive, GemmKernel::coalesced, GemmKernel::smem}) {
    SCOPED_TRACE(static_cast<int>(kernel));
    const GemmCounts c = count_gemm(kernel, 64, 64, 8, 2, 12000);
    // A's requests: naive 2 row blocks x 64 columns x 8 k; coalesced 64 rows x 2 panels x 8 k; smem 64 rows x 2
    // panels, one tile. Its DRAM bytes: each block's 32 rows once (a sector each): 2 x 64 sectors; B and C once.
    EXPECT_EQ(c.ld_requests_dram, kernel == GemmKernel::smem ? 64.0 * 2 : 2.0 * 64 * 8);
    EXPECT_EQ(c.dram_bytes_reuse, 4.0 * 64 * 64 + 32.0 * 2 * 64 + 4.0 * 8 * 64);
    const GemmCounts both = count_gemm(kernel, 64, 64, 8, 2, 11000);  // B's misses at DRAM too: every request
    EXPECT_EQ(both.ld_requests_dram, both.ld_requests);
    EXPECT_EQ(both.dram_bytes_reuse, 4.0 * 64 * 64 + 32.0 * 2 * 64 + 32.0 * 4 * 8 * 4);  // B: 4 blocks x 8 rows x 4 sectors
    const GemmCounts none = count_gemm(kernel, 64, 64, 8, 2, 16384);
    EXPECT_EQ(none.ld_requests_dram, 0);
    EXPECT_EQ(none.dram_bytes_reuse, none.dram_bytes);
    const GemmCounts kept = count_gemm(kernel, 64, 64, 8, 2);  // the default L2 keeps every reuse: compulsory
    EXPECT_EQ(kept.ld_requests_dram, 0);
    EXPECT_EQ(kept.dram_bytes_reuse, kept.dram_bytes);
  }
}

// The by-hand 40 x 24 x 8 shape (one panel, two row blocks): only B is re-read; its requests and sectors.
TEST(GemmModel, NonSquareReuseByHand) {
  const double l2 = 4.0 * (8 * 40 + 8 * 24 + 40 * 24) - 1;  // B's distance less a byte
  EXPECT_EQ(count_gemm(GemmKernel::naive, 40, 24, 8, 2, l2).ld_requests_dram, 48.0 * 8);  // B broadcasts
  EXPECT_EQ(count_gemm(GemmKernel::coalesced, 40, 24, 8, 2, l2).ld_requests_dram, 40.0 * 8);  // B rows
  // C and A once, B's 8 rows of three sectors per block.
  EXPECT_EQ(count_gemm(GemmKernel::coalesced, 40, 24, 8, 2, l2).dram_bytes_reuse, 4.0 * (40 * 24 + 40 * 8) + 32.0 * 2 * 8 * 3);
}

TEST(GemmModel, TiledKernelsKeepTheCompulsoryDramCount) {
  for (auto k : {GemmKernel::blocktile_1d, GemmKernel::warptile_tuned}) {
    const GemmCounts c = count_gemm(k, 256, 256, 64, 2, 1);
    EXPECT_EQ(c.dram_bytes_reuse, c.dram_bytes);
    EXPECT_EQ(c.ld_requests_dram, 0);
  }
}

// The FP32 tiled kernels' index arithmetic, written once: kernel 3's thread maps (gemm/3_smem.cuh,
// gemm/3a_smem_conflicted.cuh) and the shapes and maps of the block-tiled kernels 4-8 (gemm/4_blocktile_1d.cuh
// ... gemm/8_warptile_tuned.cuh): which tile element a thread's global load reads, where it goes in shared
// memory, which part of C a thread computes (and so which shared words its inner loop reads) and stores.
// The kernels index through these functions and the counting model (model/gemm_model.hpp) walks the same
// ones, so a kernel whose map changes here is counted as it now runs.
// Plain C++ (no CUDA headers): model/gemm_model.hpp includes it (and so the host tests), gemm/gemm.cuh for the
// kernels. A kernel uses a shape through a local copy (constexpr TileShape kShape = ...): a namespace-scope
// object of class type is not usable in device code.
#pragma once

#if defined(__CUDACC__)
#define MH_TILE_HD __host__ __device__ __forceinline__
#else
#define MH_TILE_HD inline
#endif

namespace mh::gemm {

// An element of a tile: of the A or B tile in shared memory ((row, k) of A, (k, column) of B) or of the
// block's tile of C.
struct TileElem {
  int row, col;
};

// Kernels 1-3 and the ablations: a 32 x 32 tile of C per block of 1024 threads.
constexpr int kTile = 32;
constexpr int kTileThreads = kTile * kTile;

// Thread indices are unsigned, as threadIdx.x is: the kernels' divisions by powers of two stay shifts.

// Kernel 3 (and every load and store of 3a/3b): thread t is (row t / 32, column t % 32) of the tile, so a
// warp is one row. transposed (3a/3b's compute): (t % 32, t / 32), a warp is one column.
MH_TILE_HD constexpr TileElem smem_tile_thread(unsigned t, bool transposed) {
  const int row = int(t / kTile), col = int(t % kTile);
  return transposed ? TileElem{col, row} : TileElem{row, col};
}

// Lane -> (lm, ln) within a warp's sub-tile (kernels 7-8; gemm/7_warptile.cuh says why each exists).
enum class LaneMap { row_major, checkerboard };

// Kernels 4-8: a BM x BN tile of C per block, K walked BK at a time through shared memory.
struct TileShape {
  int BM = 0, BN = 0, BK = 0;
  int threads = 0;             // per block
  int TM = 0, TN = 0;          // each thread's TM x TN patch of C (kernels 4-6), of each sub-tile (7-8)
  int load_floats = 1;         // floats per global load of a tile: 1, or 4 (one float4, kernels 6-8)
  bool a_transposed = false;   // As is [BK][BM] (kernels 6-8: the rows of one k contiguous), else [BM][BK]
  int stages = 1;              // shared buffers: 1 -> two barriers per tile, 2 -> one (plus one before the loop)
  int WM = 0, WN = 0;          // warp tile (kernels 7-8; 0 otherwise)
  int LN = 8;                  // lanes along N in a warp's sub-tile (kernels 7-8)
  LaneMap lanes = LaneMap::row_major;
};

// Each kernel's shape (nvcc 13.0, sm_90, 16-byte path: 64, 127, 111, 120 and 193 registers per thread; the
// run reads the compiled kernel's). Kernel 8's is the winner of the tile sweep (gemm/8_warptile_tuned.cuh).
constexpr TileShape kBlocktile1d = [] {
  TileShape s;
  s.BM = 64, s.BN = 64, s.BK = 8, s.threads = 512, s.TM = 8, s.TN = 1;
  return s;
}();
constexpr TileShape kBlocktile2d = [] {
  TileShape s;
  s.BM = 128, s.BN = 128, s.BK = 8, s.threads = 256, s.TM = 8, s.TN = 8;
  return s;
}();
constexpr TileShape kVectorized = [] {
  TileShape s = kBlocktile2d;
  s.load_floats = 4, s.a_transposed = true;
  return s;
}();
constexpr TileShape kWarptile = [] {
  TileShape s;
  s.BM = 128, s.BN = 128, s.BK = 16, s.threads = 256, s.TM = 4, s.TN = 4, s.load_floats = 4, s.a_transposed = true;
  s.WM = 32, s.WN = 64, s.LN = 8;
  return s;
}();
constexpr TileShape kWarptileTuned = [] {
  TileShape s = kWarptile;
  s.BK = 8, s.threads = 128, s.stages = 2, s.WN = 128;
  return s;
}();

// Shared memory per block: `stages` buffers of the A and the B tile.
constexpr int tile_smem_bytes(const TileShape& s) { return s.stages * s.BK * (s.BM + s.BN) * 4; }

// Global loads. Thread t's i-th load of a tile `cols` wide, read row by row `floats` at a time by
// `threads` threads: load f = t + threads i is the tile's f-th group of `floats`; its first element.
// Written as thread t's first load moved down i threads / per_row rows (threads is a multiple of per_row,
// tiles_evenly), which the compiler folds into one row offset per load.
MH_TILE_HD constexpr TileElem tile_load(int cols, int floats, int threads, unsigned t, int i) {
  const unsigned per_row = cols / floats;
  return {int(t / per_row) + i * (threads / int(per_row)), int(t % per_row) * floats};
}
MH_TILE_HD constexpr int a_loads(const TileShape& s) { return s.BM * s.BK / (s.load_floats * s.threads); }
MH_TILE_HD constexpr int b_loads(const TileShape& s) { return s.BK * s.BN / (s.load_floats * s.threads); }
// (row, k) of the A tile and (k, column) of the B tile that thread t's i-th load of each reads.
MH_TILE_HD constexpr TileElem a_load(const TileShape& s, unsigned t, int i) { return tile_load(s.BK, s.load_floats, s.threads, t, i); }
MH_TILE_HD constexpr TileElem b_load(const TileShape& s, unsigned t, int i) { return tile_load(s.BN, s.load_floats, s.threads, t, i); }

// Shared memory. As is [as_rows][as_cols]: [BM][BK], or transposed, [BK][BM] (kernels 6-8: the rows of one
// k contiguous, read 16 bytes at a time); A-tile element e = (row, k) is As[as_index(e).row][as_index(e).col].
// Bs is [BK][BN]: B-tile element e = (k, column) is Bs[e.row][e.col]. as_word and bs_word: the same as word
// offsets from the start of a stage's As and of its Bs (which follows As, BM BK words on).
MH_TILE_HD constexpr int as_rows(const TileShape& s) { return s.a_transposed ? s.BK : s.BM; }
MH_TILE_HD constexpr int as_cols(const TileShape& s) { return s.a_transposed ? s.BM : s.BK; }
MH_TILE_HD constexpr TileElem as_index(const TileShape& s, TileElem e) { return s.a_transposed ? TileElem{e.col, e.row} : e; }
MH_TILE_HD constexpr int as_word(const TileShape& s, TileElem e) { return as_index(s, e).row * as_cols(s) + as_index(s, e).col; }
MH_TILE_HD constexpr int bs_word(const TileShape& s, TileElem e) { return e.row * s.BN + e.col; }

// Kernels 4-6: the block's C tile in TM x TN patches, thread t's patch (row, col) in those units, threads
// along N first; and the C element (m, n) of patch p.
MH_TILE_HD constexpr TileElem thread_patch(const TileShape& s, unsigned t) {
  const unsigned across = s.BN / s.TN;
  return {int(t / across), int(t % across)};
}
MH_TILE_HD constexpr TileElem patch_elem(const TileShape& s, TileElem p, int m, int n) {
  return {p.row * s.TM + m, p.col * s.TN + n};
}

// Kernels 7-8: the warp tile WM x WN is covered in sub-tiles of sub_m x sub_n, LM = 32 / LN lanes down and
// LN across, each lane a TM x TN patch of each.
MH_TILE_HD constexpr int sub_m(const TileShape& s) { return 32 / s.LN * s.TM; }
MH_TILE_HD constexpr int sub_n(const TileShape& s) { return s.LN * s.TN; }
// Lane -> (lm, ln) = (row, col) of its patch in a sub-tile. Row-major: (lane / LN, lane % LN). Checkerboard
// (LN = 4): lane = 16 h + 8 p + q -> (4 h + q / 2, 2 (q % 2) + (q / 2 + p) % 2).
MH_TILE_HD constexpr TileElem warptile_lane(const TileShape& s, int lane) {
  const int q = lane % 8, p = lane / 8 % 2;
  return s.lanes == LaneMap::checkerboard ? TileElem{lane / 16 * 4 + q / 2, q % 2 * 2 + (q / 2 + p) % 2}
                                          : TileElem{lane / s.LN, lane % s.LN};
}
// The first row and column of thread t's patch in sub-tile (0, 0) of its warp's tile: warp w's tile is
// (w / (BN / WN), w % (BN / WN)) of the block's.
MH_TILE_HD constexpr TileElem warptile_origin(const TileShape& s, unsigned t) {
  const int warp = int(t / 32);
  const TileElem l = warptile_lane(s, int(t % 32));
  return {warp / (s.BN / s.WN) * s.WM + l.row * s.TM, warp % (s.BN / s.WN) * s.WN + l.col * s.TN};
}
// ... and of its patch in sub-tile (i, j).
MH_TILE_HD constexpr TileElem warptile_patch(const TileShape& s, TileElem origin, int i, int j) {
  return {origin.row + i * sub_m(s), origin.col + j * sub_n(s)};
}

// Whole loads and patches: what the maps above assume of a shape.
constexpr bool tiles_evenly(const TileShape& s) {
  const bool warps = s.WM == 0 || (s.BM % s.WM == 0 && s.BN % s.WN == 0 && s.WM % sub_m(s) == 0 && s.WN % sub_n(s) == 0 &&
                                   s.threads == 32 * (s.BM / s.WM) * (s.BN / s.WN));
  return warps && s.BM * s.BN % (s.TM * s.TN) == 0 && s.BK % s.load_floats == 0 && s.threads % (s.BK / s.load_floats) == 0 &&
         s.threads % (s.BN / s.load_floats) == 0 &&
         a_loads(s) * s.load_floats * s.threads == s.BM * s.BK && b_loads(s) * s.load_floats * s.threads == s.BK * s.BN;
}
static_assert(tiles_evenly(kBlocktile1d) && tiles_evenly(kBlocktile2d) && tiles_evenly(kVectorized) &&
                  tiles_evenly(kWarptile) && tiles_evenly(kWarptileTuned),
              "each kernel's shape tiles evenly");
static_assert(kBlocktile1d.threads * kBlocktile1d.TM * kBlocktile1d.TN == kBlocktile1d.BM * kBlocktile1d.BN &&
                  kBlocktile2d.threads * kBlocktile2d.TM * kBlocktile2d.TN == kBlocktile2d.BM * kBlocktile2d.BN,
              "kernels 4-6: one patch per thread");

}  // namespace mh::gemm

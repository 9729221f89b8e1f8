// GEMM counting model: what kernels 1-3 and the two bank ablations (gemm/*.cuh) ask of each unit,
// counted on the host from their index arithmetic, for row-major A (MxK), B (KxN), C (MxN), beta = 0.
// The report multiplies each count by a unit cost measured in the same run (plots/bounds.py).
//
// Counts are warp-level instructions and requests, as ncu counts them:
//   global loads/stores: requests, 32-byte sectors and 128-byte lines (model/access_model.hpp);
//   shared loads/stores: instructions and wavefronts (model/bank_model.hpp);
//   FFMA: thread instructions (ncu: smsp__sass_thread_inst_executed_op_ffma_pred_on.sum);
//   barriers: __syncthreads per block;
//   L2 sectors read by L1: each block's tiles once (L1 keeps what the warps of one block share);
//   DRAM bytes: compulsory, A and B read once and C written once (L2 keeps every reuse).
// The last two are assumptions; where ncu disagrees, the report says which cost the model lacks.
#pragma once
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/access_model.hpp"
#include "model/bank_model.hpp"

namespace mh::model {

enum class GemmKernel { naive, coalesced, smem, smem_conflicted, smem_padded };

struct GemmCounts {
  double blocks = 0, warps = 0;
  double ffma_thread = 0, ffma_warp = 0;
  double ld_requests = 0, ld_sectors = 0, ld_lines = 0;
  double st_requests = 0, st_sectors = 0;
  double lds_inst = 0, lds_wavefronts = 0;
  double sts_inst = 0, sts_wavefronts = 0;
  double block_barriers = 0;
  double l2_read_sectors = 0;
  double dram_bytes = 0;
  int blocks_per_sm = 0;  // resident 1024-thread blocks per SM: the caller's, from the device facts
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

// blocks_per_sm: resident blocks per SM on the device (gemm/bench_gemm.cu: from its facts), carried
// for the barrier bound (plots/bounds.py) and the occupancy; nothing else here depends on it.
inline GemmCounts count_gemm(GemmKernel kernel, int64_t M, int64_t N, int64_t K, int blocks_per_sm) {
  if (M < 1 || N < 1 || K < 1) throw std::invalid_argument("GEMM model needs M, N, K >= 1");
  if (blocks_per_sm < 1) throw std::invalid_argument("GEMM model needs blocks_per_sm >= 1");
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

  if (kernel == GemmKernel::naive || kernel == GemmKernel::coalesced) {
    // One thread per element of C; threads outside C return at once.
    c.ffma_thread = double(M) * N * K;
    for (int64_t bx = 0; bx < Mt; ++bx)  // L2: each block reads its 32 rows of A once ...
      for (int64_t x = bx * T; x < bx * T + rows_in(bx); ++x) c.l2_read_sectors += Nt * contiguous_floats(x * K, K).sectors;
    for (int64_t by = 0; by < Nt; ++by)  // ... and its 32-column strip of B once
      for (int64_t k = 0; k < K; ++k) c.l2_read_sectors += Mt * contiguous_floats(k * N + by * T, cols_in(by)).sectors;
  }
  if (kernel == GemmKernel::naive) {
    // A warp: 32 rows (threadIdx.x) of one column. A[row][k] strided by K, B[k][col] a broadcast.
    c.ffma_warp = double(Mt) * N * K;  // warps whose column is inside C
    for (int64_t bx = 0; bx < Mt; ++bx) {
      for (int64_t k = 0; k < K; ++k) add_ld(c, strided_floats(bx * T * K + k, K, rows_in(bx)), double(N));
      add_ld(c, {1, 1}, double(N) * K);
      add_st(c, strided_floats(bx * T * N, N, rows_in(bx)), double(N));
    }
    c.warps = double(Mt * Nt) * T;  // warps launched (whole 32x32 blocks)
    return c;
  }
  if (kernel == GemmKernel::coalesced) {
    // A warp: 32 columns of one row. A[row][k] a broadcast, B[k][col] one row segment.
    c.ffma_warp = double(M) * Nt * K;
    add_ld(c, {1, 1}, double(M) * Nt * K);
    for (int64_t by = 0; by < Nt; ++by) {
      for (int64_t k = 0; k < K; ++k) add_ld(c, contiguous_floats(k * N + by * T, cols_in(by)), double(M));
      for (int64_t x = 0; x < M; ++x) add_st(c, contiguous_floats(x * N + by * T, cols_in(by)), 1);
    }
    c.warps = double(Mt * Nt) * T;
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
  for (int64_t by = 0; by < Nt; ++by)
    for (int64_t k = 0; k < K; ++k) add_ld(c, contiguous_floats(k * N + by * T, cols_in(by)), double(Mt));
  c.l2_read_sectors = c.ld_sectors;  // one block never re-reads a tile; no reuse across blocks assumed
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
  const double as_inst = T * 4 / w, as_wf = smem_wavefronts(as_addr, w);
  const double bs_inst = T, bs_wf = smem_wavefronts(bs_addr, 4);
  const double per_warp_tiles = c.warps * Kt;
  c.sts_inst = 2 * per_warp_tiles;
  c.sts_wavefronts = 2 * per_warp_tiles;
  c.lds_inst = per_warp_tiles * (as_inst + bs_inst);
  c.lds_wavefronts = per_warp_tiles * (as_inst * as_wf + bs_inst * bs_wf);
  c.block_barriers = c.blocks * 2 * Kt;
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

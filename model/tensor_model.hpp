// Tensor-core model: where each element of an mma.sync / wgmma / ldmatrix fragment lives, the shared
// layouts the tensor family reads, ldmatrix's wavefronts, and the peak FLOP per clock per SM.
//
// The fragment maps follow the PTX ISA's figures (mma.m16n8k{8,16,32}, wgmma.m64nNk16 accumulators,
// ldmatrix.m8n8). Kernels load operands and store accumulators through them, and the host reference
// multiplies the logical matrices, so a wrong map makes the GPU's result differ from the host's.
//
// ldmatrix wavefronts: each 8x8 matrix of 16-bit elements is 8 row addresses of 16 bytes, one per lane of
// lanes 8j..8j+7 for matrix j; the shared-memory unit serves it like a 16-byte load's quarter-warp phase
// (model/bank_model.hpp): one wavefront when the 8 rows fall in 8 distinct 4-bank groups, 8 when they all
// fall in one. So a conflict-free .x1/.x2/.x4 costs 1/2/4 wavefronts (128 bytes each), .trans or not.
#pragma once
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "model/bank_model.hpp"

#if defined(__CUDACC__)
#define MH_TENSOR_HD __host__ __device__
#else
#define MH_TENSOR_HD
#endif

namespace mh::model {

struct RowCol {
  int row, col;
};

// ---- mma.sync m16n8kK (row.col): A is 16 x K, B is K x 8, C/D 16 x 8 -------------------------------------
// Operands are packed in 32-bit registers, per_reg = 4 / element bytes elements each (2 for fp16/bf16, 4 for
// int8/fp8, 1 for tf32). group = lane / 4, tig = lane % 4 (thread in group).
// A register r, element s: row group + 8 (r & 1), column tig * per_reg + s + (r >> 1) * K / 2.
MH_TENSOR_HD inline RowCol mma_a_element(int k_dim, int per_reg, int lane, int reg, int sub) {
  return {lane / 4 + 8 * (reg & 1), (lane % 4) * per_reg + sub + (reg >> 1) * k_dim / 2};
}
// B register r (0 or 1), element s: k = tig * per_reg + s + r * K / 2, n = group. {row = k, col = n}.
MH_TENSOR_HD inline RowCol mma_b_element(int k_dim, int per_reg, int lane, int reg, int sub) {
  return {(lane % 4) * per_reg + sub + reg * k_dim / 2, lane / 4};
}
// C/D element i (0..3): row group + 8 (i >> 1), column tig * 2 + (i & 1).
MH_TENSOR_HD inline RowCol mma_c_element(int lane, int i) { return {lane / 4 + 8 * (i >> 1), (lane % 4) * 2 + (i & 1)}; }

// ---- wgmma.m64nNk16 accumulators: thread t of the warpgroup, register i (0 .. N/2 - 1) ---------------------
// Warp w = t / 32 owns rows 16w .. 16w+15; each 8-column block j = i / 4 repeats mma's C layout.
MH_TENSOR_HD inline RowCol wgmma_d_element(int thread, int i) {
  const RowCol c = mma_c_element(thread % 32, i % 4);
  return {16 * (thread / 32) + c.row, 8 * (i / 4) + c.col};
}

// ---- wgmma shared operands, K-major, no swizzle ----------------------------------------------------------
// A rows x 32-byte tile (16 bf16 or 32 fp8 elements a row: one k-step) in 8 x 16-byte core matrices (8 rows
// of 16 bytes, 128 contiguous bytes). The descriptor's leading byte offset (LBO) steps between the two core
// matrices along K, its stride byte offset (SBO) between groups of 8 rows. elem_bytes: 2 or 1.
constexpr uint32_t kWgmmaLbo = 128, kWgmmaSbo = 256;
MH_TENSOR_HD inline uint32_t wgmma_tile_offset(int row, int k, int elem_bytes = 2) {
  const int per_chunk = 16 / elem_bytes;
  return (row / 8) * kWgmmaSbo + (k / per_chunk) * kWgmmaLbo + (row % 8) * 16 + (k % per_chunk) * elem_bytes;
}

// ---- ldmatrix source layouts ------------------------------------------------------------------------------
// A tile of 64 rows of 8 16-byte chunks (128 bytes of data a row); matrix j of an ldmatrix is chunk j of 8
// consecutive rows; shift s (0..7) reads rows 8s .. 8s+7.
//   padded      row stride 144 B: row r starts at bank 4r mod 32, the 8 rows cover all 32 banks
//   swizzled    row stride 128 B, chunk c of row r stored at chunk c XOR (r mod 8)
//   conflicted  row stride 128 B, unswizzled: the 8 rows of a matrix in one group of 4 banks
enum class LdLayout { padded, swizzled, conflicted };
constexpr int kLdRows = 64, kLdShifts = 8;

MH_TENSOR_HD inline uint32_t ld_row_stride(LdLayout l) { return l == LdLayout::padded ? 144u : 128u; }
MH_TENSOR_HD inline uint32_t ld_tile_bytes(LdLayout l) { return kLdRows * ld_row_stride(l); }
// Byte offset of row `row` (0..7) of matrix `matrix` (0..3) at shift `shift`.
MH_TENSOR_HD inline uint32_t ld_row_address(LdLayout l, int shift, int matrix, int row) {
  const int r = 8 * shift + row;
  const int chunk = l == LdLayout::swizzled ? (matrix ^ (r % 8)) : matrix;
  return r * ld_row_stride(l) + 16u * chunk;
}
// Where the two 16-bit halves (half 0 low, 1 high) of a lane's register hold from their 8x8 matrix: without
// .trans row lane / 4, columns 2 (lane % 4) + half; with .trans the transpose.
MH_TENSOR_HD inline RowCol ldmatrix_element(bool trans, int lane, int half) {
  const RowCol plain{lane / 4, (lane % 4) * 2 + half};
  return trans ? RowCol{plain.col, plain.row} : plain;
}

// Model wavefronts of one warp's ldmatrix of `matrices` (1, 2 or 4) 8x8 matrices in layout `l`.
inline int ldmatrix_wavefronts(LdLayout l, int matrices) {
  if (matrices != 1 && matrices != 2 && matrices != 4) throw std::invalid_argument("ldmatrix reads 1, 2 or 4 matrices");
  std::vector<uint64_t> addrs(kWarpSize, 0);
  for (int lane = 0; lane < 8 * matrices; ++lane) addrs[lane] = ld_row_address(l, 0, lane / 8, lane % 8);
  const uint32_t active = matrices == 4 ? 0xffffffffu : (1u << (8 * matrices)) - 1;
  return smem_wavefronts(addrs, 16, active);
}

// ---- peaks ------------------------------------------------------------------------------------------------
// Dense tensor FLOP (ops for int8) per clock per SM on Hopper, from NVIDIA's H100 SXM datasheet dense figures
// divided by 132 SMs x 1830 MHz boost: BF16/FP16 989.4 TFLOP/s -> 4096, TF32 494.7 -> 2048, FP8 1978.9 and
// INT8 1978.9 TOPS -> 8192. elem_bytes: 4 (tf32), 2 (fp16, bf16), 1 (fp8, int8).
constexpr double hopper_dense_per_clock_per_sm(int elem_bytes) { return 8192.0 / elem_bytes; }

}  // namespace mh::model

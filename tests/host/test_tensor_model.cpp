#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "model/tensor_model.hpp"

using namespace mh::model;

// Each map must place every element of its matrix exactly once over the 32 lanes (a permutation).
TEST(TensorModel, MmaFragmentMapsArePermutations) {
  for (int per_reg : {1, 2, 4}) {  // tf32 (k8), fp16/bf16 (k16), int8/fp8 (k32)
    const int k = 8 * per_reg;
    std::set<std::pair<int, int>> a, b;
    for (int lane = 0; lane < 32; ++lane)
      for (int s = 0; s < per_reg; ++s) {
        for (int r = 0; r < 4; ++r) {
          const RowCol e = mma_a_element(k, per_reg, lane, r, s);
          ASSERT_TRUE(e.row >= 0 && e.row < 16 && e.col >= 0 && e.col < k);
          a.insert({e.row, e.col});
        }
        for (int r = 0; r < 2; ++r) {
          const RowCol e = mma_b_element(k, per_reg, lane, r, s);
          ASSERT_TRUE(e.row >= 0 && e.row < k && e.col >= 0 && e.col < 8);
          b.insert({e.row, e.col});
        }
      }
    EXPECT_EQ(a.size(), 16u * k) << "k " << k;
    EXPECT_EQ(b.size(), 8u * k) << "k " << k;
  }
  std::set<std::pair<int, int>> c;
  for (int lane = 0; lane < 32; ++lane)
    for (int i = 0; i < 4; ++i) c.insert({mma_c_element(lane, i).row, mma_c_element(lane, i).col});
  EXPECT_EQ(c.size(), 128u);
}

// The PTX ISA's figure for m16n8k16 A: lane 5 (group 1, thread 1) holds a0,a1 at row 1, columns 2-3; a4,a5
// (register 2) at row 1, columns 10-11; register 3 at row 9.
TEST(TensorModel, MmaMapsMatchThePtxFigures) {
  EXPECT_EQ(mma_a_element(16, 2, 5, 0, 1).col, 3);
  EXPECT_EQ(mma_a_element(16, 2, 5, 2, 0).col, 10);
  EXPECT_EQ(mma_a_element(16, 2, 5, 3, 0).row, 9);
  EXPECT_EQ(mma_b_element(16, 2, 5, 1, 1).row, 11);  // b2,b3: k = 2 tig + 8 + {0,1}
  EXPECT_EQ(mma_b_element(8, 1, 5, 1, 0).row, 5);    // tf32 b1: k = tig + 4
  EXPECT_EQ(mma_c_element(5, 3).row, 9);
  EXPECT_EQ(mma_c_element(5, 3).col, 3);
}

TEST(TensorModel, WgmmaAccumulatorsCoverTheTile) {
  for (int n : {64, 128, 256}) {
    std::set<std::pair<int, int>> d;
    for (int t = 0; t < 128; ++t)
      for (int i = 0; i < n / 2; ++i) d.insert({wgmma_d_element(t, i).row, wgmma_d_element(t, i).col});
    EXPECT_EQ(d.size(), 64u * n);
    EXPECT_EQ(d.rbegin()->first, 63);
    EXPECT_EQ(d.rbegin()->second, n - 1);
  }
}

TEST(TensorModel, WgmmaTileOffsetsAreDistinctAndDense) {
  std::set<uint32_t> offsets;
  for (int row = 0; row < 64; ++row)
    for (int k = 0; k < 16; ++k) offsets.insert(wgmma_tile_offset(row, k));
  EXPECT_EQ(offsets.size(), 64u * 16);
  EXPECT_EQ(*offsets.rbegin(), 64u * 16 * 2 - 2);  // 2 KiB, no holes
  std::set<uint32_t> fp8;  // one byte per element, 32 of them per row: the same 2 KiB, byte by byte
  for (int row = 0; row < 64; ++row)
    for (int k = 0; k < 32; ++k) fp8.insert(wgmma_tile_offset(row, k, 1));
  EXPECT_EQ(fp8.size(), 64u * 32);
  EXPECT_EQ(*fp8.rbegin(), 64u * 32 - 1);
  EXPECT_EQ(wgmma_tile_offset(0, 16, 1), kWgmmaLbo);  // the second core matrix along K
  EXPECT_EQ(wgmma_tile_offset(8, 0, 1), kWgmmaSbo);   // the next 8 rows
}

TEST(TensorModel, LdmatrixWavefronts) {
  for (LdLayout l : {LdLayout::padded, LdLayout::swizzled}) {
    EXPECT_EQ(ldmatrix_wavefronts(l, 1), 1);
    EXPECT_EQ(ldmatrix_wavefronts(l, 2), 2);
    EXPECT_EQ(ldmatrix_wavefronts(l, 4), 4);
  }
  // 8 rows of a 128-byte stride share one group of 4 banks: 8 wavefronts per matrix.
  EXPECT_EQ(ldmatrix_wavefronts(LdLayout::conflicted, 1), 8);
  EXPECT_EQ(ldmatrix_wavefronts(LdLayout::conflicted, 2), 16);
  EXPECT_EQ(ldmatrix_wavefronts(LdLayout::conflicted, 4), 32);
  EXPECT_THROW(ldmatrix_wavefronts(LdLayout::padded, 3), std::invalid_argument);
}

TEST(TensorModel, LdmatrixRowsStayInTheTile) {
  for (LdLayout l : {LdLayout::padded, LdLayout::swizzled, LdLayout::conflicted})
    for (int s = 0; s < kLdShifts; ++s)
      for (int m = 0; m < 4; ++m)
        for (int r = 0; r < 8; ++r) {
          const uint32_t a = ld_row_address(l, s, m, r);
          EXPECT_EQ(a % 16, 0u);
          EXPECT_LE(a + 16, ld_tile_bytes(l));
          EXPECT_LT(a % ld_row_stride(l), 128u);  // never the padding
        }
}

TEST(TensorModel, LdmatrixTransTransposes) {
  for (int lane = 0; lane < 32; ++lane)
    for (int h = 0; h < 2; ++h) {
      EXPECT_EQ(ldmatrix_element(true, lane, h).row, ldmatrix_element(false, lane, h).col);
      EXPECT_EQ(ldmatrix_element(true, lane, h).col, ldmatrix_element(false, lane, h).row);
    }
}

// 989.4 TFLOP/s dense BF16 on an H100 SXM = 4096 x 132 SMs x 1830 MHz (within 0.1 %).
TEST(TensorModel, HopperPeaksMatchTheDatasheet) {
  EXPECT_NEAR(hopper_dense_per_clock_per_sm(2) * 132 * 1830e6, 989.4e12, 1e12);
  EXPECT_NEAR(hopper_dense_per_clock_per_sm(4) * 132 * 1830e6, 494.7e12, 1e12);
  EXPECT_NEAR(hopper_dense_per_clock_per_sm(1) * 132 * 1830e6, 1978.9e12, 2e12);
}

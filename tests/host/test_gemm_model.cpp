#include <gtest/gtest.h>

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

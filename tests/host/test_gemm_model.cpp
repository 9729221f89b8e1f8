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
  const GemmCounts c = count_gemm(GemmKernel::naive, 32, 32, 32);
  EXPECT_EQ(c.ffma_thread, 32.0 * 32 * 32);
  EXPECT_EQ(c.ffma_warp, 32.0 * 32);             // 32 warps (columns) x 32 k
  EXPECT_EQ(c.ld_requests, 2.0 * 32 * 32);       // A and B per warp and k
  EXPECT_EQ(c.ld_sectors, 32.0 * 32 * 32 + 32 * 32);  // A: 32 rows 128 B apart; B: a broadcast
  EXPECT_EQ(c.ld_lines, c.ld_sectors);
  EXPECT_EQ(c.st_sectors, 32.0 * 32);            // C: one sector per lane
  EXPECT_EQ(c.dram_bytes, 4.0 * 3 * 32 * 32);
}

TEST(GemmModel, CoalescedAt32IsFourSectorsForB) {
  const GemmCounts c = count_gemm(GemmKernel::coalesced, 32, 32, 32);
  EXPECT_EQ(c.ffma_warp, 32.0 * 32);
  EXPECT_EQ(c.ld_requests, 2.0 * 32 * 32);
  EXPECT_EQ(c.ld_sectors, 32.0 * 32 * (1 + 4));
  EXPECT_EQ(c.ld_lines, 32.0 * 32 * 2);
  EXPECT_EQ(c.st_sectors, 32.0 * 4);
}

TEST(GemmModel, CoalescedMisalignedRowsCostAFifthSector) {
  // N = 36: row k of B starts at 144 k bytes, so a 32-float segment straddles an extra sector when
  // 144 k mod 32 != 0 (odd k) and an extra line unless 144 k mod 128 == 0 (k = 0, 8, ...).
  const GemmCounts c = count_gemm(GemmKernel::coalesced, 1, 36, 8);
  // column tile 0 (32 floats): k = 0..7 -> 4,5,4,5,4,5,4,5 sectors; tile 1: 4 floats, 16 B at 144k + 128.
  double b_sectors = 0;
  for (int k = 0; k < 8; ++k) b_sectors += contiguous_floats(36 * k, 32).sectors + contiguous_floats(36 * k + 32, 4).sectors;
  EXPECT_EQ(b_sectors, 36 + 8);  // the 16-byte tail never straddles a sector
  EXPECT_EQ(c.ld_sectors, 2.0 * 8 + b_sectors);  // plus one broadcast A sector per warp and k
}

TEST(GemmModel, SmemWavefrontsPerTile) {
  // 64^3: 4 blocks x 32 warps x 2 tiles. Per warp and tile: As 8 LDS.128 broadcasts (2 wavefronts each:
  // quarter-warp phases asking for the same words pair up) and 32 conflict-free Bs LDS.
  const GemmCounts c = count_gemm(GemmKernel::smem, 64, 64, 64);
  EXPECT_EQ(c.ffma_thread, 64.0 * 64 * 64);
  EXPECT_EQ(c.lds_inst, 256.0 * (8 + 32));
  EXPECT_EQ(c.lds_wavefronts, 256.0 * (8 * 2 + 32));  // ncu on the H200: 1.2 wavefronts per LDS
  EXPECT_EQ(c.sts_wavefronts, 256.0 * 2);
  EXPECT_EQ(c.block_barriers, 4.0 * 2 * 2);
  EXPECT_EQ(c.ld_sectors, 2.0 * 4 * 256);         // two 4-sector rows per warp and tile
  EXPECT_EQ(c.l2_read_sectors, c.ld_sectors);
}

TEST(GemmModel, TransposedAblationIsThirtyTwoWayAndPaddingFixesIt) {
  const GemmCounts bad = count_gemm(GemmKernel::smem_conflicted, 64, 64, 64);
  const GemmCounts pad = count_gemm(GemmKernel::smem_padded, 64, 64, 64);
  // conflicted: As rows 128 B apart read as LDS.128: per quarter-warp 8 lanes, 8 words in each of 4 banks.
  EXPECT_EQ(bad.lds_wavefronts, 256.0 * (8 * 32 + 32) + 128);  // + epilogue LDS per warp
  EXPECT_EQ(bad.sts_wavefronts, 256.0 * 2 + 128 * 32);         // epilogue STS As[lane][col]: 32-way
  // padded: rows 33 words apart, scalar LDS, lane r in bank (r + k) % 32.
  EXPECT_EQ(pad.lds_wavefronts, 256.0 * (32 + 32) + 128);
  EXPECT_EQ(pad.sts_wavefronts, 256.0 * 2 + 128);
  EXPECT_EQ(bad.block_barriers, 4.0 * (2 * 2 + 1));
}

TEST(GemmModel, PartialTilesStillRunWholeTiles) {
  const GemmCounts c = count_gemm(GemmKernel::smem, 33, 33, 33);
  EXPECT_EQ(c.blocks, 4);
  EXPECT_EQ(c.ffma_thread, 4.0 * 1024 * 2 * 32);  // zero-filled tiles are multiplied too
  EXPECT_EQ(c.dram_bytes, 4.0 * 3 * 33 * 33);
}

TEST(GemmModel, RejectsWhatItCannotModel) {
  EXPECT_THROW(gemm_kernel_from_name("cublas"), std::invalid_argument);
  EXPECT_THROW(count_gemm(GemmKernel::smem, 0, 1, 1), std::invalid_argument);
  EXPECT_EQ(gemm_kernel_from_name("smem_padded"), GemmKernel::smem_padded);
}

// Kernels 4-8 (block-tiled, model/gemm_model.hpp count_tiled).

TEST(GemmModelTiled, BlocktileOneDReadsAsBroadcastsAndBsRows) {
  // 64^3: one block of 512 threads (16 warps), 8 tiles of BK = 8. Per warp and tile: 16 LDS.128 of As
  // rows (one address per warp: a broadcast, 2 wavefronts) and 8 conflict-free LDS of Bs.
  const GemmCounts c = count_gemm(GemmKernel::blocktile_1d, 64, 64, 64);
  EXPECT_EQ(c.ffma_thread, 64.0 * 64 * 64);
  EXPECT_EQ(c.lds_inst, 8.0 * 16 * (16 + 8));
  EXPECT_EQ(c.lds_wavefronts, 8.0 * 16 * (16 * 2 + 8));
  EXPECT_EQ(c.sts_wavefronts, c.sts_inst);  // 32 consecutive words per warp
  EXPECT_EQ(c.block_barriers, 2.0 * 8);
  EXPECT_EQ(c.threads_per_block, 512);
}

TEST(GemmModelTiled, WarptileSharedReadsPerK) {
  // 128^3, kernel 7: one block, 8 warps, 8 tiles of BK = 16; per warp and k 2 A reads (4 wavefronts:
  // one float4 per quarter-warp) and 2 B reads (2: the second quarter-warp of each pair rides along).
  const GemmCounts c = count_gemm(GemmKernel::warptile, 128, 128, 128);
  EXPECT_EQ(c.lds_inst, 8.0 * 8 * 16 * 4);
  EXPECT_EQ(c.lds_wavefronts, 8.0 * 8 * 16 * (2 * 4 + 2 * 2));
  EXPECT_EQ(c.block_barriers, 2.0 * 8 + 1);
  // The A tile goes in transposed: 4 STS per float4, the 4 lanes of one row in one bank (4-way);
  // B as STS.128 of 512 consecutive bytes (4 wavefronts).
  EXPECT_EQ(c.sts_inst, 8.0 * 8 * (2 * 4 + 2));
  EXPECT_EQ(c.sts_wavefronts, 8.0 * 8 * (2 * 4 * 4 + 2 * 4));
}

TEST(GemmModelTiled, CheckerboardLanesPairTheAReadsToo) {
  // 8 x 4 lanes, 2 x 2 sub-tiles of 32 x 16. Row-major lanes: an A read holds two rows per quarter-warp,
  // quarter-warps 0 and 1 differ (4 wavefronts), B pairs up (2). Checkerboard: both pair up (2 and 2).
  TiledShape row = tiled_shape(GemmKernel::warptile_tuned);
  row.BM = row.BN = 128, row.BK = 16, row.threads = 256, row.WM = 64, row.WN = 32, row.LN = 4, row.checkerboard = false;
  TiledShape cb = row;
  cb.checkerboard = true;
  const GemmCounts r = count_tiled(GemmKernel::warptile_tuned, row, 256, 256, 256);
  const GemmCounts c = count_tiled(GemmKernel::warptile_tuned, cb, 256, 256, 256);
  EXPECT_EQ(r.lds_inst, c.lds_inst);
  EXPECT_EQ(c.lds_wavefronts, 2 * c.lds_inst);
  EXPECT_EQ(r.lds_wavefronts, 3 * c.lds_inst);  // (2 x 4 + 2 x 2) / 4 reads
  EXPECT_EQ(r.ffma_thread, c.ffma_thread);
  EXPECT_EQ(r.st_sectors, c.st_sectors);  // the same elements of C, stored by other lanes
}

TEST(GemmModelTiled, FfmaPerSharedWavefrontClimbsTheLadder) {
  auto ratio = [](GemmKernel k) {
    const GemmCounts c = count_gemm(k, 1024, 1024, 1024);
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
    const TiledShape s = tiled_shape(k);
    const double n = 1024, blocks = (n / s.BM) * (n / s.BN);
    const GemmCounts c = count_gemm(k, 1024, 1024, 1024);
    EXPECT_EQ(c.l2_read_sectors, blocks * n * (s.BM + s.BN) * 4 / 32) << s.BM << "x" << s.BN;
    EXPECT_EQ(c.ld_sectors, c.l2_read_sectors);  // whole sectors, none read twice within a block
  }
}

TEST(GemmModelTiled, ScalarPathWhenRowsAreNotSixteenByteAligned) {
  // N = 1022: rows of B and C are not 16-byte aligned, so kernel 6 loads each float4 as four LDG.
  const GemmCounts v = count_gemm(GemmKernel::vectorized, 256, 1024, 256);
  const GemmCounts s = count_gemm(GemmKernel::vectorized, 256, 1022, 256);
  EXPECT_EQ(s.ld_requests, 4 * v.ld_requests);
  EXPECT_EQ(s.st_requests, 4 * v.st_requests);
  EXPECT_EQ(s.ffma_thread, v.ffma_thread);  // the same tiles
}

TEST(GemmModelTiled, EdgeTilesLoadOnlyWhatIsInside) {
  // 130 x 130 x 20 in 128 x 128 x 8 tiles: 4 blocks, 3 k-tiles; the zero-filled parts cost no sectors.
  const GemmCounts c = count_gemm(GemmKernel::blocktile_2d, 130, 130, 20);
  EXPECT_EQ(c.blocks, 4);
  EXPECT_EQ(c.ffma_thread, 4.0 * 3 * 128 * 128 * 8);
  EXPECT_LT(c.l2_read_sectors, 4.0 * 3 * (128 + 128) * 8 * 4 / 32);
  EXPECT_GE(c.l2_read_sectors, (130.0 * 20 * 2 + 20 * 130 * 2) * 4 / 32);  // every element, each block pair
}

TEST(GemmModelTiled, BlocksPerSmFromRegistersAndSharedMemory) {
  EXPECT_EQ(tiled_blocks_per_sm({128, 128, 16, 256, 2, 32, 64, 128, 32768}), 2);
  EXPECT_EQ(tiled_blocks_per_sm({128, 128, 16, 256, 2, 32, 64, 129, 32768}), 1);  // 136 x 256 > 32 Ki
  EXPECT_EQ(tiled_blocks_per_sm({64, 64, 8, 512, 1, 0, 0, 32, 4096}), 4);
  EXPECT_EQ(tiled_blocks_per_sm({128, 128, 64, 256, 2, 32, 64, 64, 128 * 1024}), 1);  // shared memory
  EXPECT_EQ(gemm_kernel_from_name("warptile_tuned"), GemmKernel::warptile_tuned);
}

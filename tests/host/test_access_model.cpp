#include <gtest/gtest.h>

#include "model/access_model.hpp"

using namespace mh::model;

TEST(AccessModel, Stride1IsOneLineFourSectors) {
  Footprint f = global_footprint(strided_addresses(0, 1, 4), 4);
  EXPECT_EQ(f.sectors, 4);
  EXPECT_EQ(f.lines, 1);
}

TEST(AccessModel, Stride2SpansTwoLines) {
  Footprint f = global_footprint(strided_addresses(0, 2, 4), 4);
  EXPECT_EQ(f.sectors, 8);
  EXPECT_EQ(f.lines, 2);
}

TEST(AccessModel, Stride8TouchesOneSectorPerLane) {
  Footprint f = global_footprint(strided_addresses(0, 8, 4), 4);
  EXPECT_EQ(f.sectors, 32);
  EXPECT_EQ(f.lines, 8);  // 32 B apart: four lanes share a line
}

TEST(AccessModel, Stride32TouchesOneLinePerLane) {
  Footprint f = global_footprint(strided_addresses(0, 32, 4), 4);
  EXPECT_EQ(f.sectors, 32);
  EXPECT_EQ(f.lines, 32);
}

TEST(AccessModel, Stride3IsTwelveSectors) { EXPECT_EQ(strided_sectors_per_request(3), 12); }

TEST(AccessModel, MisalignedBaseTouchesOneMoreSectorAndLine) {
  Footprint f = global_footprint(strided_addresses(4, 1, 4), 4);  // bytes 4..131
  EXPECT_EQ(f.sectors, 5);
  EXPECT_EQ(f.lines, 2);
}

TEST(AccessModel, BroadcastIsOneSector) {
  Footprint f = global_footprint(strided_addresses(64, 0, 4), 4);
  EXPECT_EQ(f.sectors, 1);
  EXPECT_EQ(f.lines, 1);
}

TEST(AccessModel, EightByteAccessesCoverTwoLines) {
  Footprint f = global_footprint(strided_addresses(0, 1, 8), 8);  // 256 contiguous bytes
  EXPECT_EQ(f.sectors, 8);
  EXPECT_EQ(f.lines, 2);
}

TEST(AccessModel, SixteenByteAccessesCoverFourLines) {
  Footprint f = global_footprint(strided_addresses(0, 1, 16), 16);  // 512 contiguous bytes
  EXPECT_EQ(f.sectors, 16);
  EXPECT_EQ(f.lines, 4);
}

// A lane's access is aligned to its width (the hardware raises a misaligned-address error otherwise), so
// it lies in one sector: the model refuses what no warp can issue, e.g. 16 bytes at byte 24.
TEST(AccessModel, RefusesMisalignedAccesses) {
  EXPECT_THROW(global_footprint({24}, 16), std::invalid_argument);
  EXPECT_THROW(global_footprint({0, 16, 36}, 8), std::invalid_argument);  // the third lane
  EXPECT_THROW(global_footprint({2}, 4), std::invalid_argument);
  EXPECT_THROW(global_footprint({1}, 2), std::invalid_argument);
  EXPECT_THROW(global_footprint(strided_addresses(8, 1, 16), 16), std::invalid_argument);
  EXPECT_NO_THROW(global_footprint({3}, 1));
  EXPECT_NO_THROW(global_footprint({48}, 16));
}

TEST(AccessModel, AnAlignedLaneTouchesOneSector) {
  for (int width : {1, 2, 4, 8, 16})
    for (uint64_t a = 0; a < 512; a += width) {
      EXPECT_EQ(global_footprint({a}, width).sectors, 1) << width << " bytes at " << a;
      EXPECT_EQ(global_footprint({a}, width).lines, 1) << width << " bytes at " << a;
    }
  // 32 lanes of 16 bytes, 16 bytes apart from byte 16: 512 bytes over 17 sectors and 5 lines.
  const Footprint f = global_footprint(strided_addresses(16, 1, 16), 16);
  EXPECT_EQ(f.sectors, 17);
  EXPECT_EQ(f.lines, 5);
}

TEST(AccessModel, StridedSectorsSaturateAtOnePerLane) {
  const int expected[] = {4, 8, 12, 16, 32, 32, 32, 32, 32};
  const int strides[] = {1, 2, 3, 4, 8, 16, 32, 64, 128};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(strided_sectors_per_request(strides[i]), expected[i]) << "stride " << strides[i];
}

TEST(AccessModel, RejectsBadWidth) { EXPECT_THROW(global_footprint({0}, 3), std::invalid_argument); }

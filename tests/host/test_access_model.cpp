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

TEST(AccessModel, SixteenByteAccessStraddlingASectorCountsBoth) {
  Footprint f = global_footprint({24}, 16);  // bytes 24..39
  EXPECT_EQ(f.sectors, 2);
  EXPECT_EQ(f.lines, 1);
}

TEST(AccessModel, StridedSectorsSaturateAtOnePerLane) {
  const int expected[] = {4, 8, 12, 16, 32, 32, 32, 32, 32};
  const int strides[] = {1, 2, 3, 4, 8, 16, 32, 64, 128};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(strided_sectors_per_request(strides[i]), expected[i]) << "stride " << strides[i];
}

TEST(AccessModel, RejectsBadWidth) { EXPECT_THROW(global_footprint({0}, 3), std::invalid_argument); }

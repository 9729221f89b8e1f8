#include <gtest/gtest.h>

#include "model/bank_model.hpp"

using namespace mh::model;

namespace {
int ways(int width, int stride, int pad = 0, bool swizzle = false) {
  return smem_pattern_wavefronts({width, stride, pad, swizzle});
}
}  // namespace

TEST(BankModel, Stride1IsConflictFreeAtEveryWidth) {
  EXPECT_EQ(ways(4, 1), 1);   // 32 words, 32 banks
  EXPECT_EQ(ways(8, 1), 2);   // one wavefront per half-warp phase (128 bytes each)
  EXPECT_EQ(ways(16, 1), 4);  // one per quarter-warp phase
}

TEST(BankModel, PowerOfTwoStridesConflictByTheStride) {
  EXPECT_EQ(ways(4, 2), 2);
  EXPECT_EQ(ways(4, 4), 4);
  EXPECT_EQ(ways(4, 8), 8);
  EXPECT_EQ(ways(4, 16), 16);
  EXPECT_EQ(ways(4, 32), 32);  // every lane in bank 0
  EXPECT_EQ(ways(4, 64), 32);
}

TEST(BankModel, OddStridesAreConflictFree) {
  EXPECT_EQ(ways(4, 3), 1);
  EXPECT_EQ(ways(4, 33), 1);  // word 33i: bank i
}

TEST(BankModel, BroadcastIsOneWavefront) {
  EXPECT_EQ(ways(4, 0), 1);
  EXPECT_EQ(smem_wavefronts(std::vector<uint64_t>(32, 4096 + 68), 4), 1);
}

// Measured on the H200 with ncu: load phases asking for the same words pair up; store phases never do.
TEST(BankModel, WideBroadcastLoadsPairTheirPhasesStoresDoNot) {
  EXPECT_EQ(ways(8, 0), 1);   // half-warps 0-15 and 16-31 ask for the same two words
  EXPECT_EQ(ways(16, 0), 2);  // quarter-warps pair (0-1, 2-3): two wavefronts, not one
  EXPECT_EQ(smem_pattern_wavefronts({8, 0}, SmemOp::store), 2);
  EXPECT_EQ(smem_pattern_wavefronts({16, 0}, SmemOp::store), 4);
  // Only identical phases pair: stride 1 at width 8 asks for different words in each half-warp.
  EXPECT_EQ(ways(8, 1), 2);
  // Quarter-warps 1 and 2 are not a pair even when they ask for the same words.
  std::vector<uint64_t> a(32);
  for (int i = 0; i < 32; ++i) a[i] = (i >= 8 && i < 24) ? 0 : 16 * i;
  EXPECT_EQ(smem_wavefronts(a, 16), 1 + 1 + 1 + 1);
}

TEST(BankModel, MulticastSharesWords) {
  std::vector<uint64_t> pairs(32), same_bank_pairs(32);
  for (int i = 0; i < 32; ++i) {
    pairs[i] = (i / 2) * 4;                 // 16 distinct words in 16 banks, each read by two lanes
    same_bank_pairs[i] = (i / 2) * 128;     // 16 distinct words, all in bank 0
  }
  EXPECT_EQ(smem_wavefronts(pairs, 4), 1);
  EXPECT_EQ(smem_wavefronts(same_bank_pairs, 4), 16);
}

TEST(BankModel, EightByteStride2) {
  // Lane i at byte 16i. Half-warp 0 (lanes 0-15): bytes 0..240, words 4i and 4i+1, banks (4i, 4i+1) mod 32:
  // lanes 0-7 use banks 0,1,4,5,...,28,29 and lanes 8-15 the same banks with other words -> 2 per phase.
  // Half-warp 1 alike -> 2 + 2 = 4 wavefronts (twice the conflict-free 2).
  EXPECT_EQ(ways(8, 2), 4);
}

TEST(BankModel, SixteenByteStride2) {
  // Lane i at byte 32i. Quarter-warp 0 (lanes 0-7): words 8i..8i+3, banks 8i..8i+3 mod 32: lanes 0-3 use
  // banks 0-3, 8-11, 16-19, 24-27 and lanes 4-7 the same banks again -> 2 per phase, 4 phases -> 8.
  EXPECT_EQ(ways(16, 2), 8);
}

TEST(BankModel, WideStride32) {
  EXPECT_EQ(ways(8, 32), 32);   // byte 256i: the 16 lanes of a half-warp on banks 0-1 -> 16 x 2 phases
  EXPECT_EQ(ways(16, 32), 32);  // byte 512i: 8 lanes per quarter-warp on banks 0-3 -> 8 x 4 phases
}

TEST(BankModel, PaddingFixesStride32) {
  EXPECT_EQ(ways(4, 32, 1), 1);  // element 32i: row i, col 0 -> physical 33i -> bank i
  EXPECT_EQ(ways(16, 8, 1), 4);  // element 8i: row i -> physical 9i (16 B each) -> word 36i: banks 4i..4i+3
  EXPECT_EQ(ways(4, 33, 1), 2);  // ...but breaks stride 33: row i, col i -> physical 34i -> bank 2i
}

TEST(BankModel, SwizzleFixesStride32) {
  EXPECT_EQ(ways(4, 32, 0, true), 1);   // row i, col 0 -> col 0 ^ i = i -> bank i
  EXPECT_EQ(ways(4, 2, 0, true), 1);    // rows 0/1 land on even/odd banks
  EXPECT_EQ(ways(16, 8, 0, true), 4);   // row i, col 0 -> col i: conflict-free quarter-warps
  EXPECT_EQ(ways(4, 33, 0, true), 32);  // ...but breaks stride 33: row i, col i -> col i ^ i = 0
}

TEST(BankModel, PatternAddresses) {
  const std::vector<uint64_t> pad = smem_pattern_addresses({16, 8, 1, false});
  EXPECT_EQ(pad[1], 9u * 16);  // row 1 starts after 8 + 1 elements
  const std::vector<uint64_t> swz = smem_pattern_addresses({8, 17, 0, true});
  EXPECT_EQ(swz[1], (16u + (1 ^ 1)) * 8);  // element 17: row 1, col 1 -> col 0
  EXPECT_EQ(smem_physical_element({4, 1, 1, false}, 64), 66u);
}

TEST(BankModel, UniformShiftKeepsWavefronts) {  // the throughput kernels shift each request by j elements
  for (int width : {4, 8, 16})
    for (int stride : {0, 1, 2, 3, 32, 33}) {
      std::vector<uint64_t> a = smem_pattern_addresses({width, stride, 0, false});
      const int base = smem_wavefronts(a, width);
      for (uint64_t& x : a) x += 5 * width;
      EXPECT_EQ(smem_wavefronts(a, width), base) << "width " << width << " stride " << stride;
    }
}

TEST(BankModel, InactiveLanesAndEmptyPhases) {
  const std::vector<uint64_t> a = smem_pattern_addresses({4, 32, 0, false});
  EXPECT_EQ(smem_wavefronts(a, 4, 0x0000000fu), 4);
  EXPECT_EQ(smem_wavefronts({0, 128}, 4), 2);                       // two lanes only
  EXPECT_EQ(smem_wavefronts(smem_pattern_addresses({16, 1}), 16, 0x000000ffu), 1);  // one active phase
}

TEST(BankModel, RejectsBadInput) {
  EXPECT_THROW(smem_wavefronts({0}, 2), std::invalid_argument);
  EXPECT_THROW(smem_wavefronts({4}, 8), std::invalid_argument);  // misaligned
  EXPECT_THROW(smem_wavefronts(std::vector<uint64_t>(33, 0), 4), std::invalid_argument);
  EXPECT_THROW(smem_pattern_addresses({4, 1, 1, true}), std::invalid_argument);
  EXPECT_THROW(smem_pattern_addresses({4, -1, 0, false}), std::invalid_argument);
}

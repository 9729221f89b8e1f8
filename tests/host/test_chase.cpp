#include <gtest/gtest.h>

#include <set>

#include "model/chase.hpp"

using namespace mh::model;

TEST(ChaseRing, RandomRingIsOneCycleThroughEverySlot) {
  for (size_t n : {1u, 2u, 3u, 7u, 8u, 1000u, 65536u, 1000003u}) {
    const auto next = random_ring(n);
    ASSERT_EQ(next.size(), n);
    EXPECT_TRUE(is_one_cycle(next)) << "n=" << n;
    // Walking n steps from 0 visits every slot once and comes back.
    std::set<uint32_t> seen;
    uint32_t k = 0;
    for (size_t i = 0; i < std::min<size_t>(n, 65536); ++i) {
      EXPECT_TRUE(seen.insert(k).second) << "slot " << k << " visited twice, n=" << n;
      k = next[k];
    }
    EXPECT_EQ(walk(next, 0, n), 0u);
  }
}

TEST(ChaseRing, FixedSeedGivesTheSameRingAndAnotherSeedAnother) {
  EXPECT_EQ(random_ring(4096), random_ring(4096));
  EXPECT_NE(random_ring(4096, 1), random_ring(4096, 2));
}

TEST(ChaseRing, RandomRingDefeatsSequentialOrder) {
  // A prefetcher would win if most steps went to a neighbouring slot; in a random ring about 2/n do.
  const auto next = random_ring(1 << 16);
  size_t neighbours = 0;
  for (size_t k = 0; k < next.size(); ++k) neighbours += next[k] == k + 1 || next[k] + 1 == k;
  EXPECT_LT(neighbours, 20u);
  EXPECT_NE(next[0], 1u);
}

TEST(ChaseRing, SequentialRingSteps) {
  const auto next = sequential_ring(5);
  EXPECT_EQ(next, (std::vector<uint32_t>{1, 2, 3, 4, 0}));
  EXPECT_TRUE(is_one_cycle(next));
  EXPECT_EQ(walk(next, 3, 4), 2u);
}

TEST(ChaseRing, IsOneCycleRejectsTwoCyclesAndNonPermutations) {
  EXPECT_FALSE(is_one_cycle({1, 0, 3, 2}));  // two 2-cycles
  EXPECT_FALSE(is_one_cycle({0, 2, 1}));     // a fixed point and a 2-cycle
  EXPECT_FALSE(is_one_cycle({1, 1, 0}));     // not a permutation
  EXPECT_FALSE(is_one_cycle({1, 5}));        // out of range
  // Every slot reached once, but the last leads back into the middle, not to slot 0 (a "rho"):
  // not a permutation, caught only by the final check that the walk is back at its start.
  EXPECT_FALSE(is_one_cycle({1, 1}));
  EXPECT_FALSE(is_one_cycle({1, 2, 3, 1}));
  EXPECT_FALSE(is_one_cycle({}));
  EXPECT_TRUE(is_one_cycle({0}));            // one slot leads to itself
}

TEST(ChaseRing, RejectsBadSizes) {
  EXPECT_THROW(random_ring(0), std::invalid_argument);
  EXPECT_THROW(sequential_ring(0), std::invalid_argument);
}

TEST(ChasePlan, LogSpacedSizesCoverTheRangeAtTheStride) {
  const auto ws = log_spaced_sizes(1024, 1ull << 32, 3, 128);
  EXPECT_EQ(ws.front(), 1024u);
  EXPECT_EQ(ws.back(), 1ull << 32);
  EXPECT_EQ(ws.size(), 22u * 3 + 1);
  for (size_t i = 0; i < ws.size(); ++i) {
    EXPECT_EQ(ws[i] % 128, 0u);
    if (i) {
      EXPECT_GT(ws[i], ws[i - 1]);
      EXPECT_NEAR(static_cast<double>(ws[i]) / ws[i - 1], std::exp2(1.0 / 3), 0.06);
    }
  }
  // A stride larger than the step: rounded up to the stride and deduplicated.
  const auto big = log_spaced_sizes(1024, 8192, 4, 4096);
  EXPECT_EQ(big, (std::vector<uint64_t>{4096, 8192}));
  EXPECT_THROW(log_spaced_sizes(0, 10, 1, 1), std::invalid_argument);
  EXPECT_THROW(log_spaced_sizes(10, 5, 1, 1), std::invalid_argument);
}

TEST(ChasePlan, LoadsPerPoint) {
  EXPECT_EQ(chase_loads(8, true), kMinLoads);
  EXPECT_EQ(chase_loads(10000, true), 20000u);
  EXPECT_EQ(chase_loads(1u << 20, true), kMaxLoads);
  EXPECT_EQ(chase_loads(1u << 20, false), kMinLoads);
  EXPECT_EQ(floor_pow2(150754820096ull / 4), 1ull << 35);
  EXPECT_EQ(floor_pow2(1), 1u);
}

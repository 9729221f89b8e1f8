// The cluster family's kernels against their host replays: small grids, every cluster size that fits.
#include <algorithm>
#include <vector>

#include "gpu_test.hpp"
#include "harness/device_buffer.cuh"
#include "micro/cluster.cuh"

namespace {
using namespace mh::cluster;

#define REQUIRE_CLUSTERS()                                                                     \
  do {                                                                                         \
    REQUIRE_GPU();                                                                             \
    const std::string why_ = unsupported_reason(mh::current_device_facts());                   \
    if (!why_.empty()) GTEST_SKIP() << why_;                                                   \
    const std::string compiled_out_ = dsm_compiled_out();                                      \
    if (!compiled_out_.empty()) GTEST_SKIP() << compiled_out_;                                 \
  } while (0)

size_t smem_for(size_t need) {
  const size_t s = one_block_smem(mh::current_device_facts(), need);
  EXPECT_GT(s, 0u) << "no shared-memory size forces one block per SM";
  return s;
}

// Asserts every block's checksum and that no block shared an SM with another.
void expect_records(const std::vector<BlockRecord>& rec, const std::vector<uint32_t>& expected) {
  ASSERT_EQ(rec.size(), expected.size());
  for (size_t b = 0; b < rec.size(); ++b) {
    EXPECT_EQ(rec[b].timeouts, 0u) << "block " << b;
    EXPECT_EQ(rec[b].checksum, expected[b]) << "block " << b;
    EXPECT_GT(rec[b].span.cycles, 0) << "block " << b;
  }
  EXPECT_EQ(sms_used(rec), static_cast<int>(rec.size())) << "two blocks on one SM";
}

}  // namespace

TEST(Cluster, RingIsOneFullCycle) {
  // ring_next visits every entry before it returns to 0: a chase of any length stays in the ring.
  std::vector<bool> seen(kRingEntries, false);
  uint32_t i = 0;
  for (int n = 0; n < kRingEntries; ++n, i = ring_next(i)) {
    ASSERT_FALSE(seen[i]) << "entry " << i << " twice";
    seen[i] = true;
  }
  EXPECT_EQ(i, 0u);
  EXPECT_EQ(chase_expected(kRingEntries), 0u);
  EXPECT_NE(chase_expected(1000), chase_expected(1001));
}

TEST(Cluster, ReplaysDependOnTheirInputs) {
  // A replay that ignored passes, the operation or the cluster size could not catch a kernel that did.
  const Grid g{2, 2, kDsmThreads, 0};
  EXPECT_NE(dsm_expected(Op::read, g, 3), dsm_expected(Op::read, g, 4));
  EXPECT_NE(dsm_expected(Op::write, g, 3), dsm_expected(Op::write, g, 4));
  // One pass of writes leaves other words than the initial fill (a kernel that wrote nothing would fail).
  EXPECT_NE(dsm_expected(Op::write, g, 1), dsm_expected(Op::read, g, 1));
  EXPECT_NE(dsm_expected(Op::read, g, 3), dsm_expected(Op::read, Grid{2, 1, kDsmThreads, 0}, 3));
  const std::vector<uint32_t> src = tma_source();
  EXPECT_NE(tma_expected(g, 9, src), tma_expected(g, 10, src));
  EXPECT_NE(barrier_expected(g, 5), barrier_expected(g, 6));
}

TEST(Cluster, ChaseEndsOnTheHostIndexAndRemoteIsSlower) {
  REQUIRE_CLUSTERS();
  const int loads = 2000;
  const size_t smem = smem_for(kRingEntries * 4);
  mh::DeviceBuffer<ChaseResult> out(1);
  double cycles[3] = {};
  for (Target t : {Target::own_shared, Target::own_cluster, Target::remote}) {
    out.fill_bytes(0xff);
    launch_chase(t, loads, smem, out.data());
    const ChaseResult r = out.download()[0];
    EXPECT_EQ(r.final_index, chase_expected(loads)) << target_name(t);
    if (t == Target::remote)
      EXPECT_NE(r.reader_sm, r.owner_sm) << "the remote ring's block ran on the reader's SM";
    else
      EXPECT_EQ(r.reader_sm, r.owner_sm) << target_name(t);
    cycles[static_cast<int>(t)] = static_cast<double>(r.cycles) / loads;
  }
  SKIP_TIMING_UNDER_SANITIZER();
  EXPECT_GT(cycles[0], 5.0) << "a shared-memory load in under 5 cycles: the chase was not dependent";
  EXPECT_LT(cycles[0], 200.0);
  EXPECT_GT(cycles[2], cycles[0]) << "another SM's shared memory answered as fast as the own";
}

TEST(Cluster, DsmChecksumsMatchTheHost) {
  REQUIRE_CLUSTERS();
  const int passes = 3;
  const size_t smem = smem_for(kDsmBufferBytes);
  for (Op op : {Op::read, Op::write})
    for (int c : {1, 2, 4, 8, 16}) {
      Grid g{0, c, kDsmThreads, smem};
      const int fit = dsm_max_active_clusters(op, g);
      if (c <= kPortableCluster) EXPECT_GT(fit, 0) << "cluster size " << c;
      g.clusters = std::min(fit, 2);
      if (g.clusters == 0) continue;  // 16 where the device or the GPCs do not allow it
      mh::DeviceBuffer<BlockRecord> out(g.blocks());
      out.fill_bytes(0);
      launch_dsm(op, g, passes, out.data());
      SCOPED_TRACE(std::string(op_name(op)) + " cluster size " + std::to_string(c));
      expect_records(out.download(), dsm_expected(op, g, passes));
    }
}

TEST(Cluster, DsmReadsMoveNoMoreThanSharedMemoryCan) {
  // Shared memory delivers 128 B per clock per SM; a block whose span reads more per cycle skipped loads
  // (the first H200 run reported ~400: ptxas had merged the passes' identical loads). 10 % of slack.
  REQUIRE_CLUSTERS();
  SKIP_TIMING_UNDER_SANITIZER();
  const int passes = 64;
  const size_t smem = smem_for(kDsmBufferBytes);
  for (int c : {1, 2}) {
    Grid g{1, c, kDsmThreads, smem};
    mh::DeviceBuffer<BlockRecord> out(g.blocks());
    out.fill_bytes(0);
    launch_dsm(Op::read, g, passes, out.data());
    const std::vector<BlockRecord> rec = out.download();
    expect_records(rec, dsm_expected(Op::read, g, passes));
    for (size_t b = 0; b < rec.size(); ++b) {
      ASSERT_GT(rec[b].span.cycles, 0);
      const double per_clock = static_cast<double>(passes) * kDsmBytesPerPass / static_cast<double>(rec[b].span.cycles);
      EXPECT_LT(per_clock, 128.0 * 1.1) << "cluster size " << c << ", block " << b;
    }
  }
}

TEST(Cluster, BarrierChainsMatchTheHost) {
  REQUIRE_CLUSTERS();
  const int steps = 5;
  const size_t smem = smem_for(0);
  for (Barrier b : {Barrier::none, Barrier::syncthreads, Barrier::cluster})
    for (int c : {1, 2, 4}) {
      Grid g{0, c, kBarrierThreads, smem};
      g.clusters = std::min(barrier_max_active_clusters(b, g), 3);
      ASSERT_GT(g.clusters, 0) << barrier_name(b) << " cluster size " << c;
      mh::DeviceBuffer<BlockRecord> out(g.blocks());
      out.fill_bytes(0);
      launch_barrier(b, g, steps, out.data());
      SCOPED_TRACE(std::string(barrier_name(b)) + " cluster size " + std::to_string(c));
      expect_records(out.download(), barrier_expected(g, steps));
    }
}

TEST(Cluster, TmaStagesHoldTheLastTiles) {
  REQUIRE_CLUSTERS();
  const std::string why = tma_unavailable_reason();
  if (!why.empty()) GTEST_SKIP() << why;
  const std::vector<uint32_t> host = tma_source();
  mh::DeviceBuffer<uint32_t> src(host);
  const size_t smem = smem_for(kTmaStages * kTmaTile);
  // 9 iterations: not a multiple of the 4 stages, so a stage index off by one changes the sums.
  for (int iterations : {kTmaStages, 9})
    for (bool multicast : {true, false})
      for (int c : {2, 4, 8}) {
        Grid g{0, c, kTmaThreads, smem};
        g.clusters = std::min(tma_max_active_clusters(multicast, g), 3);
        ASSERT_GT(g.clusters, 0) << "cluster size " << c;
        mh::DeviceBuffer<BlockRecord> out(g.blocks());
        out.fill_bytes(0);
        launch_tma(multicast, g, iterations, src.data(), out.data());
        SCOPED_TRACE(std::string(multicast ? "multicast" : "unicast") + " cluster size " + std::to_string(c) + ", " +
                     std::to_string(iterations) + " iterations");
        expect_records(out.download(), tma_expected(g, iterations, host));
      }
}

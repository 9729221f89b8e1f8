#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "harness/device_buffer.cuh"
#include "micro/latency.cuh"
#include "model/chase.hpp"

using namespace mh;
using namespace mh::latency;
using mh::model::is_one_cycle;
using mh::model::random_ring;
using mh::model::walk;

namespace {

ChaseResult run_chase(const Ring& r, Op op, Carveout cv, uint64_t warm, uint64_t loads, bool warm_l1) {
  DeviceBuffer<ChaseResult> out(1);
  out.fill_bytes(0xFF);
  ChaseConfig c;
  c.op = op, c.carveout = cv, c.warm_loads = warm, c.loads = loads, c.warm_l1 = warm_l1;
  warm_l2(r);
  chase(r, c, out.data());
  CUDA_CHECK(cudaDeviceSynchronize());
  return out.download()[0];
}

struct RingCase {
  uint64_t slots, stride;
};
const RingCase kRings[] = {{1, 128}, {2, 8}, {8, 128}, {1000, 128}, {4096, 64}, {3, 2u << 20}, {65536, 128}};

// The device holds exactly the host's ring, and that ring is one cycle through every slot: a chase
// from any slot visits the whole working set.
TEST(Latency, DeviceRingIsTheHostRingAndOneCycle) {
  REQUIRE_GPU();
  for (const RingCase& rc : kRings) {
    SCOPED_TRACE("slots=" + std::to_string(rc.slots) + " stride=" + std::to_string(rc.stride));
    const auto next = random_ring(rc.slots);
    ASSERT_TRUE(is_one_cycle(next));
    if (rc.slots * rc.stride > (64u << 20)) continue;  // download() copies the whole working set
    const Ring ring(next, rc.stride);
    EXPECT_EQ(ring.bytes(), rc.slots * rc.stride);
    EXPECT_EQ(ring.download(), next);
  }
}

// The checksum: the slot a chase ends at is the host walk's, for every op, carve-out and warm-up, and a
// chase of exactly `slots` loads comes back to slot 0 (one cycle) while one load fewer does not.
TEST(Latency, ChaseEndsWhereTheHostWalkEnds) {
  REQUIRE_GPU();
  struct Variant {
    Op op;
    Carveout cv;
    bool warm_l1;
  };
  const Variant variants[] = {{Op::ca, Carveout::none, true}, {Op::ca, Carveout::min, true},
                              {Op::ca, Carveout::max, false}, {Op::cg, Carveout::none, false}};
  for (const RingCase& rc : kRings) {
    const auto next = random_ring(rc.slots);
    const Ring ring(next, rc.stride);
    for (const Variant& v : variants) {
      SCOPED_TRACE("slots=" + std::to_string(rc.slots) + " stride=" + std::to_string(rc.stride) +
                   " op=" + (v.op == Op::ca ? "ca" : "cg") + " carveout=" + carveout_name(v.cv));
      for (uint64_t warm : {uint64_t(0), rc.slots})
        for (uint64_t loads : {uint64_t(1), rc.slots + 7, uint64_t(1000)}) {
          const ChaseResult r = run_chase(ring, v.op, v.cv, warm, loads, v.warm_l1);
          EXPECT_EQ(r.end_slot, walk(next, 0, warm + loads)) << "warm=" << warm << " loads=" << loads;
          EXPECT_GT(r.cycles, 0);
          EXPECT_GT(r.ns, 0);
          EXPECT_GE(r.smid, 0);
        }
      EXPECT_EQ(run_chase(ring, v.op, v.cv, 0, rc.slots, false).end_slot, 0u);
      if (rc.slots > 1) EXPECT_NE(run_chase(ring, v.op, v.cv, 0, rc.slots - 1, false).end_slot, 0u);
    }
  }
}

// A sequential ring (the stride sweep's) steps k -> k + 1.
TEST(Latency, SequentialRingChase) {
  REQUIRE_GPU();
  const auto next = mh::model::sequential_ring(1000);
  const Ring ring(next, 32);
  EXPECT_EQ(ring.download(), next);
  EXPECT_EQ(run_chase(ring, Op::ca, Carveout::none, 0, 999, false).end_slot, 999u);
  EXPECT_EQ(run_chase(ring, Op::cg, Carveout::none, 0, 1003, false).end_slot, 3u);
}

// What the measurement rests on, with wide margins: an L1-resident chase is faster than the same ring
// read L2-only, which is faster than a ring 4x the L2; every latency is between 5 and 5000 cycles, and
// cycles over ns is a clock the SM can run at.
TEST(Latency, LevelsAreOrdered) {
  REQUIRE_GPU();
  const DeviceFacts& f = current_device_facts();
  const auto small = random_ring(64);  // 8 KiB at 128 B: fits every L1
  const Ring l1_ring(small, 128);
  const uint64_t loads = 1 << 14;
  const ChaseResult l1 = run_chase(l1_ring, Op::ca, Carveout::none, 64, loads, true);
  const ChaseResult l2 = run_chase(l1_ring, Op::cg, Carveout::none, 64, loads, false);
  const uint64_t big_slots = 4 * f.l2_bytes / 128;
  const auto big = random_ring(big_slots);
  const Ring dram_ring(big, 128);
  const ChaseResult dram = run_chase(dram_ring, Op::cg, Carveout::none, 0, loads, false);
  const double c1 = double(l1.cycles) / loads, c2 = double(l2.cycles) / loads, c3 = double(dram.cycles) / loads;
  std::printf("[ latency  ] L1 %.1f cycles, L2 %.1f, 4 x L2 ring %.1f; clock %.0f MHz\n", c1, c2, c3,
              1e3 * l2.cycles / l2.ns);
  SKIP_TIMING_UNDER_SANITIZER();
  EXPECT_LT(c1, c2);
  EXPECT_LT(c2, c3);
  for (double c : {c1, c2, c3}) {
    EXPECT_GT(c, 5.0);
    EXPECT_LT(c, 5000.0);
  }
  const double mhz = 1e3 * l2.cycles / l2.ns;
  EXPECT_GT(mhz, 100.0);
  EXPECT_LT(mhz, 1.2 * f.sm_clock_mhz);
}

// Every SM runs one block, each in its own time slot, and every chase ends where the host says.
TEST(Latency, SpreadRunsOnceOnEverySmWithoutOverlap) {
  REQUIRE_GPU();
  const DeviceFacts& f = current_device_facts();
  std::vector<int> overlaps;  // per ring: checked after the loop, as timing
  for (uint64_t slots : {uint64_t(1), uint64_t(4096)}) {
    SCOPED_TRACE("slots=" + std::to_string(slots));
    const auto next = random_ring(slots);
    const Ring ring(next, 128);
    SpreadConfig c;
    c.loads = 256, c.warm_loads = std::min<uint64_t>(slots, 64);
    c.slot_ns = spread_slot_ns(f, c.loads);
    DeviceBuffer<ChaseResult> out(f.sm_count);
    out.fill_bytes(0xFF);
    warm_l2(ring);
    chase_every_sm(ring, c, out.data());
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<ChaseResult> res = out.download();
    std::set<int> smids;
    for (const ChaseResult& r : res) {
      smids.insert(r.smid);
      EXPECT_EQ(r.end_slot, walk(next, 0, c.warm_loads + c.loads));
      EXPECT_GT(r.cycles, 0);
    }
    std::vector<double> cyc;
    for (const ChaseResult& r : res) cyc.push_back(double(r.cycles) / c.loads);
    std::sort(cyc.begin(), cyc.end());
    std::printf("[ latency  ] every SM, %llu-slot ring: %.1f / %.1f / %.1f cycles (min / median / max), %zu SMs\n",
                static_cast<unsigned long long>(slots), cyc.front(), cyc[cyc.size() / 2], cyc.back(), smids.size());
    EXPECT_EQ(smids.size(), static_cast<size_t>(f.sm_count)) << "blocks shared an SM";
    overlaps.push_back(overlapping_chases(res));
  }
  SKIP_TIMING_UNDER_SANITIZER();
  EXPECT_EQ(overlaps, (std::vector<int>{0, 0})) << "chases overlapping another's time slot, per ring (1 and 4096 slots)";
}

// Host-only: the overlap count the spread benchmark refuses on.
TEST(LatencyHost, OverlappingChases) {
  auto r = [](long long start, long long ns) { return ChaseResult{0, 1, ns, start, 0}; };
  EXPECT_EQ(overlapping_chases({r(0, 10), r(10, 10), r(30, 5)}), 0);
  EXPECT_EQ(overlapping_chases({r(30, 5), r(0, 10), r(5, 10)}), 1);
  EXPECT_EQ(overlapping_chases({r(0, 100), r(10, 5), r(50, 5)}), 2);  // both inside the first
  EXPECT_EQ(overlapping_chases({}), 0);
}

TEST(LatencyHost, OneBlockPerSmSharedMemory) {
  DeviceFacts f;
  f.smem_per_sm_bytes = 233472;
  f.reserved_smem_per_block_bytes = 1024;
  const size_t s = one_block_per_sm_smem(f);
  EXPECT_EQ(s % 128, 0u);
  EXPECT_GT(2 * (s + 1024), f.smem_per_sm_bytes);
  EXPECT_LE(s + 1024, f.smem_per_sm_bytes);
}

}  // namespace

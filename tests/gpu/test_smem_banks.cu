#include <vector>

#include "gpu_test.hpp"
#include "harness/device_buffer.cuh"
#include "micro/smem_banks.cuh"

using namespace mh;
using namespace mh::smem_banks;

namespace {

// Conflict-free, conflicted, broadcast, padded and swizzled patterns at every width.
const model::SmemPattern kPatterns[] = {
    {4, 1, 0, false},  {4, 32, 0, false}, {4, 0, 0, false},  {4, 33, 1, false}, {4, 32, 0, true},
    {8, 2, 0, false},  {8, 3, 1, false},  {8, 16, 0, true},  {16, 1, 0, false}, {16, 8, 1, false},
    {16, 64, 1, false}, {16, 33, 0, true}, {16, 0, 0, false},
};

class SmemBanks : public ::testing::TestWithParam<model::SmemPattern> {};

TEST_P(SmemBanks, LatencyChainReturnsToItsSlot) {
  REQUIRE_GPU();
  const model::SmemPattern p = GetParam();
  DeviceBuffer<LatencyResult> out(1);
  out.fill_bytes(0xff);
  launch_latency(p, out.data());
  const LatencyResult r = out.download()[0];
  const std::vector<uint64_t> addrs = model::smem_pattern_addresses(p);
  for (int i = 0; i < 32; ++i) EXPECT_EQ(r.final_offset[i], addrs[i]) << "lane " << i;
  EXPECT_GE(r.cycles, kLatencySteps);  // at least a cycle per dependent load
}

TEST_P(SmemBanks, LoadChecksumMatchesHost) {
  REQUIRE_GPU();
  Plan p;
  p.pattern = GetParam();
  p.blocks = 3;
  p.iters = 7;
  DeviceBuffer<uint32_t> sums(p.warps());
  DeviceBuffer<ClockSpan> spans(p.blocks);
  sums.fill_bytes(0);
  launch_load(p, sums.data(), spans.data());
  const uint32_t expected = expected_warp_sum(p);
  const std::vector<uint32_t> host = sums.download();
  for (size_t w = 0; w < host.size(); ++w) ASSERT_EQ(host[w], expected) << "warp " << w;
  for (const ClockSpan& s : spans.download()) EXPECT_GT(s.cycles, 0);
}

TEST_P(SmemBanks, StoreWritesEveryTouchedWord) {
  REQUIRE_GPU();
  Plan p;
  p.pattern = GetParam();
  p.blocks = 2;
  p.iters = 3;
  const uint32_t words = table_bytes(p.pattern) / 4;
  for (uint32_t salt : {0x01234567u, 0x89abcdefu}) {  // two salts: no pass on what a previous launch left
    DeviceBuffer<uint32_t> tiles(static_cast<size_t>(p.blocks) * words);
    DeviceBuffer<ClockSpan> spans(p.blocks);
    launch_store(p, salt, tiles.data(), spans.data());
    const std::vector<uint32_t> host = tiles.download();
    for (int b = 0; b < p.blocks; ++b)
      for (uint32_t w : words_per_iteration(p.pattern))
        ASSERT_EQ(host[b * words + w], stored_value(w, salt)) << "block " << b << " word " << w;
  }
}

INSTANTIATE_TEST_SUITE_P(Patterns, SmemBanks, ::testing::ValuesIn(kPatterns), [](const auto& info) {
  const model::SmemPattern& p = info.param;
  return "w" + std::to_string(p.width) + "_s" + std::to_string(p.stride) +
         (p.swizzle ? "_swizzle" : "_pad" + std::to_string(p.pad));
});

// A run plans its throughput grids from the compiled kernels (Planner::residency); --plan-for from the
// device facts (threads, shared memory, the registers of smem_banks.cuh), which must give the blocks per
// SM the occupancy API gives for a build for this GPU (not for code compiled for another architecture).
TEST(SmemBanksPlan, FactsPlanWhatTheOccupancyApiSays) {
  REQUIRE_GPU();
  const DeviceFacts& f = current_device_facts();
  const bool from_ptx = kernels_from_ptx();
  for (bool store : {false, true})
    for (int width : {4, 8, 16})
      for (const model::SmemPattern& p : {model::SmemPattern{width, 1, 0, false}, model::SmemPattern{width, 64, 1, false}}) {
        const int planned = blocks_per_sm(f, kThreads, table_bytes(p), planned_registers(f.arch(), store, width));
        EXPECT_GE(planned, 1);
        const Residency r = compiled_residency(throughput_kernel(p, store), kThreads, table_bytes(p));
        EXPECT_EQ(resident_blocks_per_sm(p, store), r.blocks_per_sm);
        EXPECT_GE(r.blocks_per_sm, 1);
        if (!from_ptx)
          EXPECT_EQ(r.blocks_per_sm, planned) << (store ? "store" : "load") << " width " << width << " stride " << p.stride;
      }
  if (from_ptx) GTEST_SKIP() << "the kernels were not compiled for this GPU (code_from_ptx): the facts plan a build for it";
}

TEST(SmemBanksPlan, RejectsPatternsBeyond48KiB) {
  EXPECT_THROW(table_bytes({16, 128, 0, false}), std::invalid_argument);  // lane 31 at 62 KiB
  EXPECT_EQ(table_bytes({4, 1, 0, false}), 160u);                         // 128 B + 7 shifts of 4 B, 16-B rounded
}

}  // namespace

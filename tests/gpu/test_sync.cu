#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "harness/device_buffer.cuh"
#include "micro/sync.cuh"

using namespace mh;
using namespace mh::sync;

namespace {

constexpr int kTestSteps = 8;  // 32 barriers: enough for a missing barrier to show, cheap on the host
constexpr Kind kAllKinds[] = {Kind::none, Kind::syncthreads, Kind::syncwarp, Kind::named};

// Runs one launch; checks the chain values against the host and that every block recorded a span.
void expect_matches_host(const Config& c) {
  DeviceBuffer<uint32_t> out(static_cast<size_t>(c.blocks) * c.threads);
  DeviceBuffer<ClockSpan> spans(c.blocks);
  out.fill_bytes(0);
  spans.fill_bytes(0);
  launch(c, out.data(), spans.data());
  const std::vector<uint32_t> got = out.download(), want = expected_out(c);
  size_t wrong = 0;
  for (size_t i = 0; i < got.size(); ++i) wrong += got[i] != want[i];
  EXPECT_EQ(wrong, 0u) << "of " << got.size() << " threads";
  size_t empty = 0;
  for (const ClockSpan& s : spans.download()) empty += s.cycles <= 0 || s.ns <= 0;
  EXPECT_EQ(empty, 0u) << "blocks without a clock span";
}

class Sync : public ::testing::TestWithParam<Shape> {};

// A shape that cannot be resident on this GPU is skipped, as the benchmark skips it.
#define REQUIRE_RESIDENT(shape)                                                   \
  do {                                                                            \
    REQUIRE_GPU();                                                                \
    const std::string mh_unfit_ = shape_unfit_reason(current_device_facts(), shape); \
    if (!mh_unfit_.empty()) GTEST_SKIP() << mh_unfit_;                            \
  } while (0)

// Every shape resident here, every kernel (the baseline too): exactly B blocks fit, as the benchmark needs.
TEST_P(Sync, SharedMemoryForcesBlocksPerSm) {
  const Shape s = GetParam();
  REQUIRE_RESIDENT(s);
  for (Kind k : kAllKinds) {
    SCOPED_TRACE(kind_name(k));
    EXPECT_EQ(resident_blocks_per_sm(make_config(k, s.threads, s.blocks_per_sm, kTestSteps)), s.blocks_per_sm);
  }
}

TEST_P(Sync, ChainMatchesHost) {
  const Shape s = GetParam();
  REQUIRE_RESIDENT(s);
  for (Kind k : kAllKinds) {
    SCOPED_TRACE(kind_name(k));
    expect_matches_host(make_config(k, s.threads, s.blocks_per_sm, kTestSteps));
  }
}

// Each thread reads, right after every barrier, what a thread of another warp (one-warp groups:
// another lane) wrote right before it: without synchronization some reads would see a stale value.
TEST_P(Sync, BarrierOrdersSharedMemory) {
  const Shape s = GetParam();
  REQUIRE_RESIDENT(s);
  for (Kind k : {Kind::syncthreads, Kind::syncwarp, Kind::named}) {
    SCOPED_TRACE(kind_name(k));
    expect_matches_host(make_config(k, s.threads, s.blocks_per_sm, kTestSteps, true));
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, Sync, ::testing::ValuesIn(bench_shapes()), [](const auto& info) {
  return "t" + std::to_string(info.param.threads) + "_b" + std::to_string(info.param.blocks_per_sm);
});

TEST(SyncConfig, RejectsBadInput) {
  REQUIRE_GPU();  // make_config reads the device's shared memory
  EXPECT_THROW(make_config(Kind::syncthreads, 48, 1, 1), std::invalid_argument);
  EXPECT_THROW(make_config(Kind::syncthreads, 2048, 1, 1), std::invalid_argument);
  EXPECT_THROW(make_config(Kind::syncthreads, 32, 0, 1), std::invalid_argument);
  EXPECT_THROW(make_config(Kind::none, 32, 1, 1, true), std::invalid_argument);
  EXPECT_THROW(make_config(Kind::syncthreads, 1024, 64, 1), std::invalid_argument);  // too little shared memory
}

// Host-only: residency comes from the device facts. A Turing-like SM (1024 threads, 64 KiB shared
// memory) holds 1 block of 1024 threads or 4 of 256, not 2 of 1024 nor 4 of 512; an H200-like one
// (2048 threads, 228 KiB) holds 2 of 1024, and the shared memory of each block leaves room for no more.
TEST(SyncShapes, FactsDecideWhatIsResident) {
  DeviceFacts f;
  f.sm_count = 40;
  f.max_threads_per_sm = 1024;
  f.max_threads_per_block = 1024;
  f.max_blocks_per_sm = 16;
  f.smem_per_sm_bytes = f.smem_per_block_optin_bytes = 64 << 10;
  f.regs_per_sm = f.regs_per_block = 65536;
  f.global_mem_bytes = 16ull << 30;
  EXPECT_EQ(shape_unfit_reason(f, {1024, 1}), "");
  EXPECT_EQ(shape_unfit_reason(f, {256, 4}), "");
  EXPECT_NE(shape_unfit_reason(f, {1024, 2}), "");
  EXPECT_NE(shape_unfit_reason(f, {512, 4}), "");
  f.max_threads_per_sm = 2048;
  f.max_blocks_per_sm = 32;
  f.smem_per_sm_bytes = 228 << 10;
  f.smem_per_block_optin_bytes = 227 << 10;
  f.reserved_smem_per_block_bytes = 1 << 10;
  EXPECT_EQ(shape_unfit_reason(f, {1024, 2}), "");
  const Config c = make_config(f, Kind::syncthreads, 1024, 2, 1);
  EXPECT_EQ(c.blocks, 80);
  EXPECT_EQ(blocks_per_sm(f, 1024, c.smem_bytes, kRegisterCap), 2);
  EXPECT_EQ(blocks_per_sm(f, 32, c.smem_bytes, kRegisterCap), 2);  // shared memory, not threads, sets B
}

// Host-only: the groups and partners the exchange and the named barrier rely on.
TEST(SyncGroups, PartnerIsInTheSameGroupAndAnotherWarp) {
  for (Kind k : {Kind::syncthreads, Kind::syncwarp, Kind::named})
    for (const Shape& s : bench_shapes())
      for (int t = 0; t < s.threads; ++t) {
        const int g = group_size(k, s.threads), p = exchange_partner(k, t, s.threads);
        ASSERT_EQ(p / g, t / g) << kind_name(k) << " T=" << s.threads << " tid=" << t;
        if (g > 32) ASSERT_NE(p / 32, t / 32) << kind_name(k) << " T=" << s.threads << " tid=" << t;
        if (g == 32) ASSERT_EQ(p, t ^ 16) << kind_name(k) << " T=" << s.threads << " tid=" << t;
      }
  EXPECT_EQ(group_size(Kind::named, 32), 32);
  EXPECT_EQ(group_size(Kind::named, 1024), 512);
}

}  // namespace

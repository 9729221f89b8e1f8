#include <stdexcept>
#include <vector>

#include "gpu_test.hpp"
#include "harness/device_buffer.cuh"
#include "harness/device_info.cuh"
#include "micro/issue.cuh"
#include "micro/register_banks.cuh"

// Every compiled shape, two blocks: each thread's checksum equals the host replay bit for bit (a dropped,
// merged or misaddressed load, or a missing FFMA, changes it).
TEST(Issue, EveryShapeMatchesHostReplay) {
  REQUIRE_GPU();
  const int blocks = 2, chunks = 5;  // odd: both halves of the buffer and the last chunk's first half
  for (const mh::issue::Shape& s : mh::issue::shapes()) {
    const size_t smem = mh::issue::pinning_smem(s, mh::current_device_facts(), 1);  // one block per SM: every GPU
    ASSERT_GT(smem, 0u) << s.name();
    mh::DeviceBuffer<float> out(blocks * mh::issue::kThreads);
    out.fill_bytes(0xff);
    mh::issue::launch(s, out.data(), blocks, smem, chunks, 0.5f);
    const std::vector<float> host = out.download();
    for (uint32_t t = 0; t < host.size(); ++t)
      ASSERT_EQ(host[t], mh::issue::expected(s, t, chunks, 0.5f)) << s.name() << " sync=" << s.sync << " thread " << t;
  }
}

// The residency the benchmarks rely on: the pinning shared memory lets exactly W / 4 blocks per SM fit (where
// the shape's buffer fits at all: the plan skips the others).
TEST(Issue, PinningSharedMemoryGivesTheWantedBlocks) {
  REQUIRE_GPU();
  int checked = 0;
  for (const mh::issue::Shape& s : mh::issue::shapes())
    for (int b : {1, 2, 4, 8}) {
      const size_t smem = mh::issue::pinning_smem(s, mh::current_device_facts(), b);
      if (smem == 0) continue;
      EXPECT_EQ(mh::issue::resident_blocks(s, smem), b) << s.name() << " sync=" << s.sync << " blocks " << b;
      ++checked;
    }
  EXPECT_GE(checked, static_cast<int>(mh::issue::shapes().size()));  // every shape at one block per SM at least
}

// The host side of the plan: buffer sizes, names and the pinning arithmetic on the H200's facts.
TEST(Issue, ShapesNamesAndPinning) {
  const mh::issue::Shape& tuned = mh::issue::find(mh::issue::Kind::mix, 3, 16, false, false);
  EXPECT_EQ(tuned.name(), "mix/ffma:64/lds:3/width:16");
  EXPECT_EQ(tuned.smem_bytes(), 2u * 4 * 3 * 512);  // two halves of unroll x lds rows of 512 bytes
  EXPECT_EQ(mh::issue::find(mh::issue::Kind::lds, 4, 16, true, false).name(), "lds/width:16/pattern:broadcast");
  EXPECT_EQ(mh::issue::find(mh::issue::Kind::lds, 4, 16, true, false).wavefronts_per_lds(), 1);
  EXPECT_EQ(mh::issue::find(mh::issue::Kind::mix, 3, 16, false, true).name(), "mix_sync/ffma:64/lds:3/width:16");
  EXPECT_THROW(mh::issue::find(mh::issue::Kind::mix, 5, 16, false, false), std::invalid_argument);
  mh::DeviceFacts f;
  f.smem_per_sm_bytes = 233472, f.reserved_smem_per_block_bytes = 1024, f.smem_per_block_optin_bytes = 232448;
  EXPECT_EQ(mh::issue::pinning_smem(tuned, f, 2), 115712u);  // 233472 / 2 - 1024, a multiple of 128
  EXPECT_EQ(mh::issue::pinning_smem(mh::issue::find(mh::issue::Kind::mix, 6, 16, false, false), f, 10), 0u);
}

// issue/ffma_banks: both patterns match the host replay bit for bit, and the pinning gives the wanted blocks.
TEST(RegisterBanks, BothPatternsMatchHostReplayAndPin) {
  REQUIRE_GPU();
  namespace rb = mh::register_banks;
  const mh::DeviceFacts& f = mh::current_device_facts();
  for (rb::Pattern p : {rb::Pattern::split, rb::Pattern::same}) {
    const size_t smem = mh::pinning_smem(f, 1, rb::kOperandBytes);
    ASSERT_GT(smem, 0u);
    const int blocks = 3, trips = 7;
    mh::DeviceBuffer<float> out(blocks * rb::kThreads);
    out.fill_bytes(0xff);
    rb::launch(p, out.data(), blocks, smem, trips);
    const std::vector<float> host = out.download();
    for (uint32_t t = 0; t < host.size(); ++t) ASSERT_EQ(host[t], rb::expected(p, t, trips)) << rb::pattern_name(p) << " thread " << t;
    for (int b : {1, 2, 4, 8})
      EXPECT_EQ(rb::resident_blocks(p, mh::pinning_smem(f, b, rb::kOperandBytes)), b) << rb::pattern_name(p);
  }
}

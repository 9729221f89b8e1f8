#include <vector>

#include "gpu_test.hpp"
#include "harness/device_buffer.cuh"
#include "harness/device_info.cuh"
#include "micro/issue.cuh"

// Every compiled shape, two blocks: each thread's checksum equals the host replay bit for bit (a dropped,
// merged or misaddressed load, or a missing FFMA, changes it).
TEST(Issue, EveryShapeMatchesHostReplay) {
  REQUIRE_GPU();
  const int blocks = 2, chunks = 5;  // odd: both halves of the buffer and the last chunk's first half
  for (const mh::issue::Shape& s : mh::issue::shapes()) {
    const size_t smem = mh::issue::pinning_smem(s, mh::current_device_facts(), 4);
    ASSERT_GT(smem, 0u) << s.name();
    mh::DeviceBuffer<float> out(blocks * mh::issue::kThreads);
    out.fill_bytes(0xff);
    mh::issue::launch(s, out.data(), blocks, smem, chunks, 0.5f);
    const std::vector<float> host = out.download();
    for (uint32_t t = 0; t < host.size(); ++t)
      ASSERT_EQ(host[t], mh::issue::expected(s, t, chunks, 0.5f)) << s.name() << " sync=" << s.sync << " thread " << t;
  }
}

// The residency the benchmarks rely on: the pinning shared memory lets exactly W / 4 blocks per SM fit.
TEST(Issue, PinningSharedMemoryGivesTheWantedBlocks) {
  REQUIRE_GPU();
  for (const mh::issue::Shape& s : mh::issue::shapes())
    for (int b : {1, 2, 4}) {
      const size_t smem = mh::issue::pinning_smem(s, mh::current_device_facts(), b);
      ASSERT_GT(smem, 0u) << s.name();
      EXPECT_EQ(mh::issue::resident_blocks(s, smem), b) << s.name() << " blocks " << b;
    }
}

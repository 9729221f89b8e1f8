// The ldmatrix + mma.sync mix benchmark's kernels (micro/mma_ldmatrix.cuh) against the host: each kind's warp
// checksums at a few trips, with the GEMM kernels' pinned residency and with the bare tiles; and the host
// check rejecting what a wrong fragment map or a missing trip would give.
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "harness/device_buffer.cuh"
#include "harness/device_facts.hpp"
#include "micro/mma_ldmatrix.cuh"

using namespace mh;
using namespace mh::tensor::mix;

namespace {
const Kind kKinds[] = {Kind::mix, Kind::ldmatrix, Kind::mma};

std::string run_kind(Kind k, int blocks, size_t smem, int trips) {
  DeviceBuffer<unsigned long long> sums(static_cast<size_t>(blocks) * kThreads);
  sums.fill_bytes(0xff);
  DeviceBuffer<ClockSpan> spans(blocks);
  launch(k, blocks, smem, trips, sums.data(), spans.data());
  return check_sums(k, trips, sums.download());
}
}  // namespace

TEST(TensorMmaLdmatrix, WarpSumsMatchHost) {
  REQUIRE_GPU();
  const DeviceFacts& f = current_device_facts();
  for (Kind k : kKinds) {
    if (const std::string why = compiled_out(k); !why.empty()) GTEST_SKIP() << why;
    EXPECT_EQ(run_kind(k, 3, kTilesBytes, 5), "") << kind_name(k);
    const size_t pinned = pinning_smem(f, 2);
    ASSERT_GT(pinned, 0u);
    EXPECT_EQ(residency(k, pinned).blocks_per_sm, 2) << kind_name(k);
    EXPECT_EQ(run_kind(k, 2 * f.sm_count, pinned, 2), "") << kind_name(k);
  }
}

// Host side: every warp's expected sum differs between kinds and grows with the trips, so a kernel that ran
// the wrong kind, skipped a trip or loaded the wrong rows cannot pass; check_sums names the wrong warp.
TEST(TensorMmaLdmatrix, CheckRejectsWrongSums) {
  for (Kind k : kKinds) {
    std::vector<unsigned long long> sums(kThreads, 0);
    for (int w = 0; w < kThreads / 32; ++w) sums[32 * w] = expected_warp_sum(k, w, 4);
    EXPECT_EQ(check_sums(k, 4, sums), "") << kind_name(k);
    EXPECT_NE(check_sums(k, 3, sums), "") << kind_name(k);
    sums[32 * 5 + 7] += 1;
    EXPECT_NE(check_sums(k, 4, sums).find("warp 5"), std::string::npos) << kind_name(k);
  }
  for (int w = 0; w < kThreads / 32; ++w) {
    EXPECT_NE(expected_warp_sum(Kind::mix, w, 1), expected_warp_sum(Kind::mma, w, 1));
    EXPECT_NE(expected_warp_sum(Kind::mix, w, 1), 0u);
    EXPECT_NE(expected_warp_sum(Kind::ldmatrix, w, 1), 0u);
  }
}

// The ldmatrix + mma.sync mix benchmark's kernels (micro/mma_ldmatrix.cuh) against the host: each kind's warp
// checksums at a few trips, with the GEMM kernels' pinned residency and with the bare tiles; and the host
// check rejecting what a wrong fragment map or a missing trip would give; the copy kinds likewise.
#include <algorithm>
#include <string>
#include <utility>
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

// The copy kinds (kernels 11 / 11a's cp.async loop from the L2-resident set): both stages, trips that are not
// a multiple of the set's 8 tiles (a buffer left with an older tile, or a trip computed on one, changes the
// sums), a few blocks and the pinned 2 per SM over every SM (blocks past 16 x 16 wrap the panels).
TEST(TensorMmaLdmatrix, CopyKindsMatchHost) {
  REQUIRE_GPU();
  const DeviceFacts& f = current_device_facts();
  const DeviceBuffer<uint16_t> a(host_set(false)), b(host_set(true));
  for (int stages : {gemm::tc::kCpAsyncStages, gemm::tc::kCpAsyncAblationStages})
    for (CopyKind k : {CopyKind::copy, CopyKind::mix_copy}) {
      if (const std::string why = compiled_out(k, stages); !why.empty()) GTEST_SKIP() << why;
      const size_t smem = std::max(ring_bytes(stages), pinning_smem(f, 2));
      EXPECT_EQ(residency(k, stages, smem).blocks_per_sm, 2) << kind_name(k) << stages;
      for (auto [blocks, trips] : {std::pair{3, 5}, std::pair{2 * f.sm_count, 11}}) {
        DeviceBuffer<unsigned long long> sums(static_cast<size_t>(blocks) * kThreads);
        sums.fill_bytes(0xff);
        DeviceBuffer<ClockSpan> spans(blocks);
        launch(k, stages, blocks, smem, trips, a.data(), b.data(), sums.data(), spans.data());
        EXPECT_EQ(check_sums(k, stages, trips, sums.download()), "") << kind_name(k) << " stages " << stages;
      }
    }
}

// Host side: a trip more or less, or a tile off by one in the ring, gives other sums; the check names the block
// (copy) or the warp (mix_copy).
TEST(TensorMmaLdmatrix, CopyCheckRejectsWrongSums) {
  for (int stages : {gemm::tc::kCpAsyncStages, gemm::tc::kCpAsyncAblationStages}) {
    for (int trips : {5, 9, 11}) {
      EXPECT_NE(expected_sum(CopyKind::copy, stages, 0, trips), expected_sum(CopyKind::copy, stages, 0, trips + 1));
      EXPECT_NE(expected_sum(CopyKind::mix_copy, stages, 3, trips), expected_sum(CopyKind::mix_copy, stages, 3, trips + 1));
    }
    std::vector<unsigned long long> sums(2 * kThreads, 0);
    sums[0] = sums[kThreads] = expected_sum(CopyKind::copy, stages, 0, 7);
    EXPECT_EQ(check_sums(CopyKind::copy, stages, 7, sums), "");
    sums[kThreads + 9] += 1;
    EXPECT_NE(check_sums(CopyKind::copy, stages, 7, sums).find("block 1"), std::string::npos);
    std::fill(sums.begin(), sums.end(), 0);
    for (int w = 0; w < 2 * kThreads / 32; ++w) sums[32 * w] = expected_sum(CopyKind::mix_copy, stages, w % 8, 7);
    EXPECT_EQ(check_sums(CopyKind::mix_copy, stages, 7, sums), "");
    sums[32 * 13 + 1] += 1;
    EXPECT_NE(check_sums(CopyKind::mix_copy, stages, 7, sums).find("block 1 warp 5"), std::string::npos);
  }
  // The copy kind's ring: with 3 stages and 11 trips the buffers end with tiles 9, 10, 8 (k tiles 1, 2, 0).
  EXPECT_EQ(expected_sum(CopyKind::copy, 3, 0, 11), expected_sum(CopyKind::copy, 3, 0, 3));
  // One trip of mix_copy computes k tile 0 of the set, which is the mix kind's tile.
  for (int w = 0; w < kThreads / 32; ++w) EXPECT_EQ(expected_sum(CopyKind::mix_copy, 1, w, 1), expected_warp_sum(Kind::mix, w, 1));
}

#include <vector>

#include "gpu_test.hpp"
#include "harness/device_buffer.cuh"
#include "micro/coalescing.cuh"

using namespace mh;
using namespace mh::coalescing;

namespace {

// Small plans that still exercise the wrap-around (l2/l1), a region smaller than the warps (l1 at
// stride 128: R = 1) and per-block regions.
Plan small_plan(Level level, int stride) {
  switch (level) {
    case Level::hbm: return make_plan(level, stride, 4, 64, 1 << 20, 0);  // 8 warps; R = 2048 / stride
    case Level::l2: return make_plan(level, stride, 5, 96, 96 << 10, 64);  // 15 warps, no power of two
    default: return make_plan(level, stride, 3, 64, 16 << 10, 64);
  }
}

class Coalescing : public ::testing::TestWithParam<std::tuple<Level, int>> {};

TEST_P(Coalescing, ReadChecksumMatchesHost) {
  REQUIRE_GPU();
  const auto [level, stride] = GetParam();
  const Plan p = small_plan(level, stride);
  DeviceBuffer<uint32_t> buf(p.buffer_elems()), sum(1);
  fill_values(buf.data(), p.buffer_elems());
  sum.fill_bytes(0);
  launch_read(p, buf.data(), sum.data());
  EXPECT_EQ(sum.download()[0], expected_read_checksum(p));
}

TEST_P(Coalescing, WriteTouchesExactlyTheStridedElements) {
  REQUIRE_GPU();
  const auto [level, stride] = GetParam();
  const Plan p = small_plan(level, stride);
  DeviceBuffer<uint32_t> buf(p.buffer_elems());
  buf.fill_bytes(0xff);
  launch_write(p, buf.data());
  const std::vector<uint32_t> host = buf.download();
  size_t wrong = 0, written = 0;
  for (uint64_t i = 0; i < host.size(); ++i) {
    const bool touched = element_touched(p, i);
    written += touched;
    wrong += touched ? host[i] != element_value(i) : host[i] != 0xffffffffu;
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(written, uint64_t(p.requests_per_region) * 32 * p.groups());
}

INSTANTIATE_TEST_SUITE_P(Strides, Coalescing,
                         ::testing::Combine(::testing::Values(Level::hbm, Level::l2, Level::l1),
                                            ::testing::Values(1, 2, 3, 8, 32, 128)),
                         [](const auto& info) {
                           return std::string(level_name(std::get<0>(info.param))) + "_stride" +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST(CoalescingPlan, RegionIsAPowerOfTwoOfRequests) {
  const Plan p = make_plan(Level::l2, 3, 4, 64, 1 << 20, 256);
  EXPECT_EQ(p.requests_per_region, 2048u);  // 2^20 / 384 = 2730 -> 2048
  EXPECT_EQ(p.region_elems(), 2048u * 96);
  EXPECT_EQ(make_plan(Level::hbm, 1, 4, 64, 1 << 20, 0).iters, 1024);  // 8192 requests / 8 warps
}

TEST(CoalescingPlan, RejectsBadInput) {
  EXPECT_THROW(make_plan(Level::hbm, 0, 1, 32, 1 << 20, 0), std::invalid_argument);
  EXPECT_THROW(make_plan(Level::hbm, 1, 1, 33, 1 << 20, 0), std::invalid_argument);
  EXPECT_THROW(make_plan(Level::l1, 128, 1, 32, 1 << 10, 8), std::invalid_argument);   // region below one request
  EXPECT_THROW(make_plan(Level::hbm, 1, 3, 64, 1 << 20, 0), std::invalid_argument);    // 6 warps don't divide R
  EXPECT_THROW(make_plan(Level::l2, 1, 1, 32, 1 << 20, 8), std::invalid_argument);     // 8 requests can't cover R
}

}  // namespace

#include <vector>

#include "gpu_test.hpp"
#include "harness/device_buffer.cuh"
#include "micro/coalescing.cuh"

using namespace mh;
using namespace mh::coalescing;

namespace {

// Small plans that still exercise wrap-around (l2/l1), the hbm tail guard and per-block regions.
Plan small_plan(Level level, int stride) {
  switch (level) {
    case Level::hbm: return make_plan(level, stride, 7, 96, 1 << 20, 0);  // 21 warps: R is no multiple of W
    case Level::l2: return make_plan(level, stride, 5, 128, 256 << 10, 64);
    default: return make_plan(level, stride, 4, 64, 16 << 10, 40);
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
  EXPECT_EQ(written, p.requests_per_region * 32 * p.groups());
}

INSTANTIATE_TEST_SUITE_P(Strides, Coalescing,
                         ::testing::Combine(::testing::Values(Level::hbm, Level::l2, Level::l1),
                                            ::testing::Values(1, 2, 3, 8, 32, 128)),
                         [](const auto& info) {
                           return std::string(level_name(std::get<0>(info.param))) + "_stride" +
                                  std::to_string(std::get<1>(info.param));
                         });

TEST(CoalescingPlan, RejectsBadInput) {
  EXPECT_THROW(make_plan(Level::hbm, 0, 1, 32, 1 << 20, 0), std::invalid_argument);
  EXPECT_THROW(make_plan(Level::hbm, 1, 1, 33, 1 << 20, 0), std::invalid_argument);
  EXPECT_THROW(make_plan(Level::l1, 128, 1, 32, 1 << 10, 8), std::invalid_argument);  // region below one request
}

}  // namespace

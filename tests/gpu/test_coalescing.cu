#include <algorithm>
#include <array>
#include <iterator>
#include <vector>

#include "gpu_test.hpp"
#include "harness/device_buffer.cuh"
#include "micro/coalescing.cuh"
#include "micro/load_mix.cuh"

using namespace mh;
using namespace mh::coalescing;

namespace {

// The plans the kernels are checked on: each benchmarked stride (a compiled kernel) and stride 5 (the
// generic one), for every level and the hbm write stream; and regions of 1, 2 and 4 requests (fewer
// than kUnroll: the generic kernel). The l2 plans use 15 warps (no power of two), the walks wrap.
enum class Shape { hbm, stream, l2, l1, l2_tiny, l1_tiny };
const char* shape_name(Shape s) {
  const char* names[] = {"hbm", "stream", "l2", "l1", "l2_tiny", "l1_tiny"};
  return names[static_cast<int>(s)];
}

struct Case {
  Shape shape;
  int stride;
  int tiny_requests = 0;  // R of a *_tiny plan
};

Plan plan_of(const Case& c) {
  const uint64_t request_bytes = 128ull * c.stride;
  switch (c.shape) {
    case Shape::hbm: return make_plan(Level::hbm, c.stride, 4, 64, 2 << 20, 0);  // 8 warps; R = 16384 / stride
    case Shape::stream: return make_stream_plan(c.stride, 64, 1 << 20);
    case Shape::l2: return make_plan(Level::l2, c.stride, 5, 96, 64 * request_bytes, 64);  // R = 64
    case Shape::l1: return make_plan(Level::l1, c.stride, 3, 64, 64 * request_bytes, 64);
    case Shape::l2_tiny: return make_plan(Level::l2, c.stride, 5, 96, c.tiny_requests * request_bytes, 64);
    default: return make_plan(Level::l1, c.stride, 3, 64, c.tiny_requests * request_bytes, 64);
  }
}

bool benchmarked(int stride) { return std::find(std::begin(kStrides), std::end(kStrides), stride) != std::end(kStrides); }

class Coalescing : public ::testing::TestWithParam<Case> {
 protected:
  // The path the case means to test, so that a plan change cannot silently move it to the other one.
  void SetUp() override {
    const Case& c = GetParam();
    const bool tiny = c.shape == Shape::l2_tiny || c.shape == Shape::l1_tiny;
    p_ = plan_of(c);
    ASSERT_EQ(compiled_stride(p_), benchmarked(c.stride) && !tiny);
    if (tiny) ASSERT_EQ(p_.requests_per_region, uint32_t(c.tiny_requests));
    if (c.shape == Shape::stream) ASSERT_EQ(uint64_t(p_.blocks) * p_.threads / 32, p_.chunks());  // a warp per chunk
  }
  Plan p_;
};

TEST_P(Coalescing, ReadChecksumMatchesHost) {
  REQUIRE_GPU();
  DeviceBuffer<uint32_t> buf(p_.buffer_elems()), sum(1);
  fill_values(buf.data(), p_.buffer_elems());
  sum.fill_bytes(0);
  launch_read(p_, buf.data(), sum.data());
  EXPECT_EQ(sum.download()[0], expected_read_checksum(p_));
}

TEST_P(Coalescing, WriteTouchesExactlyTheStridedElements) {
  REQUIRE_GPU();
  DeviceBuffer<uint32_t> buf(p_.buffer_elems());
  buf.fill_bytes(0xff);
  launch_write(p_, buf.data());
  const std::vector<uint32_t> host = buf.download();
  const std::vector<bool> touched = touched_elements(p_);
  size_t wrong = 0, written = 0;
  for (uint64_t i = 0; i < host.size(); ++i) {
    written += touched[i];
    wrong += touched[i] ? host[i] != element_value(i) : host[i] != 0xffffffffu;
  }
  EXPECT_EQ(wrong, 0u);
  EXPECT_EQ(written, uint64_t(p_.requests_per_region) * 32 * p_.groups());  // every request made
}

std::vector<Case> cases() {
  std::vector<Case> v;
  for (Shape s : {Shape::hbm, Shape::stream, Shape::l2, Shape::l1}) {
    for (int stride : kStrides) v.push_back({s, stride});
    v.push_back({s, 5});
  }
  for (Shape s : {Shape::l2_tiny, Shape::l1_tiny})
    for (int stride : {1, 5, 33, 128})
      for (int r : {1, 2, 4}) v.push_back({s, stride, r});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Plans, Coalescing, ::testing::ValuesIn(cases()), [](const auto& info) {
  const Case& c = info.param;
  return std::string(shape_name(c.shape)) + "_stride" + std::to_string(c.stride) +
         (c.tiny_requests ? "_R" + std::to_string(c.tiny_requests) : "");
});

TEST(CoalescingPlan, RegionIsAPowerOfTwoOfRequests) {
  const Plan p = make_plan(Level::l2, 3, 4, 64, 1 << 20, 256);
  EXPECT_EQ(p.requests_per_region, 2048u);  // 2^20 / 384 = 2730 -> 2048
  EXPECT_EQ(p.region_elems(), 2048u * 96);
  EXPECT_EQ(make_plan(Level::hbm, 1, 4, 64, 1 << 20, 0).iters, 1024);  // 8192 requests / 8 warps
}

// The order the kernels follow, on plans shaped like the benchmark's (powers of two): hbm and the
// stream make each request once, l2 and l1 each equally often; a warp's requests come kUnroll at a time.
TEST(CoalescingPlan, RequestsAreMadeEquallyOften) {
  const Plan plans[] = {make_plan(Level::hbm, 1, 64, 256, 1 << 22, 0), make_stream_plan(1, 256, 1 << 22),
                        make_stream_plan(33, 256, 1 << 24),           make_plan(Level::l2, 1, 64, 256, 1 << 20, 64),
                        make_plan(Level::l2, 128, 64, 256, 1 << 21, 64), make_plan(Level::l1, 1, 6, 256, 24 << 10, 2048),
                        make_plan(Level::l1, 16, 6, 256, 24 << 10, 2048), make_plan(Level::l1, 128, 6, 256, 24 << 10, 2048)};
  for (const Plan& p : plans) {
    SCOPED_TRACE(std::string(level_name(p.level)) + " stride " + std::to_string(p.stride) + " blocks " + std::to_string(p.blocks));
    const std::vector<uint32_t> n = request_counts(p);
    const uint64_t each = p.requests_per_launch() / n.size();
    EXPECT_EQ(each * n.size(), p.requests_per_launch());
    EXPECT_EQ(std::count(n.begin(), n.end(), uint32_t(each)), std::ptrdiff_t(n.size()));
    if (p.level == Level::hbm) EXPECT_EQ(each, 1u);
  }
}

TEST(CoalescingPlan, WarpsWalkChunksOfConsecutiveRequests) {
  const Plan l2 = make_plan(Level::l2, 1, 64, 256, 1 << 20, 64);  // R = 8192, C = 8192 / kUnroll, W = 512
  const uint32_t C = 8192 / kUnroll;
  EXPECT_EQ(l2.chunks(), C);
  EXPECT_EQ(l2.request(0, 0), 0u);
  EXPECT_EQ(l2.request(0, 9), 9u);
  EXPECT_EQ(l2.request(3, 0), 3 * C / 512 * kUnroll);  // walkers start C / W chunks apart
  EXPECT_EQ(l2.request(511, kUnroll + 1), (511 * C / 512 * kUnroll + kUnroll + 1) % 8192);  // wraps
  const Plan hbm = make_plan(Level::hbm, 1, 4, 64, 1 << 20, 0);  // R = 8192, W = 8: the front
  EXPECT_EQ(hbm.request(5, 3), 5u * kUnroll + 3);
  EXPECT_EQ(hbm.request(5, kUnroll + 3), (5u + 8) * kUnroll + 3);
  const Plan stream = make_stream_plan(2, 64, 1 << 20);  // R = 4096: a warp per chunk, blocks of 2 warps
  EXPECT_EQ(stream.blocks, 4096 / kUnroll / 2);
  EXPECT_EQ(stream.iters, kUnroll);
  EXPECT_EQ(stream.request(100, 7), 100u * kUnroll + 7);
  const Plan tiny = make_plan(Level::l1, 128, 1, 64, 32 << 10, 64);  // R = 2 < kUnroll: chunks of 2
  EXPECT_EQ(tiny.chunk_requests(), 2u);
  EXPECT_EQ(tiny.request(1, 5), 1u);
}

TEST(CoalescingPlan, RejectsBadInput) {
  EXPECT_THROW(make_plan(Level::hbm, 0, 1, 32, 1 << 20, 0), std::invalid_argument);
  EXPECT_THROW(make_plan(Level::hbm, 1, 1, 33, 1 << 20, 0), std::invalid_argument);
  EXPECT_THROW(make_plan(Level::l1, 128, 1, 32, 1 << 10, 8), std::invalid_argument);   // region below one request
  EXPECT_THROW(make_plan(Level::hbm, 1, 3, 64, 1 << 20, 0), std::invalid_argument);    // 6 warps don't divide C
  EXPECT_THROW(make_plan(Level::l2, 1, 1, 32, 1 << 20, 8), std::invalid_argument);     // 8 requests can't cover R
  EXPECT_THROW(make_plan(Level::l2, 1, 4, 64, 1 << 20, 64), std::invalid_argument);    // 8 warps x 64 requests < 8192
  EXPECT_THROW(make_stream_plan(128, 256, 1 << 16), std::invalid_argument);            // 4 requests < one block's
}

}  // namespace

// The load mix (micro/load_mix.cuh): a small plan of each kind (sets shared by tiles, one per tile, a walk
// that wraps its streams, rows from fewer sets), a grid that takes several tiles per block, checksum against the host.
TEST(LoadMix, ChecksumMatchesHost) {
  REQUIRE_GPU();
  using namespace mh::load_mix;
  // The last: split's layout, the rows of fewer sets than the broadcast streams (row_sets 0: as many).
  for (const auto& [sets, tiles, len, steps, row_sets] : {std::array<uint32_t, 5>{3, 7, 64, 64, 0}, {5, 5, 16, 128, 0},
                                                          {9, 9, 256, 256, 0}, {9, 9, 64, 128, 2}}) {
    SCOPED_TRACE(testing::Message() << sets << " sets, " << tiles << " tiles, len " << len << ", " << steps << " steps, "
                                    << row_sets << " row sets");
    mh::load_mix::Plan p;
    p.blocks = 2;
    p.sets = sets;
    p.row_sets = row_sets;
    p.tiles = tiles;
    p.len = len;
    p.steps = steps;
    DeviceBuffer<uint32_t> buf(p.buffer_elems()), sum(1);
    fill(buf.data(), p.buffer_elems());
    sum.fill_bytes(0);
    launch(p, buf.data(), sum.data());
    EXPECT_EQ(sum.download()[0], expected_checksum(p));
  }
}

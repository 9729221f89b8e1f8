#include <algorithm>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "harness/device_buffer.cuh"
#include "micro/async_copy.cuh"
#include "micro/roofs.cuh"

namespace ac = mh::async_copy;

namespace {

// Skips (with the reason) a method this GPU or this build lacks.
#define REQUIRE_METHOD(m)                                                                                         \
  do {                                                                                                            \
    REQUIRE_GPU();                                                                                                \
    if (mh::current_device_facts().arch() < ac::method_min_arch(m))                                               \
      GTEST_SKIP() << ac::method_name(m) << " needs sm_" << ac::method_min_arch(m) / 10;                          \
    if (!ac::method_compiled(m)) GTEST_SKIP() << "this build compiled " << ac::method_name(m) << " out for this GPU"; \
  } while (0)

mh::DeviceBuffer<uint32_t> filled(uint64_t bytes) {
  mh::DeviceBuffer<uint32_t> buf(bytes / 4);
  mh::roofs::fill_values(buf.data(), buf.size());
  return buf;
}

// One launch of `s` on a small grid: every block's checksum equals the host's, no wait timed out.
void expect_stream_sums(const ac::Stream& s) {
  mh::DeviceBuffer<uint32_t> src = filled(s.tiles.working_set_bytes());
  mh::DeviceBuffer<uint32_t> sums(s.blocks), timeouts(1);
  sums.fill_bytes(0xff);
  timeouts.fill_bytes(0);
  CUtensorMap map{};
  if (s.method == ac::Method::tensor) map = ac::make_tensor_map(src.data(), s.box, s.tiles);
  ac::launch_stream(s, src.data(), &map, sums.data(), timeouts.data());
  const std::vector<uint32_t> got = sums.download();
  ASSERT_EQ(timeouts.download()[0], 0u);
  for (uint32_t b = 0; b < got.size(); ++b) EXPECT_EQ(got[b], ac::expected_block_sum(s, b)) << "block " << b;
}

constexpr int kBlocks = 5;
constexpr uint32_t kTilesPerBlock = 30;  // 150 tiles: more than the working sets below hold, so tiles wrap

}  // namespace

TEST(AsyncCopy, WordRangeSumIsTheSumOfWordValues) {
  for (uint64_t first : {0ull, 1ull, 12345ull, (1ull << 32) - 100})
    for (uint64_t n : {0ull, 1ull, 2ull, 7ull, 100ull}) {
      uint32_t s = 0;
      for (uint64_t i = first; i < first + n; ++i) s += mh::roofs::word_value(i);
      EXPECT_EQ(ac::word_range_sum(first, n), s) << first << " + " << n;
    }
  EXPECT_THROW(ac::word_range_sum((1ull << 32) - 1, 2), std::invalid_argument);
}

TEST(AsyncCopy, BoxProblemsAreNamed) {
  EXPECT_EQ(ac::box_problem({64, 64, 2, 128}), "");
  EXPECT_EQ(ac::box_problem({32, 256, 4, 0}), "");
  EXPECT_NE(ac::box_problem({128, 64, 2, 128}), "");  // 256-byte rows do not fit a 128-byte swizzle
  EXPECT_NE(ac::box_problem({64, 512, 2, 0}), "");    // over 256 rows
  EXPECT_NE(ac::box_problem({4, 64, 2, 0}), "");      // 8-byte rows
  EXPECT_THROW(ac::box_tiles({128, 64, 2, 64}, 1 << 20), std::invalid_argument);
}

TEST(AsyncCopy, LdStChecksums) {
  REQUIRE_GPU();
  expect_stream_sums(ac::make_stream(ac::Method::ld_st, 16, 1, 0, {}, 512 << 10, kBlocks, kTilesPerBlock));
}

TEST(AsyncCopy, CpAsyncChecksumsEveryWidthAndStages) {
  REQUIRE_METHOD(ac::Method::cp_async);
  for (int width : {4, 8, 16})
    for (int stages : {1, 2, 4}) {
      SCOPED_TRACE("width " + std::to_string(width) + " stages " + std::to_string(stages));
      expect_stream_sums(ac::make_stream(ac::Method::cp_async, width, stages, 0, {}, 512 << 10, kBlocks, kTilesPerBlock));
    }
}

TEST(AsyncCopy, BulkChecksumsEveryCopySize) {
  REQUIRE_METHOD(ac::Method::bulk);
  for (uint32_t copy : {16u, 1024u, 4096u, 16384u, 65536u}) {
    SCOPED_TRACE("copy " + std::to_string(copy));
    expect_stream_sums(ac::make_stream(ac::Method::bulk, 16, 1, copy, {}, 1 << 20, kBlocks, kTilesPerBlock));
  }
}

TEST(AsyncCopy, TensorChecksumsEveryBoxAndSwizzle) {
  REQUIRE_METHOD(ac::Method::tensor);
  const ac::Box boxes[] = {{64, 64, 2, 0}, {128, 64, 2, 0}, {16, 64, 2, 32}, {32, 64, 2, 64},
                           {64, 64, 2, 128}, {32, 256, 4, 0}, {32, 256, 4, 128}, {8, 8, 4, 32}};
  for (const ac::Box& b : boxes) {
    SCOPED_TRACE(b.name());
    // Two rows of boxes: tiles at x and y offsets both.
    const ac::Stream s = ac::make_stream(ac::Method::tensor, 16, 1, 0, b, 2 * ac::kTensorPitch * b.rows, kBlocks, kTilesPerBlock);
    EXPECT_EQ(s.tiles.count, 2ull * s.tiles.tiles_per_row);
    expect_stream_sums(s);
  }
}

// Copy 0's shared-memory image holds every word of its tile where the layout (the swizzle for tensor
// boxes, none else) puts it: word x of tile row y at swizzled_offset(y * row_bytes + 4x).
void expect_image(const ac::Latency& l, uint64_t tile, const std::vector<uint32_t>& image) {
  const uint32_t swizzle = l.method == ac::Method::tensor ? l.box.swizzle : 0;
  const uint64_t origin = l.tiles.origin(tile);
  int wrong = 0;
  for (uint32_t y = 0; y < l.tiles.rows; ++y)
    for (uint32_t x = 0; x < l.tiles.row_bytes; x += 4) {
      const uint32_t at = ac::swizzled_offset(y * l.tiles.row_bytes + x, swizzle) / 4;
      const uint32_t want = mh::roofs::word_value((origin + y * l.tiles.pitch_bytes + x) / 4);
      if (image[at] != want && ++wrong <= 3)
        ADD_FAILURE() << "row " << y << " byte " << x << " expected at shared byte " << 4 * at << ": got " << image[at]
                      << ", want " << want;
    }
  EXPECT_EQ(wrong, 0) << "words out of place in copy 0's image";
}

// A latency launch: the copied words' sum matches, copy 0 landed in its layout, no wait timed out,
// every copy took some cycles.
void expect_latency(const ac::Latency& l, uint64_t first) {
  mh::DeviceBuffer<uint32_t> src = filled(l.tiles.working_set_bytes());
  mh::DeviceBuffer<long long> cycles(l.copies);
  mh::DeviceBuffer<uint32_t> sum(1), timeouts(1), image(l.tiles.tile_bytes() / 4);
  timeouts.fill_bytes(0);
  image.fill_bytes(0);
  CUtensorMap map{};
  if (l.method == ac::Method::tensor) map = ac::make_tensor_map(src.data(), l.box, l.tiles);
  ac::launch_latency(l, src.data(), first, &map, cycles.data(), sum.data(), timeouts.data(), image.data());
  ASSERT_EQ(timeouts.download()[0], 0u);
  EXPECT_EQ(sum.download()[0], ac::expected_latency_sum(l, first));
  expect_image(l, first % l.tiles.count, image.download());
  for (long long c : cycles.download()) {
    EXPECT_GT(c, 0);
    if (!mh::test::under_sanitizer()) EXPECT_LT(c, 1000000);  // an L2/HBM copy is ~1e3 cycles
  }
}

ac::Latency latency_1d(ac::Method m, uint32_t bytes) {
  ac::Latency l;
  l.method = m;
  l.copies = 8;
  l.tiles.row_bytes = bytes;
  l.tiles.pitch_bytes = std::max<uint64_t>(bytes, 4096);
  l.tiles.count = 10;  // first 5 + 8 copies wrap
  return l;
}

TEST(AsyncCopy, LatencyLdStSums) {
  REQUIRE_GPU();
  for (uint32_t b : {16u, 1024u, 4096u, 8192u}) {
    SCOPED_TRACE(b);
    expect_latency(latency_1d(ac::Method::ld_st, b), 5);
  }
}

TEST(AsyncCopy, LatencyCpAsyncSums) {
  REQUIRE_METHOD(ac::Method::cp_async);
  expect_latency(latency_1d(ac::Method::cp_async, 16), 5);
}

TEST(AsyncCopy, LatencyBulkSums) {
  REQUIRE_METHOD(ac::Method::bulk);
  for (uint32_t b : {16u, 1024u, 4096u, 8192u, 16384u}) {
    SCOPED_TRACE(b);
    expect_latency(latency_1d(ac::Method::bulk, b), 5);
  }
}

// Also the swizzle test: copy 0's image against swizzled_offset for every swizzle mode.
TEST(AsyncCopy, LatencyTensorSumsAndSwizzledImages) {
  REQUIRE_METHOD(ac::Method::tensor);
  const ac::Box boxes[] = {{64, 64, 2, 0}, {16, 64, 2, 32}, {32, 64, 2, 64}, {64, 64, 2, 128}, {32, 32, 4, 128}, {8, 8, 4, 32}};
  for (const ac::Box& b : boxes) {
    SCOPED_TRACE(b.name());
    ac::Latency l;
    l.method = ac::Method::tensor;
    l.box = b;
    l.copies = 8;
    l.tiles = ac::box_tiles(b, 2 * ac::kTensorPitch * b.rows);
    expect_latency(l, l.tiles.count - 3);  // wraps, and crosses a row of boxes
  }
}

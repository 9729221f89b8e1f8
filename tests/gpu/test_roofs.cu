#include <algorithm>
#include <vector>

#include "gpu_test.hpp"
#include "harness/device_buffer.cuh"
#include "micro/hierarchy.cuh"
#include "micro/roofs.cuh"

namespace {
using namespace mh::roofs;

// Small walks that cover the cases the benchmarks hit, in both layouts: fewer chunks than warps
// (starts shared, L1-style), more (HBM-style, one pass), and several passes that wrap (L2-style).
std::vector<Walk> walks(int width, int unroll) {
  const uint64_t chunk = 32ull * unroll * width;
  std::vector<Walk> out;
  for (bool front : {false, true}) {
    out.push_back(make_walk(width, unroll, 5, 64, 3 * chunk, 40 * chunk, front));
    out.push_back(make_walk(width, unroll, 4, 128, 97 * chunk, 97 * chunk, front));
    out.push_back(make_walk(width, unroll, 3, 96, 29 * chunk, 200 * chunk, front));
  }
  out.push_back(make_walk(width, unroll, 25, 128, 97 * chunk, 97 * chunk, true));  // stream: a warp per chunk, one step
  // Owned (ceiling/read/l2): one chunk per warp re-read every step, and two chunks per warp in turn.
  out.push_back(make_owned_walk(width, unroll, 5, 64, 1, 40 * chunk));
  out.push_back(make_owned_walk(width, unroll, 3, 96, 2 * 9 * chunk, 100 * chunk));
  return out;
}

constexpr Load kLoads[] = {Load::plain, Load::cg, Load::cs, Load::nc};
constexpr Store kStores[] = {Store::plain, Store::cg, Store::cs};

}  // namespace

TEST(Roofs, WalkCoversTheWorkingSetWithWholeChunks) {
  const Walk w = make_walk(16, 8, 10, 256, 1'000'000, 50'000'000);
  EXPECT_EQ(w.chunk_bytes(), 4096u);
  EXPECT_EQ(w.chunks, 1'000'000u / 4096);
  EXPECT_GE(w.bytes_per_launch(), 50'000'000u);
  EXPECT_LT(w.bytes_per_launch() - 50'000'000u, w.warps() * w.chunk_bytes());
  EXPECT_THROW(make_walk(12, 8, 10, 256, 1 << 20, 1 << 20), std::invalid_argument);
  EXPECT_THROW(make_walk(16, 3, 10, 256, 1 << 20, 1 << 20), std::invalid_argument);
  EXPECT_THROW(make_walk(16, 8, 10, 100, 1 << 20, 1 << 20), std::invalid_argument);
}

TEST(Roofs, FrontLayoutVisitsEveryChunkOncePerPass) {
  const Walk w = make_walk(16, 8, 4, 128, 64 * 4096, 64 * 4096, true);  // 16 walkers, 64 chunks, 4 steps
  ASSERT_EQ(w.iters, 4u);
  const std::vector<bool> visited = visited_words(w);
  EXPECT_EQ(std::count(visited.begin(), visited.end(), true), static_cast<long>(w.words()));
  EXPECT_EQ(w.start_chunk(5), 5u);
  EXPECT_EQ(w.step_chunks(), 16u);
}

TEST(Roofs, ReadChecksumMatchesHostForEveryShapeAndOperator) {
  REQUIRE_GPU();
  for (int width : kWidths)
    for (int unroll : kUnrolls)
      for (const Walk& w : walks(width, unroll)) {
        mh::DeviceBuffer<uint32_t> buf(w.words()), sum(1);
        fill_values(buf.data(), w.words());
        const uint32_t expected = expected_read_checksum(w);
        for (Load op : kLoads) {
          sum.fill_bytes(0);
          launch_read(w, op, buf.data(), sum.data());
          ASSERT_EQ(sum.download()[0], expected) << "w:" << width << " u:" << unroll << " ld:" << load_name(op)
                                                 << " chunks:" << w.chunks << " iters:" << w.iters << " front:" << w.front;
        }
      }
}

TEST(Roofs, WriteStoresTheValuesOfEveryVisitedWordOnly) {
  REQUIRE_GPU();
  for (int width : kWidths)
    for (int unroll : kUnrolls)
      for (const Walk& w : walks(width, unroll)) {
        const std::vector<bool> visited = visited_words(w);
        for (Store op : kStores) {
          mh::DeviceBuffer<uint32_t> buf(w.words());
          buf.fill_bytes(0xab);
          launch_write(w, op, buf.data());
          const std::vector<uint32_t> host = buf.download();
          for (uint64_t i = 0; i < host.size(); ++i)
            ASSERT_EQ(host[i], visited[i] ? word_value(i) : 0xababababu)
                << "word " << i << " w:" << width << " u:" << unroll << " st:" << store_name(op);
        }
      }
}

TEST(Roofs, CopyCopiesEveryVisitedWordOnly) {
  REQUIRE_GPU();
  for (int width : kWidths)
    for (int unroll : kUnrolls)
      for (const Walk& w : walks(width, unroll)) {
        const std::vector<bool> visited = visited_words(w);
        mh::DeviceBuffer<uint32_t> src(w.words());
        fill_values(src.data(), w.words());
        for (Load ld : kLoads)
          for (Store st : kStores) {
            if (!copy_pair_compiled(ld, st)) continue;
            mh::DeviceBuffer<uint32_t> dst(w.words());
            dst.fill_bytes(0xcd);
            launch_copy(w, ld, st, src.data(), dst.data());
            const std::vector<uint32_t> host = dst.download();
            for (uint64_t i = 0; i < host.size(); ++i)
              ASSERT_EQ(host[i], visited[i] ? word_value(i) : 0xcdcdcdcdu)
                  << "word " << i << " w:" << width << " u:" << unroll << " ld:" << load_name(ld) << " st:" << store_name(st);
          }
      }
}

TEST(Roofs, OccupancyApiAnswersForEveryKernel) {
  REQUIRE_GPU();
  for (int width : kWidths)
    for (int unroll : kUnrolls) {
      EXPECT_GE(resident_blocks_per_sm(Kind::read, Load::cg, Store::plain, width, unroll, 256), 1);
      EXPECT_GE(resident_blocks_per_sm(Kind::write, Load::plain, Store::cs, width, unroll, 1024), 1);
      EXPECT_GE(resident_blocks_per_sm(Kind::copy, Load::nc, Store::cs, width, unroll, 512), 1);
    }
}

TEST(Hierarchy, WorkingSetsAreLogSpacedWholeGranulesAscending) {
  const auto ws = mh::hierarchy::working_sets(16 << 10, 480ull << 20, 48, 4096);
  ASSERT_GE(ws.size(), 40u);
  EXPECT_EQ(ws.front(), 16u << 10);
  EXPECT_EQ(ws.back(), 480ull << 20);
  for (size_t i = 1; i < ws.size(); ++i) {
    EXPECT_GT(ws[i], ws[i - 1]);
    EXPECT_EQ(ws[i] % 4096, 0u);
    EXPECT_LT(static_cast<double>(ws[i]) / ws[i - 1], 1.6) << "gap at " << ws[i];
  }
  EXPECT_THROW(mh::hierarchy::working_sets(2, 1, 10, 1), std::invalid_argument);
  EXPECT_THROW(mh::hierarchy::working_sets(1, 2, 1, 1), std::invalid_argument);
}

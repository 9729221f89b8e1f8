// The L2 read roof's access pattern (issue 29): every byte ceiling/read/l2 counts must reach L2 as a
// sector request of its own (no two warps read one sector), and every from-L2 bandwidth launch (the
// roof and the async family) moves the one launch length, roofs::l2_launch_bytes.
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "harness/device_facts.hpp"
#include "harness/registry.cuh"
#include "micro/async_copy.cuh"
#include "micro/roofs.cuh"

namespace {
using namespace mh::roofs;

// The H200 grid of the read kernel: 132 SMs x 8 resident blocks of 256 threads.
constexpr int kH200Blocks = 132 * 8, kThreads = 256;
constexpr uint64_t kH200L2 = 60ull << 20;

TEST(OwnedWalk, NoTwoWarpsReadOneSectorAtH200Size) {
  const Walk w = make_owned_walk(16, 4, kH200Blocks, kThreads, kH200L2 / 8, l2_launch_bytes(kH200L2));
  EXPECT_EQ(w.chunks % w.warps(), 0u);
  EXPECT_EQ(w.working_set_bytes(), 8448ull * 2048);  // one 2 KiB chunk per warp: 16.5 MiB, L2/3.6
  EXPECT_TRUE(w.front);
  EXPECT_EQ(shared_sectors(w, 3), 0u);
  // Two chunks per warp: steps alternate between them, still the warp's own.
  const Walk two = make_owned_walk(16, 8, 132, 128, 132 * 4 * 4096 * 2, 1 << 30);
  EXPECT_EQ(two.chunks, 2 * two.warps());
  EXPECT_EQ(shared_sectors(two, 4), 0u);
}

// What the roof did before: the walk layout at L2/8 has ~4.4 warps per 4 KiB chunk; and a front walk
// whose chunks are not a multiple of the warps hands a chunk to a second warp after the wrap.
TEST(OwnedWalk, TheCheckSeesSharedSectors) {
  const Walk old = make_walk(16, 8, kH200Blocks, kThreads, kH200L2 / 8, 128 * kH200L2);
  EXPECT_GT(shared_sectors(old, 1), old.working_set_bytes() / 32 / 2);
  Walk front = make_walk(16, 2, 4, 64, 9 * 1024, 1 << 20, true);  // 8 warps, 9 chunks
  EXPECT_EQ(shared_sectors(front, 1), 0u);                        // one step: distinct chunks
  EXPECT_GT(shared_sectors(front, 2), 0u);                        // step 2 wraps onto warp 0's chunk
}

TEST(OwnedWalk, RoundsTheWorkingSetToWholeChunksPerWarp) {
  const uint64_t pass = 8 * 2 * 512;  // 8 warps x 1 KiB
  EXPECT_EQ(make_owned_walk(16, 2, 4, 64, pass / 5, 1 << 20).working_set_bytes(), pass);  // at least one
  EXPECT_EQ(make_owned_walk(16, 2, 4, 64, pass * 14 / 10, 1 << 20).working_set_bytes(), pass);
  EXPECT_EQ(make_owned_walk(16, 2, 4, 64, pass * 16 / 10, 1 << 20).working_set_bytes(), 2 * pass);
  const Walk w = make_owned_walk(16, 2, 4, 64, pass, 1 << 20);
  EXPECT_GE(w.bytes_per_launch(), 1u << 20);
  EXPECT_LT(w.bytes_per_launch(), (1u << 20) + pass);
  EXPECT_THROW(make_owned_walk(12, 2, 4, 64, pass, 1 << 20), std::invalid_argument);
}

// access_byte (the sector check's addresses) visits what visited_words (the GPU tests' reference) says.
TEST(OwnedWalk, AccessBytesAreTheVisitedWords) {
  for (const Walk& w : {make_walk(8, 4, 3, 96, 29 * 1024, 200 * 1024), make_walk(8, 4, 3, 96, 29 * 1024, 200 * 1024, true),
                        make_owned_walk(4, 2, 5, 64, 3 * 10 * 256, 77 * 256)}) {
    std::vector<bool> seen(w.words(), false);
    for (uint64_t warp = 0; warp < w.warps(); ++warp)
      for (uint64_t i = 0; i < w.iters; ++i)
        for (uint32_t lane = 0; lane < 32; ++lane)
          for (int j = 0; j < w.unroll; ++j) {
            const uint64_t b = access_byte(w, warp, i, lane, j);
            ASSERT_LT(b, w.working_set_bytes());
            for (int k = 0; k < w.width / 4; ++k) seen[b / 4 + k] = true;
          }
    EXPECT_EQ(seen, visited_words(w));
  }
}

TEST(L2Launch, SixtyFourTimesTheL2) {
  EXPECT_EQ(l2_launch_bytes(kH200L2), 64 * kH200L2);
  EXPECT_EQ(l2_launch_bytes(1), kL2LaunchMultiple);
}

// Records what the ceiling and async families plan for the H200 facts (residency as the facts say).
class Recorder final : public mh::Planner {
 public:
  explicit Recorder(const mh::DeviceFacts& f) : f_(f) {}
  const mh::DeviceFacts& facts() const override { return f_; }
  mh::Residency residency(const mh::Residency& planned, const std::function<mh::Residency()>&) const override { return planned; }
  void add(const std::string& name, const mh::Launch& l, mh::Body) override { added[name] = l; }
  void skip(const std::string&, const std::string&) override {}
  void context(const std::string&, const std::string&) override {}
  std::map<std::string, mh::Launch> added;

 private:
  const mh::DeviceFacts& f_;
};

TEST(L2Launch, TheRoofAndTheAsyncFamilyShareIt) {
  const mh::DeviceFacts h200 = mh::load_device_facts(std::string(MH_DEVICES_DIR) + "/h200.json");
  Recorder p(h200);
  for (const mh::Family& fam : mh::families())
    if (std::string(fam.name) == "ceiling" || std::string(fam.name) == "async") fam.plan(p);
  ASSERT_TRUE(p.added.count("ceiling/read/l2")) << p.added.size();
  ASSERT_TRUE(p.predictions().count("ceiling/read/l2")) << p.predictions().size();
  const double launch = static_cast<double>(l2_launch_bytes(h200.l2_bytes));
  // The roof: bytes / 32 sectors predicted, at least one launch length, at most one pass more.
  const double sectors = p.predictions().at("ceiling/read/l2").at("l2_read_sectors");
  const double ws = static_cast<double>(p.added.at("ceiling/read/l2").device_bytes);
  EXPECT_GE(sectors * 32, launch);
  EXPECT_LT(sectors * 32, launch + ws);
  EXPECT_LE(ws, h200.l2_bytes / 3.0);  // L2-resident with room to spare (16.5 MiB of 60 on an H200)
  int async_l2 = 0;
  for (const auto& [name, l] : p.added) {
    // TMA multicast/unicast (bench_cluster.cu, also family "async") deliver 16 MiB per block per launch; the GEMM
    // tiles (gemm/bench_tma_tiles.cu) stream a GEMM's A and B tiles, one launch per GEMM.
    if (name.rfind("async/", 0) != 0 || name.find("/l2/bandwidth/") == std::string::npos ||
        name.find("/kind:multicast/") != std::string::npos || name.find("/kind:unicast/") != std::string::npos ||
        name.find("/kind:gemm_tiles/") != std::string::npos)
      continue;
    const double bytes = p.predictions().at(name).at("bytes_per_launch");
    EXPECT_GE(bytes, launch) << name;
    EXPECT_LT(bytes, launch + static_cast<double>(l.blocks) * 65536) << name;  // under one tile more per block
    ++async_l2;
  }
  EXPECT_GE(async_l2, 20);
}

// The GEMM-tile stream (gemm/bench_tma_tiles.cu) is planned as kernel 12 runs: the same grid, threads, shared
// memory and, from the facts, blocks per SM (2 on an H200).
TEST(GemmTiles, PlannedAsKernel12) {
  const mh::DeviceFacts h200 = mh::load_device_facts(std::string(MH_DEVICES_DIR) + "/h200.json");
  Recorder p(h200);
  for (const mh::Family& fam : mh::families())
    if (std::string(fam.name) == "async" || std::string(fam.name) == "gemm") fam.plan(p);
  const std::string name = "async/tma/l2/bandwidth/kind:gemm_tiles/m:4096/n:4096/k:4096";
  ASSERT_TRUE(p.added.count(name));
  const mh::Launch& tiles = p.added.at(name);
  const mh::Launch& gemm12 = p.added.at("gemm/wgmma_tma/m:4096/n:4096/k:4096");
  EXPECT_EQ(tiles.blocks, gemm12.blocks);
  EXPECT_EQ(tiles.blocks, 1024);
  EXPECT_EQ(tiles.threads, gemm12.threads);
  EXPECT_EQ(tiles.smem_per_block, gemm12.smem_per_block);
  EXPECT_EQ(tiles.blocks_per_sm, gemm12.blocks_per_sm);
  EXPECT_EQ(tiles.blocks_per_sm, 2);
}

// The host checksum of a whole launch: summed per tile once, the same as block by block.
TEST(AsyncChecksum, PerTileTableMatchesBlockByBlock) {
  using namespace mh::async_copy;
  const Stream s = make_stream(Method::cp_async, 16, 2, 0, Box{}, 40 * kTileBytes, 7, 23);
  const std::vector<uint32_t> all = expected_block_sums(s);
  ASSERT_EQ(all.size(), 7u);
  for (uint32_t b = 0; b < 7; ++b) EXPECT_EQ(all[b], expected_block_sum(s, b)) << b;
  EXPECT_NE(all[0], all[1]);
}

}  // namespace

#include <cstdio>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "harness/device_buffer.cuh"
#include "micro/link.cuh"
#include "model/chase.hpp"

using namespace mh;
using namespace mh::link;

namespace {

// Not multiples of the kernel's per-block chunk (kThreads * kUnroll * 16 B), so the tail loop runs too.
constexpr size_t kSizes[] = {16, 16 * 1001, (size_t{1} << 20) + 48};
constexpr size_t kPool = size_t{4} << 20;

// Two launches (the second overwrites the first) and the check the benchmarks run.
std::string copy_and_check(Path path, Memory host, Method method, int dev, int peer, size_t bytes, uint32_t seed) {
  const std::vector<Leg> legs = make_legs(path, host, dev, peer, bytes, kPool, kPool);
  fill_sources(legs, seed);
  Transfer t(method, legs);
  t();
  t();
  CUDA_CHECK(cudaDeviceSynchronize());
  if (t.bytes_moved() != bytes * legs.size()) return "bytes_moved is wrong";
  return check_destinations(legs, seed);
}

TEST(Link, EveryHostPathAndMethodMovesTheData) {
  REQUIRE_GPU();
  const int dev = current_device_facts().device;
  uint32_t seed = 100;
  for (Path path : {Path::h2d, Path::d2h, Path::bidir})
    for (Memory host : {Memory::pinned, Memory::pageable})
      for (Method m : {Method::ce, Method::ce_split, Method::sm}) {
        if (host == Memory::pageable && m == Method::sm) continue;  // not planned: kernels cannot reach it
        for (size_t bytes : kSizes) {  // ce_split: one chunk at 16 B, four unequal ones above
          SCOPED_TRACE(std::string(path_name(path)) + (host == Memory::pinned ? " pinned " : " pageable ") +
                       method_name(m) + " " + std::to_string(bytes));
          EXPECT_EQ(copy_and_check(path, host, m, dev, -1, bytes, seed += 2), "");
        }
      }
}

// The check must see one wrong word, and say where, or the benchmarks' verification means nothing.
TEST(Link, CheckFindsOneCorruptWord) {
  REQUIRE_GPU();
  const int dev = current_device_facts().device;
  for (Path path : {Path::h2d, Path::d2h}) {
    SCOPED_TRACE(path_name(path));
    const std::vector<Leg> legs = make_legs(path, Memory::pinned, dev, -1, 4096, kPool, kPool);
    fill_sources(legs, 7);
    Transfer t(Method::sm, legs);
    t();
    CUDA_CHECK(cudaDeviceSynchronize());
    ASSERT_EQ(check_destinations(legs, 7), "");
    const uint32_t junk = 0x5a5a5a5a;
    CUDA_CHECK(cudaMemcpy(static_cast<uint32_t*>(legs[0].dst) + 123, &junk, 4, cudaMemcpyDefault));
    const std::string bad = check_destinations(legs, 7);
    EXPECT_NE(bad.find("1 of 1024 words differ, the first at word 123"), std::string::npos) << bad;
    EXPECT_NE(check_destinations(legs, 9), "");  // another seed's data never passes
  }
  std::vector<uint32_t> host(256);
  fill(host.data(), host.size(), 3, Memory::pageable, dev);
  EXPECT_EQ(check(host.data(), host.size(), 3, Memory::pageable, dev).count, 0);
  host[200] ^= 1;
  const Mismatch m = check(host.data(), host.size(), 3, Memory::pageable, dev);
  EXPECT_EQ(m.count, 1);
  EXPECT_EQ(m.first, 200);
  EXPECT_EQ(m.want, pattern(200, 3));
  EXPECT_EQ(m.got, pattern(200, 3) ^ 1);
}

TEST(Link, RejectsBadTransfers) {
  REQUIRE_GPU();
  const int dev = current_device_facts().device;
  EXPECT_THROW(make_legs(Path::peer_uni, Memory::device, dev, dev, 1024, kPool, kPool), std::invalid_argument);
  EXPECT_THROW(make_legs(Path::h2d, Memory::device, dev, -1, 1024, kPool, kPool), std::invalid_argument);
  EXPECT_THROW(make_legs(Path::h2d, Memory::pinned, dev, -1, kPool + 16, kPool, kPool), std::invalid_argument);
  const std::vector<Leg> legs = make_legs(Path::h2d, Memory::pinned, dev, -1, 1024, kPool, kPool);
  std::vector<Leg> odd = legs;
  odd[0].bytes = 1000;
  EXPECT_THROW(Transfer(Method::ce, odd), std::invalid_argument);
  EXPECT_THROW(Transfer(Method::ce, {}), std::invalid_argument);
}

// The chase through mapped pinned memory ends where the host's walk of the same permutation does,
// launch after launch (each continues from the last), and records a span.
void expect_chase_matches_host(uint32_t* chain, const std::vector<uint32_t>& next) {
  DeviceBuffer<uint32_t> state(std::vector<uint32_t>{5});
  DeviceBuffer<ClockSpan> span(1);
  for (int i = 0; i < 3; ++i) launch_chase(chain, 100, state.data(), span.data());
  EXPECT_EQ(state.download()[0], model::walk(next, 5, 300));
  const ClockSpan s = span.download()[0];
  EXPECT_GT(s.cycles, 100);  // at least a cycle per dependent load
  EXPECT_GT(s.ns, 0);
}

std::vector<uint32_t> chain_image(const std::vector<uint32_t>& next) {
  std::vector<uint32_t> img(next.size() * kChaseStrideBytes / 4, 0xffffffffu);
  for (size_t i = 0; i < next.size(); ++i) img[i * kChaseStrideBytes / 4] = next[i];
  return img;
}

TEST(Link, ChaseThroughHostMemoryMatchesHostWalk) {
  REQUIRE_GPU();
  const std::vector<uint32_t> next = model::random_ring(4096, 1), img = chain_image(next);
  uint32_t* chain = nullptr;
  CUDA_CHECK(cudaHostAlloc(&chain, img.size() * 4, cudaHostAllocMapped));
  std::copy(img.begin(), img.end(), chain);
  expect_chase_matches_host(chain, next);
  CUDA_CHECK(cudaFreeHost(chain));
}

TEST(Link, PeerPathsMoveTheDataAndTheChaseMatches) {
  REQUIRE_GPU();
  const int dev = current_device_facts().device;
  std::string why;
  const int peer = peer_device(dev, &why);
  if (peer < 0) GTEST_SKIP() << why;
  uint32_t seed = 500;
  for (Path path : {Path::peer_uni, Path::peer_bidir})
    for (Method m : {Method::ce, Method::ce_split, Method::sm})
      for (size_t bytes : kSizes) {
        SCOPED_TRACE(std::string(path_name(path)) + " " + method_name(m) + " " + std::to_string(bytes));
        EXPECT_EQ(copy_and_check(path, Memory::device, m, dev, peer, bytes, seed += 2), "");
      }
  const std::vector<uint32_t> next = model::random_ring(4096, 2);
  const std::vector<uint32_t> img = chain_image(next);
  uint32_t* chain = nullptr;
  {
    DeviceGuard g(peer);
    CUDA_CHECK(cudaMalloc(&chain, img.size() * 4));
    CUDA_CHECK(cudaMemcpy(chain, img.data(), img.size() * 4, cudaMemcpyHostToDevice));
  }
  expect_chase_matches_host(chain, next);
  CUDA_CHECK(cudaFree(chain));
}

TEST(Link, NvmlReportsAPlausibleLink) {
  REQUIRE_GPU();
  const model::LinkInfo li = link_info(current_device_facts().device);
  if (li.source != "nvml") GTEST_SKIP() << li.source;
  EXPECT_GE(li.pcie_gen_max, 1);
  EXPECT_LE(li.pcie_gen_max, 6);
  EXPECT_GE(li.pcie_gen_max, li.pcie_gen_current);
  EXPECT_TRUE(std::set<int>({1, 2, 4, 8, 16, 32}).count(li.pcie_width_current)) << li.pcie_width_current;
  EXPECT_GT(li.pcie_peak(), 0.0);
  // A per-link rate, when NVML gives one (the speed field, or a version the table knows), is a real one. Seen
  // on a two-H200 VM: 18 active links, the speed field refused, version 6 (NVLink 4.0) from the table. A
  // version outside the table gives no peak: the context then carries nvlink_count and nvlink_version only.
  if (li.nvlink_count > 0 && !li.nvlink_rate_source.empty()) EXPECT_GT(li.nvlink_link_bytes_per_second, 1e9);
  if (li.nvlink_count > 0 && li.nvlink_rate_source.empty())
    std::printf("[ link     ] %d NVLinks active, version %d: no per-link rate from NVML\n", li.nvlink_count, li.nvlink_version);
}

// Host only: the copy grid covers the data with kUnroll loads per thread, at most one wave, split by legs.
TEST(LinkCopy, BlocksCoverTheDataUpToOneWave) {
  DeviceFacts f;
  f.sm_count = 132;
  f.max_threads_per_sm = 2048;
  const long long chunk = static_cast<long long>(kThreads) * kUnroll * 16;
  EXPECT_EQ(copy_blocks(f, 16), 1);
  EXPECT_EQ(copy_blocks(f, chunk), 1);
  EXPECT_EQ(copy_blocks(f, chunk + 16), 2);
  EXPECT_EQ(copy_blocks(f, size_t{1} << 30), 132 * 8);
  EXPECT_EQ(copy_blocks(f, size_t{1} << 30, 2), 132 * 4);
}

}  // namespace

// Global-memory access model: which 32-byte sectors and 128-byte lines a warp's request touches.
// The L1/TEX unit splits one warp-wide load or store into sector requests to L2; this counts them.
#pragma once
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace mh::model {

constexpr int kSectorBytes = 32;
constexpr int kLineBytes = 128;
constexpr int kWarpSize = 32;

struct Footprint {
  int sectors = 0;  // distinct 32-byte sectors touched
  int lines = 0;    // distinct 128-byte lines touched
};

// addrs: the byte address of each active lane; width: bytes each lane accesses (1, 2, 4, 8 or 16).
// Every address must be a multiple of the width: the hardware issues no other access (a misaligned
// one is a misaligned-address error), so an aligned lane never straddles a sector.
inline Footprint global_footprint(const std::vector<uint64_t>& addrs, int width) {
  if (width != 1 && width != 2 && width != 4 && width != 8 && width != 16)
    throw std::invalid_argument("access width must be 1, 2, 4, 8 or 16 bytes");
  for (uint64_t a : addrs)
    if (a % width) throw std::invalid_argument("global address not aligned to the access width");
  // Sort and count distinct: the GEMM model calls this millions of times, a std::set is too slow.
  std::vector<uint64_t> sectors, lines;
  for (uint64_t a : addrs) {
    for (uint64_t s = a / kSectorBytes; s <= (a + width - 1) / kSectorBytes; ++s) sectors.push_back(s);
    for (uint64_t l = a / kLineBytes; l <= (a + width - 1) / kLineBytes; ++l) lines.push_back(l);
  }
  auto distinct = [](std::vector<uint64_t>& v) {
    std::sort(v.begin(), v.end());
    return static_cast<int>(std::unique(v.begin(), v.end()) - v.begin());
  };
  return {distinct(sectors), distinct(lines)};
}

// Lane i at base + i * stride_elems * width (stride 0 is a broadcast).
inline std::vector<uint64_t> strided_addresses(uint64_t base, uint64_t stride_elems, int width, int lanes = kWarpSize) {
  std::vector<uint64_t> a(lanes);
  for (int i = 0; i < lanes; ++i) a[i] = base + static_cast<uint64_t>(i) * stride_elems * width;
  return a;
}

// Sectors per request of the coalescing benchmark's pattern (4-byte elements, 32-byte aligned base
// whenever 32 * stride * 4 is, as every request base is a multiple of 128 * stride bytes).
inline int strided_sectors_per_request(int stride, int width = 4) {
  return global_footprint(strided_addresses(0, stride, width), width).sectors;
}

}  // namespace mh::model

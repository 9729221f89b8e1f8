// Global-memory coalescing: each lane of a warp touches one 4-byte element at base + lane * stride.
// Read and write kernels share one address walk; a plan fixes the working set and the work.
#pragma once
#include <cstdint>
#include <string>

#include "harness/arch.hpp"
#include "harness/cuda_check.cuh"

namespace mh::coalescing {

enum class Level { hbm, l2, l1 };
inline const char* level_name(Level l) { return l == Level::hbm ? "hbm" : l == Level::l2 ? "l2" : "l1"; }

constexpr int kUnroll = 8;       // independent requests in flight per thread
constexpr int kMaxThreads = 256;  // per block; the kernel's __launch_bounds__ fills an SM with such blocks

// The kernel's register cap on an architecture (arch as __CUDA_ARCH__: 900), from its __launch_bounds__.
constexpr int register_cap(int arch) { return arch_register_cap(kMaxThreads, arch_min_blocks(arch, kMaxThreads)); }

// Where a warp's requests go. A "region" is the working set one group of warps walks: the whole
// grid for hbm/l2, each block on its own for l1 (so it stays in that SM's L1). A region holds R
// requests, R a power of two, so that the walk wraps with a mask: warp w's i-th request is
// (w + i * W) mod R, W = warps per group. For hbm, W divides R and each request is made once.
struct Plan {
  Level level = Level::hbm;
  int stride = 1;                    // in 4-byte elements
  int blocks = 0, threads = 0;
  uint32_t requests_per_region = 0;  // R, a power of two
  int iters = 0;                     // requests per warp per launch, a multiple of kUnroll
  bool per_block_region() const { return level == Level::l1; }
  int groups() const { return per_block_region() ? blocks : 1; }
  uint32_t warps_per_group() const { return (per_block_region() ? threads : blocks * threads) / 32; }
  uint64_t region_elems() const { return uint64_t(requests_per_region) * 32 * stride; }
  uint64_t buffer_elems() const { return region_elems() * groups(); }
  uint64_t requests_per_launch() const { return uint64_t(warps_per_group()) * iters * groups(); }
};

// R = the largest power of two with R * 128 * stride <= max_region_bytes; threads a multiple of 32 up to
// kMaxThreads. hbm: iters = R / W (W must
// divide R / kUnroll). l2/l1: `iters` requests per warp, at least enough to cover the region once.
Plan make_plan(Level level, int stride, int blocks, int threads, uint64_t max_region_bytes, int iters);

// The value the write kernel stores at element i, and the read kernel's data.
__host__ __device__ inline uint32_t element_value(uint64_t i) {
  return static_cast<uint32_t>(i) * 2654435761u + static_cast<uint32_t>(i >> 32) + 12345u;
}

// Launches one pass. Read: adds the sum of every loaded value (mod 2^32) to *checksum.
void launch_read(const Plan& p, const uint32_t* buf, uint32_t* checksum, cudaStream_t s = nullptr);
void launch_write(const Plan& p, uint32_t* buf, cudaStream_t s = nullptr);
void fill_values(uint32_t* buf, uint64_t elems, cudaStream_t s = nullptr);

// Host reference: the checksum one read launch must produce, and whether element i is written.
uint32_t expected_read_checksum(const Plan& p);
bool element_touched(const Plan& p, uint64_t i);

}  // namespace mh::coalescing

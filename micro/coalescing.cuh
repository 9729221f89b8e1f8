// Global-memory coalescing: each lane of a warp touches one 4-byte element at base + lane * stride.
// Read and write kernels share one address walk; a plan fixes the working set and the work.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/arch.hpp"
#include "harness/cuda_check.cuh"
#include "harness/device_facts.hpp"

namespace mh::coalescing {

enum class Level { hbm, l2, l1 };
inline const char* level_name(Level l) { return l == Level::hbm ? "hbm" : l == Level::l2 ? "l2" : "l1"; }

// Consecutive requests per warp per step: the accesses in flight per thread. 16 x 4 bytes are the 64
// bytes per thread in flight with which 8-byte x 8 loads came within 2 % of the L2 roof
// (micro/bench_roofs.cu); 8 x 4 bytes would leave half of that (not measured), and a deeper step also
// halves the loop's share of the issue slots.
constexpr int kUnroll = 16;
constexpr int kMaxThreads = 256;  // per block; the kernel's __launch_bounds__ fills an SM with such blocks
// The benchmarked strides (in 4-byte elements; 33: one line per lane, no power of two). Each is compiled
// into its own kernel, so that a step's accesses sit at immediate offsets from one pointer; any other
// stride, and a region of fewer than kUnroll requests, runs a generic kernel with the same request order.
inline constexpr int kStrides[] = {1, 2, 3, 4, 8, 16, 32, 33, 64, 128};

// The kernel's register cap on an architecture (arch as __CUDA_ARCH__: 900), from its __launch_bounds__.
constexpr int register_cap(int arch) { return arch_register_cap(kMaxThreads, arch_min_blocks(arch, kMaxThreads)); }

// Where a warp's requests go. A "region" is the working set one group of warps walks: the whole grid
// for hbm/l2, each block on its own for l1 (so it stays in that SM's L1). A region holds R requests,
// R a power of two, cut into C = R / U chunks of U = min(kUnroll, R) consecutive requests. A warp
// makes its requests a chunk at a time: walker v (of W in its group) makes, for i = 0 .. iters-1,
// request k U + (i mod U) of chunk k = (start(v) + floor(i / U) * step) mod C, where
//   hbm ("front": the grid sweeps the region in order): start(v) = v, v numbered block major,
//     step = W, iters = R / W: each request once per launch. With W = C (make_stream_plan: one chunk per
//     warp, blocks in order, not all resident) it is the one-pass stream that writes HBM fastest.
//   l2/l1 ("walk"): start(v) = floor(v C / W), v numbered warp-in-block major so that the warps of a
//     block (and the blocks of one SM) start far apart, step = 1. Between two visits of a chunk by
//     one warp the group touches about the whole region, so a region that fits the level is served
//     by it. With W and R powers of two (every benchmark plan) each request is made equally often.
struct Plan {
  Level level = Level::hbm;
  int stride = 1;                    // in 4-byte elements
  int blocks = 0, threads = 0;
  uint32_t requests_per_region = 0;  // R, a power of two
  int iters = 0;                     // requests per warp per launch, a multiple of kUnroll
  bool per_block_region() const { return level == Level::l1; }
  bool front() const { return level == Level::hbm; }
  int groups() const { return per_block_region() ? blocks : 1; }
  uint32_t warps_per_group() const { return (per_block_region() ? threads : blocks * threads) / 32; }
  uint32_t chunk_requests() const { return std::min<uint32_t>(kUnroll, requests_per_region); }  // U
  uint32_t chunks() const { return requests_per_region / chunk_requests(); }                     // C
  uint32_t start_chunk(uint32_t v) const {
    return front() ? v % chunks() : static_cast<uint32_t>(uint64_t(v) * chunks() / warps_per_group());
  }
  uint32_t step_chunks() const { return (front() ? warps_per_group() : 1u) % chunks(); }
  // The i-th request walker v of a group makes, 0 .. R-1.
  uint32_t request(uint32_t v, uint32_t i) const {
    const uint32_t U = chunk_requests();
    return static_cast<uint32_t>((start_chunk(v) + uint64_t(i / U) * step_chunks()) % chunks()) * U + i % U;
  }
  uint64_t region_elems() const { return uint64_t(requests_per_region) * 32 * stride; }
  uint64_t buffer_elems() const { return region_elems() * groups(); }
  uint64_t requests_per_launch() const { return uint64_t(warps_per_group()) * iters * groups(); }
};

// R = the largest power of two with R * 128 * stride <= max_region_bytes; threads a multiple of 32 up to
// kMaxThreads. hbm: iters = R / W (W must divide R / kUnroll). l2/l1: `iters` requests per warp,
// rounded up to a multiple of kUnroll, at least enough that the walk covers the region once.
// Throws std::invalid_argument on a shape it cannot run.
Plan make_plan(Level level, int stride, int blocks, int threads, uint64_t max_region_bytes, int iters);
// The hbm plan with one warp per chunk (W = C): a launch covers the region once, blocks in order.
Plan make_stream_plan(int stride, int threads, uint64_t max_region_bytes);

// Whether the plan runs a kernel compiled for its stride (else the generic one).
bool compiled_stride(const Plan& p);

// The value the write kernel stores at element i, and the read kernel's data. The kernels compute
// element indices mod 2^32; make_plan keeps every buffer under 2^32 elements, so both sides agree.
__host__ __device__ inline uint32_t element_value(uint64_t i) {
  return static_cast<uint32_t>(i) * 2654435761u + static_cast<uint32_t>(i >> 32) + 12345u;
}

// Launches one pass. Read: adds the sum of every loaded value (mod 2^32) to *checksum.
// Registers and resident blocks of kMaxThreads per SM of the kernels launch_read / launch_write may pick
// for (write, level, stride): the stride's own and the generic one (a plan whose regions are too short for
// the unrolled loop takes it), the most registers and the fewest blocks of the two. On the current device.
Residency strided_residency(bool write, Level level, int stride);
void launch_read(const Plan& p, const uint32_t* buf, uint32_t* checksum, cudaStream_t s = nullptr);
void launch_write(const Plan& p, uint32_t* buf, cudaStream_t s = nullptr);
void fill_values(uint32_t* buf, uint64_t elems, cudaStream_t s = nullptr);

// Host references, following the request order above: the checksum one read launch must produce,
// how often one launch makes each request of each group (groups x R counts), and whether element i
// is written.
uint32_t expected_read_checksum(const Plan& p);
std::vector<uint32_t> request_counts(const Plan& p);
std::vector<bool> touched_elements(const Plan& p);

}  // namespace mh::coalescing

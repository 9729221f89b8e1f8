// The L1TEX rate of a mix of global loads that L1 partly misses: per warp step, one broadcast load (every lane
// the same 4 bytes of the warp's own stream, 4 bytes further each step: a new sector every 8 steps, a new line
// every 32) and one coalesced row load (128 consecutive bytes of a stream the block's warps share, one line
// further each step). That is the request mix of GEMM loops that read their operands straight from global
// memory (gemm/2_coalesced.cuh), without their FFMA, stores or index maps; the measured rate is what the GEMM
// time model (gpubench/analysis/predict.py) charges their L1TEX requests at, by the level the misses come from:
//   l1:  each block walks its own data set, small enough to stay in L1 (no misses after the first pass);
//   l2:  the blocks share a few data sets that fit in L2: L1 misses hit L2;
//   hbm: every tile its own data set, L2 flushed, more than 4x L2 in all: L1 misses go to HBM;
//   split: the broadcast streams as hbm's (every tile its own, 4x L2 of them), the rows as l2's (a few sets the
//        tiles share): the levels kernel 2's operands come from at 4096^3 (A from DRAM, B from L2; model/
//        gemm_model.hpp tile_reuse). Its rate checks the time model's additive rule: a request costs the
//        time of its own level's mix, 1 / rate = (1 / rate_hbm + 1 / rate_l2) / 2 (docs/families/issue.md).
// A resident grid walks `tiles` tiles (block b: tiles b, b + grid, ...); tile t reads its broadcast streams from
// data set t % sets and its rows from set t % row_sets (row_sets = sets but for split). A loop
// trip issues kUnroll steps' loads before any add: 32 requests in flight per warp, 2048 per SM of 64 warps,
// as nvcc's 16-fold unroll of kernel 2's k loop has, so that requests x latency does not cap the rate here
// where it does not there (docs/families/issue.md).
#pragma once
#include <cstdint>

#include "harness/cuda_check.cuh"
#include "harness/device_facts.hpp"

namespace mh::load_mix {

enum class Source { l1, l2, hbm, split };
inline const char* source_name(Source s) {
  return s == Source::l1 ? "l1" : s == Source::l2 ? "l2" : s == Source::hbm ? "hbm" : "split";
}
// Sources whose broadcast streams come from HBM: L2 flushed before every sample.
inline bool from_hbm(Source s) { return s == Source::hbm || s == Source::split; }

constexpr int kThreads = 1024;   // 32 warps share a row stream, as a 32 x 32 tile of kernel 2 does
constexpr int kUnroll = 16;      // steps per loop trip (steps is a multiple): 32 loads in flight per warp
constexpr int kRowElems = 32;    // 4-byte elements per row load: one 128-byte line

// One data set of len steps, in 4-byte elements: each warp's broadcast stream (len elements), then the len rows
// of kRowElems the block's warps share. The kernel's loads and the host reference both index it by these.
__host__ __device__ inline uint64_t set_elems(uint32_t len) { return uint64_t(len) * (kThreads / 32 + kRowElems); }
__host__ __device__ inline uint64_t bcast_elem(uint32_t len, uint32_t warp, uint32_t i) { return uint64_t(warp) * len + i; }
__host__ __device__ inline uint64_t row_elem(uint32_t len, uint32_t i, uint32_t lane) {
  return uint64_t(kThreads / 32) * len + uint64_t(i) * kRowElems + lane;
}

struct Plan {
  Source source = Source::l1;
  int blocks = 0;        // resident grid
  uint32_t tiles = 0;    // tiles per launch
  uint32_t sets = 0;     // distinct data sets (tile t reads its broadcast streams from set t % sets)
  uint32_t row_sets = 0; // the sets whose rows are read (tile t: set t % row_sets), <= sets; 0: sets
  uint32_t len = 0;      // steps of one stream (a power of two): the walk wraps at len
  uint32_t steps = 0;    // steps per tile (a multiple of kUnroll)
  static constexpr int warps() { return kThreads / 32; }
  uint64_t set_elems() const { return load_mix::set_elems(len); }
  uint64_t buffer_elems() const { return set_elems() * sets; }
  uint32_t row_set_count() const { return row_sets ? row_sets : sets; }
  // Warp requests (load instructions) per launch: two per warp step.
  uint64_t requests_per_launch() const { return 2ull * warps() * steps * tiles; }
  // Sectors per request (what ncu's l1tex sectors / requests must show): a broadcast 1, a row kRowElems x 4 / 32.
  static constexpr double sectors_per_request() { return (1.0 + kRowElems * 4 / 32) / 2; }
};

// The plan for a device: l1 fits `blocks_per_sm` blocks' sets in 3/4 of the SM's L1; l2 keeps all sets within
// L2 / 4; hbm walks at least 4x L2 of distinct sets; split at least 4x L2 of broadcast streams and l2's rows. Throws std::invalid_argument when blocks_per_sm < 1.
Plan make_plan(Source source, const DeviceFacts& f, int blocks_per_sm);

// Resident blocks of kThreads per SM of the compiled kernel (occupancy API; needs a GPU).
Residency compiled();
// Fills the data sets (coalescing::element_value of each index) and launches one pass; adds the sum of every
// loaded value (mod 2^32) to *checksum.
void fill(uint32_t* buf, uint64_t elems, cudaStream_t s = nullptr);
void launch(const Plan& p, const uint32_t* buf, uint32_t* checksum, cudaStream_t s = nullptr);
// The host reference of one launch's checksum.
uint32_t expected_checksum(const Plan& p);

}  // namespace mh::load_mix

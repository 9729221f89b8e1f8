// Shared-memory bank conflicts: cost by stride, padding, access width and swizzle.
//
// Definitions (the patterns are model::SmemPattern; the wavefront model is model/bank_model.hpp):
//   width W   bytes one lane accesses: 4 (u32, LDS), 8 (v2.u32, LDS.64) or 16 (v4.u32, LDS.128).
//   stride S  in elements of W bytes: lane i accesses logical element i * S, so stride 1 is contiguous
//             at every width and stride 0 is a broadcast (every lane the same element).
//   pad P     the array is a tile of 128-byte rows (epr = 128 / W elements per row); element e sits at
//             row e / epr, column e % epr, and physically at element row * (epr + P) + col. P counts
//             elements of W bytes: 1 word per 32-word row at W=4 (as GEMM tiles pad), 16 bytes at W=16
//             (keeps vector alignment).
//   swizzle   the same tile unpadded, physical column = col XOR (row mod epr).
//
// Forms and counters (every entry also has conflict_ways = the model's wavefronts per warp request,
// W / 4 when conflict-free):
//   latency           one warp chases a chain idx = smem[idx] (each lane's slot holds its own address),
//                     kLatencySteps dependent requests timed by clock64 after one untimed first load:
//                     cycles_per_access = cycles / kLatencySteps.
//   throughput,       every SM full of warps issuing independent requests (8 per loop iteration, request
//   store_throughput  j at the pattern shifted by j elements: a uniform shift permutes the banks and keeps
//                     the wavefronts). bytes_per_second counts useful bytes = requests * 32 lanes * W,
//                     a broadcast lane's W bytes too. cycles_per_request = the launch's event time x
//                     sm_clock_mhz / warp requests per SM, where sm_clock_mhz is the SM clock seen over
//                     the loop (clock64 against %globaltimer); warps_per_sm = resident warps.
#pragma once
#include <cstdint>
#include <vector>

#include "harness/arch.hpp"
#include "harness/device_info.cuh"
#include "model/bank_model.hpp"

namespace mh::smem_banks {

constexpr int kThreads = 1024;        // throughput block: 32 warps; sm_count x resident blocks fill every SM
constexpr int kAccessesPerIter = 8;   // independent requests per warp per loop iteration
constexpr int kLatencySteps = 4096;   // timed dependent loads of the latency chain (a multiple of 8)

// __launch_bounds__ minimum blocks of each throughput kernel (arch as __CUDA_ARCH__: 900): an SM full of
// blocks for 4- and 8-byte accesses (a 32-register cap on sm_80/sm_90). The 16-byte kernels ask for none
// (0: ptxas's own allocation under the 64-register cap of 1024 threads): a 32-register cap rewrites
// load_kernel<16>'s code on sm_90, and store_kernel<16> keeps 8 x 4 words in registers (43 on sm_90).
constexpr int min_blocks(int arch, int width) { return width == 16 ? 0 : arch_min_blocks(arch, kThreads); }
// The registers per thread a plan assumes: the cap where there is one; for the 16-byte kernels what
// nvcc 13.0 allocates on sm_90 (--resource-usage: load 32, store 43, so the cap 64). The occupancy API
// checks the plan at run time, and a benchmark whose plan it contradicts is skipped.
constexpr int planned_registers(int arch, bool store, int width) {
  return width == 16 ? (store ? 64 : 32) : arch_register_cap(kThreads, min_blocks(arch, width));
}

// Throughput launch: `blocks` blocks of kThreads, each warp issuing iters * kAccessesPerIter requests.
struct Plan {
  model::SmemPattern pattern;
  int blocks = 1;
  int iters = 1;
  uint64_t warps() const { return static_cast<uint64_t>(blocks) * kThreads / 32; }
  uint64_t requests() const { return warps() * iters * kAccessesPerIter; }
};

struct LatencyResult {
  long long cycles;           // clock64 cycles of the kLatencySteps timed loads
  uint32_t final_offset[32];  // each lane's index at the end of the chain, bytes from the tile start
};

// Word w of a load table holds word_value(w); the store kernel writes stored_value(w, salt) to word w.
__host__ __device__ inline uint32_t word_value(uint32_t w) { return w * 2654435761u + 12345u; }
__host__ __device__ inline uint32_t stored_value(uint32_t w, uint32_t salt) { return word_value(w) ^ salt; }

// Dynamic shared memory of one block (the tile the pattern spans, plus the 7 shifted copies).
uint32_t table_bytes(const model::SmemPattern& p);
// The throughput kernel (load or store) of the pattern's access width, for the occupancy API.
const void* throughput_kernel(const model::SmemPattern& p, bool store);
// Blocks of kThreads resident per SM by the occupancy API (the GPU's own answer; the plans compute the
// same from device facts): a grid of sm_count times this is all resident, evenly spread.
int resident_blocks_per_sm(const model::SmemPattern& p, bool store);

// Load throughput: warp_sums[w] = warp w's sum (mod 2^32) of every word it loaded; spans[b] = block b's loop.
// (A sum, not an XOR: XOR cancels the identical values of repeated iterations and broadcast lanes.)
void launch_load(const Plan& p, uint32_t* warp_sums, ClockSpan* spans, cudaStream_t s = nullptr);
// Store throughput: then each block copies its tile (table_bytes) to tiles + block * table_bytes / 4.
void launch_store(const Plan& p, uint32_t salt, uint32_t* tiles, ClockSpan* spans, cudaStream_t s = nullptr);
// Latency: one warp chases its own slots; out->final_offset[i] must equal lane i's pattern address.
void launch_latency(const model::SmemPattern& p, LatencyResult* out, cudaStream_t s = nullptr);

// Words one warp touches per loop iteration, with multiplicity (32 lanes x 8 shifts x W / 4 words).
std::vector<uint32_t> words_per_iteration(const model::SmemPattern& p);
uint32_t expected_warp_sum(const Plan& p);

}  // namespace mh::smem_banks

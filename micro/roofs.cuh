// Bandwidth roofs: the most each memory level delivers, read, written and copied.
//
// One access pattern serves every level and the hierarchy sweep: a "walk". Each warp is a walker that
// reads (writes, copies) one chunk per step, a chunk being 32 lanes x `unroll` accesses of `width`
// bytes, lane l's j-th access at byte (l + 32 j) * width of the chunk: compile-time offsets from one
// pointer, so the loop is loads plus a pointer bump. Two layouts of the R chunks of the working set:
//   walk (default): walker v starts at chunk floor(v R / W) and steps one chunk at a time, wrapping
//     at R. Between two visits of a chunk by one SM, that SM touches about the whole working set, and
//     so does the grid between two visits by anyone: a working set that fits a level is served by it.
//     Walkers are numbered warp-in-block major, so that the warps of one block, and the blocks the
//     scheduler puts on one SM, start far apart.
//   front: walker v (block major) starts at chunk v and steps W chunks (grid-stride): the grid sweeps
//     one front of W contiguous chunks at a time, the order a streaming kernel uses. With a grid of
//     one warp per chunk and one step (Config::stream) it is the classic one-element-per-thread
//     stream kernel, blocks scheduled in order over the buffer.
//   owned (make_owned_walk): the front layout over a whole number m of chunks per warp, so that warp v
//     reads only chunks v, v + W, ... (c mod W = v): no sector is read by two warps, ever, so no request
//     can merge with another warp's before L2 (the walk layout's warps share chunks whenever the working
//     set has fewer chunks than the grid has warps, and ncu then counts fewer L2 sectors than bytes).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/cuda_check.cuh"

namespace mh::roofs {

// Cache operators of the PTX ld/st instructions (the CUDA __ldcg/__ldcs/__ldg/__stcg/__stcs intrinsics).
enum class Load { plain, cg, cs, nc };  // ld.global (caches in L1), .cg (L2 only), .cs (evict first), .nc
enum class Store { plain, cg, cs };     // st.global (write-back), .cg (L2), .cs (evict first)
const char* load_name(Load op);
const char* store_name(Store op);

struct Walk {
  int width = 16;      // bytes per access: 4, 8 or 16 (one 32-, 64- or 128-bit instruction)
  int unroll = 8;      // accesses in flight per thread: 1, 2, 4 or 8
  int blocks = 0, threads = 0;
  uint64_t chunks = 0;  // R: the working set in chunks
  uint32_t iters = 0;   // chunks each warp visits per launch
  bool front = false;   // layout: walk (false) or front (true)

  uint64_t chunk_bytes() const { return 32ull * unroll * width; }
  uint64_t warps() const { return uint64_t(blocks) * threads / 32; }
  uint64_t start_chunk(uint64_t walker) const { return front ? walker % chunks : walker * chunks / warps(); }
  uint64_t step_chunks() const { return (front ? warps() : 1) % chunks; }
  uint64_t working_set_bytes() const { return chunks * chunk_bytes(); }
  uint64_t words() const { return working_set_bytes() / 4; }
  uint64_t bytes_per_launch() const { return warps() * iters * chunk_bytes(); }  // per direction for a copy
};

// The working set rounded down to whole chunks (at least one), and iters = the fewest steps that move
// at least bytes_per_launch (at least one). Throws std::invalid_argument on a shape it cannot run.
Walk make_walk(int width, int unroll, int blocks, int threads, uint64_t ws_bytes, uint64_t bytes_per_launch,
               bool front = false);

// The front layout over round(ws_bytes / (warps x chunk)) >= 1 chunks per warp (the owned layout above).
Walk make_owned_walk(int width, int unroll, int blocks, int threads, uint64_t ws_bytes, uint64_t bytes_per_launch);

// The byte offset (in the working set) of lane `lane`'s j-th access at step `step` of warp `warp`
// (block major: warp = block x threads/32 + warp in block), as the kernels compute it.
uint64_t access_byte(const Walk& w, uint64_t warp, uint64_t step, uint32_t lane, int j);
// Sectors (32 B) that two or more warps read in the first min(steps, w.iters) steps of every warp:
// requests that may merge before L2. 0 for an owned walk.
uint64_t shared_sectors(const Walk& w, uint64_t steps);

// Bytes per launch of every bandwidth benchmark that reads L2 repeatedly (ceiling/read|write/l2 and the
// async family from L2): 64 x L2. A launch has a fixed cost of ramp and tail (blocks starting and the
// last ones draining, ~7 us on an H200 by tools/experiments/async_l2_order.cu: 4 x L2 per launch ran
// 15-26 % slower than 32 x L2); at 64 x L2 (~0.4 ms at 9-11 TB/s) that is under 2 % of the launch.
constexpr uint64_t kL2LaunchMultiple = 64;
inline uint64_t l2_launch_bytes(uint64_t l2_bytes) { return kL2LaunchMultiple * l2_bytes; }

// The widths and unrolls the kernels are compiled for.
inline constexpr int kWidths[] = {4, 8, 16};
inline constexpr int kUnrolls[] = {1, 2, 4, 8};

// The 32-bit word at index i of every buffer: the fill, and what the write kernel stores.
__host__ __device__ inline uint32_t word_value(uint64_t i) {
  return static_cast<uint32_t>(i) * 2654435761u + static_cast<uint32_t>(i >> 32) + 0x9e3779b9u;
}
void fill_values(uint32_t* buf, uint64_t words, cudaStream_t s = nullptr);

// One launch each. Read adds the sum (mod 2^32) of every word it loads to *checksum; write stores
// word_value(i) at every word i it visits; copy copies the words it visits from src to dst.
void launch_read(const Walk& w, Load op, const uint32_t* buf, uint32_t* checksum, cudaStream_t s = nullptr);
void launch_write(const Walk& w, Store op, uint32_t* buf, cudaStream_t s = nullptr);
void launch_copy(const Walk& w, Load ld, Store st, const uint32_t* src, uint32_t* dst, cudaStream_t s = nullptr);
// The copy kernel is compiled for these (load, store) pairs only.
bool copy_pair_compiled(Load ld, Store st);

// Blocks of `threads` threads the occupancy API lets reside on one SM for that kernel.
enum class Kind { read, write, copy };
int resident_blocks_per_sm(Kind kind, Load ld, Store st, int width, int unroll, int threads);

// Host references: the checksum one read launch of `w` over word_value data produces, and whether a
// write/copy launch visits word i.
uint32_t expected_read_checksum(const Walk& w);
std::vector<bool> visited_words(const Walk& w);

// ---- Benchmark side (bench_roofs.cu), shared with the hierarchy family ----------------------------

// One benchmark's kernel and grid. blocks_per_sm 0: as many as the occupancy API lets reside, divided
// by occupancy_div.
struct Config {
  Kind kind = Kind::read;
  Load ld = Load::plain;
  Store st = Store::plain;
  int width = 16, unroll = 8, threads = 256;
  int blocks_per_sm = 0;
  int occupancy_div = 1;
  bool front = false;
  bool stream = false;  // front layout, one step, a grid of one warp per chunk (not all resident)
  bool owned = false;   // make_owned_walk: each warp reads only its own chunks (front layout)
  std::string describe() const;  // "read ld:plain w:16 u:8 t:256"
};


}  // namespace mh::roofs

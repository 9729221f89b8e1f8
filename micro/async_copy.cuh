// Asynchronous global->shared copies: cp.async (sm_80+), TMA bulk 1-D copies and TMA 2-D tensor tiles
// (sm_90+), beside the plain ld.global + st.shared staging they replace.
//
// Bandwidth ("stream"): every block walks its share of tiles through a ring of S shared-memory stages and
// consumes each tile (sums its 32-bit words); block b's k-th tile is tile (b + k * blocks) mod count, so
// at step k the grid reads one contiguous front of tiles. Each block writes the sum (mod 2^32) of every
// word it consumed: the checksum the host reproduces in closed form (expected_block_sum).
// Latency: one warp, one copy at a time, clock64 from issue to completion (cp.async.wait_group, mbarrier
// try_wait, or the loaded registers' use), then the copied words summed outside the timed span.
//
// The source is roofs::fill_values data (word i holds roofs::word_value(i)).
#pragma once
#include <cuda.h>  // CUtensorMap and its enums only: the driver function is reached at run time

#include <cstdint>
#include <string>
#include <vector>

#include "harness/arch.hpp"
#include "harness/cuda_check.cuh"
#include "harness/device_facts.hpp"

namespace mh::async_copy {

enum class Method { ld_st, cp_async, bulk, tensor };
const char* method_name(Method m);
// The architecture a method needs (as __CUDA_ARCH__ writes it): 0, 800 or 900.
int method_min_arch(Method m);

constexpr int kThreads = 256;       // per stream block
constexpr int kMinBlocks = 4;       // __launch_bounds__ minimum: register cap 64 (the kernels need ~40)
constexpr int kLatencyThreads = 32;  // one warp
constexpr uint32_t kTileBytes = 16384;  // ld_st and cp_async tiles: 4 x 16 B per thread, 16 x 4 B
inline constexpr int register_cap() { return arch_register_cap(kThreads, kMinBlocks); }

// Tiles of a working set: `rows` rows of `row_bytes`, rows `pitch_bytes` apart in global memory;
// `tiles_per_row` tiles side by side in one global row. 1-D tiles: rows 1, pitch = row_bytes
// (or more, to space latency copies apart), tiles_per_row 1.
struct Tiles {
  uint64_t pitch_bytes = 0;
  uint32_t row_bytes = 0;
  uint32_t rows = 1;
  uint32_t tiles_per_row = 1;
  uint64_t count = 0;  // a multiple of tiles_per_row

  __host__ __device__ uint64_t tile_bytes() const { return uint64_t(row_bytes) * rows; }
  __host__ __device__ uint64_t origin(uint64_t t) const {
    return (t / tiles_per_row) * rows * pitch_bytes + (t % tiles_per_row) * uint64_t(row_bytes);
  }
  uint64_t working_set_bytes() const { return count / tiles_per_row * rows * pitch_bytes; }
};

// A TMA 2-D box: `inner` elements (the contiguous dimension) by `rows`, elements of elem_bytes (2 or 4),
// shared-memory swizzle 0 (none), 32, 64 or 128 bytes.
struct Box {
  uint32_t inner = 64, rows = 64, elem_bytes = 2, swizzle = 0;
  uint32_t row_bytes() const { return inner * elem_bytes; }
  uint32_t bytes() const { return row_bytes() * rows; }
  std::string name() const;  // "elem:2/box:64x64/swizzle:128"
};
// Empty when TMA can copy the box (each dimension 1..256, inner bytes a multiple of 16, a swizzled inner
// row no wider than the swizzle span); else why not.
std::string box_problem(const Box& b);
// The 2-D tiles of boxes over a working set of about ws_bytes with rows of kTensorPitch bytes.
constexpr uint64_t kTensorPitch = 8192;
Tiles box_tiles(const Box& b, uint64_t ws_bytes);

// One bandwidth configuration.
struct Stream {
  Method method = Method::ld_st;
  int width = 16;           // cp_async: bytes per instruction (4, 8, 16); ld_st: 16
  int stages = 1;           // cp_async: 1, 2 or 4; bulk/tensor: from stages_for(); ld_st: 1
  uint32_t copy_bytes = 0;  // bulk: bytes per cp.async.bulk (a multiple of 16)
  Box box;                  // tensor
  Tiles tiles;
  int blocks = 0;
  uint32_t tiles_per_block = 0;

  uint64_t bytes_per_launch() const { return uint64_t(blocks) * tiles_per_block * tiles.tile_bytes(); }
  size_t smem_bytes() const;  // dynamic shared memory per block: stages, barriers, alignment slack
};
// Stages of a bulk/tensor ring of `tile_bytes` tiles: 4 up to 16 KiB, else 2.
inline int stages_for(uint64_t tile_bytes) { return tile_bytes <= 16384 ? 4 : 2; }
// A stream of `method` over a working set of about ws_bytes (rounded down to whole tiles, at least
// `blocks` tiles), each block consuming tiles_per_block tiles per launch. Throws std::invalid_argument
// for a shape the kernels do not run.
Stream make_stream(Method method, int width, int stages, uint32_t copy_bytes, const Box& box, uint64_t ws_bytes,
                   int blocks, uint32_t tiles_per_block);

// The block's k-th tile: one formula for kernels and host reference.
__host__ __device__ inline uint64_t tile_of(const Tiles& t, int blocks, uint32_t block, uint32_t k) {
  return (block + uint64_t(k) * blocks) % t.count;
}

// A tensor map over `src` for the tiles of `box` (cuTensorMapEncodeTiled, reached through
// cudaGetDriverEntryPointByVersion: libcuda is never linked). Throws mh::CudaError with the reason.
CUtensorMap make_tensor_map(const void* src, const Box& box, const Tiles& tiles);

// Whether this build has `m`'s kernel as code for the current device's architecture or one it can run
// (cudaFuncAttributes::ptxVersion >= method_min_arch / 10): JIT from older PTX compiles the method out.
bool method_compiled(Method m);

// One launch of the stream: sums[block] = that block's checksum; *timeouts counts mbarrier waits that
// gave up (bounded waits: a copy that never completes ends the wait instead of hanging; the checksum is
// then wrong). `map` is used by tensor only. Resident blocks per SM of the compiled kernel:
void launch_stream(const Stream& s, const uint32_t* src, const CUtensorMap* map, uint32_t* sums, uint32_t* timeouts,
                   cudaStream_t st = nullptr);
Residency stream_residency(const Stream& s);

// One latency configuration: one warp copies `copies` tiles one at a time, tile (first + i) mod count.
struct Latency {
  Method method = Method::ld_st;
  Tiles tiles;  // 1-D: row_bytes = bytes per copy (16, 1024, 4096, 8192 for ld_st), pitch >= 4 KiB
  Box box;      // tensor
  uint32_t copies = 32;
};
constexpr uint32_t kMaxLatencyBytes = 16384;  // the latency kernel's staging area
constexpr size_t kLatencySmem = kMaxLatencyBytes + 8 + 1024;  // + its mbarrier + 1 KiB alignment slack
// ld_st latency handles these sizes (a warp's 16-byte loads all in flight at once).
bool ld_latency_size(uint32_t bytes);
// cycles[i]: clock64 span of copy i; *sum: every copied word summed; *timeouts as above; first_copy (when
// not null): the shared-memory image of copy 0, tile_bytes of it, as it landed (the swizzle test reads it).
void launch_latency(const Latency& l, const uint32_t* src, uint64_t first, const CUtensorMap* map, long long* cycles,
                    uint32_t* sum, uint32_t* timeouts, uint32_t* first_copy = nullptr, cudaStream_t st = nullptr);

// Where TMA puts the byte at `offset` of a box (row-major, rows of Box::row_bytes) in a 1 KiB-aligned stage
// under swizzle 32, 64 or 128 (0: nowhere else): the 16-byte chunk bits [4, 4 + b) XOR the bits [7, 7 + b),
// b = 1, 2, 3 — the 128-byte swizzle puts chunk c of 128-byte row r at chunk c ^ (r mod 8).
__host__ __device__ inline uint32_t swizzled_offset(uint32_t offset, uint32_t swizzle) {
  const uint32_t b = swizzle == 32 ? 1 : swizzle == 64 ? 2 : swizzle == 128 ? 3 : 0;
  return offset ^ (((offset >> 7) & ((1u << b) - 1)) << 4);
}

// Host references over roofs::word_value data: the sum (mod 2^32) of words [first, first + n), in
// closed form; of one tile; of what block b consumes in one launch; of one latency launch.
uint32_t word_range_sum(uint64_t first, uint64_t n);
uint32_t tile_sum(const Tiles& t, uint64_t tile);
uint32_t expected_block_sum(const Stream& s, uint32_t block);
// Every block's expected_block_sum, each tile summed once: an L2 launch reads each tile hundreds of times.
std::vector<uint32_t> expected_block_sums(const Stream& s);
uint32_t expected_latency_sum(const Latency& l, uint64_t first);

}  // namespace mh::async_copy

// Barrier cost: every thread runs a dependent IMAD chain with a barrier after each short piece of it.
// One barrier costs (time with barriers - time of the same loop without them) / barriers.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "harness/device_info.cuh"

namespace mh::sync {

// none: the baseline, the same loop with no barrier. named: `bar.sync id, count` where each half of
// the block's warps has its own barrier (ids 1 and 2, count T/2); at T = 32 the whole warp, id 1.
enum class Kind { none, syncthreads, syncwarp, named };
inline const char* kind_name(Kind k) {
  return k == Kind::none ? "none" : k == Kind::syncthreads ? "syncthreads" : k == Kind::syncwarp ? "syncwarp" : "named_barrier";
}

constexpr int kChain = 2;    // dependent IMADs before each barrier: the next piece needs the value from before it
constexpr int kPerStep = 4;  // barriers per loop step, unrolled; even, for the exchange's two buffers
constexpr int kRegisterCap = 32;  // __maxnreg__: registers never cap residency below 2048 threads per SM

// The benchmark's shapes: threads per block and resident blocks per SM, T * B <= 2048 (no architecture
// the suite builds for holds more threads per SM). Whether one can be resident on a device is
// shape_unfit_reason()'s answer (T * B <= 1536 on sm_86/89/120, 1024 on sm_75).
struct Shape {
  int threads, blocks_per_sm;
};
inline std::vector<Shape> bench_shapes() {
  std::vector<Shape> s;
  for (int t : {32, 64, 128, 256, 512, 1024})
    for (int b : {1, 2, 4})
      if (t * b <= 2048) s.push_back({t, b});
  return s;
}

struct Config {
  Kind kind = Kind::none;
  int threads = 0, blocks_per_sm = 0;
  int blocks = 0;         // blocks_per_sm * SMs: one wave, every block resident at once
  size_t smem_bytes = 0;  // dynamic shared memory per block, sized so that only blocks_per_sm fit
  int steps = 0;
  bool exchange = false;  // after each barrier, read a value another warp wrote before it (test variant)
  long long barriers() const { return static_cast<long long>(steps) * kPerStep; }  // per thread per launch
};

// Threads that one barrier of `kind` joins.
__host__ __device__ inline int group_size(Kind kind, int threads) {
  if (kind == Kind::syncwarp) return 32;
  if (kind == Kind::named) return threads > 32 ? threads / 2 : 32;
  return threads;
}
// In the exchange variant, thread tid reads the value of the thread half its group away: another
// warp where the group spans several warps, else lane ^ 16.
__host__ __device__ inline int exchange_partner(Kind kind, int tid, int threads) {
  const int g = group_size(kind, threads);
  return tid / g * g + (tid % g + g / 2) % g;
}

// x -> x * x + c with c odd has no fixed point (x * x - x is even), and unlike an affine step the
// compiler cannot fold k steps into one.
__host__ __device__ inline uint32_t chain_link(uint32_t x) { return x * x + 0x9E3779B9u; }
__host__ __device__ inline uint32_t chain_start(uint32_t global_tid) { return global_tid * 2654435761u + 1u; }

// Shared memory per block from the device facts (host only: no CUDA call); throws std::invalid_argument
// on a bad shape or one that leaves too little shared memory per block. Without facts: the current device's.
Config make_config(const DeviceFacts& f, Kind kind, int threads, int blocks_per_sm, int steps, bool exchange = false);
Config make_config(Kind kind, int threads, int blocks_per_sm, int steps, bool exchange = false);
// What the device is asked for by a config: B blocks per SM of T threads, its shared memory, 32 registers.
Launch launch_of(const Config& c);
// Empty when the shape can be resident on `f` (make_config accepts it and check_launch its launch); else
// why not, in one line.
std::string shape_unfit_reason(const DeviceFacts& f, const Shape& s);
// Blocks of this config's kernel that fit on one SM, from the occupancy API.
int resident_blocks_per_sm(const Config& c);
// out: blocks * threads chain values; spans: blocks entries, thread 0's clock64/globaltimer span.
void launch(const Config& c, uint32_t* out, ClockSpan* spans, cudaStream_t s = nullptr);
// Host reference for `out`.
std::vector<uint32_t> expected_out(const Config& c);

}  // namespace mh::sync

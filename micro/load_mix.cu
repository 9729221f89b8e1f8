#include "micro/load_mix.cuh"

#include <algorithm>
#include <stdexcept>

#include "harness/arch.hpp"
#include "harness/device_info.cuh"
#include "micro/coalescing.cuh"

namespace mh::load_mix {
namespace {

struct Args {
  uint32_t tiles, sets, row_sets, len, steps;
};

// Warp w of the block on tile t: x = its broadcast stream (all lanes one address), r = the rows the block
// shares (lane l reads element l of a row). Plain const __restrict__ loads, as kernel 2's, so L1 caches them.
// kUnroll steps per trip: the loads of a trip first, then the adds (a load whose value is unused is dropped).
// kSplitRows: the rows from set t % row_sets (split). The other sources keep one set pointer for both streams:
// with the rows' own set pointer the l2 and hbm mixes ran at 192 / 133 G requests/s instead of 205 / 162 on
// an H200 (run 20261202T200420Z against four earlier GPUs), the same PTX loop, a 32-register kernel.
template <bool kSplitRows>
__global__ void __launch_bounds__(kThreads, MH_MIN_BLOCKS(kThreads))
mix_kernel(const uint32_t* __restrict__ buf, Args a, uint32_t* checksum) {
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x / 32, mask = a.len - 1;
  uint32_t sum = 0;
  for (uint32_t t = blockIdx.x; t < a.tiles; t += gridDim.x) {
    const uint32_t* set = buf + uint64_t(t % a.sets) * set_elems(a.len);
    const uint32_t* rows = kSplitRows ? buf + uint64_t(t % a.row_sets) * set_elems(a.len) : set;
    const uint32_t* x = set + bcast_elem(a.len, warp, 0);   // step i: x[i]
    const uint32_t* r = rows + row_elem(a.len, 0, lane);    // step i: r[i * kRowElems]
#pragma unroll 1
    for (uint32_t j = 0; j < a.steps; j += kUnroll) {
      const uint32_t i = j & mask;  // len is a multiple of kUnroll: i + u < len
      uint32_t v[2 * kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        v[2 * u] = x[i + u];
        v[2 * u + 1] = r[(i + u) * kRowElems];
      }
#pragma unroll
      for (int u = 0; u < 2 * kUnroll; ++u) sum += v[u];
    }
  }
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if (lane == 0) atomicAdd(checksum, sum);
}

// The largest power of two >= kUnroll whose data set, `copies` times over, fits in `bytes`; 0 if none.
uint32_t len_fitting(uint64_t bytes, uint64_t copies) {
  const uint64_t per_step = uint64_t(Plan::warps() + kRowElems) * 4 * copies;
  uint32_t len = 0;
  for (uint64_t l = kUnroll; l * per_step <= bytes && l <= (1u << 20); l *= 2) len = static_cast<uint32_t>(l);
  return len;
}

}  // namespace

Plan make_plan(Source source, const DeviceFacts& f, int blocks_per_sm) {
  if (blocks_per_sm < 1) throw std::invalid_argument("no block of " + std::to_string(kThreads) + " threads fits on one SM");
  Plan p;
  p.source = source;
  p.blocks = f.sm_count * blocks_per_sm;
  constexpr uint32_t kStream = 4096;  // steps of an l2/hbm stream: kernel 2's K at 4096^3 (1 MiB per set)
  switch (source) {
    case Source::l1:  // each block its own set, the SM's sets in 3/4 of its L1: 32 passes, the first one cold
      p.len = len_fitting(f.l1_smem_per_sm_bytes * 3 / 4, blocks_per_sm);
      if (p.len == 0) throw std::invalid_argument("L1 holds no data set of " + std::to_string(kUnroll) + " steps");
      p.tiles = p.sets = p.blocks;
      p.steps = 32 * p.len;
      break;
    case Source::l2:  // a few sets within L2 / 4, read by many tiles at once
      p.len = p.steps = kStream;
      p.sets = static_cast<uint32_t>(std::max<uint64_t>(1, f.l2_bytes / 4 / (p.set_elems() * 4)));
      p.tiles = 4 * p.blocks;
      break;
    case Source::hbm:    // every tile its own set: at least 4x L2 and 4 tiles per block
    case Source::split: {  // the same for the broadcast streams alone; the rows of l2's few sets
      p.len = p.steps = kStream;
      const uint64_t streamed = (source == Source::hbm ? p.set_elems() : bcast_elem(p.len, Plan::warps(), 0)) * 4;
      const uint64_t need = (4 * uint64_t(f.l2_bytes) + streamed - 1) / streamed;
      const uint64_t waves = std::max<uint64_t>(4, (need + p.blocks - 1) / p.blocks);
      p.tiles = p.sets = static_cast<uint32_t>(waves * p.blocks);
      if (source == Source::split)
        p.row_sets = static_cast<uint32_t>(std::max<uint64_t>(1, f.l2_bytes / 4 / (p.set_elems() * 4)));
      break;
    }
  }
  if (p.buffer_elems() >= (1ull << 40)) throw std::invalid_argument("load mix: working set too large");
  return p;
}

// The kernel instance of a source (split reads its rows from their own sets).
static const void* kernel_of(Source source) {
  return source == Source::split ? reinterpret_cast<const void*>(mix_kernel<true>)
                                 : reinterpret_cast<const void*>(mix_kernel<false>);
}

// Residency of the plain instance; the split one is checked equal at launch.
Residency compiled() { return compiled_residency(kernel_of(Source::l1), kThreads, 0); }

void fill(uint32_t* buf, uint64_t elems, cudaStream_t s) { coalescing::fill_values(buf, elems, s); }

void launch(const Plan& p, const uint32_t* buf, uint32_t* checksum, cudaStream_t s) {
  // The l1 sets want the whole unified L1: no shared-memory carve-out (as coalescing/read/l1).
  static const bool configured = [] {
    for (Source k : {Source::l1, Source::split})
      CUDA_CHECK(cudaFuncSetAttribute(kernel_of(k), cudaFuncAttributePreferredSharedMemoryCarveout, 0));
    if (compiled_residency(kernel_of(Source::split), kThreads, 0).blocks_per_sm != compiled().blocks_per_sm)
      throw std::runtime_error("load_mix: the split instance fits another number of blocks per SM");
    return true;
  }();
  (void)configured;
  const Args args{p.tiles, p.sets, p.row_set_count(), p.len, p.steps};
  if (p.source == Source::split)
    mix_kernel<true><<<p.blocks, kThreads, 0, s>>>(buf, args, checksum);
  else
    mix_kernel<false><<<p.blocks, kThreads, 0, s>>>(buf, args, checksum);
  CUDA_CHECK_LAUNCH("load_mix::mix_kernel");
}

uint32_t expected_checksum(const Plan& p) {
  // Over one tile's steps: 32 lanes x each warp's broadcast value of set s, and every warp x each row value.
  auto bcast_sum = [&](uint64_t s) {
    uint32_t sum = 0;
    for (uint32_t j = 0; j < p.steps; ++j)
      for (uint32_t w = 0; w < uint32_t(Plan::warps()); ++w)
        sum += 32u * coalescing::element_value(s * p.set_elems() + bcast_elem(p.len, w, j & (p.len - 1)));
    return sum;
  };
  auto row_sum = [&](uint64_t s) {
    uint32_t sum = 0;
    for (uint32_t j = 0; j < p.steps; ++j)
      for (uint32_t l = 0; l < uint32_t(kRowElems); ++l)
        sum += uint32_t(Plan::warps()) * coalescing::element_value(s * p.set_elems() + row_elem(p.len, j & (p.len - 1), l));
    return sum;
  };
  // The tiles t with t % n == s.
  auto uses = [&](uint32_t s, uint32_t n) { return p.tiles / n + (s < p.tiles % n ? 1u : 0u); };
  uint32_t total = 0;
  for (uint32_t s = 0; s < p.sets && s < p.tiles; ++s) total += uses(s, p.sets) * bcast_sum(s);
  for (uint32_t s = 0; s < p.row_set_count() && s < p.tiles; ++s) total += uses(s, p.row_set_count()) * row_sum(s);
  return total;
}

}  // namespace mh::load_mix

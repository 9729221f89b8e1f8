// The timed walk shared by the roofs (micro/bench_roofs.cu) and the hierarchy curve
// (micro/bench_hierarchy.cu): benchmark code, apart from the kernel library in micro/roofs.cuh.
#pragma once
#include <benchmark/benchmark.h>

#include "harness/registry.cuh"
#include "micro/roofs.cuh"

namespace mh::roofs {

// Times one walk of `ws_bytes` moving `bytes_per_launch` (per direction) with c, on one process-wide
// buffer of word_value data (and one scratch buffer for copies), and sets the counters
// bytes_per_second (a copy counts reads plus writes, as ceiling/memcpy_d2d does),
// bytes_per_clock_per_sm (at the SM clock observed once per process) and working_set_bytes.
// Skips when the occupancy API does not allow blocks_per_sm.
// placements > 1 (reads only): launch k reads the working set at buffer offset (k mod placements) x
// shift, shift = max(ws / placements, kPlacementShift) rounded up to kPlacementShift, so that every
// repetition averages over that many sets of physical pages (the L2 slices and sets a working set maps
// to follow from its physical addresses, which a process does not choose).
inline constexpr uint64_t kPlacementShift = 2ull << 20;  // the large page cudaMalloc maps (Pascal on)
inline uint64_t placement_shift(uint64_t ws_bytes, int placements) {
  if (placements <= 1) return 0;
  const uint64_t s = ws_bytes / placements > kPlacementShift ? ws_bytes / placements : kPlacementShift;
  return (s + kPlacementShift - 1) / kPlacementShift * kPlacementShift;
}
void run_walk(benchmark::State& st, const Config& c, uint64_t ws_bytes, uint64_t bytes_per_launch, int placements = 1);

// Plans ceiling/read|write|copy/<level> (and the MH_SWEEP=1 sweep); the ceiling family calls it.
void plan_roofs(Planner& p);

}  // namespace mh::roofs

// hierarchy/read/ws:<bytes>: read bandwidth with every SM busy, by working set (distinct bytes the
// launch touches), 48 log-spaced points from 16 KiB to 8 x L2. The kernel is the L1 read roof's
// (plain loads, which cache in L1, carve-out 0); between two visits of a byte the grid touches about
// the whole working set, so each level serves the working sets that fit it. Warm: each launch finds
// what the previous one left in the caches. A launch moves max(2 x ws, 32 x L2) bytes (~0.1 ms at
// L1 speed, ~1 ms from HBM on an H200). Placements: launch k reads the working set at the k-th of
// MH_PLACEMENTS (default 8) offsets a large page or ws / 8 apart (run_walk), so a repetition averages over
// 8 sets of physical pages: with one placement the points on the L1-to-L2 slope and at the L2-to-HBM
// shoulder sat at a value fixed per process (0.1-0.5 % between repetitions) that moved 6 % between two
// processes on one H200 and up to 22 % between H200s.
//
// On an H200 (132 SMs): 31.5 TB/s (121 B/clk/SM) up to 180 KiB, an edge at ~190 KiB (the unified L1
// is 256 KiB at carve-out 0), then a slope, not a cliff: 26.7 TB/s at 224-836 KiB and 19.5 at 1.3-2
// MiB, above what the same loads with .cg (L1 bypassed) get from L2 there (13.9 TB/s at 1.9 MiB), so
// L1 still hits part of the time past its capacity; at 14 MiB ncu counts 0 % L1 hits. L2 falls
// from 11.4 to 9.1 TB/s between 6 and 55 MiB, HBM from ~100 MiB on: 4.56 TB/s.
#include <algorithm>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "harness/bench.cuh"
#include "harness/env.hpp"
#include "harness/registry.cuh"
#include "micro/hierarchy.cuh"
#include "micro/bench_roofs.cuh"

namespace {
using namespace mh;

constexpr int kPoints = 48;

void plan_hierarchy(Planner& p) {
  const DeviceFacts& f = p.facts();
  // The L1 size the device reports, for the plot to draw beside the edges it finds (gpubench puts
  // l2_bytes in the context already).
  p.context("l1_smem_per_sm_bytes", std::to_string(f.l1_smem_per_sm_bytes));
  const int n_place = env::placements();  // MH_PLACEMENTS (gpubench has checked it already)
  // The family's code version (gpubench/regress/profile.py pools a noise profile only over runs of one version):
  // 2 = placements rotated per launch.
  p.context("hierarchy_code_version", n_place > 1 ? "2" : "1");
  p.context("hierarchy_placements", std::to_string(n_place));
  const roofs::Config c{roofs::Kind::read, roofs::Load::plain, roofs::Store::plain, 16, 8, 256, 0, 1};
  const uint64_t chunk = 32ull * c.unroll * c.width;
  const uint64_t lo = std::max<uint64_t>(16 << 10, chunk), hi = std::min<uint64_t>(8 * f.l2_bytes, f.global_mem_bytes / 8);
  for (uint64_t ws : hierarchy::working_sets(lo, hi, kPoints, chunk)) {
    const uint64_t bytes = std::max<uint64_t>(2 * ws, 32 * f.l2_bytes);
    Launch l;
    l.threads = c.threads;
    l.blocks = static_cast<long long>(f.sm_count) * std::min(f.max_blocks_per_sm, f.max_threads_per_sm / c.threads);
    l.device_bytes = ws + (n_place - 1) * roofs::placement_shift(ws, n_place);
    l.note = "ws=" + std::to_string(ws) + " " + c.describe();
    p.add_if_resident("hierarchy/read/ws:" + std::to_string(ws), l,
                      [c, ws, bytes, n_place](benchmark::State& st) { roofs::run_walk(st, c, ws, bytes, n_place); });
  }
}

}  // namespace

MH_FAMILY("hierarchy", plan_hierarchy);

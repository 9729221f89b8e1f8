// ---- Latency and capacity benchmarks (issue 14) ----------------------------------------------------
// One thread chases a ring of pointers (micro/latency.cuh) through a working set; every size comes from
// the device's facts (L1+shared per SM, L2, memory). Names:
//   latency/chase/ws:<B>/stride:128               ld.global.ca (through L1), random ring, one load per
//                                                 128-byte line; 3 points per octave from 1 KiB to
//                                                 min(4 GiB, memory / 4): L1, L2 and DRAM plateaus.
//   latency/chase/l2only/ws:<B>/stride:128        ld.global.cg (L2 only), 2 points per octave from L1/16.
//   latency/chase/l2only/ws:<B>/stride:2097152    the TLB series: one load per 2 MiB (and per 64 KiB)
//   latency/chase/l2only/ws:<B>/stride:65536      region, so the lines stay L2-resident while the pages
//                                                 touched grow up to memory / 4: TLB reach and miss cost.
//   latency/chase/carveout:<min|max>/ws:<B>/stride:128   ld.global.ca with the preferred shared-memory
//                                                 carve-out 0 (the most L1) or 100 % (the least), from
//                                                 L1/64 to 2 x L1: the L1 capacity at both ends.
//   latency/stride_sweep/l1/ws:<W>/stride:<s>     sequential ring, one pass, ld.global.ca, L2-warm and
//                                                 L1-cold: loads per L1 miss = granule / s for s below the
//                                                 L1's fill granule (the sector), so the curve's knee is it.
//   latency/stride_sweep/l2/ws:<W>/stride:<s>     the same with ld.global.cg and the L2 flushed before each
//                                                 launch: the knee is the L2's fill granule from DRAM.
//   latency/sm_spread/ws:<B>/stride:128           ld.global.cg chase from every SM in turn (one block per
//                                                 SM, one time slot each): ws:128 is one line (it lives in
//                                                 one L2 partition: near for some SMs, far for others),
//                                                 the larger ring mixes both.
// Counters: cycles_per_load (clock64 over the timed loads), ns_per_load (%globaltimer over the same
// loads: the event time would add the launch, the warm-ups and, for the larger sets, a warm kernel),
// working_set_bytes, stride_bytes, loads, sm_clock_mhz (the two spans' ratio: cycles and ns agree), smid
// (the SM the last launch's chase ran on: its distance to the L2 sets an L2 or HBM chase within the per-SM
// range of sm_spread, so a comparison across GPUs reads both; gpubench/regress/profile.py sm_placement).
// sm_spread: cycles_min/median/p95/max over SMs, ns_median, sms, and sm<smid>_cycles for every SM
// (one counter per SM, up to 132 and more: the per-SM picture reads them; no side file exists).
// Every chase's end slot is checked against the host walk of the same ring: a mismatch is an error.
//
// Time: 192 benchmarks (193 with a peer); at --benchmark_min_time=0.01s and 5 repetitions the family took
// 25 s of the H200 runs of 93dc4cc and 30-32 s with 2^18 loads per cache-sized ring (2cd99ce), ~4 s of it
// host time building rings (Sattolo over 33 M slots at 4 GiB).
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/bench.cuh"
#include "harness/registry.cuh"
#include "micro/bench_link.cuh"
#include "micro/latency.cuh"
#include "model/chase.hpp"

namespace {
using namespace mh;
using namespace mh::latency;
using mh::model::chase_loads;

constexpr uint64_t kLine = 128;  // one load per L1/L2 line
constexpr uint64_t kMinWs = 1024;
constexpr uint64_t kMaxChaseWs = 4ull << 30;
constexpr uint64_t kSpreadLoads = 256;
constexpr uint64_t kWarmDependentMax = 8192;  // rings up to this many slots get one untimed lap first

struct Point {
  std::string name;
  uint64_t bytes = 0, stride = kLine;
  Op op = Op::ca;
  Carveout carveout = Carveout::none;
  bool sequential = false;  // stride sweep: k -> k + 1
  bool warm_l2 = true;      // a parallel read of every slot before each chase
  bool flush_l2 = false;    // cold L2 (run_timed flushes before each launch)
  bool warm_l1 = false;
  uint64_t warm_loads = 0, loads = 0;
  uint64_t slots() const { return bytes / stride; }
};

// The one ring alive: a benchmark's repetitions reuse it, the next benchmark replaces it (the largest
// rings take a second to build on the host and several GiB on the device).
struct Cached {
  uint64_t bytes = 0, stride = 0;
  bool sequential = false;
  std::vector<uint32_t> next;
  std::unique_ptr<Ring> ring;
};

// nullptr (and the benchmark skipped) when the device lacks the memory.
const Cached* ring_for(benchmark::State& st, uint64_t bytes, uint64_t stride, bool sequential) {
  static Cached c;
  if (c.ring && c.bytes == bytes && c.stride == stride && c.sequential == sequential) return &c;
  c.ring.reset();
  c.next.clear();
  size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  const uint64_t slots = bytes / stride, need = bytes + 4 * slots + (256ull << 20);
  if (need > free) {
    skip_benchmark(st, "needs " + std::to_string(need >> 20) + " MiB, " + std::to_string(free >> 20) + " MiB free");
    return nullptr;
  }
  c.next = sequential ? model::sequential_ring(slots) : model::random_ring(slots);
  c.ring = std::make_unique<Ring>(c.next, stride);
  c.bytes = bytes, c.stride = stride, c.sequential = sequential;
  return &c;
}

void check_end(const Cached& c, const ChaseResult& r, uint64_t steps, const std::string& where) {
  const uint64_t want = model::walk(c.next, 0, steps);
  if (r.end_slot != want)
    throw std::runtime_error(where + ": the chase ended at slot " + std::to_string(r.end_slot) + " after " +
                             std::to_string(steps) + " loads; the host's walk of the same ring at " + std::to_string(want));
}

void chase_body(benchmark::State& st, const Point& pt) {
  const Cached* c = ring_for(st, pt.bytes, pt.stride, pt.sequential);
  if (!c) return;
  const Ring& ring = *c->ring;
  DeviceBuffer<ChaseResult> out(1);
  ChaseConfig cfg;
  cfg.op = pt.op, cfg.carveout = pt.carveout, cfg.loads = pt.loads, cfg.warm_loads = pt.warm_loads, cfg.warm_l1 = pt.warm_l1;
  Timing t;
  t.flush_l2 = pt.flush_l2;
  run_timed(st, [&] {
    if (pt.warm_l2) warm_l2(ring);
    chase(ring, cfg, out.data());
  }, t);
  const ChaseResult r = out.download()[0];  // the last launch's
  check_end(*c, r, pt.warm_loads + pt.loads, pt.name);
  const double loads = static_cast<double>(pt.loads);
  st.counters["cycles_per_load"] = value(r.cycles / loads);
  st.counters["ns_per_load"] = value(r.ns / loads);
  st.counters["working_set_bytes"] = value(static_cast<double>(pt.bytes));
  st.counters["stride_bytes"] = value(static_cast<double>(pt.stride));
  st.counters["loads"] = value(loads);
  st.counters["sm_clock_mhz"] = value(r.ns > 0 ? 1e3 * r.cycles / r.ns : 0.0);
  st.counters["smid"] = value(static_cast<double>(r.smid));
}

double quantile(std::vector<double> v, double q) {  // nearest rank, v non-empty
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * (v.size() - 1) + 0.5))];
}

void spread_body(benchmark::State& st, const Point& pt) {
  const Cached* c = ring_for(st, pt.bytes, pt.stride, false);
  if (!c) return;
  const DeviceFacts& f = current_device_facts();
  SpreadConfig cfg;
  cfg.op = Op::cg, cfg.loads = pt.loads, cfg.warm_loads = pt.warm_loads;
  cfg.slot_ns = spread_slot_ns(f, pt.loads);
  DeviceBuffer<ChaseResult> out(f.sm_count);
  run_timed(st, [&] {
    warm_l2(*c->ring);
    chase_every_sm(*c->ring, cfg, out.data());
  });
  const std::vector<ChaseResult> res = out.download();
  std::vector<int> smids;
  std::vector<double> cycles, ns;
  for (const ChaseResult& r : res) {
    check_end(*c, r, pt.warm_loads + pt.loads, pt.name);
    smids.push_back(r.smid);
    cycles.push_back(r.cycles / static_cast<double>(pt.loads));
    ns.push_back(r.ns / static_cast<double>(pt.loads));
  }
  std::sort(smids.begin(), smids.end());
  if (std::adjacent_find(smids.begin(), smids.end()) != smids.end())
    throw std::runtime_error(pt.name + ": two blocks ran on one SM; the per-SM figures would be wrong");
  if (const int n = overlapping_chases(res))
    throw std::runtime_error(pt.name + ": " + std::to_string(n) + " chases overlapped in time (slot " +
                             std::to_string(cfg.slot_ns) + " ns, slowest chase " +
                             std::to_string(static_cast<long long>(quantile(ns, 1.0) * pt.loads)) + " ns)");
  st.counters["cycles_min"] = value(quantile(cycles, 0.0));
  st.counters["cycles_median"] = value(quantile(cycles, 0.5));
  st.counters["cycles_p95"] = value(quantile(cycles, 0.95));
  st.counters["cycles_max"] = value(quantile(cycles, 1.0));
  st.counters["ns_median"] = value(quantile(ns, 0.5));
  st.counters["sms"] = value(static_cast<double>(res.size()));
  st.counters["working_set_bytes"] = value(static_cast<double>(pt.bytes));
  for (size_t i = 0; i < res.size(); ++i) st.counters["sm" + std::to_string(res[i].smid) + "_cycles"] = value(cycles[i]);
}

std::string ws_name(const std::string& prefix, uint64_t bytes, uint64_t stride) {
  return prefix + "ws:" + std::to_string(bytes) + "/stride:" + std::to_string(stride);
}

Launch chase_launch(const Point& pt, int blocks = 1, size_t smem = 0) {
  Launch l;
  l.threads = 32;
  l.blocks = blocks;
  l.blocks_per_sm = smem ? 1 : 0;
  l.smem_per_block = smem;
  l.device_bytes = pt.bytes + 4 * pt.slots();
  l.note = "ring " + std::to_string(pt.slots()) + " slots, " + std::to_string(pt.loads) + " timed loads";
  return l;
}

// A random-ring chase point: the warm-ups that put the ring where the level under test holds it.
Point random_point(const std::string& prefix, uint64_t bytes, uint64_t stride, Op op, const DeviceFacts& f) {
  Point pt;
  pt.name = ws_name(prefix, bytes, stride);
  pt.bytes = bytes, pt.stride = stride, pt.op = op;
  const uint64_t slots = pt.slots();
  pt.warm_l1 = op == Op::ca && bytes <= 2 * f.l1_smem_per_sm_bytes;
  pt.warm_loads = slots <= kWarmDependentMax ? slots : 0;
  pt.loads = chase_loads(slots, slots * kLine <= 2 * f.l2_bytes);  // a slot takes one L2 line (tag) at least
  return pt;
}

void plan(Planner& p) {
  const DeviceFacts& f = p.facts();
  const uint64_t l1 = f.l1_smem_per_sm_bytes, l2 = f.l2_bytes;
  const uint64_t mem_top = model::floor_pow2(f.global_mem_bytes / 4);
  const uint64_t top = std::min(kMaxChaseWs, mem_top);
  p.context("l1_smem_per_sm_bytes", std::to_string(l1));
  p.context("global_mem_bytes", std::to_string(f.global_mem_bytes));
  auto add = [&](const Point& pt) { p.add_if_resident(pt.name, chase_launch(pt), [pt](benchmark::State& st) { chase_body(st, pt); }); };

  for (uint64_t ws : model::log_spaced_sizes(kMinWs, top, 3, kLine)) add(random_point("latency/chase/", ws, kLine, Op::ca, f));
  // L2 only: flat from the smallest set to the L2's capacity, so it starts at L1/16 (every point costs
  // ~0.15 s of a run whatever its size: Google Benchmark's minimum time x 5 repetitions).
  for (uint64_t ws : model::log_spaced_sizes(std::max<uint64_t>(kMinWs, l1 / 16), top, 2, kLine))
    add(random_point("latency/chase/l2only/", ws, kLine, Op::cg, f));
  // TLB: from two pages up to memory / 4, the lines L2-resident throughout.
  for (uint64_t ws : model::log_spaced_sizes(2 * (2ull << 20), mem_top, 2, 2ull << 20))
    add(random_point("latency/chase/l2only/", ws, 2ull << 20, Op::cg, f));
  for (uint64_t ws : model::log_spaced_sizes(2 * (64ull << 10), top, 1, 64ull << 10))
    add(random_point("latency/chase/l2only/", ws, 64ull << 10, Op::cg, f));
  for (Carveout cv : {Carveout::min, Carveout::max})
    for (uint64_t ws : model::log_spaced_sizes(std::max<uint64_t>(kMinWs, l1 / 64), 2 * l1, 2, kLine)) {
      Point pt = random_point(std::string("latency/chase/carveout:") + carveout_name(cv) + "/", ws, kLine, Op::ca, f);
      pt.carveout = cv;
      add(pt);
    }
  // Stride sweep: a working set larger than any L1 (4 x L1+shared) and well inside the L2.
  const uint64_t sweep_ws = model::floor_pow2(std::min<uint64_t>(4 * l1, l2 / 4));
  for (uint64_t s = 8; s <= 2 * kLine; s *= 2)
    for (Op op : {Op::ca, Op::cg}) {
      Point pt;
      pt.name = ws_name(op == Op::ca ? "latency/stride_sweep/l1/" : "latency/stride_sweep/l2/", sweep_ws, s);
      pt.bytes = sweep_ws, pt.stride = s, pt.op = op, pt.sequential = true;
      pt.warm_l2 = op == Op::ca;  // l1: L2-warm, L1-cold; l2: the L2 flushed, DRAM-cold
      pt.flush_l2 = op == Op::cg;
      pt.loads = pt.slots();      // one pass: every slot once
      add(pt);
    }
  // Per SM: one line, and a ring of 4096 lines (larger than an L1; at most a quarter of the L2).
  for (uint64_t ws : {kLine, std::min<uint64_t>(4096 * kLine, l2 / 4 / kLine * kLine)}) {
    Point pt;
    pt.name = ws_name("latency/sm_spread/", ws, kLine);
    pt.bytes = ws, pt.op = Op::cg, pt.loads = kSpreadLoads;
    pt.warm_loads = std::min<uint64_t>(pt.slots(), 64);
    p.add_if_resident(pt.name, chase_launch(pt, f.sm_count, one_block_per_sm_smem(f)), [pt](benchmark::State& st) { spread_body(st, pt); });
  }
  link::plan_chases(p);
}

}  // namespace

MH_FAMILY("latency", plan);

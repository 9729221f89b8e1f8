// Thread-block clusters (docs/families/cluster.md):
//   dsm/latency/target:<own_shared|own_cluster|remote>           cycles per dependent shared-memory load
//   dsm/bandwidth/<read|write>/cluster_size:C                     DSM bandwidth, every block on its neighbour
//   dsm/barrier/<cluster_sync|syncthreads>/cluster_size:C         cycles per barrier
//   async/tma/l2/bandwidth/kind:<multicast|unicast>/cluster_size:C  bulk copies from L2 into every block's smem
// Every kernel runs one block per SM; the grids of the bandwidth, barrier and TMA benchmarks are
// cudaOccupancyMaxActiveClusters x C blocks (the compiled kernel and its launch configuration), all resident.
#include <algorithm>

#include "harness/bench.cuh"
#include "micro/cluster.cuh"

namespace {
using namespace mh;
using namespace mh::cluster;

constexpr int kChaseLoads = 8192;  // ~0.9 ms at ~200 cycles a load
constexpr int kDsmPasses = 256;    // 16 MiB per block per launch
constexpr int kBarrierSteps = 1024;
constexpr int kTmaIterations = 1024;  // 16 MiB delivered per block per launch
constexpr double kBaselineMs = 5.0;   // GPU time of the barrier baseline's sample

// Fails the benchmark (and returns false) when a block's checksum differs from the host's replay, a bounded
// wait gave up, or two blocks shared an SM (every kernel here is meant to run one block per SM).
bool records_ok(benchmark::State& st, const std::vector<BlockRecord>& rec, const std::vector<uint32_t>& expected) {
  for (size_t b = 0; b < rec.size(); ++b) {
    if (rec[b].timeouts) {
      st.SkipWithError(("block " + std::to_string(b) + ": an mbarrier wait gave up after 2^31 cycles").c_str());
      return false;
    }
    if (rec[b].checksum != expected[b]) {
      st.SkipWithError(("block " + std::to_string(b) + ": checksum " + std::to_string(rec[b].checksum) + ", the host's " +
                        std::to_string(expected[b]))
                           .c_str());
      return false;
    }
  }
  if (sms_used(rec) != static_cast<int>(rec.size())) {
    st.SkipWithError("two blocks ran on one SM: the shared-memory size no longer forces one block per SM");
    return false;
  }
  return true;
}

// Skips (and returns false) when this build's cluster kernels are compiled out here (older PTX JIT-compiled).
bool kernels_here(benchmark::State& st) {
  const std::string why = dsm_compiled_out();
  if (why.empty()) return true;
  skip_benchmark(st, why);
  return false;
}

// The grid's cluster count from the occupancy API, or a skip with the reason when it is 0.
bool fill_gpu(benchmark::State& st, Grid& g, int clusters) {
  g.clusters = clusters;
  if (clusters > 0) return true;
  skip_benchmark(st, "cudaOccupancyMaxActiveClusters is 0 for clusters of " + std::to_string(g.cluster) + " blocks of " +
                         std::to_string(g.threads) + " threads with " + human_bytes(static_cast<double>(g.smem)) +
                         " of shared memory each");
  return false;
}

// bytes_per_second and the rest, for `bytes` moved per launch of `seconds`.
void throughput_counters(benchmark::State& st, const Grid& g, const std::vector<BlockRecord>& rec, double bytes, double seconds) {
  const double mhz = records_mhz(rec);
  const int sms = sms_used(rec);
  st.counters["bytes_per_second"] = rate(bytes);
  if (seconds > 0 && mhz > 0) st.counters["bytes_per_clock_per_sm"] = value(bytes / seconds / (mhz * 1e6) / sms);
  st.counters["active_clusters"] = value(g.clusters);
  st.counters["sms_used"] = value(sms);
  st.counters["sm_clock_mhz"] = value(mhz);
}

void latency(benchmark::State& st, Target t, size_t smem) {
  if (!kernels_here(st)) return;
  DeviceBuffer<ChaseResult> out(1);
  run_timed(st, [&] { launch_chase(t, kChaseLoads, smem, out.data()); });
  const ChaseResult r = out.download()[0];
  if (r.final_index != chase_expected(kChaseLoads)) {
    st.SkipWithError("the chase ended on another index than the host's replay");
    return;
  }
  if ((t == Target::remote) != (r.reader_sm != r.owner_sm)) {
    st.SkipWithError("the ring's owner is on the reader's SM for a remote chase, or on another for an own one");
    return;
  }
  st.counters["cycles"] = value(static_cast<double>(r.cycles) / kChaseLoads);
  st.counters["reader_sm"] = value(r.reader_sm);
  st.counters["owner_sm"] = value(r.owner_sm);
}

void dsm(benchmark::State& st, Op op, Grid g) {
  if (!kernels_here(st) || !fill_gpu(st, g, dsm_max_active_clusters(op, g))) return;
  DeviceBuffer<BlockRecord> out(g.blocks());
  const double s = run_timed(st, [&] { launch_dsm(op, g, kDsmPasses, out.data()); });
  const std::vector<BlockRecord> rec = out.download();
  if (!records_ok(st, rec, dsm_expected(op, g, kDsmPasses))) return;
  throughput_counters(st, g, rec, dsm_bytes(g, kDsmPasses), s);
}

double median_cycles(const std::vector<BlockRecord>& rec) {
  std::vector<long long> c;
  for (const BlockRecord& r : rec) c.push_back(r.span.cycles);
  std::nth_element(c.begin(), c.begin() + c.size() / 2, c.end());
  return static_cast<double>(c[c.size() / 2]);
}

// cycles_per_barrier: (median block span with barriers - the same loop without) / barriers per thread.
void barrier(benchmark::State& st, Barrier b, Grid g) {
  if (!kernels_here(st) || !fill_gpu(st, g, std::min(barrier_max_active_clusters(b, g), barrier_max_active_clusters(Barrier::none, g)))) return;
  DeviceBuffer<BlockRecord> out(g.blocks());
  run_timed(st, [&] { launch_barrier(b, g, kBarrierSteps, out.data()); });
  const std::vector<uint32_t> expected = barrier_expected(g, kBarrierSteps);
  const std::vector<BlockRecord> with = out.download();
  if (!records_ok(st, with, expected) || profiling()) return;
  GpuTimer timer;
  const auto base = [&] { launch_barrier(Barrier::none, g, kBarrierSteps, out.data()); };
  time_launches(timer, base, launches_for(kBaselineMs, time_launches(timer, base), 2, 100));
  const std::vector<BlockRecord> without = out.download();
  if (!records_ok(st, without, expected)) return;
  st.counters["cycles_per_barrier"] = value((median_cycles(with) - median_cycles(without)) / (kBarrierSteps * kBarriersPerStep));
  st.counters["active_clusters"] = value(g.clusters);
  st.counters["sm_clock_mhz"] = value(records_mhz(with));
}

void tma(benchmark::State& st, bool multicast, Grid g) {
  const std::string why = tma_unavailable_reason();
  if (!why.empty()) {
    skip_benchmark(st, why);
    return;
  }
  if (!fill_gpu(st, g, tma_max_active_clusters(multicast, g))) return;
  const std::vector<uint32_t> host = tma_source();
  DeviceBuffer<uint32_t> src(host);
  DeviceBuffer<BlockRecord> out(g.blocks());
  const double s = run_timed(st, [&] { launch_tma(multicast, g, kTmaIterations, src.data(), out.data()); });
  const std::vector<BlockRecord> rec = out.download();
  if (!records_ok(st, rec, tma_expected(g, kTmaIterations, host))) return;
  const double delivered = static_cast<double>(g.blocks()) * kTmaIterations * kTmaTile;
  throughput_counters(st, g, rec, delivered, s);
  st.counters["l2_read_bytes_per_second"] = rate(multicast ? delivered / g.cluster : delivered);
}

// ---- plan -------------------------------------------------------------------------------------------
// The launch a plan states: one block per SM, the grid as large as the SMs allow (the run takes the
// occupancy API's cluster count, which GPC sizes may make smaller).
Launch launch_of(const DeviceFacts& f, const Grid& g, size_t device_bytes, const std::string& note) {
  Launch l;
  l.threads = g.threads;
  l.blocks_per_sm = 1;
  l.blocks = f.sm_count / g.cluster * g.cluster;
  l.smem_per_block = g.smem;
  l.device_bytes = device_bytes;
  l.note = note + "; grid: cudaOccupancyMaxActiveClusters x C";
  return l;
}

// add() when clusters run here and the shared memory that forces one block per SM exists, else skip().
void add_cluster(Planner& p, const std::string& name, const Launch& l, Body body) {
  const std::string why = unsupported_reason(p.facts());
  if (!why.empty())
    p.skip(name, why);
  else if (l.smem_per_block == 0)
    p.skip(name, "no shared-memory size forces one block per SM within the per-block opt-in limit");
  else
    p.add_if_resident(name, l, std::move(body));
}

// Issue 29's names: dsm/... for distributed shared memory and the cluster barrier, TMA multicast under async/tma.
std::string cluster_name(const std::string& what, int c) { return what + "/cluster_size:" + std::to_string(c); }

void plan_dsm(Planner& p) {
  const DeviceFacts& f = p.facts();
  const size_t smem = one_block_smem(f, kDsmBufferBytes);
  for (Target t : {Target::own_shared, Target::own_cluster, Target::remote}) {
    const Grid g{1, 2, 32, smem};
    Launch l = launch_of(f, g, sizeof(ChaseResult), "");
    l.blocks = 2;
    l.note = std::to_string(kChaseLoads) + " dependent loads, 16 KiB ring, one cluster of 2";
    add_cluster(p, std::string("dsm/latency/target:") + target_name(t), l,
                [t, smem](benchmark::State& st) { latency(st, t, smem); });
  }
  for (Op op : {Op::read, Op::write})
    for (int c : {1, 2, 4, 8, 16}) {
      const Grid g{0, c, kDsmThreads, smem};
      const std::string note = std::string("16 B ") + op_name(op) + "s of rank (r+1)%C's 64 KiB, " + std::to_string(kDsmPasses) +
                               " passes" + (c == 1 ? " (own, ld/st.shared)" : "");
      add_cluster(p, cluster_name(std::string("dsm/bandwidth/") + op_name(op), c), launch_of(f, g, 0, note),
                  [op, g](benchmark::State& st) { dsm(st, op, g); });
    }
}

void plan_barrier(Planner& p) {
  const DeviceFacts& f = p.facts();
  const size_t smem = one_block_smem(f, 0);
  const std::string note = std::to_string(kBarrierSteps * kBarriersPerStep) + " barriers per thread";
  for (int c : {1, 2, 4, 8, 16}) {
    const Grid g{0, c, kBarrierThreads, smem};
    add_cluster(p, cluster_name("dsm/barrier/cluster_sync", c), launch_of(f, g, 0, note),
                [g](benchmark::State& st) { barrier(st, Barrier::cluster, g); });
  }
  const Grid g{0, 1, kBarrierThreads, smem};
  add_cluster(p, cluster_name("dsm/barrier/syncthreads", 1), launch_of(f, g, 0, note),
              [g](benchmark::State& st) { barrier(st, Barrier::syncthreads, g); });
}

void plan_tma(Planner& p) {
  const DeviceFacts& f = p.facts();
  const size_t smem = one_block_smem(f, kTmaStages * kTmaTile);
  const size_t src_bytes = static_cast<size_t>(kTmaSourceTiles) * kTmaTile;
  for (bool multicast : {true, false})
    for (int c : {2, 4, 8}) {
      const std::string name = cluster_name(multicast ? "async/tma/l2/bandwidth/kind:multicast" : "async/tma/l2/bandwidth/kind:unicast", c);
      if (unsupported_reason(f).empty() && f.arch() != kMinArch) {
        p.skip(name, "the TMA kernels are built for sm_90a alone; this device is " + f.compute_capability);
        continue;
      }
      const Grid g{0, c, kTmaThreads, smem};
      const std::string note = "16 KiB tiles of a 4 MiB L2-resident source, " + std::to_string(kTmaIterations) + " per block, " +
                               std::to_string(kTmaStages) + " stages";
      add_cluster(p, name, launch_of(f, g, src_bytes, note), [multicast, g](benchmark::State& st) { tma(st, multicast, g); });
    }
}

void plan(Planner& p) {
  plan_dsm(p);
  plan_barrier(p);
}

}  // namespace

MH_FAMILY("dsm", plan);
// TMA multicast is a path of the async family (async/tma/...): planned under that family's name.
MH_FAMILY("async", plan_tma);

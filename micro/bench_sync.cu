// Barrier benchmarks: sync/<syncthreads|syncwarp|named_barrier>/threads:T/blocks_per_sm:B.
// Per shape (threads T, blocks per SM B) and kind, three measurements of one wave of B * SMs blocks:
//   real_time:          run_timed of the kernel with barriers (the manual time Google Benchmark reports);
//   cycles_per_barrier: (median over blocks of thread 0's clock64 span with barriers - the same without)
//                       / barriers per thread;
//   ns_per_barrier:     (event time per launch with barriers, from run_timed - the baseline's, timed
//                       right after with the same timing helper, time_launches) / barriers per thread.
// A shape the device facts say cannot be resident (threads, blocks or shared memory per SM) is skipped
// with the reason; one the occupancy API says is not exactly B-resident is skipped at run time.
#include <algorithm>

#include "harness/bench.cuh"
#include "micro/sync.cuh"

namespace {
using namespace mh;
using namespace mh::sync;

constexpr int kSteps = 2560;        // 10240 barriers per thread; ~1.3 ms if the slowest shape takes 250 cycles each
constexpr double kSampleMs = 10.0;  // GPU time of the baseline's sample

// Median over blocks of the spans' clock64 cycles, and their median MHz.
struct Spans {
  double cycles, mhz;
};
Spans summarize(std::vector<ClockSpan> h) {
  const double mhz = median_mhz(h.data(), static_cast<int>(h.size()));
  auto mid = h.begin() + h.size() / 2;
  std::nth_element(h.begin(), mid, h.end(), [](const ClockSpan& a, const ClockSpan& b) { return a.cycles < b.cycles; });
  return {static_cast<double>(mid->cycles), mhz};
}

void barrier(benchmark::State& st, Config with, Config without) {
  const int want = with.blocks_per_sm;
  const int resident = resident_blocks_per_sm(with), resident_base = resident_blocks_per_sm(without);
  st.counters["blocks_per_sm"] = value(resident);
  st.counters["warps_per_block"] = value(with.threads / 32);
  if (resident != want || resident_base != want) {
    skip_benchmark(st, "occupancy API: " + std::to_string(resident) + " (baseline " + std::to_string(resident_base) +
                           ") blocks per SM fit with " + std::to_string(with.smem_bytes) +
                           " B of shared memory each, not " + std::to_string(want));
    return;
  }
  DeviceBuffer<uint32_t> out(static_cast<size_t>(with.blocks) * with.threads);
  DeviceBuffer<ClockSpan> spans(with.blocks);
  const double bar_s = run_timed(st, [&] { launch(with, out.data(), spans.data()); });
  if (profiling()) return;  // one profiled launch; the baseline is not what ncu is after
  const Spans bar = summarize(spans.download());
  // The baseline: one launch to size the sample (and warm up after the other kernel), then ~kSampleMs.
  GpuTimer timer;
  const auto base_launch = [&] { launch(without, out.data(), spans.data()); };
  const double first_ms = time_launches(timer, base_launch);
  const double base_ms = time_launches(timer, base_launch, launches_for(kSampleMs, first_ms, 4, 1000));
  const Spans base = summarize(spans.download());
  const double n = static_cast<double>(with.barriers());
  st.counters["cycles_per_barrier"] = value((bar.cycles - base.cycles) / n);
  st.counters["ns_per_barrier"] = value((bar_s * 1e3 - base_ms) * 1e6 / n);
  st.counters["sm_clock_mhz"] = value(bar.mhz);
}

void plan(Planner& p) {
  const DeviceFacts& f = p.facts();
  for (Kind kind : {Kind::syncthreads, Kind::syncwarp, Kind::named})
    for (const Shape& s : bench_shapes()) {
      const std::string name = std::string("sync/") + kind_name(kind) + "/threads:" + std::to_string(s.threads) +
                               "/blocks_per_sm:" + std::to_string(s.blocks_per_sm);
      const std::string why = shape_unfit_reason(f, s);
      if (!why.empty()) {
        p.skip(name, why);
        continue;
      }
      const Config with = make_config(f, kind, s.threads, s.blocks_per_sm, kSteps);
      const Config without = make_config(f, Kind::none, s.threads, s.blocks_per_sm, kSteps);
      Launch l = launch_of(with);
      l.note = std::to_string(with.barriers()) + " barriers per thread";
      p.add_if_resident(name, l, [with, without](benchmark::State& st) { barrier(st, with, without); });
    }
}

}  // namespace

MH_FAMILY("sync", plan);

// Timing loop and counters shared by every benchmark family (micro and gemm).
#pragma once
#include <benchmark/benchmark.h>
#include <cuda_profiler_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>

#include <string>

#include "device_info.cuh"
#include "nvml.cuh"
#include "registry.cuh"
#include "timer.cuh"

namespace mh {

struct Timing {
  int batch = 0;            // launches per timed iteration; 0 = enough for ~target_ms
  bool flush_l2 = false;    // cold sample: flush L2 before each timed iteration (forces batch 1)
  double target_ms = 1.0;   // auto batch aims at this much GPU time per event pair
  bool gate = true;         // time behind the stream gate (timer.cuh); false for launches that wait on the host
};

// MH_PROFILE=1 (set by run_all.sh --ncu): each benchmark runs its measured launch exactly once,
// between cudaProfilerStart/Stop, so `ncu --profile-from-start off` sees one launch per benchmark
// and nothing of the set-up or verification around it. A marker kernel opens each benchmark's
// group of profiled kernels, so a multi-kernel launch (cuBLAS) still maps to the right name.
inline bool profiling() {
  const char* v = std::getenv("MH_PROFILE");
  return v && *v && *v != '0';
}

// The longest wait for throttling to clear before a repetition, in ms: MH_SETTLE_MS (gpubench's main sets it
// and rejects a value that is not a number of ms in [0, 60000]), default 250.
inline double& settle_max_ms() {
  static double ms = 250.0;
  return ms;
}

// Times launch() with CUDA events and feeds Google Benchmark per-launch seconds as manual time;
// returns the mean seconds per launch (0 under MH_PROFILE). One untimed launch first (warm-up:
// module load, clocks, caches for warm runs).
// One call is one repetition. It first waits, up to settle_max_ms(), while NVML reports a throttling
// reason (nvml::settle_device: a previous benchmark's power draw lowers the clocks for a while after it);
// the counter `settle_ms` says how long. Between its timed batches (outside the events) NVML is asked for
// the clock-event reasons and the SM clock (nvml::ClockWatch), and the repetition gets the counters
// `throttled` (1 when a power, thermal or sync-boost reason was seen, else 0: compare drops such samples
// unless their clock stayed at the unthrottled one), `sm_clock_mhz` (median NVML reading) and
// `sm_clock_min_mhz` (the lowest). Without NVML all but settle_ms are left out. Families that measure the
// clock themselves over their own kernels (clock64) overwrite sm_clock_mhz afterwards.
template <class Launch>
double run_timed(benchmark::State& state, Launch&& launch, Timing t = {}) {
  if (profiling()) {
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaProfilerStart());
    launch_profile_marker();
    launch();
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaProfilerStop());
    for (auto _ : state) state.SetIterationTime(1e-6);  // timings under a profiler mean nothing
    return 0.0;
  }
  const double settled_ms = nvml::settle_device(nvml::device_handle(current_device_facts().device), settle_max_ms());
  GpuTimer timer;
  std::unique_ptr<L2Flusher> flusher;
  if (t.flush_l2) {
    flusher = std::make_unique<L2Flusher>(current_device_facts().l2_bytes);
    t.batch = 1;
  }
  const double first_ms = time_launches(timer, launch, 1, nullptr, t.gate);
  int batch = t.batch > 0 ? t.batch : launches_for(t.target_ms, first_ms, 1, 1000);
  // Every repetition must run exactly max_iterations (Google Benchmark checks it), whatever batch this
  // repetition's warm-up suggested: take the largest batch that divides it.
  const auto planned = static_cast<int64_t>(state.max_iterations);
  batch = static_cast<int>(std::min<int64_t>(batch, planned));
  while (planned % batch) --batch;
  // One benchmark iteration is one launch: a batch counts `batch` iterations and adds its whole time,
  // so reported times are per launch and --benchmark_min_time bounds the GPU time actually spent.
  double seconds = 0, launches = 0;
  nvml::ClockWatch clocks(current_device_facts().device);
  while (state.KeepRunningBatch(batch)) {
    if (flusher) flusher->flush();
    const double s = time_launches(timer, launch, batch, nullptr, t.gate) * batch * 1e-3;
    state.SetIterationTime(s);
    clocks.sample();
    seconds += s;
    launches += batch;
  }
  clocks.finish();
  if (t.gate && stream_gate().timed_out()) {
    state.SkipWithError("the stream gate timed out: the launch waits for its stream on the host (time it with Timing::gate = false)");
    return 0.0;
  }
  state.counters["launches_per_sample"] = batch;
  if (clocks.log().has_reasons()) state.counters["throttled"] = clocks.log().throttled() ? 1.0 : 0.0;
  if (clocks.log().has_clock()) {
    state.counters["sm_clock_mhz"] = clocks.log().median_clock_mhz();
    state.counters["sm_clock_min_mhz"] = clocks.log().min_clock_mhz();
  }
  state.counters["settle_ms"] = settled_ms;
  return launches > 0 ? seconds / launches : 0.0;
}

// Device memory a benchmark may allocate now: free memory (cudaMemGetInfo) less a margin for the
// allocator's rounding and what the runtime and libraries (cuBLAS) allocate on their own.
inline size_t usable_device_bytes() {
  size_t free = 0, total = 0;
  CUDA_CHECK(cudaMemGetInfo(&free, &total));
  const size_t margin = std::max<size_t>(256ull << 20, total / 50);
  return free > margin ? free - margin : 0;
}

// True when `bytes` fit in usable_device_bytes(); else ends the benchmark as skipped, with the numbers.
inline bool fits_device_memory(benchmark::State& st, size_t bytes) {
  const size_t usable = usable_device_bytes();
  if (bytes <= usable) return true;
  skip_benchmark(st, "needs " + std::to_string(bytes >> 20) + " MiB of device memory, " + std::to_string(usable >> 20) +
                         " MiB are free");
  return false;
}

// Per-launch amount -> rate per second of manual time (an iteration is one launch).
inline benchmark::Counter rate(double per_launch) {
  return benchmark::Counter(per_launch, benchmark::Counter::kIsIterationInvariantRate);
}
// A plain measured value reported as is (ratios, clocks); model predictions go to Planner::predict.
inline benchmark::Counter value(double v) { return benchmark::Counter(v); }

}  // namespace mh

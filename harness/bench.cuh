// Timing loop and counters shared by every benchmark family (micro and gemm).
#pragma once
#include <benchmark/benchmark.h>
#include <cuda_profiler_api.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>

#include "device_info.cuh"
#include "timer.cuh"

namespace mh {

struct Timing {
  int batch = 0;            // launches per timed iteration; 0 = enough for ~target_ms
  bool flush_l2 = false;    // cold sample: flush L2 before each timed iteration (forces batch 1)
  double target_ms = 1.0;   // auto batch aims at this much GPU time per event pair
};

// MH_PROFILE=1 (set by run_all.sh --ncu): each benchmark runs its measured launch exactly once,
// between cudaProfilerStart/Stop, so `ncu --profile-from-start off` sees one launch per benchmark
// and nothing of the set-up or verification around it. A marker kernel opens each benchmark's
// group of profiled kernels, so a multi-kernel launch (cuBLAS) still maps to the right name.
inline bool profiling() {
  const char* v = std::getenv("MH_PROFILE");
  return v && *v && *v != '0';
}

// Times launch() with CUDA events and feeds Google Benchmark per-launch seconds as manual time;
// returns the mean seconds per launch (0 under MH_PROFILE). One untimed launch first (warm-up:
// module load, clocks, caches for warm runs).
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
  GpuTimer timer;
  std::unique_ptr<L2Flusher> flusher;
  if (t.flush_l2) {
    flusher = std::make_unique<L2Flusher>(current_device_facts().l2_bytes);
    t.batch = 1;
  }
  timer.start();
  launch();
  timer.stop();
  const double first_ms = timer.elapsed_ms();
  int batch = t.batch;
  if (batch <= 0) batch = static_cast<int>(std::clamp(std::ceil(t.target_ms / std::max(first_ms, 1e-4)), 1.0, 1000.0));
  // Every repetition must run exactly max_iterations (Google Benchmark checks it), whatever batch this
  // repetition's warm-up suggested: take the largest batch that divides it.
  const auto planned = static_cast<int64_t>(state.max_iterations);
  batch = static_cast<int>(std::min<int64_t>(batch, planned));
  while (planned % batch) --batch;
  // One benchmark iteration is one launch: a batch counts `batch` iterations and adds its whole time,
  // so reported times are per launch and --benchmark_min_time bounds the GPU time actually spent.
  double seconds = 0, launches = 0;
  while (state.KeepRunningBatch(batch)) {
    if (flusher) flusher->flush();
    timer.start();
    for (int i = 0; i < batch; ++i) launch();
    timer.stop();
    const double s = timer.elapsed_ms() * 1e-3;
    state.SetIterationTime(s);
    seconds += s;
    launches += batch;
  }
  state.counters["launches_per_sample"] = batch;
  return launches > 0 ? seconds / launches : 0.0;
}

// Per-launch amount -> rate per second of manual time (an iteration is one launch).
inline benchmark::Counter rate(double per_launch) {
  return benchmark::Counter(per_launch, benchmark::Counter::kIsIterationInvariantRate);
}
// A plain value reported as is (model predictions, ratios).
inline benchmark::Counter value(double v) { return benchmark::Counter(v); }

}  // namespace mh

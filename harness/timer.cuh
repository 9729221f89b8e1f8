// CUDA-event timer and L2 flush: the two timing primitives every benchmark uses.
#pragma once
#include <algorithm>
#include <cmath>

#include "cuda_check.cuh"
#include "device_buffer.cuh"

namespace mh {

class GpuTimer {
 public:
  GpuTimer() {
    CUDA_CHECK(cudaEventCreate(&start_));
    CUDA_CHECK(cudaEventCreate(&stop_));
  }
  ~GpuTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  GpuTimer(const GpuTimer&) = delete;
  GpuTimer& operator=(const GpuTimer&) = delete;

  void start(cudaStream_t s = nullptr) { CUDA_CHECK(cudaEventRecord(start_, s)); }
  void stop(cudaStream_t s = nullptr) { CUDA_CHECK(cudaEventRecord(stop_, s)); }
  // Waits for the stop event; a kernel fault surfaces here, named by this call.
  float elapsed_ms() {
    CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
  }

 private:
  cudaEvent_t start_{}, stop_{};
};

// Holds a stream with a one-thread kernel that spins until the host opens the gate, so that the launches
// timed behind it are all queued before the first one starts (nvbench's blocking kernel). Without it a GPU
// idle at the start event waits for the host to launch the first kernel: a lone launch's time includes
// that latency (~5-10 us) and a batch of n spreads it over n, so per-launch times depended on the batch
// (launches_per_sample), which a run picks from Google Benchmark's iteration count. The kernel gives up
// after ~0.2 s (kGateTimeoutNs), so a launch that waits for its stream on the host (a pageable copy)
// costs that much and is timed as without the gate; such benchmarks turn it off (Timing::gate) and
// timed_out() says when one did not.
class StreamGate {
 public:
  StreamGate();
  ~StreamGate();
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;
  void close(cudaStream_t s);  // queues the spinning kernel on s
  void open();                 // lets it return
  bool timed_out() const;      // the last close() ended by the time limit (read after the stream synced)

 private:
  volatile int* flag_ = nullptr;  // mapped pinned host memory: [0] open, [1] timed out
  int* device_flag_ = nullptr;     // the same memory as the gate kernel addresses it
};

// The process's gate (the suite times from one host thread).
StreamGate& stream_gate();

// The one way the suite times launches: `n` calls of launch() back to back between one pair of events,
// behind the stream gate unless `gate` is false; returns milliseconds per launch. (run_timed builds on
// it; so do baselines timed beside a benchmark.)
template <class F>
double time_launches(GpuTimer& timer, F&& launch, int n = 1, cudaStream_t s = nullptr, bool gate = true) {
  if (gate) stream_gate().close(s);
  timer.start(s);
  for (int i = 0; i < n; ++i) launch();
  timer.stop(s);
  if (gate) stream_gate().open();
  return timer.elapsed_ms() / n;
}

// What a lone launch's start adds to its time (us), with the gate: a ~10 us kernel timed alone (t1 = k + O)
// and in batches of b (k + O / b), interleaved, medians: O = (t1 - tb) b / (b - 1). Written to the run's
// context (lone_launch_us) so that compare can bound what a batch difference does to a time (rule "batch").
double lone_launch_us();

// How many launches of `ms_each` take about `target_ms`, within [lo, hi].
inline int launches_for(double target_ms, double ms_each, int lo, int hi) {
  return static_cast<int>(std::clamp(std::ceil(target_ms / std::max(ms_each, 1e-4)), double(lo), double(hi)));
}

// Writing a buffer twice the L2 size evicts whatever the next kernel would find there.
class L2Flusher {
 public:
  explicit L2Flusher(size_t l2_bytes) : buf_(2 * l2_bytes) {}
  void flush(cudaStream_t s = nullptr) {
    CUDA_CHECK(cudaMemsetAsync(buf_.data(), ++value_ & 0xff, buf_.bytes(), s));
  }

 private:
  DeviceBuffer<unsigned char> buf_;
  int value_ = 0;
};

}  // namespace mh

#include "harness/timer.cuh"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace mh {
namespace {

constexpr unsigned long long kGateTimeoutNs = 200'000'000ull;

// Spins (sleeping 1 us between looks) until flag[0] is set or the time limit passes; flag[1] says which.
__global__ void gate_kernel(volatile int* flag) {
  unsigned long long t0 = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (;;) {
    if (flag[0]) return;
    unsigned long long now = 0;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - t0 > kGateTimeoutNs) {
      flag[1] = 1;
      return;
    }
    __nanosleep(1000);
  }
}

// Spins for `cycles` SM clocks and leaves a mark, so the launch is a kernel that ran.
__global__ void lone_launch_kernel(long long cycles, int* mark) {
  const long long t0 = clock64();
  while (clock64() - t0 < cycles) {
  }
  if (threadIdx.x == 0) *mark = 1;
}

double median_of(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

}  // namespace

double lone_launch_us() {
  constexpr int kBatch = 16, kReps = 31, kWarmup = 64;
  constexpr long long kCycles = 20000;  // ~10 us at 2 GHz: long enough that the gate holds the batch queued
  DeviceBuffer<int> mark(1);
  CUDA_CHECK(cudaMemset(mark.data(), 0, sizeof(int)));
  GpuTimer timer;
  const auto launch = [&] {
    lone_launch_kernel<<<1, 32>>>(kCycles, mark.data());
    CUDA_CHECK_LAUNCH("lone_launch_kernel");
  };
  for (int i = 0; i < kWarmup; ++i) time_launches(timer, launch, 1);
  std::vector<double> alone, batched;
  for (int r = 0; r < kReps; ++r) {
    alone.push_back(time_launches(timer, launch, 1));
    batched.push_back(time_launches(timer, launch, kBatch));
  }
  int ran = 0;
  CUDA_CHECK(cudaMemcpy(&ran, mark.data(), sizeof(int), cudaMemcpyDeviceToHost));
  if (ran != 1) throw std::runtime_error("lone_launch_kernel did not run");
  const double o_ms = (median_of(alone) - median_of(batched)) * kBatch / (kBatch - 1);
  return std::max(0.0, o_ms * 1e3);
}

StreamGate::StreamGate() {
  void* p = nullptr;
  CUDA_CHECK(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  flag_ = static_cast<volatile int*>(p);
  flag_[0] = 1;
  flag_[1] = 0;
  // One address for every device: the memory is mapped and portable, and CUDA's 64-bit address space is unified.
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_flag_), p, 0));
}

StreamGate::~StreamGate() { cudaFreeHost(const_cast<int*>(flag_)); }

void StreamGate::close(cudaStream_t s) {
  flag_[0] = 0;
  flag_[1] = 0;
  gate_kernel<<<1, 1, 0, s>>>(device_flag_);
  CUDA_CHECK_LAUNCH("gate_kernel");
}

void StreamGate::open() {
  __atomic_store_n(const_cast<int*>(flag_), 1, __ATOMIC_SEQ_CST);
}

bool StreamGate::timed_out() const { return flag_[1] != 0; }

StreamGate& stream_gate() {
  static StreamGate gate;
  return gate;
}

}  // namespace mh

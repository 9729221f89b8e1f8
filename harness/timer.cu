#include "harness/timer.cuh"

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

}  // namespace

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

// Device facts for the JSON context, the observed SM clock, and the no-GPU check.
#pragma once
#include <cstdint>
#include <string>

#include "cuda_check.cuh"

namespace mh {

struct DeviceFacts {
  int device = 0;
  std::string gpu_name;
  std::string compute_capability;  // "9.0"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int sm_clock_mhz = 0;   // peak, as the driver reports it
  int mem_clock_mhz = 0;  // peak
  int mem_bus_bits = 0;
  size_t l2_bytes = 0;
  size_t smem_per_sm_bytes = 0;
  size_t smem_per_block_optin_bytes = 0;
  int max_threads_per_sm = 0;
  std::string driver_version;   // NVML's "580.159.04" when NVML loads, else the CUDA driver API version
  std::string runtime_version;  // "13.0"
};

// Empty string when a device is usable; else why not (one line).
std::string gpu_unavailable_reason();
inline bool gpu_available() { return gpu_unavailable_reason().empty(); }

// Selects the device for this process (validated) and caches its facts.
void select_device(int device);
const DeviceFacts& current_device_facts();

// The SM clock actually running: clock64 cycles over %globaltimer nanoseconds, on every SM,
// after `warmup_ms` of spinning so that an idle GPU has ramped up. Median over SMs, in MHz.
double observed_sm_clock_mhz(double spin_ms = 20.0, double warmup_ms = 200.0);

// Device-side: cycles and nanoseconds a block spent between two marks (thread 0 records).
struct ClockSpan {
  long long cycles;
  long long ns;
};

__device__ __forceinline__ long long global_ns() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// An empty kernel named mh_profile_marker: separates benchmarks in an ncu log.
void launch_profile_marker();

// Median MHz of recorded spans (cycles per ns * 1000); ignores empty spans.
double median_mhz(const ClockSpan* spans, int n);

}  // namespace mh

// Device facts for the JSON context, the observed SM clock, and the no-GPU check.
#pragma once
#include <cstdint>
#include <string>

#include "cuda_check.cuh"
#include "device_facts.hpp"

namespace mh {


// Empty string when a device is usable; else why not (one line).
std::string gpu_unavailable_reason();
inline bool gpu_available() { return gpu_unavailable_reason().empty(); }

// Selects the device for this process (validated) and caches its facts.
void select_device(int device);
const DeviceFacts& current_device_facts();
// A CUDA device UUID as NVML and nvidia-smi write it: "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx".
std::string gpu_uuid_string(const cudaUUID_t& id);

// The SM clock actually running: clock64 cycles over %globaltimer nanoseconds, on every SM,
// after `warmup_ms` of spinning so that an idle GPU has ramped up. Median over SMs, in MHz.
double observed_sm_clock_mhz(double spin_ms = 20.0, double warmup_ms = 200.0);

// A compiled kernel's registers per thread (cudaFuncGetAttributes) and resident blocks of `threads`
// threads with `dyn_smem` bytes of dynamic shared memory (the occupancy API) on the current device.
Residency compiled_residency(const void* kernel, int threads, size_t dyn_smem);
// Whether the suite's kernels run here as code other than this device's own (code_from_ptx: JIT-compiled
// from an older architecture's PTX, or another architecture's machine code): gpubench's context key
// code_from_ptx.
bool kernels_from_ptx();
// Empty when `kernel`'s loaded code was compiled for an architecture of at least `min_arch` (as __CUDA_ARCH__
// writes it: 800 for cp.async/mma.sync, 900 for clusters and TMA), else the reason to skip, naming `what`. A
// build whose list lacks this GPU runs JIT-compiled PTX of an older architecture, where such code is
// compiled out (its guards: #if __CUDA_ARCH__ >= ...): a launch would compute nothing or trap.
std::string compiled_out_reason(const void* kernel, int min_arch, const std::string& what);

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

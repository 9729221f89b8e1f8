// Compute ceiling for the roofline: FP32 FMA throughput. (The memory roofs come from the
// coalescing and shared-memory families: stride 1 reads at each level.)
#pragma once
#include <cstdint>

#include "harness/arch.hpp"
#include "harness/cuda_check.cuh"
#include "harness/device_facts.hpp"

namespace mh::ceilings {

constexpr int kFmaChains = 8;     // independent FMA chains per thread: covers the 4-cycle FMA latency
constexpr int kFmaUnroll = 64;    // trips of the chains per loop iteration (iters a multiple of it: no remainder loop)
constexpr int kMaxThreads = 256;  // per block; __launch_bounds__ fills an SM with such blocks

// The FMA kernel's register cap on an architecture (900 for sm_90), from its __launch_bounds__.
constexpr int register_cap(int arch) { return arch_register_cap(kMaxThreads, arch_min_blocks(arch, kMaxThreads)); }

// threads <= kMaxThreads. Each thread runs kFmaChains chains of `iters` FMAs x = x * a + b and writes the sum of its chains.
void launch_fma(float* out, int blocks, int threads, int iters, float a, float b, cudaStream_t s = nullptr);

// The FMA kernel's registers and resident blocks of `threads` per SM, compiled, on the current device.
Residency fma_residency(int threads);

// The host replay of one thread's result (IEEE fmaf on both sides: bit-identical per chain).
float fma_expected(uint32_t thread, int iters, float a, float b);

}  // namespace mh::ceilings

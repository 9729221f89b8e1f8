// What __launch_bounds__ needs to know about the architecture a device pass compiles for, where no
// device facts exist yet, and the same numbers on the host, so that a plan states the register cap
// ptxas was given. Resident threads per SM from the CUDA C++ Programming Guide's table of compute
// capabilities (1024 on sm_75; 2048 on sm_80, sm_90, sm_100, sm_103; 1536 on sm_86/87/89 and sm_120/121).
// An architecture not in the table counts as 1536: its kernels then ask for fewer resident blocks, never
// for more than fit (ptxas would ignore that with an "out of range" warning).
#pragma once

namespace mh {

constexpr int kRegsPerSm = 65536;  // every architecture from sm_75 up

// arch as __CUDA_ARCH__ writes it: 900 for compute capability 9.0.
constexpr int arch_max_threads_per_sm(int arch) {
  switch (arch) {
    case 750: return 1024;
    case 800: case 900: case 1000: case 1030: return 2048;
    default: return 1536;
  }
}

// The minimum resident blocks a kernel of `threads` per block asks __launch_bounds__ for: as many as the
// architecture's threads per SM allow (at least 1).
constexpr int arch_min_blocks(int arch, int threads) {
  return arch_max_threads_per_sm(arch) / threads > 0 ? arch_max_threads_per_sm(arch) / threads : 1;
}

// The register cap ptxas derives from __launch_bounds__(threads, min_blocks): the register file shared
// by min_blocks blocks, in whole allocation units of 8 per thread, at most 255.
constexpr int arch_register_cap(int threads, int min_blocks) {
  const int r = kRegsPerSm / (threads * min_blocks) / 8 * 8;
  return r > 255 ? 255 : r;
}

}  // namespace mh

// The architecture of the device pass being compiled (0 in the host pass, which never uses
// __launch_bounds__ values), and __launch_bounds__(T, MH_MIN_BLOCKS(T)).
#if defined(__CUDA_ARCH__)
#define MH_CUDA_ARCH __CUDA_ARCH__
#else
#define MH_CUDA_ARCH 0
#endif
#define MH_MIN_BLOCKS(threads) (::mh::arch_min_blocks(MH_CUDA_ARCH, (threads)))

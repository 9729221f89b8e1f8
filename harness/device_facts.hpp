// What a plan may know about a GPU, and what a benchmark asks of it. Host-only (no CUDA calls): the
// facts come from cudaGetDeviceProperties on a real device (harness/device_info.cu) or from a
// devices/<gpu>.json file (`gpubench --plan-for`, the DeviceFacts* host tests).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

namespace mh {

struct DeviceFacts {
  int device = 0;
  std::string gpu_name;
  std::string gpu_uuid;            // "GPU-…" (empty from a facts file)
  std::string compute_capability;  // "9.0"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  int sm_clock_mhz = 0;   // peak, as the driver reports it
  int mem_clock_mhz = 0;  // peak
  int mem_bus_bits = 0;
  size_t l2_bytes = 0;
  size_t global_mem_bytes = 0;
  size_t smem_per_sm_bytes = 0;           // the most a carve-out gives shared memory on one SM
  size_t smem_per_block_bytes = 0;        // without opt-in (48 KiB)
  size_t smem_per_block_optin_bytes = 0;  // with cudaFuncAttributeMaxDynamicSharedMemorySize
  size_t reserved_smem_per_block_bytes = 0;
  size_t l1_smem_per_sm_bytes = 0;  // the unified L1 + shared array per SM (carve-out 0 -> all of it L1)
  int max_threads_per_sm = 0;
  int max_threads_per_block = 0;
  int max_blocks_per_sm = 0;
  int regs_per_sm = 0;
  int regs_per_block = 0;
  std::string driver_version;   // NVML's "580.159.04" when NVML loads, else the CUDA driver API version
  std::string runtime_version;  // "13.0"
  int arch() const { return cc_major * 100 + cc_minor * 10; }  // as __CUDA_ARCH__ writes it: 900
};

// Reads a flat JSON object of the keys above (numbers and strings); throws std::invalid_argument with
// one line naming the file and the key when it is unreadable, lacks a key planning needs, or holds a
// value no GPU has.
DeviceFacts load_device_facts(const std::string& path);

// What one benchmark asks of the device. Zero means "not applicable" (e.g. threads 0 for a cudaMemcpy).
struct Launch {
  int threads = 0;            // per block
  int blocks_per_sm = 0;      // blocks that must be resident on one SM at once (0: no requirement)
  long long blocks = 0;       // grid size
  size_t smem_per_block = 0;  // static + dynamic shared memory, bytes
  int regs_per_thread = 0;    // the cap the kernel is compiled with (__launch_bounds__, __maxnreg__)
  size_t device_bytes = 0;    // device memory the benchmark allocates
  std::string note;           // anything else worth printing: working set, stride, tile
};

// Empty when `l` can run on `f` as planned; else one line saying why not (threads per block, threads,
// blocks, shared memory or registers per SM, device memory).
std::string check_launch(const DeviceFacts& f, const Launch& l);

// Resident blocks per SM for a kernel of `threads` threads, `smem` bytes of shared memory per block and
// `regs` registers per thread (0: unknown, not limiting), by the occupancy rules of the CUDA
// occupancy calculator (register allocation per warp in units of 256, shared memory plus the reserved
// part per block).
int blocks_per_sm(const DeviceFacts& f, int threads, size_t smem, int regs);

// Dynamic shared memory per block that lets only `blocks_per_sm` blocks reside on `f`'s SMs (the reserved
// bytes per block counted; a multiple of 128), or 0 when that is less than the `need` bytes the kernel reads:
// how the micro benchmarks pin a chosen number of warps per SM. Throws for blocks_per_sm < 1.
size_t pinning_smem(const DeviceFacts& f, int blocks_per_sm, size_t need);

// What a kernel of ours gets on one SM: registers per thread and resident blocks. A plan computes it from
// the facts (blocks_per_sm() and the register cap of the kernel's __launch_bounds__); a run on a GPU reads
// it off the compiled kernel (Planner::residency, harness/registry.cuh).
struct Residency {
  int regs_per_thread = 0;
  int blocks_per_sm = 0;
};

// Whether a kernel's loaded code is other than this device's own: cudaFuncAttributes::ptxVersion (the
// virtual architecture its device pass was compiled for, __CUDA_ARCH__ / 10) or binaryVersion (the
// architecture of the machine code) differs from the device's major * 10 + minor. When the driver
// JIT-compiles PTX (a build for 75-virtual on an H200) binaryVersion is the device's own (the JIT made
// machine code for it) and only ptxVersion tells, so both are compared; binaryVersion alone differs where
// another architecture's machine code runs (sm_80 code on compute capability 8.6). Either way, what was
// computed from __CUDA_ARCH__ (MH_MIN_BLOCKS, the register cap of __launch_bounds__) was for another GPU.
bool code_from_ptx(int binary_version, int ptx_version, int cc_major, int cc_minor);

// "2.0 GiB", "624 B": bytes for people.
std::string human_bytes(double bytes);

// One line for --plan-for: "threads=256 blocks=1056 (8/SM) smem=0 regs<=32 mem=2.0 GiB <note>".
std::string describe(const Launch& l);

}  // namespace mh

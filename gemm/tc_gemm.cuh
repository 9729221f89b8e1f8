// The BF16 tensor-core GEMM ladder (family tc_gemm, issue 30): C = A B with
//   A (M x K) row-major BF16:              A[m * K + k],
//   B (K x N) column-major BF16:           B[n * K + k]  (N rows of K: both operands K-major, the layout
//                                          mma.sync .row.col, wgmma and cuBLAS's "TN" GEMM read untransposed),
//   C (M x N) row-major FP32:              C[m * N + n],
// products of BF16 exact in FP32 and accumulated in FP32 (tensor cores), no alpha / beta (the ladder studies
// the main loop; the FP32 ladder covers the epilogue's BLAS semantics). C is written, never read.
// Shared by the kernels (gemm/9_wmma.cuh ... ), cuBLAS BF16 (gemm/tc_cublas.cuh), the table
// (gemm/tc_gemm.cu), the benchmarks (gemm/bench_tc_gemm.cu) and tests/gpu/test_tc_gemm.cu.
#pragma once
#include <cublas_v2.h>
#include <cuda_bf16.h>

#include <string>
#include <vector>

#include "gemm/gemm.cuh"  // KernelLaunch
#include "harness/device_facts.hpp"

namespace mh::gemm {

using bf16 = __nv_bfloat16;

struct TcGemm {
  int M = 0, N = 0, K = 0;
  const bf16* A = nullptr;
  const bf16* B = nullptr;
  float* C = nullptr;
};

// One row of the ladder's table (gemm/tc_gemm.cu): benchmark names are "gemm/<name>/..." (gemm/bench_tc_gemm.cu).
struct TcKernel {
  const char* name;
  void (*launch)(const TcGemm&, cublasHandle_t);  // kernels ignore the handle; cuBLAS uses it
  int min_arch = 800;                             // as __CUDA_ARCH__: 800 (BF16 mma.sync, cp.async) or later;
                                                  // 900: sm_90a code (wgmma, TMA), compute capability 9.0 alone
  int threads = 0;                                // per block; 0: no kernel of ours (cuBLAS)
  int tile_m = 0, tile_n = 0;                     // C elements per block: grid ceil(M / tile_m) x ceil(N / tile_n)
  size_t smem_bytes = 0;                          // static + dynamic shared memory per block
  size_t dyn_smem = 0;                            // of which dynamic
  const void* kernel = nullptr;                   // the __global__ function, for the occupancy API
  const char* tiles = "";                         // the JSON label: "BM=128 BN=128 BK=64 ..."
  int min_blocks = 0;                             // __launch_bounds__'s minimum blocks per SM
  void (*prepare)() = nullptr;                    // sets what the kernel needs before a launch or an
                                                  // occupancy query (dynamic shared memory above 48 KiB)
};
const std::vector<TcKernel>& tc_kernels();
const TcKernel& find_tc_kernel(const std::string& name);

// Empty when `k` can run a K-deep problem on a GPU of architecture `arch` (as __CUDA_ARCH__ writes it);
// else why not, in one line. Every kernel of ours reads A and B in 16-byte pieces (vector loads, cp.async,
// TMA), so it needs rows of a multiple of 16 bytes: K % 8 == 0. sm_90a code runs on compute capability 9.0 alone.
std::string tc_unsupported(const TcKernel& k, int arch, int K);
// Empty when `k` runs here as built: cuBLAS always; a kernel of ours when its loaded code is for k.min_arch or
// later (a build whose architecture list lacks this GPU's runs older PTX, with the tensor-core code compiled
// out: the kernel would write nothing). Else the reason, tc_unsupported's first when this GPU's architecture
// cannot run k at all. Tests and benchmarks ask it before launching k.
std::string tc_compiled_out(const TcKernel& k);
// The compiled kernel's launch (threads, dynamic shared memory, label) for add_launch_counters.
KernelLaunch tc_kernel_launch(const TcKernel& k);
// Registers and resident blocks of a kernel of ours, read off the compiled kernel (after k.prepare).
Residency tc_compiled_residency(const TcKernel& k);
// Resident blocks per SM by the device facts and the register cap of the kernel's __launch_bounds__.
Residency tc_planned_residency(const DeviceFacts& f, const TcKernel& k);

}  // namespace mh::gemm

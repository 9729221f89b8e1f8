// Row-major SGEMM, C = alpha * A * B + beta * C with A MxK, B KxN, C MxN (leading dimensions K, N, N).
// BLAS semantics: beta == 0 never reads C, so a NaN-poisoned C is simply overwritten.
// Shared by the kernels in gemm/, cuBLAS (gemm/cublas.cuh), the table (gemm/gemm.cu), the benchmarks
// (gemm/bench_gemm.cu) and the tests.
#pragma once
#include <cublas_v2.h>

#include <optional>
#include <string>
#include <vector>

#include "gemm/tile_maps.hpp"
#include "harness/arch.hpp"
#include "harness/cuda_check.cuh"
#include "harness/device_facts.hpp"
#include "model/gemm_model.hpp"

namespace mh::gemm {

struct Gemm {
  int M = 0, N = 0, K = 0;
  float alpha = 1.f, beta = 0.f;
  const float* A = nullptr;
  const float* B = nullptr;
  float* C = nullptr;
};

// Kernels 1-3 and the ablations: one thread per C element, a 32x32 tile of C per block of 1024 threads,
// grid (ceil(M / 32), ceil(N / 32)): blockIdx.x picks the tile's rows, blockIdx.y its columns. Each asks
// __launch_bounds__(kTileThreads, MH_MIN_BLOCKS(kTileThreads)): as many blocks per SM as the
// architecture's threads per SM allow (2 on sm_80/sm_90/sm_100, so 32 registers; 1 on sm_75/86/89/120).
// kTile and kTileThreads are gemm/tile_maps.hpp's, with the kernels' index maps.

__device__ __forceinline__ void store_c(float* c, float acc, float alpha, float beta) {
  *c = beta == 0.f ? alpha * acc : alpha * acc + beta * *c;
}

// Launches kernel(M, N, K, alpha, A, B, beta, C) over the tiles of C. An empty C launches nothing
// (a zero-sized grid is a launch error); K == 0 still runs: C = beta * C.
template <class Kernel>
void launch_tiles(Kernel kernel, dim3 block, const Gemm& g, cudaStream_t s, const char* name) {
  if (g.M == 0 || g.N == 0) return;
  const dim3 grid((g.M + kTile - 1) / kTile, (g.N + kTile - 1) / kTile);
  kernel<<<grid, block, 0, s>>>(g.M, g.N, g.K, g.alpha, g.A, g.B, g.beta, g.C);
  CUDA_CHECK_LAUNCH(name);
}

// The kernel a launcher runs for a problem, for cudaFuncGetAttributes and the occupancy API (the
// benchmark reports registers and resident blocks read off the compiled kernel), with its tile parameters.
struct KernelLaunch {
  const void* func = nullptr;
  int threads = 0;       // per block
  size_t dyn_smem = 0;   // dynamic shared memory per block, bytes
  std::string tiles;     // "BM=128 BN=128 ..." (the JSON label), empty for kernels 1-3
};
// The table of every GEMM in the suite (gemm/gemm.cu): benchmark names are "gemm/<name>/...".
// A kernel of ours is compiled with __launch_bounds__(threads, MH_MIN_BLOCKS(threads)).
struct GemmKernel {
  const char* name;
  void (*launch)(const Gemm&, cublasHandle_t);  // kernels ignore the handle; cuBLAS uses it
  std::optional<model::GemmKernel> model;       // its counting model (model/gemm_model.hpp); none for cuBLAS
  int threads = 0;                              // per block; 0: no kernel of ours (cuBLAS)
  int tile_m = 0, tile_n = 0;                   // C elements per block: grid ceil(M / tile_m) x ceil(N / tile_n)
  size_t smem_bytes = 0;                        // static shared memory per block
  const void* kernel = nullptr;                 // the __global__ function, for the occupancy API
  KernelLaunch (*describe)(const Gemm&) = nullptr;  // kernels 4-8: the variant a shape runs and its tiles
  int min_blocks = 0;  // __launch_bounds__'s minimum blocks per SM; 0: MH_MIN_BLOCKS(threads), the architecture's
};
const std::vector<GemmKernel>& gemm_kernels();
const GemmKernel& find_kernel(const std::string& name);
// What a kernel's result is cross-checked against at benchmark sizes: cuBLAS, and kernel 3 for cuBLAS.
const GemmKernel& cross_check_for(const GemmKernel& k);
// Resident blocks per SM of a kernel of ours by the device facts (threads, shared memory, the register
// cap of its __launch_bounds__): what its benchmarks plan and the counting model assumes. 0 for cuBLAS.
int planned_blocks_per_sm(const DeviceFacts& f, const GemmKernel& k);
// The register cap ptxas was given by the kernel's __launch_bounds__ (0 for cuBLAS).
int planned_register_cap(const DeviceFacts& f, const GemmKernel& k);
// The compiled kernel a kernel of ours (threads > 0) runs for problem g (kernels 4-8: the variant its
// shape and alignment pick), with its launch's threads and dynamic shared memory.
KernelLaunch kernel_launch(const GemmKernel& k, const Gemm& g);

}  // namespace mh::gemm

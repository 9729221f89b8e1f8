// Row-major SGEMM, C = alpha * A * B + beta * C with A MxK, B KxN, C MxN (leading dimensions K, N, N).
// BLAS semantics: beta == 0 never reads C, so a NaN-poisoned C is simply overwritten.
// Shared by the kernels in gemm/, cuBLAS (gemm/cublas.cuh), the benchmarks (gemm/gemm.cu) and the tests.
#pragma once
#include <cublas_v2.h>

#include <string>
#include <vector>

#include "harness/cuda_check.cuh"

namespace mh::gemm {

struct Gemm {
  int M = 0, N = 0, K = 0;
  float alpha = 1.f, beta = 0.f;
  const float* A = nullptr;
  const float* B = nullptr;
  float* C = nullptr;
};

// Kernels 1-3 and the ablations: one thread per C element, a 32x32 tile of C per block of 1024 threads,
// grid (ceil(M / 32), ceil(N / 32)): blockIdx.x picks the tile's rows, blockIdx.y its columns.
constexpr int kTile = 32;

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
struct GemmKernel {
  const char* name;
  void (*launch)(const Gemm&, cublasHandle_t);  // kernels ignore the handle; cuBLAS uses it
  KernelLaunch (*describe)(const Gemm&) = nullptr;  // null: no kernel of ours (cuBLAS)
};
const std::vector<GemmKernel>& gemm_kernels();
const GemmKernel& find_kernel(const std::string& name);
// What a kernel's result is cross-checked against at benchmark sizes: cuBLAS, and kernel 3 for cuBLAS.
const GemmKernel& cross_check_for(const GemmKernel& k);

}  // namespace mh::gemm

#include <cmath>
#include <stdexcept>

#include "micro/ceilings.cuh"

#include "harness/device_info.cuh"

namespace mh::ceilings {
namespace {

// A chain's start, 1 + k/1024 with k < 97: exact in float however it is computed (nvcc contracts a * b + c
// into one FMA on the device, the host rounds the product first; a step of 1e-3 would differ by one rounding).
__host__ __device__ inline float chain_seed(uint32_t thread, int j) {
  return 1.0f + static_cast<float>((thread + j) % 97) * 0x1p-10f;
}

__global__ void __launch_bounds__(kMaxThreads, MH_MIN_BLOCKS(kMaxThreads)) fma_kernel(float* out, int iters, float a, float b) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  float x[kFmaChains];
#pragma unroll
  for (int j = 0; j < kFmaChains; ++j) x[j] = chain_seed(t, j);
  // kFmaUnroll trips of the 8 chains per loop iteration: 512 FFMA against 3 loop instructions (UIADD3,
  // ISETP, BRA in the sm_90 SASS), 0.6 % of the issue slots (unroll 4 left 32 FFMA per 3, ~0.91; unroll 32,
  // 256 per 3, still 1.2 %); the body (8 KiB of code) stays within the instruction cache.
#pragma unroll kFmaUnroll
  for (int i = 0; i < iters; ++i)
#pragma unroll
    for (int j = 0; j < kFmaChains; ++j) x[j] = fmaf(x[j], a, b);
  float sum = 0.f;
#pragma unroll
  for (int j = 0; j < kFmaChains; ++j) sum += x[j];
  out[t] = sum;
}

}  // namespace

void launch_fma(float* out, int blocks, int threads, int iters, float a, float b, cudaStream_t s) {
  if (threads < 1 || threads > kMaxThreads) throw std::invalid_argument("launch_fma: threads must be in [1, 256]");
  fma_kernel<<<blocks, threads, 0, s>>>(out, iters, a, b);
  CUDA_CHECK_LAUNCH("fma_kernel");
}

Residency fma_residency(int threads) { return compiled_residency(reinterpret_cast<const void*>(fma_kernel), threads, 0); }

float fma_expected(uint32_t thread, int iters, float a, float b) {
  float x[kFmaChains];
  for (int j = 0; j < kFmaChains; ++j) x[j] = chain_seed(thread, j);
  for (int i = 0; i < iters; ++i)
    for (int j = 0; j < kFmaChains; ++j) x[j] = std::fma(x[j], a, b);
  float sum = 0.f;
  for (int j = 0; j < kFmaChains; ++j) sum += x[j];
  return sum;
}

}  // namespace mh::ceilings

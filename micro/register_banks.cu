#include <algorithm>
#include <stdexcept>

#include "micro/register_banks.cuh"

#include "harness/device_info.cuh"

namespace mh::register_banks {
namespace {

// Exact in float (steps of 1/1024), so the device's and the host's fmaf agree bit for bit.
__host__ __device__ inline float operand(int i) { return 0.25f + static_cast<float>(i % 53) * 0x1p-10f; }

// The float4 a thread reads as x, y and accumulator row i (distinct words; lanes differ, no bank rule
// of shared memory matters: they are read once, before the loop).
__host__ __device__ inline int x_index(uint32_t t) { return t % kOperandFloat4; }
__host__ __device__ inline int y_index(uint32_t t) { return (t + 7) % kOperandFloat4; }
__host__ __device__ inline int acc_index(uint32_t t, int i) { return (t + 64 * (i + 1)) % kOperandFloat4; }

// y's element for accumulator column j.
template <bool kSame>
__host__ __device__ constexpr int column(int j) { return kSame ? j : j ^ 1; }

template <bool kSame>
__host__ __device__ inline void trip(float (&acc)[4][4], const float (&x)[4], const float (&y)[4]) {
#pragma unroll
  for (int r = 0; r < kRounds; ++r)
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
      for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(x[i], y[column<kSame>(j)], acc[i][j]);
}

__host__ __device__ inline float sum(const float (&acc)[4][4]) {
  float s = 0.f;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) s += acc[i][j];
  return s;
}

// At most 64 registers: 8 blocks of 128 threads fit per SM.
template <bool kSame>
__global__ void __launch_bounds__(kThreads, 8) ffma_banks_kernel(float* out, int trips) {
  extern __shared__ float4 smem4[];
  float* sm = reinterpret_cast<float*>(smem4);
  for (int i = threadIdx.x; i < 4 * kOperandFloat4; i += blockDim.x) sm[i] = operand(i);
  __syncthreads();
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  const float4 xv = smem4[x_index(t)], yv = smem4[y_index(t)];
  const float x[4] = {xv.x, xv.y, xv.z, xv.w}, y[4] = {yv.x, yv.y, yv.z, yv.w};
  float acc[4][4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const float4 a = smem4[acc_index(t, i)];
    acc[i][0] = a.x, acc[i][1] = a.y, acc[i][2] = a.z, acc[i][3] = a.w;
  }
#pragma unroll 1
  for (int k = 0; k < trips; ++k) trip<kSame>(acc, x, y);
  out[t] = sum(acc);
}

template <bool kSame>
float replay(uint32_t t, int trips) {
  float x[4], y[4], acc[4][4];
  for (int j = 0; j < 4; ++j) {
    x[j] = operand(4 * x_index(t) + j), y[j] = operand(4 * y_index(t) + j);
    for (int i = 0; i < 4; ++i) acc[i][j] = operand(4 * acc_index(t, i) + j);
  }
  for (int k = 0; k < trips; ++k) trip<kSame>(acc, x, y);
  return sum(acc);
}

using Kernel = void (*)(float*, int);
Kernel kernel_of(Pattern p) { return p == Pattern::same ? ffma_banks_kernel<true> : ffma_banks_kernel<false>; }

Kernel prepared(Pattern p) {
  static bool allowed[2] = {false, false};
  const Kernel k = kernel_of(p);
  if (!allowed[int(p)]) {
    CUDA_CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(current_device_facts().smem_per_block_optin_bytes)));
    allowed[int(p)] = true;
  }
  return k;
}

}  // namespace

const char* pattern_name(Pattern p) { return p == Pattern::same ? "same" : "split"; }

int trips_for(int warps_per_sm, double target_clocks) {
  return std::max(2, static_cast<int>(target_clocks / (double(kFfmaPerTrip) * warps_per_sm / 4)));
}

int resident_blocks(Pattern p, size_t smem) {
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, prepared(p), kThreads, smem));
  return n;
}

void launch(Pattern p, float* out, int blocks, size_t smem, int trips, cudaStream_t st) {
  if (smem < kOperandBytes) throw std::invalid_argument("register_banks::launch: shared memory below the operand buffer");
  if (trips < 1 || blocks < 1) throw std::invalid_argument("register_banks::launch: blocks and trips must be >= 1");
  prepared(p)<<<blocks, kThreads, smem, st>>>(out, trips);
  CUDA_CHECK_LAUNCH("ffma_banks_kernel");
}

float expected(Pattern p, uint32_t thread, int trips) {
  return p == Pattern::same ? replay<true>(thread, trips) : replay<false>(thread, trips);
}

}  // namespace mh::register_banks

#include <cmath>

#include "micro/ceilings.cuh"

namespace mh::ceilings {
namespace {

__host__ __device__ inline float chain_seed(uint32_t thread, int j) { return 1.0f + 1e-3f * static_cast<float>((thread + j) % 97); }

__global__ void fma_kernel(float* out, int iters, float a, float b) {
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  float x[kFmaChains];
#pragma unroll
  for (int j = 0; j < kFmaChains; ++j) x[j] = chain_seed(t, j);
#pragma unroll 4
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
  fma_kernel<<<blocks, threads, 0, s>>>(out, iters, a, b);
  CUDA_CHECK_LAUNCH("fma_kernel");
}

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

// ---- Benchmarks -------------------------------------------------------------------------------
#include "harness/bench.cuh"

namespace {
using namespace mh;

// Every SM full (2048 threads), 8 chains x 4096 FMAs per thread: about 0.3 ms on an H200.
void BM_fma(benchmark::State& st) {
  const DeviceFacts& f = current_device_facts();
  const int threads = 256, blocks = f.sm_count * (f.max_threads_per_sm / threads), iters = 4096;
  DeviceBuffer<float> out(static_cast<size_t>(blocks) * threads);
  run_timed(st, [&] { ceilings::launch_fma(out.data(), blocks, threads, iters, 0.9999f, 1e-4f); });
  const std::vector<float> host = out.download();
  for (uint32_t t : {0u, 1u, static_cast<uint32_t>(host.size() - 1)})
    if (host[t] != ceilings::fma_expected(t, iters, 0.9999f, 1e-4f)) {
      st.SkipWithError("ceiling/fma: result differs from the host replay");
      return;
    }
  st.counters["flops_per_second"] = rate(2.0 * ceilings::kFmaChains * iters * static_cast<double>(host.size()));
}

const bool registered = [] {
  benchmark::RegisterBenchmark("ceiling/fma", BM_fma)->UseManualTime()->Unit(benchmark::kMicrosecond);
  return true;
}();

}  // namespace

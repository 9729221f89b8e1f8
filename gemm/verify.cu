#include "gemm/verify.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "gemm/cublas.cuh"

namespace mh::gemm {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(size_t n) { return static_cast<unsigned>(std::clamp<size_t>((n + kThreads - 1) / kThreads, 1, 4096)); }

// splitmix64's output function: consecutive inputs give independent-looking 64-bit outputs.
__host__ __device__ inline uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

__global__ void fill_kernel(float* p, size_t n, uint64_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const int64_t odd = 2 * int64_t(mix(seed + i * 0x9e3779b97f4a7c15ull) >> 40) + 1;  // odd, in (0, 2^25)
    p[i] = float(odd - (int64_t(1) << 24)) * 0x1p-24f;
  }
}

__global__ void abs_kernel(const float* in, float* out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = fabsf(in[i]);
}

void abs_copy(const DeviceBuffer<float>& in, DeviceBuffer<float>& out) {
  abs_kernel<<<blocks_for(in.size()), kThreads>>>(in.data(), out.data(), in.size());
  CUDA_CHECK_LAUNCH("abs_kernel");
}

// The output of a checked run before it: C0 when beta != 0 (C is read), else NaN poison.
void init_output(DeviceBuffer<float>& out, const DeviceBuffer<float>& C0, float beta) {
  if (beta == 0.f)
    out.fill_bytes(0xff);
  else
    CUDA_CHECK(cudaMemcpy(out.data(), C0.data(), out.bytes(), cudaMemcpyDeviceToDevice));
}

// Largest relative_error over the finite elements and the count of the others; one atomic per warp.
// Non-negative doubles order as their bit patterns, so the max is an integer atomicMax.
template <class T>
__global__ void check_kernel(const float* __restrict__ C, const T* __restrict__ ref, const T* __restrict__ scale,
                             size_t n, unsigned long long* max_bits, unsigned long long* bad) {
  double worst = 0;
  unsigned long long nbad = 0;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const double c = C[i], r = ref[i];
    if (isfinite(c) && isfinite(r))
      worst = fmax(worst, relative_error(c, r, scale[i]));
    else
      ++nbad;
  }
  for (int o = 16; o > 0; o >>= 1) {
    worst = fmax(worst, __shfl_xor_sync(0xffffffffu, worst, o));
    nbad += __shfl_xor_sync(0xffffffffu, nbad, o);
  }
  if ((threadIdx.x & 31) == 0) {
    atomicMax(max_bits, static_cast<unsigned long long>(__double_as_longlong(worst)));
    atomicAdd(bad, nbad);
  }
}

template <class T>
Check check_against(const float* C, const Reference<T>& ref) {
  DeviceBuffer<unsigned long long> out(2);
  out.fill_bytes(0);
  const size_t n = ref.value.size();
  check_kernel<<<blocks_for(n), kThreads>>>(C, ref.value.data(), ref.scale.data(), n, out.data(), out.data() + 1);
  CUDA_CHECK_LAUNCH("check_kernel");
  const std::vector<unsigned long long> h = out.download();
  Check c;
  std::memcpy(&c.max_rel_err, &h[0], sizeof(double));
  c.bad = h[1];
  c.tolerance = ref.tolerance;
  return c;
}

}  // namespace

void fill_uniform(float* p, size_t n, uint64_t seed, cudaStream_t s) {
  fill_kernel<<<blocks_for(n), kThreads, 0, s>>>(p, n, seed);
  CUDA_CHECK_LAUNCH("fill_kernel");
}

Problem::Problem(int M, int N, int K)
    : M(M), N(N), K(K), A(size_t(M) * K), B(size_t(K) * N), C0(size_t(M) * N), C(size_t(M) * N) {
  const uint64_t shape = mix((uint64_t(M) << 42) ^ (uint64_t(N) << 21) ^ uint64_t(K));
  fill_uniform(A.data(), A.size(), mix(shape + 1));
  fill_uniform(B.data(), B.size(), mix(shape + 2));
  fill_uniform(C0.data(), C0.size(), mix(shape + 3));
}

Gemm Problem::prepare(float alpha, float beta) {
  init_output(C, C0, beta);
  return {M, N, K, alpha, beta, A.data(), B.data(), C.data()};
}

Reference<float> device_reference(const Problem& p, float alpha, float beta, const GemmKernel& by,
                                  cublasHandle_t h) {
  const size_t mn = size_t(p.M) * p.N;
  Reference<float> r{DeviceBuffer<float>(mn), DeviceBuffer<float>(mn), tolerance(p.K, RefKind::fp32)};
  init_output(r.value, p.C0, beta);
  by.launch({p.M, p.N, p.K, alpha, beta, p.A.data(), p.B.data(), r.value.data()}, h);
  DeviceBuffer<float> absA(p.A.size()), absB(p.B.size());
  abs_copy(p.A, absA);
  abs_copy(p.B, absB);
  if (beta != 0.f) abs_copy(p.C0, r.scale);
  cublas_sgemm(h, {p.M, p.N, p.K, std::fabs(alpha), std::fabs(beta), absA.data(), absB.data(), r.scale.data()});
  return r;
}

Reference<double> host_reference(const Problem& p, float alpha, float beta) {
  const HostReference h = reference_gemm(p.M, p.N, p.K, alpha, p.A.download(), p.B.download(), beta,
                                         beta == 0.f ? std::vector<float>() : p.C0.download());
  return {DeviceBuffer<double>(h.value), DeviceBuffer<double>(h.scale), tolerance(p.K, RefKind::fp64)};
}

Check check(const float* C, const Reference<float>& ref) { return check_against(C, ref); }
Check check(const float* C, const Reference<double>& ref) { return check_against(C, ref); }

std::string Check::describe() const {
  char buf[160];
  std::snprintf(buf, sizeof buf, "max_rel_err %.3g %s tolerance %.3g, %llu NaN/inf elements", max_rel_err,
                max_rel_err <= tolerance ? "<=" : ">", tolerance, bad);
  return buf;
}

}  // namespace mh::gemm

#include "gemm/tc_verify.cuh"

#include <algorithm>
#include <vector>

#include "gemm/cublas.cuh"

namespace mh::gemm {
namespace {

constexpr int kThreads = 256;

unsigned blocks_for(size_t n) { return static_cast<unsigned>(std::clamp<size_t>((n + kThreads - 1) / kThreads, 1, 4096)); }

__global__ void round_to_bf16_kernel(const float* __restrict__ in, bf16* __restrict__ out, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    out[i] = __float2bfloat16_rn(in[i]);
}

// BF16 -> FP64, exact; with `magnitude`, |x|.
__global__ void widen_kernel(const bf16* __restrict__ in, double* __restrict__ out, size_t n, bool magnitude) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
    const double x = __bfloat162float(in[i]);
    out[i] = magnitude ? fabs(x) : x;
  }
}

void fill_bf16(DeviceBuffer<bf16>& out, uint64_t seed) {
  DeviceBuffer<float> uniform(out.size());
  fill_uniform(uniform.data(), uniform.size(), seed);
  round_to_bf16_kernel<<<blocks_for(out.size()), kThreads>>>(uniform.data(), out.data(), out.size());
  CUDA_CHECK_LAUNCH("round_to_bf16_kernel");
}

void widen(const DeviceBuffer<bf16>& in, DeviceBuffer<double>& out, bool magnitude) {
  widen_kernel<<<blocks_for(in.size()), kThreads>>>(in.data(), out.data(), in.size(), magnitude);
  CUDA_CHECK_LAUNCH("widen_kernel");
}

std::vector<float> to_float(const std::vector<bf16>& x) {
  std::vector<float> f(x.size());
  std::transform(x.begin(), x.end(), f.begin(), [](bf16 v) { return __bfloat162float(v); });
  return f;
}

}  // namespace

TcProblem::TcProblem(int M, int N, int K)
    : M(M), N(N), K(K), A(size_t(M) * K), B(size_t(N) * K), C(size_t(M) * N) {
  // Seeds from the shape (distinct from gemm's Problem streams by the constant), so every run sees the same data.
  const uint64_t shape = (uint64_t(M) << 42) ^ (uint64_t(N) << 21) ^ uint64_t(K) ^ 0x7c0ffee5ull;
  fill_bf16(A, shape * 3 + 1);
  fill_bf16(B, shape * 3 + 2);
}

TcGemm TcProblem::prepare() {
  C.fill_bytes(0xff);
  return {M, N, K, A.data(), B.data(), C.data()};
}

Reference<double> tc_device_reference(const TcProblem& p, cublasHandle_t pedantic) {
  const size_t mn = size_t(p.M) * p.N;
  Reference<double> r{DeviceBuffer<double>(mn), DeviceBuffer<double>(mn), tc_tolerance(p.K)};
  if (mn == 0) return r;
  DeviceBuffer<double> a(p.A.size()), b(p.B.size());
  const double one = 1, zero = 0;
  for (const bool magnitude : {false, true}) {
    widen(p.A, a, magnitude);
    widen(p.B, b, magnitude);
    // Row-major value = A B as column-major value^T = B^T A^T, as cublas_bf16 (gemm/tc_cublas.cuh).
    CUBLAS_CHECK(cublasDgemm(pedantic, CUBLAS_OP_T, CUBLAS_OP_N, p.N, p.M, p.K, &one, b.data(), std::max(p.K, 1), a.data(),
                             std::max(p.K, 1), &zero, (magnitude ? r.scale : r.value).data(), std::max(p.N, 1)));
  }
  return r;
}

Reference<double> tc_host_reference(const TcProblem& p) {
  const std::vector<float> a = to_float(p.A.download()), bt = to_float(p.B.download());
  std::vector<float> b(size_t(p.K) * p.N);  // row-major K x N, as reference_gemm reads B
  for (int n = 0; n < p.N; ++n)
    for (int k = 0; k < p.K; ++k) b[size_t(k) * p.N + n] = bt[size_t(n) * p.K + k];
  const HostReference h = reference_gemm(p.M, p.N, p.K, 1.0, a, b, 0.0, {});
  return {DeviceBuffer<double>(h.value), DeviceBuffer<double>(h.scale), tc_tolerance(p.K)};
}

}  // namespace mh::gemm

// How a GEMM result is judged: the error metric, its tolerance, and the fp64 CPU reference.
// Plain C++ (the host tests include it); the device checker in gemm/verify.cu uses the same metric.
//
// Metric, per element:  err_ij = |C_ij - Cref_ij| / scale_ij,  scale_ij = |alpha| (|A||B|)_ij + |beta| |C0_ij|,
// the relative error of a dot product measured against the sum of the magnitudes of its terms, the
// quantity rounding-error bounds are stated in. (|A||B| comes from cuBLAS on |A|, |B|, or from fp64.)
//
// Tolerance. Each element passes through at most n = K + 2 roundings (K multiply-adds, the alpha
// scaling, the beta add). The worst-case bound is gamma_n = n u / (1 - n u), u = 2^-24: 2 * gamma at
// K = 1024 is 2048 u = 1.2e-4, more than a TF32 result's error (TF32 keeps 10 mantissa bits; its max
// err at K = 1024 on our inputs is ~600-800 u, ~1900 u with truncated inputs), so it cannot tell the
// two apart. We use the probabilistic bound of Higham & Mary ("A New Approach to Probabilistic Rounding
// Error Analysis", SIAM J. Sci. Comput. 41(5), 2019): if rounding errors are independent, of mean zero,
//   |C_ij - exact_ij| <= gamma~_n(lambda) * scale_ij,  gamma~_n(lambda) = exp(lambda sqrt(n) u + n u^2 / (1 - u)) - 1,
// for one element with probability >= 1 - 2n exp(-lambda^2 (1 - u)^2 / 2). With lambda = 10 that is
// 1 - n * 3.9e-22: over all 16.7 M elements of a 4096^3 GEMM, a false failure has probability < 3e-11.
// It holds for any summation order (cuBLAS's included). At K = 1024, gamma~ = 320 u = 1.9e-5.
// Against an fp64 reference (exact to ~K 2^-53) the tolerance is gamma~; against another FP32 result
// both errors add: 2 gamma~. A sequential FP32 sum on our inputs stays near 3 u (simulated), 100x inside.
// What it catches: TF32 against fp64 up to K = 1024 (emulated, 48x48: 622 u > 320 u) and in the
// FP32 cross-check up to K = 512 (887 u > 453 u) -- TF32's error relative to the scale shrinks like
// 1/sqrt(K) while any FP32 bound grows; a dropped or doubled term (err ~ 1/K); an unwritten element
// (NaN poison); a wrong row or column (err ~ 1).
#pragma once
#include <cmath>
#include <vector>

#if defined(__CUDACC__)
#define MH_HOST_DEVICE __host__ __device__
#else
#define MH_HOST_DEVICE
#endif

namespace mh::gemm {

constexpr double kUnitRoundoff = 0x1p-24;  // FP32, round to nearest
constexpr double kLambda = 10.0;

// gamma~_n(lambda) above, for the K + 2 roundings of one element of C.
inline double probabilistic_bound(int K) {
  const double n = K + 2.0, u = kUnitRoundoff;
  return std::expm1(kLambda * std::sqrt(n) * u + n * u * u / (1 - u));
}

enum class RefKind { fp64, fp32 };
inline double tolerance(int K, RefKind ref) { return (ref == RefKind::fp32 ? 2 : 1) * probabilistic_bound(K); }

// err_ij; a zero scale (every term zero) allows only an exact zero.
MH_HOST_DEVICE inline double relative_error(double c, double ref, double scale) {
  const double diff = c > ref ? c - ref : ref - c;
  return scale > 0 ? diff / scale : (diff == 0 ? 0.0 : HUGE_VAL);
}

// The fp64 CPU reference: value = alpha A B + beta C0 and scale = |alpha| |A||B| + |beta| |C0|, row-major.
// C0 is not read when beta == 0 (it may be empty).
struct HostReference {
  std::vector<double> value, scale;
};

inline HostReference reference_gemm(int M, int N, int K, double alpha, const std::vector<float>& A,
                                    const std::vector<float>& B, double beta, const std::vector<float>& C0) {
  HostReference r{std::vector<double>(size_t(M) * N), std::vector<double>(size_t(M) * N)};
  std::vector<double> dot(N), mag(N);
  for (int i = 0; i < M; ++i) {
    dot.assign(N, 0.0);
    mag.assign(N, 0.0);
    for (int k = 0; k < K; ++k) {  // i-k-j: the inner loop runs along rows of B
      const double a = A[size_t(i) * K + k];
      const float* b = &B[size_t(k) * N];
      for (int j = 0; j < N; ++j) {
        dot[j] += a * b[j];
        mag[j] += std::fabs(a) * std::fabs(b[j]);
      }
    }
    for (int j = 0; j < N; ++j) {
      const size_t ij = size_t(i) * N + j;
      const double c0 = beta == 0 ? 0.0 : C0[ij];
      r.value[ij] = alpha * dot[j] + beta * c0;
      r.scale[ij] = std::fabs(alpha) * mag[j] + std::fabs(beta) * std::fabs(c0);
    }
  }
  return r;
}

}  // namespace mh::gemm

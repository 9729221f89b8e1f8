// The GEMM error metric, tolerance and fp64 reference (gemm/accuracy.hpp), without a GPU: an emulated
// FP32 GEMM passes, an emulated TF32 one fails.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "gemm/accuracy.hpp"

using namespace mh::gemm;

namespace {

constexpr double u = kUnitRoundoff;

TEST(GemmTolerance, IsTheProbabilisticBound) {
  EXPECT_NEAR(tolerance(1024, RefKind::fp64) / u, 10 * std::sqrt(1026.0), 0.1);  // 320 u
  EXPECT_DOUBLE_EQ(tolerance(1024, RefKind::fp32), 2 * tolerance(1024, RefKind::fp64));
  EXPECT_LT(tolerance(1024, RefKind::fp64), 1024 * u);  // well inside the worst case gamma_K
  EXPECT_LT(tolerance(0, RefKind::fp64), tolerance(1, RefKind::fp64));
  EXPECT_LT(tolerance(4096, RefKind::fp64), 1e-4);
}

TEST(GemmTolerance, RelativeError) {
  EXPECT_EQ(relative_error(3.0, 3.0, 0.0), 0.0);
  EXPECT_TRUE(std::isinf(relative_error(1e-30, 0.0, 0.0)));
  EXPECT_DOUBLE_EQ(relative_error(1.5, 2.0, 4.0), 0.125);
  EXPECT_DOUBLE_EQ(relative_error(2.5, 2.0, 4.0), 0.125);
}

TEST(GemmReference, SmallExampleWithAlphaAndBeta) {
  // A = [1 -2; 3 4; -5 6] (3x2), B = [1 2 3; -1 0 2] (2x3), C0 = all 1.
  const std::vector<float> A = {1, -2, 3, 4, -5, 6}, B = {1, 2, 3, -1, 0, 2}, C0(9, 1.f);
  const HostReference r = reference_gemm(3, 3, 2, 2.0, A, B, -1.0, C0);
  const std::vector<double> ab = {3, 2, -1, -1, 6, 17, -11, -10, -3};
  const std::vector<double> mag = {3, 2, 7, 7, 6, 17, 11, 10, 27};
  for (int i = 0; i < 9; ++i) {
    EXPECT_DOUBLE_EQ(r.value[i], 2 * ab[i] - 1) << i;
    EXPECT_DOUBLE_EQ(r.scale[i], 2 * mag[i] + 1) << i;
  }
}

TEST(GemmReference, BetaZeroDoesNotReadC) {
  const std::vector<float> A = {2}, B = {3};
  const HostReference r = reference_gemm(1, 1, 1, 1.0, A, B, 0.0, {});  // C0 empty: not read
  EXPECT_EQ(r.value[0], 6.0);
  EXPECT_EQ(r.scale[0], 6.0);
}

// FP32 to TF32: 10 explicit mantissa bits, rounded to nearest (ties away, as cvt.rna.tf32.f32).
float to_tf32(float x) {
  uint32_t b;
  std::memcpy(&b, &x, 4);
  b = (b + 0x1000u) & ~0x1fffu;
  std::memcpy(&x, &b, 4);
  return x;
}

// max relative_error of a sequential-FMA FP32 GEMM of (optionally TF32-rounded) inputs against fp64.
double emulated_max_error(int M, int N, int K, bool tf32) {
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> A(size_t(M) * K), B(size_t(K) * N);
  for (float& v : A) v = dist(gen);
  for (float& v : B) v = dist(gen);
  const HostReference ref = reference_gemm(M, N, K, 1.0, A, B, 0.0, {});
  double worst = 0;
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      float acc = 0.f;
      for (int k = 0; k < K; ++k) {
        const float a = A[size_t(i) * K + k], b = B[size_t(k) * N + j];
        acc = tf32 ? acc + to_tf32(a) * to_tf32(b) : std::fma(a, b, acc);  // TF32 products are exact in FP32
      }
      const size_t ij = size_t(i) * N + j;
      worst = std::fmax(worst, relative_error(acc, ref.value[ij], ref.scale[ij]));
    }
  return worst;
}

// Against fp64 (the GPU tests): FP32 passes 10x inside, TF32 fails, at K = 1024.
TEST(GemmTolerance, PassesFp32AndCatchesTf32AtK1024) {
  const double tol = tolerance(1024, RefKind::fp64);
  const double fp32 = emulated_max_error(48, 48, 1024, false), tf32 = emulated_max_error(48, 48, 1024, true);
  EXPECT_LT(fp32, tol / 10) << "FP32 max err " << fp32 / u << " u";
  EXPECT_GT(tf32, tol) << "TF32 max err " << tf32 / u << " u, tolerance " << tol / u << " u";
}

// The benchmarks' FP32-vs-FP32 cross-check (twice the tolerance) still flags TF32 at K = 512.
TEST(GemmTolerance, CrossCheckCatchesTf32AtK512) {
  const double tf32 = emulated_max_error(48, 48, 512, true), tol = tolerance(512, RefKind::fp32);
  EXPECT_GT(tf32, tol) << "TF32 max err " << tf32 / u << " u, tolerance " << tol / u << " u";
}

}  // namespace

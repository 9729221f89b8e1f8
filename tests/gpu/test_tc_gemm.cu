// The BF16 tensor-core ladder (gemm/tc_gemm.cuh) against the FP64 CPU reference of its BF16 inputs, and the
// verification itself: the device (DGEMM) reference against the CPU's, and planted errors that must fail.
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemm/cublas.cuh"
#include "gemm/tc_cublas.cuh"
#include "gemm/tc_gemm.cuh"
#include "gemm/tc_verify.cuh"
#include "gpu_test.hpp"
#include "harness/device_info.cuh"

using namespace mh;
using namespace mh::gemm;

namespace {

struct Shape {
  int M, N, K;
};

std::string shape_name(const Shape& s) { return std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K); }

// True when k runs as built; else false with tc_compiled_out's reason added to `reasons`. The tests run the
// other kernels and skip at the end with the reasons (a failure of those that ran still fails the test).
bool note_compiled_out(const TcKernel& k, std::string& reasons) {
  const std::string why = tc_compiled_out(k);
  if (why.empty()) return true;
  reasons += (reasons.empty() ? "" : "; ") + why;
  return false;
}

class TcGemmVsFp64 : public ::testing::TestWithParam<Shape> {};

// Every kernel this GPU runs, on a NaN-poisoned C; a kernel that cannot run the shape (architecture, K % 8)
// must say why, and only the K % 8 rule may turn away a kernel on a GPU of its architecture (wgmma_tma,
// wgmma_ws, wgmma_persistent: 9.0). The kernels come from the table: a new row is tested without an edit here.
TEST_P(TcGemmVsFp64, EveryKernelWithinTolerance) {
  REQUIRE_GPU();
  const Shape s = GetParam();
  const int arch = current_device_facts().arch();
  TcProblem p(s.M, s.N, s.K);
  const Reference<double> ref = tc_host_reference(p);
  CublasHandle blas(kTcCublasMath);
  int ran = 0;
  std::string compiled_out;
  for (const TcKernel& k : tc_kernels()) {
    const std::string why = tc_unsupported(k, arch, s.K);
    if (!why.empty()) {
      const bool foreign_arch = arch < k.min_arch || (k.min_arch == 900 && arch != 900);
      EXPECT_TRUE(foreign_arch || (k.threads > 0 && s.K % 8 != 0)) << k.name << ": " << why;
      continue;
    }
    if (!note_compiled_out(k, compiled_out)) continue;
    k.launch(p.prepare(), blas);
    const Check c = check(p.C.data(), ref);
    EXPECT_TRUE(c.pass()) << k.name << " " << shape_name(s) << ": " << c.describe();
    ++ran;
  }
  if (arch < 800) GTEST_SKIP() << "BF16 tensor cores need compute capability 8.0; this GPU is " << arch / 100 << "." << arch / 10 % 10;
  EXPECT_GE(ran, 1);
  if (!compiled_out.empty()) GTEST_SKIP() << compiled_out;
}

// Small (one tile, one k-tile), odd M and N with a K tail (72 = 64 + 8), many k-tiles (the cp.async ring
// wraps 5 times) with partial tiles in M and N, a single element, and K % 8 != 0 (cuBLAS alone).
INSTANTIATE_TEST_SUITE_P(Shapes, TcGemmVsFp64,
                         ::testing::Values(Shape{128, 128, 64}, Shape{133, 77, 72}, Shape{200, 264, 1000},
                                           Shape{1, 1, 8}, Shape{65, 33, 20}),
                         [](const auto& info) { return shape_name(info.param); });

// More output tiles than a persistent grid has blocks: at 2200 x 2100 (18 x 9 tiles of 128 x 256, the last row
// and column partial; 162 tiles over 132 SMs, so blocks of kernel 14 take two tiles, and the grouped walk has a
// full group of 16 tile rows and a partial one of 2) with K = 200 (4 k-tiles, the last 8 deep: a block of two
// tiles wraps the 4-stage ring twice, its phases carried from one tile to the next). Kernel 15: 81 pairs of
// tiles over ~66 clusters of 2, groups of 8 pairs and a partial one of 1. Against the device
// (DGEMM) reference, which DeviceReferenceMatchesTheHostReference holds to the CPU's.
TEST(TcGemm, EveryKernelOnManyTilesPerBlock) {
  REQUIRE_GPU();
  const int arch = current_device_facts().arch();
  if (arch < 800) GTEST_SKIP() << "BF16 tensor cores need compute capability 8.0";
  TcProblem p(2200, 2100, 200);
  CublasHandle pedantic, blas(kTcCublasMath);
  const Reference<double> ref = tc_device_reference(p, pedantic);
  int ran = 0;
  std::string compiled_out;
  for (const TcKernel& k : tc_kernels()) {
    if (!tc_unsupported(k, arch, p.K).empty() || !note_compiled_out(k, compiled_out)) continue;
    k.launch(p.prepare(), blas);
    const Check c = check(p.C.data(), ref);
    EXPECT_TRUE(c.pass()) << k.name << " 2200x2100x200: " << c.describe();
    ++ran;
  }
  EXPECT_GE(ran, 1);
  if (!compiled_out.empty()) GTEST_SKIP() << compiled_out;
}

// The kernels refuse K % 8 != 0 at launch too (a 16-byte load would straddle rows), not just in the plan.
TEST(TcGemm, KernelsRefuseKNotAMultipleOf8) {
  REQUIRE_GPU();
  TcProblem p(16, 16, 12);
  for (const TcKernel& k : tc_kernels()) {
    if (k.threads == 0) continue;
    EXPECT_THROW(k.launch(p.prepare(), nullptr), std::invalid_argument) << k.name;
  }
}

// The benchmarks' reference (two DGEMMs on the device) is the CPU's fp64 sum, to fp64 rounding.
TEST(TcGemm, DeviceReferenceMatchesTheHostReference) {
  REQUIRE_GPU();
  CublasHandle pedantic;
  for (const Shape s : {Shape{133, 77, 72}, Shape{200, 264, 1000}}) {
    TcProblem p(s.M, s.N, s.K);
    const Reference<double> dev = tc_device_reference(p, pedantic), host = tc_host_reference(p);
    const std::vector<double> dv = dev.value.download(), ds = dev.scale.download();
    const std::vector<double> hv = host.value.download(), hs = host.scale.download();
    double worst = 0;
    for (size_t i = 0; i < hv.size(); ++i) {
      ASSERT_GT(hs[i], 0) << i;
      worst = std::max({worst, std::fabs(dv[i] - hv[i]) / hs[i], std::fabs(ds[i] - hs[i]) / hs[i]});
    }
    EXPECT_LT(worst, 1e-12) << shape_name(s);
    EXPECT_EQ(dev.tolerance, host.tolerance);
  }
}

// The inputs are BF16 values in [-1, 1], not all equal, seeded by the shape.
TEST(TcGemm, InputsAreRandomBf16InUnitRange) {
  REQUIRE_GPU();
  TcProblem p(64, 32, 128), q(64, 32, 128);
  const std::vector<bf16> a = p.A.download(), a2 = q.A.download();
  double sum = 0, sum_sq = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const float x = __bfloat162float(a[i]);
    ASSERT_TRUE(x >= -1.f && x <= 1.f) << x;
    ASSERT_EQ(__bfloat162float(a2[i]), x) << i;
    sum += x;
    sum_sq += double(x) * x;
  }
  EXPECT_LT(std::fabs(sum / a.size()), 0.05);                 // mean 0 (sd of the mean 0.006)
  EXPECT_NEAR(sum_sq / a.size(), 1.0 / 3.0, 0.03);             // variance of U(-1, 1)
}

// The checker and tolerance on planted errors at K = 64 (tolerance 1.5e-5): the exact result passes,
// untouched poison fails, a result rounded to BF16 fails, and so does one missing k16 slice.
TEST(TcGemmChecker, PlantedErrorsFail) {
  REQUIRE_GPU();
  TcProblem p(48, 40, 64);
  const Reference<double> ref = tc_host_reference(p);
  const std::vector<double> value = ref.value.download();
  auto result = [&](auto f) {
    std::vector<float> c(value.size());
    for (size_t i = 0; i < c.size(); ++i) c[i] = f(value[i], i);
    p.C.upload(c);
    return check(p.C.data(), ref);
  };
  EXPECT_TRUE(result([](double v, size_t) { return float(v); }).pass());
  p.prepare();
  const Check poison = check(p.C.data(), ref);
  EXPECT_FALSE(poison.pass());
  EXPECT_EQ(poison.bad, 48u * 40u);
  const Check rounded = result([](double v, size_t) { return __bfloat162float(__float2bfloat16_rn(float(v))); });
  EXPECT_FALSE(rounded.pass()) << rounded.describe();
  // The reference of the first 48 products only: the last 16-deep slice dropped.
  TcProblem short_k(48, 40, 48);
  CUDA_CHECK(cudaMemcpy2D(short_k.A.data(), 48 * sizeof(bf16), p.A.data(), 64 * sizeof(bf16), 48 * sizeof(bf16), 48,
                          cudaMemcpyDeviceToDevice));
  CUDA_CHECK(cudaMemcpy2D(short_k.B.data(), 48 * sizeof(bf16), p.B.data(), 64 * sizeof(bf16), 48 * sizeof(bf16), 40,
                          cudaMemcpyDeviceToDevice));
  const std::vector<double> partial = tc_host_reference(short_k).value.download();
  const Check dropped = result([&](double, size_t i) { return float(partial[i]); });
  EXPECT_FALSE(dropped.pass()) << dropped.describe();
}

// The plan's blocks per SM (device facts, register cap of __launch_bounds__) are the compiled kernels'.
TEST(TcGemm, FactsPlanWhatTheOccupancyApiSays) {
  REQUIRE_GPU();
  const DeviceFacts& f = current_device_facts();
  for (const TcKernel& k : tc_kernels()) {
    if (k.threads == 0 || !tc_unsupported(k, f.arch(), 8).empty()) continue;
    const Residency compiled = tc_compiled_residency(k);
    EXPECT_GE(compiled.blocks_per_sm, 1) << k.name;
    EXPECT_LE(compiled.regs_per_thread, tc_planned_residency(f, k).regs_per_thread) << k.name;
    if (!kernels_from_ptx()) EXPECT_EQ(compiled.blocks_per_sm, tc_planned_residency(f, k).blocks_per_sm) << k.name;
  }
}

}  // namespace

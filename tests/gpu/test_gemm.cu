#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "gemm/cublas.cuh"
#include "gemm/gemm.cuh"
#include "gemm/verify.cuh"
#include "harness/device_info.cuh"
#include "gemm/8_warptile_tuned.cuh"
#include "gpu_test.hpp"
#include "model/gemm_model.hpp"

using namespace mh;
using namespace mh::gemm;

namespace {

// The counting model's shape of kernels 7 and 8 (model/gemm_model.hpp tiled_shape, gemm/tile_maps.hpp) is the
// compiled one, and so is what the configuration derives from it (threads, shared memory).
template <class Cfg>
constexpr bool model_matches(model::GemmKernel k) {
  const TileShape s = model::tiled_shape(k);
  return s.BM == Cfg::BM && s.BN == Cfg::BN && s.BK == Cfg::BK && s.threads == Cfg::kThreads && s.stages == Cfg::kStages &&
         s.WM == Cfg::WM && s.WN == Cfg::WN && s.LN == Cfg::LN && tile_smem_bytes(s) == int(Cfg::kSmemBytes) &&
         s.lanes == Cfg::kMap && s.TM == Cfg::TM && s.TN == Cfg::TN;
}
static_assert(model_matches<WarptileDefault>(model::GemmKernel::warptile), "model/gemm_model.hpp: warptile shape");
static_assert(model_matches<WarptileTuned>(model::GemmKernel::warptile_tuned), "model/gemm_model.hpp: tuned shape");

struct Shape {
  int M, N, K;
};

// (alpha, beta): the timed case, and beta != 0 with a random C0 (C is read, scaled and added).
constexpr std::pair<float, float> kScalings[] = {{1.f, 0.f}, {-1.5f, 0.75f}};

class GemmVsFp64 : public ::testing::TestWithParam<Shape> {};

// Every kernel, cuBLAS included, against the fp64 CPU reference, NaN-poisoned output when beta == 0.
TEST_P(GemmVsFp64, EveryKernelWithinTolerance) {
  REQUIRE_GPU();
  const Shape s = GetParam();
  Problem p(s.M, s.N, s.K);
  CublasHandle blas;
  for (const auto& [alpha, beta] : kScalings) {
    const Reference<double> ref = host_reference(p, alpha, beta);
    for (const GemmKernel& k : gemm_kernels()) {
      k.launch(p.prepare(alpha, beta), blas);
      const Check c = check(p.C.data(), ref);
      EXPECT_TRUE(c.pass()) << k.name << " alpha " << alpha << " beta " << beta << ": " << c.describe();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, GemmVsFp64,
                         ::testing::Values(Shape{1, 1, 1}, Shape{33, 65, 17}, Shape{67, 45, 33},
                                           Shape{128, 128, 128}, Shape{7, 300, 257}, Shape{1000, 1000, 100},
                                           Shape{40, 24, 0}),
                         [](const auto& info) {
                           const Shape& s = info.param;
                           return std::to_string(s.M) + "x" + std::to_string(s.N) + "x" + std::to_string(s.K);
                         });

// The benchmarks' own check (FP32 reference on the device, cuBLAS or kernel 3 for cuBLAS) at larger sizes.
TEST(Gemm, EveryKernelPassesTheBenchmarkCrossCheck) {
  REQUIRE_GPU();
  CublasHandle blas;
  for (const Shape s : {Shape{1000, 1000, 1000}, Shape{257, 513, 1031}}) {
    Problem p(s.M, s.N, s.K);
    for (const GemmKernel& k : gemm_kernels()) {
      const Reference<float> ref = device_reference(p, 1.f, 0.f, cross_check_for(k), blas);
      k.launch(p.prepare(1.f, 0.f), blas);
      const Check c = check(p.C.data(), ref);
      EXPECT_TRUE(c.pass()) << k.name << " " << s.M << "x" << s.N << "x" << s.K << ": " << c.describe();
    }
  }
}

// cuBLAS in the suite's math mode is FP32-accurate; the same call with TF32 allowed is not, and the
// tolerance (gamma~ = 320 u at K = 1024, gemm/accuracy.hpp) is tight enough to say so.
TEST(Gemm, CublasIsFp32AndTheToleranceCatchesTf32) {
  REQUIRE_GPU();
  Problem p(512, 512, 1024);
  const Reference<double> ref = host_reference(p, 1.f, 0.f);
  CublasHandle strict, tf32(CUBLAS_TF32_TENSOR_OP_MATH);
  cublas_sgemm(strict, p.prepare(1.f, 0.f));
  const Check fp32 = check(p.C.data(), ref);
  EXPECT_TRUE(fp32.pass()) << "cuBLAS in " << cublas_math_context() << ": " << fp32.describe();
  cublas_sgemm(tf32, p.prepare(1.f, 0.f));
  const Check reduced = check(p.C.data(), ref);
  EXPECT_FALSE(reduced.pass()) << "cuBLAS with TF32 allowed: " << reduced.describe();
}

// A run's plans and counting model take blocks per SM from the compiled kernel (Planner::residency);
// --plan-for takes them from the device facts, which must then say what the occupancy API says of
// every kernel of ours, built for this GPU. Code compiled for another architecture (a 75-virtual build
// JIT-compiled here) has that architecture's __launch_bounds__ limits, which the facts cannot know.
TEST(Gemm, FactsPlanWhatTheOccupancyApiSays) {
  REQUIRE_GPU();
  const DeviceFacts& f = current_device_facts();
  std::vector<std::pair<std::string, int>> resident;
  for (const GemmKernel& k : gemm_kernels()) {
    if (!k.kernel) continue;  // cuBLAS
    const int n = compiled_residency(k.kernel, k.threads, 0).blocks_per_sm;
    EXPECT_GE(n, 1) << k.name;
    resident.emplace_back(k.name, n);
  }
  if (kernels_from_ptx()) GTEST_SKIP() << "the kernels were not compiled for this GPU (code_from_ptx): the facts plan a build for it";
  for (const auto& [name, n] : resident) EXPECT_EQ(n, planned_blocks_per_sm(f, find_kernel(name))) << name;
}

// The clock probe that decides code_from_ptx for the run speaks for every kernel of ours: one build, one
// kind of code.
TEST(Gemm, EveryKernelIsTheSameKindOfCodeAsTheProbe) {
  REQUIRE_GPU();
  const DeviceFacts& f = current_device_facts();
  for (const GemmKernel& k : gemm_kernels()) {
    if (!k.kernel) continue;
    cudaFuncAttributes a{};
    CUDA_CHECK(cudaFuncGetAttributes(&a, k.kernel));
    EXPECT_EQ(code_from_ptx(a.binaryVersion, a.ptxVersion, f.cc_major, f.cc_minor), kernels_from_ptx())
        << k.name << ": binaryVersion " << a.binaryVersion << ", ptxVersion " << a.ptxVersion;
  }
}

// The checker itself: planted bugs must fail.
TEST(GemmChecker, UntouchedOutputIsAllNaN) {
  REQUIRE_GPU();
  Problem p(64, 48, 40);
  const Reference<double> ref = host_reference(p, 1.f, 0.f);
  p.prepare(1.f, 0.f);  // poisons C; no kernel runs
  const Check c = check(p.C.data(), ref);
  EXPECT_FALSE(c.pass());
  EXPECT_EQ(c.bad, 64u * 48u);
}

TEST(GemmChecker, UnwrittenLastRowIsCaught) {
  REQUIRE_GPU();
  Problem p(64, 48, 40);
  const Reference<double> ref = host_reference(p, 1.f, 0.f);
  Gemm g = p.prepare(1.f, 0.f);
  g.M -= 1;  // an off-by-one in the row bound: the last row of C is never written
  find_kernel("smem").launch(g, nullptr);
  const Check c = check(p.C.data(), ref);
  EXPECT_FALSE(c.pass());
  EXPECT_EQ(c.bad, 48u);
}

TEST(GemmChecker, OneElementJustOutsideToleranceIsCaught) {
  REQUIRE_GPU();
  Problem p(64, 48, 40);
  const Reference<double> ref = host_reference(p, 1.f, 0.f);
  const std::vector<double> value = ref.value.download(), scale = ref.scale.download();
  const double tol = ref.tolerance;
  const size_t i = 1234;
  auto with_error = [&](double rel) {  // the exact result, one element off by rel * tol
    std::vector<float> c(value.begin(), value.end());
    c[i] = static_cast<float>(value[i] + rel * tol * scale[i]);
    p.C.upload(c);
    return check(p.C.data(), ref);
  };
  const Check inside = with_error(0.5), outside = with_error(2.0);
  EXPECT_TRUE(inside.pass()) << inside.describe();
  EXPECT_FALSE(outside.pass());
  EXPECT_NEAR(outside.max_rel_err, 2.0 * tol, 0.01 * tol);
}

TEST(GemmChecker, FillIsUniformNonzeroAndSeeded) {
  REQUIRE_GPU();
  DeviceBuffer<float> a(1 << 16), b(1 << 16);
  fill_uniform(a.data(), a.size(), 42);
  fill_uniform(b.data(), b.size(), 42);
  const std::vector<float> x = a.download();
  EXPECT_EQ(x, b.download());
  double sum = 0;
  for (float v : x) {
    ASSERT_TRUE(v > -1.f && v < 1.f && v != 0.f) << v;
    sum += v;
  }
  EXPECT_LT(std::fabs(sum / x.size()), 0.01);  // mean 0, sd of the mean 0.0023
}

}  // namespace

// The tensor family's kernels against the host: every ldmatrix form's per-thread sums, every mma.sync type's
// and every wgmma N's accumulator tile with random operands (a wrong fragment map fails here), and the
// host check itself rejecting a wrong product.
#include <cstring>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "harness/device_buffer.cuh"
#include "micro/tensor.cuh"

using namespace mh;
using namespace mh::tensor;

namespace {
const Dtype kAll[] = {Dtype::fp16, Dtype::bf16, Dtype::tf32, Dtype::int8, Dtype::fp8_e4m3};

std::string run_mma(Dtype t, bool latency, int blocks, int iters) {
  const MmaShape sh = mma_shape(t);
  const std::vector<uint8_t> a = make_matrix(t, Data::random, sh.m, sh.k, 7), b = make_matrix(t, Data::random, sh.k, sh.n, 8);
  DeviceBuffer<uint8_t> da(a), db(b);
  DeviceBuffer<uint32_t> d(sh.m * sh.n);
  d.fill_bytes(0xff);
  DeviceBuffer<ClockSpan> spans(blocks);
  launch_mma(t, latency, da.data(), db.data(), blocks, latency ? 32 : kMmaThreads, iters, d.data(), spans.data());
  return check_product(t, a, b, sh.m, sh.n, sh.k, mma_steps(latency, iters), d.download());
}
}  // namespace

// Host side: the check must reject what a wrong fragment map produces (here B's columns rotated by one).
TEST(Tensor, CheckProductRejectsAWrongTile) {
  for (Dtype t : kAll) {
    const MmaShape sh = mma_shape(t);
    const std::vector<uint8_t> a = make_matrix(t, Data::random, sh.m, sh.k, 7), b = make_matrix(t, Data::random, sh.k, sh.n, 8);
    std::vector<uint8_t> rotated(b.size());
    const int eb = elem_bytes(t);
    for (int k = 0; k < sh.k; ++k)
      for (int n = 0; n < sh.n; ++n)
        for (int j = 0; j < eb; ++j) rotated[(k * sh.n + (n + 1) % sh.n) * eb + j] = b[(k * sh.n + n) * eb + j];
    // The right tile, as the GPU would write it (float bits or int32), for the rotated B.
    std::vector<uint32_t> tile(sh.m * sh.n);
    for (int r = 0; r < sh.m; ++r)
      for (int c = 0; c < sh.n; ++c) {
        double s = 0;
        for (int k = 0; k < sh.k; ++k) s += element_value(t, a, r * sh.k + k) * element_value(t, rotated, k * sh.n + c);
        const float f = static_cast<float>(s);
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        tile[r * sh.n + c] = t == Dtype::int8 ? static_cast<uint32_t>(static_cast<int32_t>(s)) : bits;
      }
    EXPECT_EQ(check_product(t, a, rotated, sh.m, sh.n, sh.k, 1, tile), "") << dtype_name(t);
    EXPECT_NE(check_product(t, a, b, sh.m, sh.n, sh.k, 1, tile), "") << dtype_name(t);
  }
}

TEST(Tensor, ZeroOperandsAreZero) {
  for (Dtype t : kAll) {
    const std::vector<uint8_t> z = make_matrix(t, Data::zero, 16, 32, 1);
    for (size_t i = 0; i < 16 * 32; ++i) ASSERT_EQ(element_value(t, z, i), 0.0) << dtype_name(t);
  }
}

// Every type this GPU has and this build compiled in; the others' reasons skip the test at the end (after
// the types that did run were checked: a failure still fails it).
TEST(Tensor, MmaTilesMatchHost) {
  REQUIRE_GPU();
  const int arch = current_device_facts().arch();
  std::string compiled_out_types;
  for (Dtype t : kAll) {
    if (arch < mma_shape(t).min_arch) continue;  // the plan skips it there
    const std::string why = compiled_out(t);
    if (!why.empty()) {
      compiled_out_types += (compiled_out_types.empty() ? "" : "; ") + why;
      continue;
    }
    EXPECT_EQ(run_mma(t, false, 2, 3), "") << dtype_name(t) << " throughput kernel";
    EXPECT_EQ(run_mma(t, true, 1, 5), "") << dtype_name(t) << " latency kernel";
  }
  if (arch < 800) GTEST_SKIP() << "mma.sync m16n8k16 needs sm_80";
  if (!compiled_out_types.empty()) GTEST_SKIP() << compiled_out_types;
}

TEST(Tensor, MmaLatencyIsPlausible) {
  REQUIRE_GPU();
  if (current_device_facts().arch() < 800) GTEST_SKIP() << "mma.sync m16n8k16 needs sm_80";
  if (const std::string why = compiled_out(Dtype::bf16); !why.empty()) GTEST_SKIP() << why;
  const MmaShape sh = mma_shape(Dtype::bf16);
  const std::vector<uint8_t> a = make_matrix(Dtype::bf16, Data::random, sh.m, sh.k, 7), b = make_matrix(Dtype::bf16, Data::random, sh.k, sh.n, 8);
  DeviceBuffer<uint8_t> da(a), db(b);
  DeviceBuffer<uint32_t> d(sh.m * sh.n);
  DeviceBuffer<ClockSpan> spans(1);
  const int steps = 1024;
  launch_mma(Dtype::bf16, true, da.data(), db.data(), 1, 32, steps, d.data(), spans.data());
  ASSERT_EQ(check_product(Dtype::bf16, a, b, sh.m, sh.n, sh.k, steps, d.download()), "");
  SKIP_TIMING_UNDER_SANITIZER();
  const double cycles = static_cast<double>(spans.download()[0].cycles) / steps;
  EXPECT_GT(cycles, 4.0);    // a dependent tensor-core op takes more than a few clocks (public: ~30 on sm_80/90)
  EXPECT_LT(cycles, 200.0);  // and far fewer than a memory access
}

TEST(Tensor, LdmatrixSumsMatchHost) {
  REQUIRE_GPU();
  for (LdPlan p : ldmatrix_configs()) {
    p.blocks = 2;
    p.iters = 3;
    if (const std::string why = compiled_out(p); !why.empty()) GTEST_SKIP() << why;
    DeviceBuffer<uint32_t> sums(p.blocks * kLdThreads);
    DeviceBuffer<ClockSpan> spans(p.blocks);
    launch_ldmatrix(p, sums.data(), spans.data());
    const std::vector<uint32_t> got = sums.download();
    for (size_t t = 0; t < got.size(); ++t)
      ASSERT_EQ(got[t], expected_ldmatrix_sum(p, static_cast<int>(t % 32)))
          << "x" << p.matrices << " trans " << p.trans << " layout " << static_cast<int>(p.layout) << " thread " << t;
  }
}

// .trans must change what a lane holds (else the sums could not tell a missing .trans).
TEST(Tensor, LdmatrixTransChangesTheSums) {
  LdPlan plain, trans;
  trans.trans = true;
  int differ = 0;
  for (int lane = 0; lane < 32; ++lane) differ += expected_ldmatrix_sum(plain, lane) != expected_ldmatrix_sum(trans, lane);
  EXPECT_GT(differ, 24);
}

TEST(Tensor, WgmmaTilesMatchHost) {
  REQUIRE_GPU();
  if (current_device_facts().arch() != 900) GTEST_SKIP() << "wgmma needs sm_90a (an H100/H200)";
  for (Dtype t : {Dtype::bf16, Dtype::fp8_e4m3})
    for (bool rs : {false, true})
      for (int n : {64, 128, 256}) {
        if (!wgmma_supported(t, n, rs)) continue;
        if (const std::string why = compiled_out(t, n, rs); !why.empty()) GTEST_SKIP() << why;
        const int k = wgmma_k(t), iters = 3;
        const std::vector<uint8_t> a = make_matrix(t, Data::random, 64, k, 3), b = make_matrix(t, Data::random, k, n, 4);
        DeviceBuffer<uint8_t> da(a), db(b);
        DeviceBuffer<uint32_t> d(64 * n);
        d.fill_bytes(0xff);
        DeviceBuffer<ClockSpan> spans(2);
        launch_wgmma(t, n, rs, da.data(), db.data(), 2, iters, d.data(), spans.data());
        EXPECT_EQ(check_product(t, a, b, 64, n, k, iters * kWgmmaUnroll, d.download()), "")
            << dtype_name(t) << (rs ? " RS" : " SS") << " n " << n;
      }
}

TEST(Tensor, WgmmaRejectsFormsItLacks) {
  EXPECT_FALSE(wgmma_supported(Dtype::fp8_e4m3, 64, true));
  EXPECT_FALSE(wgmma_supported(Dtype::bf16, 96, false));
  EXPECT_THROW(launch_wgmma(Dtype::tf32, 64, false, nullptr, nullptr, 1, 1, nullptr, nullptr), std::invalid_argument);
}

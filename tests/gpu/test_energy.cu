// The energy loop: every launch it makes is a real one (checksums and results over all of them; the tensor
// cores' tiles after the loop against the host's product), and the energy it reads is positive and grows.
// Skips with the reason where NVML gives no energy source.
#include <chrono>
#include <string>
#include <vector>

#include "gpu_test.hpp"
#include "harness/device_buffer.cuh"
#include "harness/nvml.cuh"
#include "micro/ceilings.cuh"
#include "micro/energy.cuh"
#include "micro/roofs.cuh"
#include "micro/tensor.cuh"

namespace {

// The NVML device and its source; the test skips (with the reason) where there is none.
#define REQUIRE_ENERGY_SOURCE(dev, source)                                          \
  std::string why_;                                                                 \
  const mh::nvml::Device dev = mh::nvml::device_handle(0, &why_);                   \
  if (!dev) GTEST_SKIP() << "no NVML device: " << why_;                             \
  const mh::energy::Source source = mh::energy::probe(dev, &why_);                  \
  if (source == mh::energy::Source::none) GTEST_SKIP() << why_;

mh::energy::Plan short_plan(mh::energy::Source source) {
  mh::energy::Plan p;
  p.source = source;
  p.warmup_s = 0.02;
  p.window_s = 0.05;
  p.batch_s = 0.002;  // short batches of short launches: a few hundred queued, under CUDA's launch queue
  p.queue_s = 0.006;
  p.cuda_device = 0;
  return p;
}

}  // namespace

TEST(EnergyLoop, ReadChecksumCountsEveryLaunchAndEnergyIsPositive) {
  REQUIRE_GPU();
  REQUIRE_ENERGY_SOURCE(dev, source);
  // A 1 MiB working set (L2) read for 256 MiB per launch by 2 blocks per SM: tens of us a launch.
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  const mh::roofs::Walk w = mh::roofs::make_walk(16, 8, 2 * sms, 256, 1 << 20, 256 << 20);
  mh::DeviceBuffer<uint32_t> buf(w.words()), checksum(1);
  mh::roofs::fill_values(buf.data(), w.words());
  checksum.fill_bytes(0);
  mh::energy::Loop loop;
  loop.units_per_launch = static_cast<double>(w.bytes_per_launch());
  loop.launch = [&] { mh::roofs::launch_read(w, mh::roofs::Load::cg, buf.data(), checksum.data()); };
  const mh::energy::Window win = mh::energy::run_window(loop, dev, short_plan(source));
  ASSERT_GE(win.all_launches, win.launches + 2);  // the two sizing launches and the warm-up too
  ASSERT_GE(win.launches, 1);
  EXPECT_EQ(checksum.download()[0], static_cast<uint32_t>(win.all_launches) * mh::roofs::expected_read_checksum(w));
  EXPECT_GT(win.gpu_seconds, 0.0);
  EXPECT_GT(win.energy.joules, 0.0);
  if (source == mh::energy::Source::counter) EXPECT_GE(win.energy.seconds, 0.05);  // edge to edge, at least the window
  EXPECT_GT(win.energy.watts(), 1.0);      // a busy GPU draws watts ...
  EXPECT_LT(win.energy.watts(), 5000.0);   // ... and not kilowatts: mJ read as mJ, seconds as seconds
}

TEST(EnergyLoop, FmaResultsMatchTheHostReplayAfterTheLoop) {
  REQUIRE_GPU();
  REQUIRE_ENERGY_SOURCE(dev, source);
  const int blocks = 8, threads = 128, iters = 4096;
  mh::DeviceBuffer<float> out(blocks * threads);
  out.fill_bytes(0xff);
  mh::energy::Loop loop;
  loop.units_per_launch = 2.0 * mh::ceilings::kFmaChains * iters * blocks * threads;
  loop.launch = [&] { mh::ceilings::launch_fma(out.data(), blocks, threads, iters, 0.9999f, 1e-4f); };
  const mh::energy::Window win = mh::energy::run_window(loop, dev, short_plan(source));
  EXPECT_GT(win.energy.joules, 0.0);
  const std::vector<float> host = out.download();
  for (uint32_t t = 0; t < host.size(); ++t) ASSERT_EQ(host[t], mh::ceilings::fma_expected(t, iters, 0.9999f, 1e-4f)) << "thread " << t;
}

// The energy family's tensor-core loops (energy/<wgmma|mma>/bf16/data:<random|zero>): the same launches, short,
// in a window; block 0's tile of the last launch is iters x A.B (zero operands: exactly 0).
TEST(EnergyLoop, TensorCoreTilesMatchTheHostProductAfterTheLoop) {
  REQUIRE_GPU();
  REQUIRE_ENERGY_SOURCE(dev, source);
  using namespace mh::tensor;
  const Dtype t = Dtype::bf16;
  const int n_wg = 256, iters = 2048;  // ~0.1 ms (mma) to ~0.5 ms (wgmma) a launch, one block per SM
  int sms = 0, measured = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  std::string skipped;
  for (bool wgmma : {true, false}) {
    if (const std::string why = wgmma ? compiled_out(t, n_wg, false) : compiled_out(t); !why.empty()) {
      skipped += why + "; ";
      continue;
    }
    const MmaShape mma = mma_shape(t);
    const int m = wgmma ? 64 : mma.m, n = wgmma ? n_wg : mma.n, k = wgmma ? wgmma_k(t) : mma.k;
    for (Data data : {Data::random, Data::zero}) {
      const std::vector<uint8_t> a = make_matrix(t, data, m, k, kSeedA), b = make_matrix(t, data, k, n, kSeedB);
      mh::DeviceBuffer<uint8_t> da(a), db(b);
      mh::DeviceBuffer<uint32_t> d(static_cast<size_t>(m) * n);
      d.fill_bytes(0xff);
      mh::DeviceBuffer<mh::ClockSpan> spans(sms);
      mh::energy::Loop loop;
      loop.units_per_launch = 1;
      loop.launch = [&] {
        if (wgmma)
          launch_wgmma(t, n_wg, false, da.data(), db.data(), sms, iters, d.data(), spans.data());
        else
          launch_mma(t, false, da.data(), db.data(), sms, kMmaThreads, iters, d.data(), spans.data());
      };
      const mh::energy::Window win = mh::energy::run_window(loop, dev, short_plan(source));
      EXPECT_GT(win.energy.joules, 0.0);
      const double steps = wgmma ? static_cast<double>(iters) * kWgmmaUnroll : mma_steps(false, iters);
      EXPECT_EQ(check_product(t, a, b, m, n, k, steps, d.download()), "") << (wgmma ? "wgmma " : "mma ") << data_name(data);
      ++measured;
    }
  }
  if (measured == 0) GTEST_SKIP() << skipped;
}

TEST(EnergyCounter, IsMonotonicAndMovesWhileTheGpuWorks) {
  REQUIRE_GPU();
  std::string why;
  const mh::nvml::Device dev = mh::nvml::device_handle(0, &why);
  if (!dev) GTEST_SKIP() << "no NVML device: " << why;
  unsigned long long first = 0;
  if (!mh::nvml::total_energy_mj(dev, &first)) GTEST_SKIP() << "NVML gives no energy counter for this GPU";
  // FMA launches for up to 2 s, reading the counter between them: it never goes back, and it moves.
  int sms = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  mh::DeviceBuffer<float> out(static_cast<size_t>(sms) * 256);
  unsigned long long last = first;
  const auto start = std::chrono::steady_clock::now();
  while (last == first && std::chrono::steady_clock::now() - start < std::chrono::seconds(2)) {
    mh::ceilings::launch_fma(out.data(), sms, 256, 4096, 0.9999f, 1e-4f);
    CUDA_CHECK(cudaDeviceSynchronize());
    unsigned long long now = 0;
    ASSERT_TRUE(mh::nvml::total_energy_mj(dev, &now));
    ASSERT_GE(now, last) << "the energy counter went back";
    last = now;
  }
  EXPECT_GT(last, first) << "the energy counter did not move in 2 s of FMA launches";
}

TEST(EnergyIdle, IdlePowerIsPositiveAndTheCounterHasAPeriod) {
  REQUIRE_GPU();
  REQUIRE_ENERGY_SOURCE(dev, source);
  const mh::energy::Idle idle = mh::energy::measure_idle(dev, source, 0.0, 0.2);
  if (source == mh::energy::Source::counter && idle.source == mh::energy::Source::none)
    GTEST_SKIP() << "the energy counter did not move in 0.8 s of idle";
  EXPECT_GT(idle.watts, 1.0);
  EXPECT_LT(idle.watts, 5000.0);
  if (idle.source == mh::energy::Source::counter) {
    EXPECT_GT(idle.period_ms, 0.0);
    EXPECT_LT(idle.period_ms, 800.0);
  }
}

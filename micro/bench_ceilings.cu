// Ceilings in the same run: ceiling/fma (FP32 FMA throughput, the roofline's compute roof) and
// ceiling/memcpy_d2d (bytes read plus written by a device-to-device copy, the reference for HBM).
#include <algorithm>

#include "harness/bench.cuh"
#include "micro/bench_roofs.cuh"
#include "micro/ceilings.cuh"

namespace {
using namespace mh;

constexpr int kFmaThreads = ceilings::kMaxThreads;
// 8 chains x 16384 FMAs per thread: about 1.1 ms a launch on an H200, so that the gap between back-to-back
// launches and the ramp and drain of a grid (microseconds) cost well under 1 %.
constexpr int kFmaIters = 16384;
static_assert(kFmaIters % ceilings::kFmaUnroll == 0, "no remainder loop");

// Every SM full of blocks, 8 chains x kFmaIters FMAs per thread.
void fma(benchmark::State& st, int blocks) {
  DeviceBuffer<float> out(static_cast<size_t>(blocks) * kFmaThreads);
  run_timed(st, [&] { ceilings::launch_fma(out.data(), blocks, kFmaThreads, kFmaIters, 0.9999f, 1e-4f); });
  const std::vector<float> host = out.download();
  for (uint32_t t : {0u, 1u, static_cast<uint32_t>(host.size() - 1)})
    if (host[t] != ceilings::fma_expected(t, kFmaIters, 0.9999f, 1e-4f)) {
      st.SkipWithError("ceiling/fma: result differs from the host replay");
      return;
    }
  st.counters["flops_per_second"] = rate(2.0 * ceilings::kFmaChains * kFmaIters * static_cast<double>(host.size()));
}

// A copy of `bytes` (1 GiB, less where free memory is short, but never below 4x L2: it must miss L2).
void memcpy_d2d(benchmark::State& st, size_t bytes) {
  const size_t min_bytes = 4 * current_device_facts().l2_bytes;
  bytes = std::min(bytes, usable_device_bytes() / 2 >> 20 << 20);
  if (bytes < min_bytes) {
    skip_benchmark(st, "a copy that misses L2 needs 2 x " + std::to_string(min_bytes >> 20) + " MiB of device memory, " +
                           std::to_string(usable_device_bytes() >> 20) + " MiB are free");
    return;
  }
  DeviceBuffer<unsigned char> src(bytes), dst(bytes);
  src.fill_bytes(1);
  run_timed(st, [&] { CUDA_CHECK(cudaMemcpyAsync(dst.data(), src.data(), bytes, cudaMemcpyDeviceToDevice)); });
  st.counters["bytes_per_second"] = rate(2.0 * bytes);
  st.counters["copy_bytes"] = value(static_cast<double>(bytes));
}

void plan(Planner& p) {
  const DeviceFacts& f = p.facts();
  Launch fl;
  fl.threads = kFmaThreads;
  // A full SM of resident blocks: on the GPU, as many as the compiled kernel gets; for --plan-for, the facts'.
  const int cap = ceilings::register_cap(f.arch());
  const Residency r = p.residency({cap, blocks_per_sm(f, kFmaThreads, 0, cap)}, [] { return ceilings::fma_residency(kFmaThreads); });
  fl.blocks_per_sm = r.blocks_per_sm;
  fl.blocks = static_cast<long long>(f.sm_count) * fl.blocks_per_sm;
  fl.regs_per_thread = r.regs_per_thread;
  fl.device_bytes = static_cast<size_t>(fl.blocks) * kFmaThreads * sizeof(float);
  fl.note = std::to_string(ceilings::kFmaChains) + " chains x " + std::to_string(kFmaIters) + " FMAs per thread";
  const long long blocks = fl.blocks;
  p.add_if_resident("ceiling/fma", fl, [blocks](benchmark::State& st) { fma(st, static_cast<int>(blocks)); });

  const size_t bytes = std::min<size_t>(1ull << 30, f.global_mem_bytes / 4);
  Launch ml;
  ml.device_bytes = 2 * bytes;
  ml.note = "cudaMemcpyAsync of " + std::to_string(bytes >> 20) + " MiB";
  if (bytes < 4 * f.l2_bytes)
    p.skip("ceiling/memcpy_d2d", "a copy that misses L2 needs 2 x 4x L2 of device memory");
  else
    p.add_if_resident("ceiling/memcpy_d2d", ml, [bytes](benchmark::State& st) { memcpy_d2d(st, bytes); });
  roofs::plan_roofs(p);
}

}  // namespace

MH_FAMILY("ceiling", plan);

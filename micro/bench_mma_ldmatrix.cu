// ldmatrix + mma.sync in the mma.sync GEMM kernels' mix (micro/mma_ldmatrix.cuh; docs/families/tensor.md):
//   tensor/mma_ldmatrix/bf16/ops:<mix|ldmatrix|mma>/warps:<W>
// W: the GEMM kernels' resident warps per SM (kMinBlocks blocks of 256 threads: 16) and one block's (8). One
// wave of sm_count x W / 8 blocks, the residency pinned by dynamic shared memory and confirmed by the occupancy
// API; about 1 ms per launch, ~0.1 s per benchmark in a full run. gpubench/analysis/tc_predict.py reads
// cycles_per_step of the three kinds at the GEMM's W.
#include "harness/bench.cuh"
#include "micro/mma_ldmatrix.cuh"

namespace {
using namespace mh;
using namespace mh::tensor::mix;

constexpr double kTargetClocks = 1 << 21;  // per launch: ~1 ms at 2 GHz
constexpr int kWarpsPerBlock = kThreads / 32;

void run(benchmark::State& st, Kind k, int warps_per_sm, size_t smem) {
  if (const std::string why = compiled_out(k); !why.empty()) {
    skip_benchmark(st, why);
    return;
  }
  const DeviceFacts& f = current_device_facts();
  const int want = warps_per_sm / kWarpsPerBlock, resident = residency(k, smem).blocks_per_sm;
  if (resident != want) {
    skip_benchmark(st, "occupancy API: " + std::to_string(resident) + " blocks per SM fit, the benchmark needs exactly " +
                           std::to_string(want));
    return;
  }
  const int blocks = want * f.sm_count, trips = trips_for(warps_per_sm, kTargetClocks);
  DeviceBuffer<unsigned long long> sums(static_cast<size_t>(blocks) * kThreads);
  DeviceBuffer<ClockSpan> spans(blocks);
  const double sec = run_timed(st, [&] { launch(k, blocks, smem, trips, sums.data(), spans.data()); });
  if (const std::string err = check_sums(k, trips, sums.download()); !err.empty()) {
    st.SkipWithError(err.c_str());
    return;
  }
  const std::vector<ClockSpan> sp = spans.download();
  const double mhz = median_mhz(sp.data(), static_cast<int>(sp.size()));
  st.counters["sm_clock_mhz"] = value(mhz);
  st.counters["warps_per_sm"] = value(warps_per_sm);
  st.counters["blocks_per_sm"] = value(want);
  if (sec <= 0 || mhz <= 0) return;  // under the profiler
  const double steps = double(trips) * kStepsPerTrip;  // per warp
  const double cycles = sec * mhz * 1e6 / steps;        // SM clocks in which every resident warp runs one k16 step
  const int ldsm = k == Kind::mma ? 0 : kLdsmPerStep, mma = k == Kind::ldmatrix ? 0 : kMmaPerStep;
  st.counters["cycles_per_step"] = value(cycles);
  st.counters["ldmatrix_per_clock_per_sm"] = value(ldsm * warps_per_sm / cycles);
  st.counters["mma_per_clock_per_sm"] = value(mma * warps_per_sm / cycles);
  st.counters["flops_per_clock_per_sm"] = value(mma * warps_per_sm * 2.0 * 16 * 8 * 16 / cycles);
}

void add(Planner& p, Kind k, int warps_per_sm) {
  const DeviceFacts& f = p.facts();
  const std::string name = std::string("tensor/mma_ldmatrix/bf16/ops:") + kind_name(k) + "/warps:" + std::to_string(warps_per_sm);
  if (f.arch() < 800) {
    p.skip(name, "mma.sync m16n8k16 bf16 needs sm_80; this GPU is sm_" + std::to_string(f.arch() / 10));
    return;
  }
  const int blocks_per_sm = warps_per_sm / kWarpsPerBlock;
  const size_t smem = pinning_smem(f, blocks_per_sm);
  if (smem == 0) {
    p.skip(name, std::to_string(blocks_per_sm) + " blocks per SM leave less than the " + std::to_string(kTilesBytes) +
                     " bytes of the two tiles");
    return;
  }
  Launch l;
  l.threads = kThreads;
  l.blocks_per_sm = blocks_per_sm;
  l.blocks = static_cast<long long>(f.sm_count) * blocks_per_sm;
  l.smem_per_block = smem;
  l.regs_per_thread = 128;  // __launch_bounds__(256, 2)
  l.device_bytes = static_cast<size_t>(l.blocks) * (kThreads * sizeof(unsigned long long) + sizeof(ClockSpan));
  l.note = "one wave; " + std::to_string(trips_for(warps_per_sm, kTargetClocks)) + " trips of " + std::to_string(kStepsPerTrip) +
           " k16 steps per warp (" + std::to_string(kLdsmPerStep) + " ldmatrix.x4 + " + std::to_string(kMmaPerStep) +
           " mma.sync per step in the mix)";
  p.add_if_resident(name, l, [k, warps_per_sm, smem](benchmark::State& st) { run(st, k, warps_per_sm, smem); });
  p.predict(name, {{"ldmatrix_per_step", k == Kind::mma ? 0 : kLdsmPerStep}, {"mma_per_step", k == Kind::ldmatrix ? 0 : kMmaPerStep}});
}

void plan(Planner& p) {
  const int gemm_warps = mh::gemm::tc::kMinBlocks * kWarpsPerBlock;  // the mma.sync kernels' resident warps
  for (int w : {kWarpsPerBlock, gemm_warps})
    for (Kind k : {Kind::mix, Kind::ldmatrix, Kind::mma}) add(p, k, w);
}

}  // namespace

MH_FAMILY("tensor", plan);

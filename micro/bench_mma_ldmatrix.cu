// ldmatrix + mma.sync in the mma.sync GEMM kernels' mix (micro/mma_ldmatrix.cuh; docs/families/tensor.md):
//   tensor/mma_ldmatrix/bf16/ops:<mix|ldmatrix|mma>/warps:<W>
//   tensor/mma_ldmatrix/bf16/ops:<copy|mix_copy>/stages:<S>/warps:<W>
// W: the GEMM kernels' resident warps per SM (kMinBlocks blocks of 256 threads: 16) and one block's (8). One
// wave of sm_count x W / 8 blocks, the residency pinned by dynamic shared memory and confirmed by the occupancy
// API; about 1 ms per launch, ~0.1 s per benchmark in a full run. gpubench/analysis/tc_predict.py reads
// cycles_per_step of the three kinds at the GEMM's W. The copy kinds run kernels 11 / 11a's cp.async loop
// (S: their stages, 3 and 1) at their W only (16), copying from a 4 MiB L2-resident set; tc_predict.py reads
// their cycles_per_step against mix's for the overlap of the copies with the compute.
#include "harness/bench.cuh"
#include "micro/mma_ldmatrix.cuh"

namespace {
using namespace mh;
using namespace mh::tensor::mix;

constexpr double kTargetClocks = 1 << 21;  // per launch: ~1 ms at 2 GHz
constexpr int kWarpsPerBlock = kThreads / 32;

// Whether the occupancy API puts exactly the wanted blocks on an SM; skips the benchmark with the reason if not.
bool resident_as_planned(benchmark::State& st, int resident, int want) {
  if (resident == want) return true;
  skip_benchmark(st, "occupancy API: " + std::to_string(resident) + " blocks per SM fit, the benchmark needs exactly " +
                         std::to_string(want));
  return false;
}

// The launch's median SM clock (MHz) from the blocks' clock spans, with the residency counters every kind reports.
double record_clock(benchmark::State& st, const DeviceBuffer<ClockSpan>& spans, int warps_per_sm, int blocks_per_sm) {
  const std::vector<ClockSpan> sp = spans.download();
  const double mhz = median_mhz(sp.data(), static_cast<int>(sp.size()));
  st.counters["sm_clock_mhz"] = value(mhz);
  st.counters["warps_per_sm"] = value(warps_per_sm);
  st.counters["blocks_per_sm"] = value(blocks_per_sm);
  return mhz;
}

void run(benchmark::State& st, Kind k, int warps_per_sm, size_t smem) {
  if (const std::string why = compiled_out(k); !why.empty()) {
    skip_benchmark(st, why);
    return;
  }
  const DeviceFacts& f = current_device_facts();
  const int want = warps_per_sm / kWarpsPerBlock;
  if (!resident_as_planned(st, residency(k, smem).blocks_per_sm, want)) return;
  const int blocks = want * f.sm_count, trips = trips_for(warps_per_sm, kTargetClocks);
  DeviceBuffer<unsigned long long> sums(static_cast<size_t>(blocks) * kThreads);
  DeviceBuffer<ClockSpan> spans(blocks);
  const double sec = run_timed(st, [&] { launch(k, blocks, smem, trips, sums.data(), spans.data()); });
  if (const std::string err = check_sums(k, trips, sums.download()); !err.empty()) {
    st.SkipWithError(err.c_str());
    return;
  }
  const double mhz = record_clock(st, spans, warps_per_sm, want);
  if (sec <= 0 || mhz <= 0) return;  // under the profiler
  const double steps = double(trips) * kStepsPerTrip;  // per warp
  const double cycles = sec * mhz * 1e6 / steps;        // SM clocks in which every resident warp runs one k16 step
  const int ldsm = k == Kind::mma ? 0 : kLdsmPerStep, mma = k == Kind::ldmatrix ? 0 : kMmaPerStep;
  st.counters["cycles_per_step"] = value(cycles);
  st.counters["ldmatrix_per_clock_per_sm"] = value(ldsm * warps_per_sm / cycles);
  st.counters["mma_per_clock_per_sm"] = value(mma * warps_per_sm / cycles);
  st.counters["flops_per_clock_per_sm"] = value(mma * warps_per_sm * 2.0 * 16 * 8 * 16 / cycles);
}

// The launch of one wave at blocks_per_sm (the planner's view): the kernels' 256-thread blocks, their register cap.
Launch wave(const DeviceFacts& f, int blocks_per_sm, size_t smem, size_t extra_bytes) {
  Launch l;
  l.threads = kThreads;
  l.blocks_per_sm = blocks_per_sm;
  l.blocks = static_cast<long long>(f.sm_count) * blocks_per_sm;
  l.smem_per_block = smem;
  l.regs_per_thread = 128;  // __launch_bounds__(256, 2)
  l.device_bytes = extra_bytes + static_cast<size_t>(l.blocks) * (kThreads * sizeof(unsigned long long) + sizeof(ClockSpan));
  return l;
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
  Launch l = wave(f, blocks_per_sm, smem, 0);
  l.note = "one wave; " + std::to_string(trips_for(warps_per_sm, kTargetClocks)) + " trips of " + std::to_string(kStepsPerTrip) +
           " k16 steps per warp (" + std::to_string(kLdsmPerStep) + " ldmatrix.x4 + " + std::to_string(kMmaPerStep) +
           " mma.sync per step in the mix)";
  p.add_if_resident(name, l, [k, warps_per_sm, smem](benchmark::State& st) { run(st, k, warps_per_sm, smem); });
  p.predict(name, {{"ldmatrix_per_step", k == Kind::mma ? 0 : kLdsmPerStep}, {"mma_per_step", k == Kind::ldmatrix ? 0 : kMmaPerStep}});
}

// The copy kinds: the same timing and counters per k16 step, plus the copy rate.
void run_copy(benchmark::State& st, CopyKind k, int stages, int warps_per_sm, size_t smem) {
  if (const std::string why = compiled_out(k, stages); !why.empty()) {
    skip_benchmark(st, why);
    return;
  }
  const DeviceFacts& f = current_device_facts();
  const int want = warps_per_sm / kWarpsPerBlock;
  if (!resident_as_planned(st, residency(k, stages, smem).blocks_per_sm, want)) return;
  const int blocks = want * f.sm_count, trips = trips_for(warps_per_sm, kTargetClocks);
  const DeviceBuffer<uint16_t> a(host_set(false)), b(host_set(true));
  DeviceBuffer<unsigned long long> sums(static_cast<size_t>(blocks) * kThreads);
  DeviceBuffer<ClockSpan> spans(blocks);
  const double sec =
      run_timed(st, [&] { launch(k, stages, blocks, smem, trips, a.data(), b.data(), sums.data(), spans.data()); });
  if (const std::string err = check_sums(k, stages, trips, sums.download()); !err.empty()) {
    st.SkipWithError(err.c_str());
    return;
  }
  const double mhz = record_clock(st, spans, warps_per_sm, want);
  st.counters["stages"] = value(stages);
  if (sec <= 0 || mhz <= 0) return;  // under the profiler
  const double cycles = sec * mhz * 1e6 / (double(trips) * kStepsPerTrip);  // as run(): every resident warp one step
  const double bytes = double(blocks) * trips * mh::gemm::tc::kStageBytes;
  st.counters["cycles_per_step"] = value(cycles);
  st.counters["bytes_per_second"] = value(bytes / sec);
  st.counters["bytes_per_clock_per_sm"] = value(bytes / (sec * mhz * 1e6 * f.sm_count));
  st.counters["mma_per_clock_per_sm"] = value((k == CopyKind::mix_copy ? kMmaPerStep : 0) * warps_per_sm / cycles);
}

void add_copy(Planner& p, CopyKind k, int stages, int warps_per_sm) {
  const DeviceFacts& f = p.facts();
  const std::string name = std::string("tensor/mma_ldmatrix/bf16/ops:") + kind_name(k) + "/stages:" + std::to_string(stages) +
                           "/warps:" + std::to_string(warps_per_sm);
  if (f.arch() < 800) {
    p.skip(name, "cp.async and mma.sync m16n8k16 bf16 need sm_80; this GPU is sm_" + std::to_string(f.arch() / 10));
    return;
  }
  if (2 * kSetBytes > f.l2_bytes) {
    p.skip(name, "the " + std::to_string(kSetBytes >> 20) + " MiB copy set is over half the L2 (" +
                     std::to_string(f.l2_bytes >> 20) + " MiB)");
    return;
  }
  const int blocks_per_sm = warps_per_sm / kWarpsPerBlock;
  const size_t smem = std::max(ring_bytes(stages), pinning_smem(f, blocks_per_sm));  // the kernel's ring, pinned
  Launch l = wave(f, blocks_per_sm, smem, kSetBytes);
  l.note = "one wave; " + std::to_string(trips_for(warps_per_sm, kTargetClocks)) + " trips, each one " +
           std::to_string(mh::gemm::tc::kStageBytes / 1024) + " KiB block tile by cp.async through " + std::to_string(stages) +
           " stage(s)" + (k == CopyKind::mix_copy ? " and its mma_block_tile" : "") + "; a 4 MiB L2-resident set";
  p.add_if_resident(name, l, [=](benchmark::State& st) { run_copy(st, k, stages, warps_per_sm, smem); });
  p.predict(name, {{"ldmatrix_per_step", k == CopyKind::copy ? 0 : kLdsmPerStep},
                   {"mma_per_step", k == CopyKind::copy ? 0 : kMmaPerStep},
                   {"copy_bytes_per_trip", mh::gemm::tc::kStageBytes}});
}

void plan(Planner& p) {
  const int gemm_warps = mh::gemm::tc::kMinBlocks * kWarpsPerBlock;  // the mma.sync kernels' resident warps
  for (int w : {kWarpsPerBlock, gemm_warps})
    for (Kind k : {Kind::mix, Kind::ldmatrix, Kind::mma}) add(p, k, w);
  for (int stages : {mh::gemm::tc::kCpAsyncStages, mh::gemm::tc::kCpAsyncAblationStages})  // kernels 11 and 11a
    for (CopyKind k : {CopyKind::copy, CopyKind::mix_copy}) add_copy(p, k, stages, gemm_warps);
}

}  // namespace

MH_FAMILY("tensor", plan);

// Issue rates: issue/ffma/warps:W, issue/lds/width:B/pattern:P/warps:W, issue/mix/ffma:F/lds:L/width:B/warps:W
// and issue/mix_sync/..., issue/ffma_banks/pattern:P/warps:W (docs/families/issue.md). One wave of SMs x W / 4
// blocks of 128 threads, the residency pinned by dynamic shared memory (only W / 4 blocks fit per SM); about
// 0.2 ms per launch.
#include "harness/bench.cuh"
#include "micro/issue.cuh"
#include "micro/register_banks.cuh"

namespace {
using namespace mh;
using namespace mh::issue;

constexpr double kTargetClocks = 4e5;  // per launch: ~0.2 ms at 2 GHz
constexpr float kA = 0.5f;             // the FFMA operand of issue/ffma

// Whether the compiled kernel holds exactly `want` blocks per SM with the pinning shared memory; else skips.
bool pinned(benchmark::State& st, int resident, int want) {
  if (resident == want) return true;
  skip_benchmark(st, "occupancy API: " + std::to_string(resident) + " blocks per SM fit, the benchmark needs exactly " +
                         std::to_string(want));
  return false;
}

// Whether the first, 38th and last thread's checksums equal the host replay (expected(thread)); else an error.
template <class Expected>
bool replayed(benchmark::State& st, const std::vector<float>& host, Expected expected) {
  for (uint32_t t : {0u, 37u, static_cast<uint32_t>(host.size() - 1)})
    if (host[t] != expected(t)) {
      st.SkipWithError(("issue: checksum of thread " + std::to_string(t) + " differs from the host replay").c_str());
      return false;
    }
  return true;
}

// SM clocks in which every resident warp runs one trip: the repetition's NVML clock, else the facts'.
double cycles_per_trip(benchmark::State& st, double sec, double trips) {
  const auto it = st.counters.find("sm_clock_mhz");
  const double hz = (it != st.counters.end() ? double(it->second) : current_device_facts().sm_clock_mhz) * 1e6;
  return sec * hz / trips;
}

// One wave of SMs x W / 4 blocks of 128 threads, pinned by `smem` of dynamic shared memory.
Launch one_wave(const DeviceFacts& f, int warps_per_sm, size_t smem, std::string note) {
  Launch l;
  l.threads = kThreads;
  l.blocks_per_sm = warps_per_sm / 4;
  l.blocks = static_cast<long long>(f.sm_count) * l.blocks_per_sm;
  l.smem_per_block = smem;
  l.regs_per_thread = 64;  // __launch_bounds__(128, 8)
  l.device_bytes = static_cast<size_t>(l.blocks) * kThreads * sizeof(float);
  l.note = std::move(note);
  return l;
}

void run(benchmark::State& st, const Shape& s, int warps_per_sm, size_t smem) {
  const DeviceFacts& f = current_device_facts();
  const int want = warps_per_sm / 4;
  if (!pinned(st, resident_blocks(s, smem), want)) return;
  const int blocks = want * f.sm_count, chunks = chunks_for(s, warps_per_sm, kTargetClocks);
  DeviceBuffer<float> out(static_cast<size_t>(blocks) * kThreads);
  const double sec = run_timed(st, [&] { launch(s, out.data(), blocks, smem, chunks, kA); });
  if (!replayed(st, out.download(), [&](uint32_t t) { return expected(s, t, chunks, kA); })) return;
  const double trips = double(chunks) * s.unroll;  // per thread
  const double threads = double(blocks) * kThreads;
  // Chip-wide rates of warp instructions (what the GEMM time model divides its counts by).
  const double warp_trips = trips * threads / 32;
  st.counters["flops_per_second"] = rate(2.0 * s.ffma * trips * threads);
  st.counters["ffma_per_second"] = rate(s.ffma * warp_trips);
  st.counters["lds_per_second"] = rate(s.lds * warp_trips);
  st.counters["wavefronts_per_second"] = rate(double(s.lds) * s.wavefronts_per_lds() * warp_trips);
  st.counters["warps_per_sm"] = value(warps_per_sm);
  if (sec <= 0) return;  // under the profiler
  const double cycles = cycles_per_trip(st, sec, trips);
  st.counters["cycles_per_trip"] = value(cycles);
  st.counters["ffma_per_clk_sm"] = value(s.ffma * warps_per_sm / cycles);
  st.counters["lds_per_clk_sm"] = value(s.lds * warps_per_sm / cycles);
  st.counters["wavefronts_per_clk_sm"] = value(double(s.lds) * s.wavefronts_per_lds() * warps_per_sm / cycles);
  st.counters["inst_per_clk_sm"] = value((s.ffma + s.lds) * warps_per_sm / cycles);
  if (s.sync) st.counters["barriers_per_trip"] = value(1.0 / s.unroll);
}

void add(Planner& p, const Shape& s, int warps_per_sm) {
  const std::string name = "issue/" + s.name() + "/warps:" + std::to_string(warps_per_sm);
  const size_t smem = pinning_smem(s, p.facts(), warps_per_sm / 4);
  if (smem == 0) {
    p.skip(name, std::to_string(warps_per_sm / 4) + " blocks per SM leave less than the " + std::to_string(s.smem_bytes()) +
                     " bytes of shared memory the shape reads");
    return;
  }
  const Launch l = one_wave(p.facts(), warps_per_sm, smem,
                            "one wave; " + std::to_string(s.ffma) + " FFMA + " + std::to_string(s.lds) + " x " +
                                std::to_string(s.width) + "-byte LDS per trip, " + std::to_string(s.unroll) +
                                " trips per loop iteration; shared memory only");
  p.add_if_resident(name, l, [&s, warps_per_sm, smem](benchmark::State& st) { run(st, s, warps_per_sm, smem); });
}

// issue/ffma_banks: FFMA alone, their b and c operands of equal register parity or not (micro/register_banks.cuh).
void run_banks(benchmark::State& st, register_banks::Pattern pattern, int warps_per_sm, size_t smem) {
  namespace rb = register_banks;
  const int want = warps_per_sm / 4;
  if (!pinned(st, rb::resident_blocks(pattern, smem), want)) return;
  const int blocks = want * current_device_facts().sm_count, trips = rb::trips_for(warps_per_sm, kTargetClocks);
  DeviceBuffer<float> out(static_cast<size_t>(blocks) * rb::kThreads);
  const double sec = run_timed(st, [&] { rb::launch(pattern, out.data(), blocks, smem, trips); });
  if (!replayed(st, out.download(), [&](uint32_t t) { return rb::expected(pattern, t, trips); })) return;
  st.counters["ffma_per_second"] = rate(rb::kFfmaPerTrip * double(trips) * blocks * rb::kThreads / 32);
  st.counters["warps_per_sm"] = value(warps_per_sm);
  if (sec <= 0) return;  // under the profiler
  const double cycles = cycles_per_trip(st, sec, trips);
  st.counters["cycles_per_trip"] = value(cycles);
  st.counters["ffma_per_clk_sm"] = value(rb::kFfmaPerTrip * warps_per_sm / cycles);
}

void add_banks(Planner& p, register_banks::Pattern pattern, int warps_per_sm) {
  namespace rb = register_banks;
  static_assert(rb::kThreads == kThreads, "one_wave's blocks are issue's");
  const std::string name = std::string("issue/ffma_banks/pattern:") + rb::pattern_name(pattern) + "/warps:" +
                           std::to_string(warps_per_sm);
  const size_t smem = pinning_smem(p.facts(), warps_per_sm / 4, rb::kOperandBytes);
  if (smem == 0) {
    p.skip(name, std::to_string(warps_per_sm / 4) + " blocks per SM leave less than the operands' shared memory");
    return;
  }
  const Launch l = one_wave(p.facts(), warps_per_sm, smem,
                            "one wave; " + std::to_string(rb::kFfmaPerTrip) + " FFMA per trip, b and c operands " +
                                (pattern == rb::Pattern::same ? "of equal register parity" : "of different parity"));
  p.add_if_resident(name, l, [pattern, warps_per_sm, smem](benchmark::State& st) { run_banks(st, pattern, warps_per_sm, smem); });
}

void plan(Planner& p) {
  for (register_banks::Pattern pattern : {register_banks::Pattern::split, register_banks::Pattern::same})
    for (int w : {4, 8, 16, 32}) add_banks(p, pattern, w);
  for (const Shape& s : shapes()) {
    if (s.kind == Kind::ffma)
      for (int w : {4, 8, 16, 32}) add(p, s, w);
    else if (s.kind == Kind::lds)
      add(p, s, 32);
    else if (!s.sync)
      for (int w : {8, 16, 32}) add(p, s, w);
    else
      for (int w : {8, 16}) add(p, s, w);
  }
}

}  // namespace

MH_FAMILY("issue", plan);

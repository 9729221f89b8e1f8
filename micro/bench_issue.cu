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

void run(benchmark::State& st, const Shape& s, int warps_per_sm, size_t smem) {
  const DeviceFacts& f = current_device_facts();
  const int want = warps_per_sm / 4, resident = resident_blocks(s, smem);
  if (resident != want) {
    skip_benchmark(st, "occupancy API: " + std::to_string(resident) + " blocks per SM fit, the shape needs exactly " +
                           std::to_string(want));
    return;
  }
  const int blocks = want * f.sm_count, chunks = chunks_for(s, warps_per_sm, kTargetClocks);
  DeviceBuffer<float> out(static_cast<size_t>(blocks) * kThreads);
  const double sec = run_timed(st, [&] { launch(s, out.data(), blocks, smem, chunks, kA); });
  const std::vector<float> host = out.download();
  for (uint32_t t : {0u, 37u, static_cast<uint32_t>(host.size() - 1)})
    if (host[t] != expected(s, t, chunks, kA)) {
      st.SkipWithError(("issue: checksum of thread " + std::to_string(t) + " differs from the host replay").c_str());
      return;
    }
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
  const auto it = st.counters.find("sm_clock_mhz");
  const double hz = (it != st.counters.end() ? double(it->second) : f.sm_clock_mhz) * 1e6;
  const double cycles = sec * hz / trips;  // SM clocks in which every resident warp runs one trip
  st.counters["cycles_per_trip"] = value(cycles);
  st.counters["ffma_per_clk_sm"] = value(s.ffma * warps_per_sm / cycles);
  st.counters["lds_per_clk_sm"] = value(s.lds * warps_per_sm / cycles);
  st.counters["wavefronts_per_clk_sm"] = value(double(s.lds) * s.wavefronts_per_lds() * warps_per_sm / cycles);
  st.counters["inst_per_clk_sm"] = value((s.ffma + s.lds) * warps_per_sm / cycles);
  if (s.sync) st.counters["barriers_per_trip"] = value(1.0 / s.unroll);
}

void add(Planner& p, const Shape& s, int warps_per_sm) {
  const DeviceFacts& f = p.facts();
  const std::string name = "issue/" + s.name() + "/warps:" + std::to_string(warps_per_sm);
  const size_t smem = pinning_smem(s, f, warps_per_sm / 4);
  if (smem == 0) {
    p.skip(name, std::to_string(warps_per_sm / 4) + " blocks per SM leave less than the " + std::to_string(s.smem_bytes()) +
                     " bytes of shared memory the shape reads");
    return;
  }
  Launch l;
  l.threads = kThreads;
  l.blocks_per_sm = warps_per_sm / 4;
  l.blocks = static_cast<long long>(f.sm_count) * l.blocks_per_sm;
  l.smem_per_block = smem;
  l.regs_per_thread = 64;  // __launch_bounds__(128, 8)
  l.device_bytes = static_cast<size_t>(l.blocks) * kThreads * sizeof(float);
  l.note = "one wave; " + std::to_string(s.ffma) + " FFMA + " + std::to_string(s.lds) + " x " + std::to_string(s.width) +
           "-byte LDS per trip, " + std::to_string(s.unroll) + " trips per loop iteration; shared memory only";
  p.add_if_resident(name, l, [&s, warps_per_sm, smem](benchmark::State& st) { run(st, s, warps_per_sm, smem); });
}

// issue/ffma_banks: FFMA alone, their b and c operands in one register bank or not (micro/register_banks.cuh).
void run_banks(benchmark::State& st, register_banks::Pattern pattern, int warps_per_sm, size_t smem) {
  namespace rb = register_banks;
  const DeviceFacts& f = current_device_facts();
  const int want = warps_per_sm / 4, resident = rb::resident_blocks(pattern, smem);
  if (resident != want) {
    skip_benchmark(st, "occupancy API: " + std::to_string(resident) + " blocks per SM fit, the benchmark needs exactly " +
                           std::to_string(want));
    return;
  }
  const int blocks = want * f.sm_count, trips = rb::trips_for(warps_per_sm, kTargetClocks);
  DeviceBuffer<float> out(static_cast<size_t>(blocks) * rb::kThreads);
  const double sec = run_timed(st, [&] { rb::launch(pattern, out.data(), blocks, smem, trips); });
  const std::vector<float> host = out.download();
  for (uint32_t t : {0u, 37u, static_cast<uint32_t>(host.size() - 1)})
    if (host[t] != rb::expected(pattern, t, trips)) {
      st.SkipWithError(("issue: checksum of thread " + std::to_string(t) + " differs from the host replay").c_str());
      return;
    }
  const double warp_trips = double(trips) * blocks * rb::kThreads / 32;
  st.counters["ffma_per_second"] = rate(rb::kFfmaPerTrip * warp_trips);
  st.counters["warps_per_sm"] = value(warps_per_sm);
  if (sec <= 0) return;  // under the profiler
  const auto it = st.counters.find("sm_clock_mhz");
  const double cycles = sec * (it != st.counters.end() ? double(it->second) : f.sm_clock_mhz) * 1e6 / trips;
  st.counters["cycles_per_trip"] = value(cycles);
  st.counters["ffma_per_clk_sm"] = value(rb::kFfmaPerTrip * warps_per_sm / cycles);
}

void add_banks(Planner& p, register_banks::Pattern pattern, int warps_per_sm) {
  namespace rb = register_banks;
  const DeviceFacts& f = p.facts();
  const std::string name = std::string("issue/ffma_banks/pattern:") + rb::pattern_name(pattern) + "/warps:" +
                           std::to_string(warps_per_sm);
  const size_t smem = pinning_smem(f, warps_per_sm / 4, rb::kOperandFloat4 * sizeof(float4));
  if (smem == 0) {
    p.skip(name, std::to_string(warps_per_sm / 4) + " blocks per SM leave less than the operands' shared memory");
    return;
  }
  Launch l;
  l.threads = rb::kThreads;
  l.blocks_per_sm = warps_per_sm / 4;
  l.blocks = static_cast<long long>(f.sm_count) * l.blocks_per_sm;
  l.smem_per_block = smem;
  l.regs_per_thread = 64;  // __launch_bounds__(128, 8)
  l.device_bytes = static_cast<size_t>(l.blocks) * rb::kThreads * sizeof(float);
  l.note = "one wave; " + std::to_string(rb::kFfmaPerTrip) + " FFMA per trip, b and c operands " +
           (pattern == rb::Pattern::same ? "in one register bank" : "in different banks");
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

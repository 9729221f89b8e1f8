// Shared-memory bank benchmarks (definitions in micro/smem_banks.cuh):
//   smem_banks/<latency|throughput>/width:W/stride:S/pad:P, .../width:W/swizzle/stride:S,
//   smem_banks/store_throughput/width:W/stride:S/pad:P.
// Latency: one warp, kLatencySteps dependent requests; cycles_per_access is clock64 in the kernel.
// Throughput: every SM full of 1024-thread blocks (sm_count x the blocks that reside: on the GPU, the
// compiled kernel's by the occupancy API; for --plan-for, the device facts' by threads, shared memory and
// the kernel's registers, smem_banks.cuh), each SM issuing about kWavefrontsPerSm model wavefronts per launch (~1 ms
// at 1 per clock). Load results and stored tiles are checked against the host after timing
// (SkipWithError if wrong). The model's conflict_ways go to --model_out.
#include <algorithm>

#include "harness/bench.cuh"
#include "micro/smem_banks.cuh"

namespace {
using namespace mh;
using namespace mh::smem_banks;

constexpr double kWavefrontsPerSm = 1 << 21;
constexpr uint32_t kSalt = 0x5a5a1234u;
constexpr int kStrides[] = {0, 1, 2, 3, 4, 8, 16, 32, 33, 64}, kStoreStrides[] = {0, 1, 2, 32, 33};

void latency(benchmark::State& st, model::SmemPattern p) {
  DeviceBuffer<LatencyResult> out(1);
  run_timed(st, [&] { launch_latency(p, out.data()); });
  const LatencyResult r = out.download()[0];
  const std::vector<uint64_t> addrs = model::smem_pattern_addresses(p);
  for (int i = 0; i < 32; ++i)
    if (r.final_offset[i] != addrs[i]) {
      st.SkipWithError("smem_banks/latency: a lane's chain left its slot");
      return;
    }
  st.counters["cycles_per_access"] = value(static_cast<double>(r.cycles) / kLatencySteps);
}

void throughput(benchmark::State& st, bool store, Plan p, int planned_per_sm) {
  const int sms = current_device_facts().sm_count;
  const int per_sm = resident_blocks_per_sm(p.pattern, store);
  if (per_sm != planned_per_sm) {
    skip_benchmark(st, "occupancy API: " + std::to_string(per_sm) + " blocks of " + std::to_string(kThreads) +
                           " threads per SM, the plan has " + std::to_string(planned_per_sm));
    return;
  }
  const int width = p.pattern.width;
  const uint32_t tile_words = table_bytes(p.pattern) / 4;
  DeviceBuffer<uint32_t> sums(p.warps()), tiles(store ? static_cast<size_t>(p.blocks) * tile_words : 0);
  DeviceBuffer<ClockSpan> spans(p.blocks);
  const double seconds = run_timed(st, [&] {
    if (store)
      launch_store(p, kSalt, tiles.data(), spans.data());
    else
      launch_load(p, sums.data(), spans.data());
  });
  bool ok = true;
  if (store) {
    const std::vector<uint32_t> host = tiles.download(), touched = words_per_iteration(p.pattern);
    for (size_t b = 0; b < static_cast<size_t>(p.blocks); ++b)
      for (uint32_t w : touched) ok = ok && host[b * tile_words + w] == stored_value(w, kSalt);
  } else {
    const std::vector<uint32_t> host = sums.download();
    const uint32_t expected = expected_warp_sum(p);
    ok = std::all_of(host.begin(), host.end(), [&](uint32_t s) { return s == expected; });
  }
  if (!ok) {
    st.SkipWithError(store ? "smem_banks/store_throughput: tile differs from the host"
                           : "smem_banks/throughput: checksum differs from the host");
    return;
  }
  // Cycles per request on one SM: the launch's event time at the SM clock observed in the kernel
  // (clock64 over %globaltimer), over the requests each SM serves. Not the blocks' own clock64 spans:
  // on the H200 they covered only ~75 % of a launch's event time (why is not established).
  const std::vector<ClockSpan> sp = spans.download();
  const double mhz = median_mhz(sp.data(), static_cast<int>(sp.size()));
  const double requests = static_cast<double>(p.requests());
  st.counters["bytes_per_second"] = rate(requests * 32 * width);
  st.counters["cycles_per_request"] = value(seconds * mhz * 1e6 / (requests / sms));
  st.counters["sm_clock_mhz"] = value(mhz);
  st.counters["warps_per_sm"] = value(per_sm * kThreads / 32);
}

std::string name_of(const char* kind, const model::SmemPattern& p) {
  return std::string("smem_banks/") + kind + "/width:" + std::to_string(p.width) + (p.swizzle ? "/swizzle" : "") +
         "/stride:" + std::to_string(p.stride) + (p.swizzle ? "" : "/pad:" + std::to_string(p.pad));
}

// The patterns of one width: every stride with pad 0 then pad 1, or swizzled.
template <size_t N>
std::vector<model::SmemPattern> patterns(int width, bool swizzle, const int (&strides)[N]) {
  std::vector<model::SmemPattern> out;
  for (int pad : swizzle ? std::vector<int>{0} : std::vector<int>{0, 1})
    for (int s : strides) out.push_back({width, s, pad, swizzle});
  return out;
}

void add_latency(Planner& pl, const model::SmemPattern& p) {
  const std::string name = name_of("latency", p);
  Launch l;
  try {
    l.smem_per_block = table_bytes(p);
  } catch (const std::invalid_argument& e) {
    pl.skip(name, e.what());
    return;
  }
  l.threads = 32;
  l.blocks = 1;
  l.device_bytes = sizeof(LatencyResult);
  l.note = std::to_string(kLatencySteps) + " dependent requests";
  pl.add_if_resident(name, l, [p](benchmark::State& st) { latency(st, p); });
  pl.predict(name, {{"conflict_ways", model::smem_pattern_wavefronts(p)}});
}

void add_throughput(Planner& pl, bool store, const model::SmemPattern& pattern) {
  const DeviceFacts& f = pl.facts();
  const std::string name = name_of(store ? "store_throughput" : "throughput", pattern);
  Plan p;
  p.pattern = pattern;
  Launch l;
  try {
    l.smem_per_block = table_bytes(pattern);
  } catch (const std::invalid_argument& e) {
    pl.skip(name, e.what());
    return;
  }
  l.threads = kThreads;
  // On the GPU the compiled kernel's registers and resident blocks set the grid; for --plan-for the facts'.
  const int regs = planned_registers(f.arch(), store, pattern.width);
  const Residency r = pl.residency({regs, blocks_per_sm(f, kThreads, l.smem_per_block, regs)}, [&] {
    return compiled_residency(throughput_kernel(pattern, store), kThreads, l.smem_per_block);
  });
  l.regs_per_thread = r.regs_per_thread;
  l.blocks_per_sm = r.blocks_per_sm;
  const int ways = model::smem_pattern_wavefronts(pattern, store ? model::SmemOp::store : model::SmemOp::load);
  if (l.blocks_per_sm < 1) {
    pl.skip(name, check_launch(f, l));
    return;
  }
  const int warps_per_sm = l.blocks_per_sm * kThreads / 32;
  p.blocks = f.sm_count * l.blocks_per_sm;
  p.iters = std::max(1, static_cast<int>(kWavefrontsPerSm / (warps_per_sm * kAccessesPerIter * ways)));
  l.blocks = p.blocks;
  l.device_bytes = p.warps() * 4 + static_cast<size_t>(p.blocks) * sizeof(ClockSpan) +
                   (store ? static_cast<size_t>(p.blocks) * l.smem_per_block : 0);
  l.note = std::to_string(p.iters) + " iterations of " + std::to_string(kAccessesPerIter) + " requests per warp";
  const int per_sm = l.blocks_per_sm;
  pl.add_if_resident(name, l, [store, p, per_sm](benchmark::State& st) { throughput(st, store, p, per_sm); });
  pl.predict(name, {{"conflict_ways", ways}});
}

void plan(Planner& pl) {
  for (bool is_latency : {true, false})
    for (int w : {4, 8, 16})
      for (bool swizzle : {false, true})
        for (const model::SmemPattern& p : patterns(w, swizzle, kStrides))
          is_latency ? add_latency(pl, p) : add_throughput(pl, false, p);
  for (int w : {4, 8, 16})
    for (const model::SmemPattern& p : patterns(w, false, kStoreStrides)) add_throughput(pl, true, p);
}

}  // namespace

MH_FAMILY("smem_banks", plan);

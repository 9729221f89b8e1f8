// Benchmarks of the energy family: energy/read/<l1|l2>, energy/read/hbm/data:<random|zero>, energy/write/hbm,
// energy/fma/data:<random|zero>, energy/<wgmma|mma>/bf16/data:<random|zero>, energy/copy/h2d. Each repetition is
// one energy window (micro/energy.cuh) over a steady loop of the ceiling or tensor family's launches; one Google
// Benchmark iteration is one launch, so the time is per launch as in ceiling/..., tensor/....
#include <algorithm>
#include <cstdio>
#include <future>
#include <map>
#include <tuple>
#include <utility>

#include "harness/bench.cuh"
#include "micro/ceilings.cuh"
#include "micro/energy.cuh"
#include "micro/link.cuh"
#include "micro/roofs.cuh"
#include "micro/tensor.cuh"

namespace {
using namespace mh;
using energy::Source;

enum class Data { random, zero };
enum class Unit { byte, flop };

constexpr double kIdlePauseS = 0.2, kIdleS = 0.6;  // the idle GPU: settle, then measure
constexpr int kFmaIters = 4096;                    // ceiling/fma's kernel, ~0.3 ms a launch on an H200 (a multiple of its unroll)
constexpr float kFmaA = 0.9999f, kFmaB = 1e-4f;    // ceiling/fma's operands: every result differs from the last
constexpr int kMaxWindows = 3;                     // a window the host let idle is taken again, twice at most

// The source and the idle power, measured once per process (~0.8 s): before the first benchmark runs when
// the filter selects an energy benchmark (energy_context, the JSON context), else by the first one.
struct Setup {
  nvml::Device dev = nullptr;
  energy::Idle idle;
  std::string why;  // when idle.source is none
};

Setup measure_setup() {
  Setup out;
  out.dev = nvml::device_handle(current_device_facts().device, &out.why);
  if (!out.dev) return out;
  const Source src = energy::probe(out.dev, &out.why);
  if (src == Source::none) return out;
  out.idle = energy::measure_idle(out.dev, src, kIdlePauseS, kIdleS);
  if (out.idle.source == Source::none) {  // a counter that never moved: integrate power readings instead
    unsigned mw = 0;
    if (nvml::power_usage_mw(out.dev, &mw))
      out.idle = energy::measure_idle(out.dev, Source::power, 0.0, kIdleS);
    else
      out.why = "the energy counter did not move in " + std::to_string(4 * kIdleS) + " s and NVML gives no power readings";
  }
  return out;
}

const Setup& setup() {
  static const Setup s = [] {
    try {
      return measure_setup();
    } catch (const std::exception& e) {  // NVML or CUDA failed mid-way: every energy benchmark skips with it
      Setup out;
      out.idle = {};
      out.why = std::string("the idle measurement failed: ") + e.what();
      return out;
    }
  }();
  return s;
}

// The JSON context keys energy_source (counter, power, or "none: " and why) and idle_watts (when measured).
std::vector<std::pair<std::string, std::string>> energy_context() {
  if (profiling()) return {{"energy_source", "none: energy is not measured under MH_PROFILE"}};
  const Setup& s = setup();
  if (s.idle.source == Source::none) return {{"energy_source", "none: " + s.why}};
  char watts[32];
  std::snprintf(watts, sizeof watts, "%.2f", s.idle.watts);
  return {{"energy_source", energy::source_name(s.idle.source)}, {"idle_watts", watts}};
}

// Window lengths from the counter's period: at least 2 periods of warm-up (0.1 s) and 3 between the edges,
// within [0.2 s, 0.8 s] (edges timed to ~0.3 ms: 0.2 % of the shortest window). Power readings: a warm-up past NVML's averaging, 0.5 s. crosscheck: the counter's window
// starts past the averaging too, so that power readings cover it (issue 31: both ways).
energy::Plan window_plan(const Setup& s, bool crosscheck) {
  const DeviceFacts& f = current_device_facts();
  energy::Plan p;
  p.source = s.idle.source;
  p.cuda_device = f.device;
  p.power_avg_s = energy::power_average_s(f.arch());
  if (p.source == Source::counter) {
    const double period = s.idle.period_ms * 1e-3;
    // Two counter periods edge to edge: on the H200 (a 100 ms period) three gave joules_per_byte a CV of
    // 0.3-0.4 % over 5 repetitions but took 49 s for the family, a fifth of the full run's budget.
    p.warmup_s = std::max(0.1, period);
    p.window_s = std::clamp(2 * period, 0.2, 0.8);
    if (crosscheck) p.warmup_s = std::max(p.warmup_s, p.power_avg_s + 0.1);
  } else {
    p.warmup_s = p.power_avg_s + 0.1;
    p.window_s = 0.5;
  }
  return p;
}

// What the windows of one call add up to.
struct Totals {
  energy::Span energy, power;
  double gpu_seconds = 0, units = 0, drift = 0;
  long long all_launches = 0;  // every launch of every window taken, warm-ups and retaken windows included
  int windows = 0;
  nvml::ClockLog clocks;

  void add(const energy::Window& w, double units_per_launch) {
    energy.joules += w.energy.joules;
    energy.seconds += w.energy.seconds;
    power.joules += w.power.joules;
    power.seconds += w.power.seconds;
    gpu_seconds += w.gpu_seconds;
    units += w.launches * units_per_launch;
    drift += w.drift;
    ++windows;
    for (double mhz : w.clocks.clocks_mhz) clocks.add_clock(mhz);
    if (w.clocks.has_reasons()) clocks.add_reasons(w.clocks.reasons);
  }
};

void set_counters(benchmark::State& st, const Totals& t, Unit unit, const Setup& s, double settled_ms) {
  // Energy per unit: the edge-to-edge power over the rate of the same launches (units / GPU second).
  const double rate = t.gpu_seconds > 0 ? t.units / t.gpu_seconds : 0.0;
  const energy::PerUnit e = energy::per_unit(t.energy, s.idle.watts, rate * t.energy.seconds);
  const std::string per = unit == Unit::byte ? "joules_per_byte" : "joules_per_flop";
  st.counters[per] = value(e.total);
  st.counters[per + "_above_idle"] = value(e.above_idle);
  st.counters[unit == Unit::byte ? "bytes_per_second" : "flops_per_second"] = value(rate);
  st.counters["watts"] = value(t.energy.watts());
  st.counters["idle_watts"] = value(s.idle.watts);
  st.counters["energy_counter_period_ms"] = value(s.idle.period_ms);
  st.counters["window_ms"] = value(1e3 * t.energy.seconds / t.windows);
  if (s.idle.source == Source::counter) st.counters["watts_drift"] = value(t.drift / t.windows);
  if (t.power.seconds > 0) {  // the cross-check: power readings over the counter's window
    st.counters["watts_power"] = value(t.power.watts());
    st.counters["power_vs_counter"] = value(t.power.watts() / t.energy.watts() - 1.0);
  }
  if (t.clocks.has_reasons()) st.counters["throttled"] = t.clocks.throttled() ? 1.0 : 0.0;
  if (t.clocks.has_clock()) {
    st.counters["sm_clock_mhz"] = t.clocks.median_clock_mhz();
    st.counters["sm_clock_min_mhz"] = t.clocks.min_clock_mhz();
  }
  if (double w = 0; nvml::power_limit_watts(s.dev, &w)) st.counters["power_limit_watts"] = value(w);
  st.counters["settle_ms"] = settled_ms;
  // The source, as a number the scripts read (they ignore labels) and as the label.
  st.counters["energy_from_counter"] = value(s.idle.source == Source::counter ? 1.0 : 0.0);
  st.SetLabel(std::string("energy_source:") + energy::source_name(s.idle.source));
}

// A window taken and verified: what a repetition reports.
struct Taken {
  std::string name;  // the benchmark's
  benchmark::IterationCount iterations = 0;
  Totals totals;
  double seconds_per_launch = 0, settled_ms = 0;
};

// Exactly the iterations Google Benchmark asked for, each the window's GPU time per launch (a repetition's
// iteration count must not depend on how many launches a window held: Google Benchmark aborts when
// repetitions differ), and the window's counters.
void report(benchmark::State& st, const Taken& k, Unit unit, const Setup& s) {
  const auto n = static_cast<benchmark::IterationCount>(st.max_iterations);
  while (st.KeepRunningBatch(n)) st.SetIterationTime(k.seconds_per_launch * static_cast<double>(n));
  set_counters(st, k.totals, unit, s, k.settled_ms);
}

// One window per repetition; verify(all launches run) says "" or what is wrong. Google Benchmark sizes the
// iteration count on a benchmark's first repetition by calling it again with more iterations while the time
// reported is under --benchmark_min_time, and keeps the last call alone: a call of the benchmark measured
// just before, asking more iterations than it did, is such a call and reports that window again (a window
// of its own would cost ~0.5 s, twice per benchmark).
void measure(benchmark::State& st, const std::string& name, const energy::Loop& loop, Unit unit, bool crosscheck,
             const std::function<std::string(long long)>& verify) {
  if (profiling()) return skip_benchmark(st, "energy is not measured under MH_PROFILE (a profiler serializes and replays kernels)");
  const Setup& s = setup();
  if (s.idle.source == Source::none) return skip_benchmark(st, s.why);
  static Taken last;
  if (last.name == name && st.max_iterations > last.iterations) {
    last.iterations = st.max_iterations;
    return report(st, last, unit, s);
  }
  last = Taken();
  const energy::Plan plan = window_plan(s, crosscheck);
  const double settled_ms = nvml::settle_device(s.dev, settle_max_ms());
  Totals t;
  auto take = [&] {
    for (int k = 0; k < kMaxWindows; ++k) {
      energy::Window w = energy::run_window(loop, s.dev, plan);
      t.all_launches += w.all_launches;
      if (!w.gpu_idled) return w;
    }
    throw std::runtime_error("the GPU ran out of queued launches during " + std::to_string(kMaxWindows) +
                             " energy windows in a row: the host's NVML polling fell behind");
  };
  const energy::Window w = take();
  t.add(w, loop.units_per_launch);
  const std::string bad = verify(t.all_launches);
  if (!bad.empty()) {
    st.SkipWithError(bad.c_str());
    return;
  }
  last = {name, st.max_iterations, t, w.gpu_seconds / static_cast<double>(std::max<long long>(1, w.launches)), settled_ms};
  report(st, last, unit, s);
}

// ---- Walks (the ceiling family's kept kernels, micro/bench_roofs.cu kRoofs) -------------------------

// The process's one buffer of walk data: word_value(i) (Data::random) or zeros, refilled when the
// contents asked for differ; a write zeroes it first (a write that stores nothing fails the check) and
// leaves it unknown. nullptr, the benchmark skipped, when a larger one does not fit in device memory.
uint32_t* walk_buffer(benchmark::State& st, uint64_t words, Data data, bool write) {
  static DeviceBuffer<uint32_t> buf;
  static int contents = -1;  // a Data, or -1: unknown
  if (buf.size() < words) {
    buf = DeviceBuffer<uint32_t>();  // freed before the check: it counts as free memory
    contents = -1;
    if (!fits_device_memory(st, words * sizeof(uint32_t))) return nullptr;
    buf = DeviceBuffer<uint32_t>(words);
  }
  if (write || contents != static_cast<int>(data)) {
    if (write || data == Data::zero)
      buf.fill_bytes(0);
    else
      roofs::fill_values(buf.data(), buf.size());
    contents = write ? -1 : static_cast<int>(data);
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  return buf.data();
}

// The host's checksum of one read launch, computed once per walk on a thread of its own (an HBM walk
// sums ~1e9 words: it runs while the GPU does).
std::shared_future<uint32_t> expected_checksum(const roofs::Walk& w) {
  using Key = std::tuple<int, int, int, int, uint64_t, uint32_t, bool>;
  static std::map<Key, std::shared_future<uint32_t>> cache;
  const Key k{w.width, w.unroll, w.blocks, w.threads, w.chunks, w.iters, w.front};
  auto it = cache.find(k);
  if (it == cache.end())
    it = cache.emplace(k, std::async(std::launch::async, [w] { return roofs::expected_read_checksum(w); }).share()).first;
  return it->second;
}

struct WalkSpec {
  roofs::Config c;
  uint64_t ws = 0, bytes_per_launch = 0;
  Data data = Data::random;
  bool crosscheck = false;
};

roofs::Walk walk_of(const WalkSpec& s) {
  const DeviceFacts& f = current_device_facts();
  const roofs::Config& c = s.c;
  const int fit = roofs::resident_blocks_per_sm(c.kind, c.ld, c.st, c.width, c.unroll, c.threads);
  const uint64_t chunk = 32ull * c.unroll * c.width, warps_per_block = c.threads / 32;
  const uint64_t blocks = c.stream ? (s.ws / chunk + warps_per_block - 1) / warps_per_block : uint64_t(f.sm_count) * std::max(1, fit);
  return roofs::make_walk(c.width, c.unroll, static_cast<int>(blocks), c.threads, s.ws, c.stream ? s.ws : s.bytes_per_launch,
                          c.front || c.stream);
}

void walk_body(benchmark::State& st, const std::string& name, const WalkSpec& s) {
  const roofs::Walk w = walk_of(s);
  const bool write = s.c.kind == roofs::Kind::write;
  uint32_t* buf = walk_buffer(st, w.words(), s.data, write);
  if (!buf) return;
  DeviceBuffer<uint32_t> checksum(1);
  checksum.fill_bytes(0);
  std::shared_future<uint32_t> expected;
  if (!write && s.data == Data::random) expected = expected_checksum(w);
  energy::Loop loop;
  loop.units_per_launch = static_cast<double>(w.bytes_per_launch());
  if (write)
    loop.launch = [&] { roofs::launch_write(w, s.c.st, buf); };
  else
    loop.launch = [&] { roofs::launch_read(w, s.c.ld, buf, checksum.data()); };
  measure(st, name, loop, Unit::byte, s.crosscheck, [&](long long launches) -> std::string {
    CUDA_CHECK(cudaDeviceSynchronize());
    if (write) {  // the stream layout stores every word: the first, middle and last hold word_value
      for (uint64_t i : {uint64_t{0}, w.words() / 2, w.words() - 1}) {
        uint32_t got = 0;
        CUDA_CHECK(cudaMemcpy(&got, buf + i, sizeof got, cudaMemcpyDeviceToHost));
        if (got != roofs::word_value(i)) return "energy write: word " + std::to_string(i) + " does not hold word_value";
      }
      return "";
    }
    const uint32_t want = s.data == Data::zero ? 0u : static_cast<uint32_t>(launches) * expected.get();
    const uint32_t got = checksum.download()[0];
    return got == want ? "" : "energy read: checksum " + std::to_string(got) + ", the host expects " + std::to_string(want);
  });
}

// ---- FFMA, host-to-device copy --------------------------------------------------------------------

void fma_body(benchmark::State& st, const std::string& name, int blocks, Data data) {
  const int threads = ceilings::kMaxThreads;
  const float a = data == Data::zero ? 0.f : kFmaA, b = data == Data::zero ? 0.f : kFmaB;
  DeviceBuffer<float> out(static_cast<size_t>(blocks) * threads);
  out.fill_bytes(0xff);  // NaN: a kernel that stores nothing fails the check
  energy::Loop loop;
  loop.units_per_launch = 2.0 * ceilings::kFmaChains * kFmaIters * static_cast<double>(out.size());
  loop.launch = [&] { ceilings::launch_fma(out.data(), blocks, threads, kFmaIters, a, b); };
  measure(st, name, loop, Unit::flop, false, [&](long long) -> std::string {
    const std::vector<float> host = out.download();
    for (uint32_t t : {0u, 1u, static_cast<uint32_t>(host.size() - 1)})
      if (host[t] != ceilings::fma_expected(t, kFmaIters, a, b)) return "energy fma: thread " + std::to_string(t) + " differs from the host replay";
    return "";
  });
}

// 1 GiB, halved while over a sixteenth of device memory (the link family's largest transfer, so that the
// pinned buffer both use is pinned once).
size_t h2d_bytes(const DeviceFacts& f) {
  size_t b = size_t{1} << 30;
  while (b > 1024 && b > f.global_mem_bytes / 16) b /= 2;
  return b;
}

void h2d_body(benchmark::State& st, const std::string& name) {
  const DeviceFacts& f = current_device_facts();
  const size_t bytes = h2d_bytes(f);
  const std::vector<link::Leg> legs = link::make_legs(link::Path::h2d, link::Memory::pinned, f.device, -1, bytes, bytes, 0);
  static uint32_t calls = 0;
  const uint32_t seed = 2 * ++calls + 1;  // odd: the link family's seeds are even; new every call
  link::fill_sources(legs, seed);
  link::Transfer transfer(link::Method::ce, legs);
  energy::Loop loop;
  loop.units_per_launch = static_cast<double>(transfer.bytes_moved());
  loop.launch = [&] { transfer(); };
  measure(st, name, loop, Unit::byte, false, [&](long long) {
    CUDA_CHECK(cudaDeviceSynchronize());
    return link::check_destinations(legs, seed);
  });
}

// ---- Tensor cores (the tensor family's throughput launches, micro/tensor.cuh) -------------------------

constexpr int kWgmmaN = 256;  // wgmma m64n256k16, A and B from shared memory: the widest tile, GEMM kernels' form
constexpr tensor::Dtype kTensorType = tensor::Dtype::bf16;

struct TensorSpec {
  bool wgmma = false;  // else mma.sync m16n8k16
  tensor::Data data = tensor::Data::random;
  int blocks = 0, iters = 0;
};

void tensor_body(benchmark::State& st, const std::string& name, const TensorSpec& s) {
  namespace tc = tensor;
  const tc::Dtype t = kTensorType;
  if (const std::string why = s.wgmma ? tc::compiled_out(t, kWgmmaN, false) : tc::compiled_out(t); !why.empty())
    return skip_benchmark(st, why);
  const tc::MmaShape mma = tc::mma_shape(t);
  const int m = s.wgmma ? 64 : mma.m, n = s.wgmma ? kWgmmaN : mma.n, k = s.wgmma ? tc::wgmma_k(t) : mma.k;
  const std::vector<uint8_t> a = tc::make_matrix(t, s.data, m, k, tc::kSeedA), b = tc::make_matrix(t, s.data, k, n, tc::kSeedB);
  DeviceBuffer<uint8_t> da(a), db(b);
  DeviceBuffer<uint32_t> d(static_cast<size_t>(m) * n);
  d.fill_bytes(0xff);  // NaN: a kernel that stores nothing fails the check
  DeviceBuffer<ClockSpan> spans(s.blocks);
  // Block 0's tile after the last launch: `steps` times A.B (each launch starts from zero accumulators).
  const double steps = s.wgmma ? static_cast<double>(s.iters) * tc::kWgmmaUnroll : tc::mma_steps(false, s.iters);
  const double instructions = s.wgmma ? s.blocks * steps : s.blocks * (tc::kMmaThreads / 32) * steps;  // per launch
  energy::Loop loop;
  loop.units_per_launch = instructions * (s.wgmma ? tc::wgmma_flops(t, kWgmmaN) : mma.flops());
  loop.launch = [&] {
    if (s.wgmma)
      tc::launch_wgmma(t, kWgmmaN, false, da.data(), db.data(), s.blocks, s.iters, d.data(), spans.data());
    else
      tc::launch_mma(t, false, da.data(), db.data(), s.blocks, tc::kMmaThreads, s.iters, d.data(), spans.data());
  };
  measure(st, name, loop, Unit::flop, false, [&](long long) {
    const std::string e = tc::check_product(t, a, b, m, n, k, steps, d.download());
    return e.empty() ? e : name + ": " + e;
  });
}

// energy/<wgmma|mma>/bf16/data:<random|zero>: the launch of tensor/wgmma/bf16/ss/n:256/... or
// tensor/mma/bf16/throughput/... (every SM full of the compiled kernel's blocks, ~1 ms), in a steady loop.
void add_tensor(Planner& p, bool wgmma) {
  namespace tc = tensor;
  const DeviceFacts& f = p.facts();
  const std::string base = std::string("energy/") + (wgmma ? "wgmma" : "mma") + "/bf16/data:";
  const tc::Data data[] = {tc::Data::random, tc::Data::zero};
  const std::string why = wgmma ? tc::wgmma_unsupported(f.arch()) : tc::mma_unsupported(f.arch(), kTensorType);
  if (!why.empty()) {
    for (tc::Data d : data) p.skip(base + tc::data_name(d), why);
    return;
  }
  Launch l;
  l.threads = wgmma ? tc::kWgmmaThreads : tc::kMmaThreads;
  l.smem_per_block = wgmma ? tc::wgmma_smem_bytes(kWgmmaN, false) : 0;
  const int regs = wgmma ? tc::wgmma_planned_regs(kWgmmaN) : tc::kMmaPlannedRegs;
  const Residency r = p.residency({regs, blocks_per_sm(f, l.threads, l.smem_per_block, regs)}, [wgmma] {
    return wgmma ? tc::wgmma_residency(kTensorType, kWgmmaN, false) : tc::mma_residency(kTensorType);
  });
  l.regs_per_thread = r.regs_per_thread;
  l.blocks_per_sm = std::max(1, r.blocks_per_sm);  // none resident: check_launch says why
  l.blocks = static_cast<long long>(f.sm_count) * l.blocks_per_sm;
  TensorSpec spec;
  spec.wgmma = wgmma;
  spec.blocks = static_cast<int>(l.blocks);
  spec.iters = wgmma ? tc::wgmma_iters(kTensorType, kWgmmaN, l.blocks_per_sm) : tc::mma_iters(l.blocks_per_sm);
  l.device_bytes = wgmma ? tc::wgmma_device_bytes(spec.blocks, kWgmmaN) : tc::mma_device_bytes(spec.blocks);
  l.note = std::to_string(spec.iters) + " x " + std::to_string(wgmma ? tc::kWgmmaUnroll : tc::kMmaChains) +
           (wgmma ? " wgmma m64n256k16 per warpgroup" : " chains of mma m16n8k16 per warp");
  for (tc::Data d : data) {
    spec.data = d;
    const std::string name = base + tc::data_name(d);
    p.add_if_resident(name, l, [name, spec](benchmark::State& st) { tensor_body(st, name, spec); });
  }
}

// ---- Plan ----------------------------------------------------------------------------------------

Launch walk_launch(const DeviceFacts& f, const WalkSpec& s, const char* level) {
  Launch l;
  l.threads = s.c.threads;
  l.blocks = static_cast<long long>(std::min(f.max_blocks_per_sm, f.max_threads_per_sm / s.c.threads)) * f.sm_count;
  if (s.c.stream) l.blocks = static_cast<long long>(s.ws / (32ull * s.c.unroll * s.c.width) / (s.c.threads / 32));
  l.device_bytes = s.ws;
  l.note = std::string(level) + " ws=" + std::to_string(s.ws) + " " + s.c.describe() + ", energy window per repetition";
  return l;
}

void plan(Planner& p) {
  const DeviceFacts& f = p.facts();
  using roofs::Kind;
  using roofs::Load;
  using roofs::Store;
  const uint64_t l1 = f.l1_smem_per_sm_bytes / 4, l2 = f.l2_bytes / 8, hbm = std::min<uint64_t>(64 * f.l2_bytes, f.global_mem_bytes / 8);
  const roofs::Config read_l1{Kind::read, Load::plain, Store::plain, 16, 8, 256, 0, 1};
  const roofs::Config read_l2{Kind::read, Load::cg, Store::plain, 16, 8, 256, 0, 1};
  const roofs::Config read_hbm{Kind::read, Load::nc, Store::plain, 16, 8, 256, 0, 1};
  const roofs::Config write_hbm{Kind::write, Load::plain, Store::cs, 16, 1, 256, 0, 1, false, true};
  const struct {
    const char* name;
    const char* level;
    WalkSpec spec;
  } walks[] = {
      {"energy/read/l1", "l1", {read_l1, l1, 2048 * l1 * f.sm_count}},
      {"energy/read/l2", "l2", {read_l2, l2, 128 * f.l2_bytes}},
      {"energy/read/hbm/data:random", "hbm", {read_hbm, hbm, hbm, Data::random, true}},
      {"energy/read/hbm/data:zero", "hbm", {read_hbm, hbm, hbm, Data::zero}},
      {"energy/write/hbm", "hbm", {write_hbm, hbm, hbm}},
  };
  for (const auto& w : walks) {
    const WalkSpec s = w.spec;
    const std::string name = w.name;
    p.add_if_resident(name, walk_launch(f, s, w.level), [name, s](benchmark::State& st) { walk_body(st, name, s); });
  }

  Launch fl;  // as ceiling/fma: every SM full of the compiled kernel's blocks
  fl.threads = ceilings::kMaxThreads;
  const int cap = ceilings::register_cap(f.arch());
  const Residency r = p.residency({cap, blocks_per_sm(f, fl.threads, 0, cap)}, [] { return ceilings::fma_residency(ceilings::kMaxThreads); });
  fl.blocks_per_sm = r.blocks_per_sm;
  fl.blocks = static_cast<long long>(f.sm_count) * fl.blocks_per_sm;
  fl.regs_per_thread = r.regs_per_thread;
  fl.device_bytes = static_cast<size_t>(fl.blocks) * fl.threads * sizeof(float);
  const int blocks = static_cast<int>(fl.blocks);
  for (Data d : {Data::random, Data::zero}) {
    fl.note = std::string(d == Data::zero ? "a = b = 0" : "a = 0.9999, b = 1e-4") + ", 8 chains x 4096 FMAs per thread";
    const std::string name = std::string("energy/fma/data:") + (d == Data::zero ? "zero" : "random");
    p.add_if_resident(name, fl, [name, blocks, d](benchmark::State& st) { fma_body(st, name, blocks, d); });
  }

  Launch hl;
  hl.device_bytes = h2d_bytes(f);
  hl.note = "cudaMemcpyAsync of " + std::to_string(hl.device_bytes >> 20) + " MiB from pinned host memory";
  p.add_if_resident("energy/copy/h2d", hl, [](benchmark::State& st) { h2d_body(st, "energy/copy/h2d"); });
  add_tensor(p, true);
  add_tensor(p, false);
  p.context_when_run("energy/", energy_context);
}

}  // namespace

MH_FAMILY("energy", plan);

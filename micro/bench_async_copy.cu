// Benchmarks of the async_copy family (docs/families/async-copy.md):
//   async/<method>/<l2|hbm>/bandwidth/<axes>  every SM busy, tiles through a ring of shared-memory stages
//   async/<method>/<l2|hbm>/latency/<axes>    one warp, one copy at a time, clock64 issue -> completion
// method: ld_st (ld.global.cg + st.shared), cp_async, bulk (TMA 1-D), tensor (TMA 2-D tensor map).
// Working sets (counter working_set_bytes): bandwidth l2 = L2/8 (as ceiling/read/l2), read 512 times per
// launch (roofs::l2_launch_bytes, 64 x L2, the roofs' L2 launch rule: ramp and tail under 2 %); hbm = 4 x L2,
// each tile once per launch (a launch leaves in L2 the tiles the next one reads
// last). Latency l2 = the launch's 32 copies re-read every launch (warm in L2 after the warm-up launch);
// hbm = 4 x L2, each launch 32 tiles further on (a tile comes back after the whole 4 x L2).
#include <algorithm>

#include "harness/bench.cuh"
#include "micro/async_copy.cuh"
#include "micro/roofs.cuh"

namespace {
using namespace mh;
using namespace mh::async_copy;

enum class Level { l2, hbm };
const char* level_name(Level l) { return l == Level::l2 ? "l2" : "hbm"; }
uint64_t stream_ws(const DeviceFacts& f, Level l) { return l == Level::l2 ? f.l2_bytes / 8 : 4 * f.l2_bytes; }
uint64_t latency_ws(const DeviceFacts& f, Level l) { return l == Level::l2 ? 1ull << 20 : 4 * f.l2_bytes; }
constexpr uint32_t kLatencyCopies = 32;
constexpr uint64_t kLatencyPitch = 4096;  // latency copies at least 4 KiB apart: no shared sector or line

// One process-wide source of word_value data, grown when a benchmark needs more; nullptr (the benchmark
// skipped with the numbers) when the device lacks the memory.
const uint32_t* source(benchmark::State& st, uint64_t bytes) {
  static DeviceBuffer<uint32_t> buf;
  if (buf.bytes() < bytes) {
    buf = DeviceBuffer<uint32_t>();
    if (!fits_device_memory(st, bytes)) return nullptr;
    buf = DeviceBuffer<uint32_t>((bytes + 3) / 4);
    roofs::fill_values(buf.data(), buf.size());
  }
  return buf.data();
}

double observed_clock_mhz() {
  static const double mhz = observed_sm_clock_mhz();
  return mhz;
}

// Ends the benchmark with an error when this build compiled the method out (its code for this GPU is
// JIT-compiled from an older architecture's PTX); true when it may run.
bool compiled(benchmark::State& st, Method m) {
  if (method_compiled(m)) return true;
  const std::string why = std::string("async_copy: this build has no sm_") + std::to_string(method_min_arch(m) / 10) +
                          " code for " + method_name(m) + " (CMAKE_CUDA_ARCHITECTURES lacks this GPU's architecture)";
  st.SkipWithError(why.c_str());
  return false;
}

// The public name (issue 29): async/<ld_st|cp_async|tma>/<l2|hbm>/<bandwidth|latency>/[kind:<bulk|tensor>/]<axes>:
// both TMA paths under async/tma, told apart by their kind.
std::string bench_name(Method m, Level level, const char* measure, const std::string& axes) {
  const bool tma = m == Method::bulk || m == Method::tensor;
  return std::string("async/") + (tma ? "tma" : method_name(m)) + "/" + level_name(level) + "/" + measure + "/" +
         (tma ? std::string("kind:") + method_name(m) + "/" : std::string()) + axes;
}

// ---- Bandwidth ---------------------------------------------------------------------------------

struct StreamSpec {
  Method method;
  int width = 16, stages = 1;
  uint32_t copy_bytes = 0;
  Box box{};
};

std::string axes(const StreamSpec& s) {
  switch (s.method) {
    case Method::ld_st: return "tile:" + std::to_string(kTileBytes);
    case Method::cp_async: return "bytes:" + std::to_string(s.width) + "/stages:" + std::to_string(s.stages);
    case Method::bulk: return "copy:" + std::to_string(s.copy_bytes);
    case Method::tensor: return s.box.name();
  }
  return "";
}

void run_stream(benchmark::State& st, const Stream& s) {
  if (!compiled(st, s.method)) return;
  const uint32_t* src = source(st, s.tiles.working_set_bytes());
  if (!src) return;
  DeviceBuffer<uint32_t> sums(s.blocks), timeouts(1);
  sums.fill_bytes(0);
  timeouts.fill_bytes(0);
  CUtensorMap map{};
  if (s.method == Method::tensor) map = make_tensor_map(src, s.box, s.tiles);
  run_timed(st, [&] { launch_stream(s, src, &map, sums.data(), timeouts.data()); });
  if (timeouts.download()[0] != 0) {
    st.SkipWithError("async_copy: an mbarrier wait timed out (a copy never completed)");
    return;
  }
  const std::vector<uint32_t> got = sums.download(), want = expected_block_sums(s);
  for (uint32_t b = 0; b < got.size(); ++b)
    if (got[b] != want[b]) {
      st.SkipWithError(("async_copy: block " + std::to_string(b) + "'s checksum differs from the host's").c_str());
      return;
    }
  const DeviceFacts& f = current_device_facts();
  const double bytes = static_cast<double>(s.bytes_per_launch());
  st.counters["bytes_per_second"] = rate(bytes);
  st.counters["bytes_per_clock_per_sm"] = rate(bytes / (observed_clock_mhz() * 1e6 * f.sm_count));
  st.counters["working_set_bytes"] = value(static_cast<double>(s.tiles.working_set_bytes()));
  st.counters["tile_bytes"] = value(static_cast<double>(s.tiles.tile_bytes()));
  st.counters["stages"] = value(s.stages);
  st.counters["blocks_per_sm"] = value(static_cast<double>(s.blocks) / f.sm_count);
}

// Copy instructions a block issues per tile: the model's count of what each method asks of the LSU/TMA.
double instructions_per_tile(const Stream& s) {
  const double tile = static_cast<double>(s.tiles.tile_bytes());
  switch (s.method) {
    case Method::ld_st: return tile / 16;
    case Method::cp_async: return tile / s.width;
    case Method::bulk: return tile / s.copy_bytes;
    case Method::tensor: return 1;
  }
  return 0;
}

void add_stream(Planner& p, const StreamSpec& spec, Level level) {
  const DeviceFacts& f = p.facts();
  const std::string name = bench_name(spec.method, level, "bandwidth", axes(spec));
  if (f.arch() < method_min_arch(spec.method)) {
    p.skip(name, std::string(method_name(spec.method)) + " needs sm_" + std::to_string(method_min_arch(spec.method) / 10) +
                     "; this GPU is compute capability " + f.compute_capability);
    return;
  }
  const uint64_t ws = stream_ws(f, level);
  Stream s = make_stream(spec.method, spec.width, spec.stages, spec.copy_bytes, spec.box, ws, 1, 1);
  const int cap = register_cap();
  const Residency r = p.residency({cap, blocks_per_sm(f, kThreads, s.smem_bytes(), cap)}, [s] { return stream_residency(s); });
  if (r.blocks_per_sm < 1) {
    p.skip(name, "no block of " + human_bytes(static_cast<double>(s.smem_bytes())) + " shared memory can reside on an SM");
    return;
  }
  const int per_sm = r.blocks_per_sm;
  s.blocks = f.sm_count * per_sm;
  const uint64_t tile = s.tiles.tile_bytes(), blocks = static_cast<uint64_t>(s.blocks);
  s.tiles_per_block = static_cast<uint32_t>(level == Level::hbm ? (s.tiles.count + blocks - 1) / blocks
                                                                : (roofs::l2_launch_bytes(f.l2_bytes) + blocks * tile - 1) / (blocks * tile));
  Launch l;
  l.threads = kThreads;
  l.blocks_per_sm = per_sm;
  l.blocks = s.blocks;
  l.smem_per_block = s.smem_bytes();
  l.regs_per_thread = r.regs_per_thread;
  l.device_bytes = s.tiles.working_set_bytes();
  l.note = std::string(level_name(level)) + " ws=" + human_bytes(static_cast<double>(s.tiles.working_set_bytes())) + " (" +
           (level == Level::l2 ? "L2/8, 64x L2 per launch" : "4x L2, each tile once") + "), " + std::to_string(s.stages) +
           " stage(s) of " + human_bytes(static_cast<double>(tile)) + ", " + std::to_string(s.tiles_per_block) + " tiles per block";
  p.predict(name, {{"bytes_per_launch", static_cast<double>(s.bytes_per_launch())}, {"instructions_per_tile", instructions_per_tile(s)}});
  p.add_if_resident(name, l, [s](benchmark::State& st) { run_stream(st, s); });
}

// The configurations: the baseline, cp.async by width x stages, bulk by copy size, tensor by box and
// swizzle (each swizzle with the widest inner extent it takes, 2-byte elements; and 4-byte 32x256 boxes).
std::vector<StreamSpec> stream_specs() {
  std::vector<StreamSpec> v{{Method::ld_st}};
  for (int width : {4, 8, 16})
    for (int stages : {1, 2, 4}) v.push_back({Method::cp_async, width, stages});
  for (uint32_t copy : {1024u, 4096u, 16384u, 65536u}) v.push_back({Method::bulk, 16, 1, copy});
  const Box boxes[] = {{64, 64, 2, 0}, {128, 64, 2, 0}, {16, 64, 2, 32}, {32, 64, 2, 64}, {64, 64, 2, 128}, {32, 256, 4, 0}, {32, 256, 4, 128}};
  for (const Box& b : boxes) v.push_back({Method::tensor, 16, 1, 0, b});
  return v;
}

// ---- Latency -----------------------------------------------------------------------------------

struct LatencySpec {
  Method method;
  uint32_t bytes = 16;
  Box box{};
};

void run_latency(benchmark::State& st, const Latency& l, Level level) {
  if (!compiled(st, l.method)) return;
  const uint32_t* src = source(st, l.tiles.working_set_bytes());
  if (!src) return;
  DeviceBuffer<long long> cycles(l.copies);
  DeviceBuffer<uint32_t> sum(1), timeouts(1);
  timeouts.fill_bytes(0);
  CUtensorMap map{};
  if (l.method == Method::tensor) map = make_tensor_map(src, l.box, l.tiles);
  // hbm: every launch starts kLatencyCopies tiles further on, so its tiles are not in L2.
  const uint64_t step = level == Level::hbm ? l.copies : 0;
  uint64_t first = 0, last_first = 0;
  run_timed(st, [&] {
    last_first = first;
    launch_latency(l, src, first, &map, cycles.data(), sum.data(), timeouts.data());
    first = (first + step) % l.tiles.count;
  });
  if (timeouts.download()[0] != 0) {
    st.SkipWithError("async_copy: an mbarrier wait timed out (a copy never completed)");
    return;
  }
  if (sum.download()[0] != expected_latency_sum(l, last_first)) {
    st.SkipWithError("async_copy: the copied words' sum differs from the host's");
    return;
  }
  std::vector<long long> c = cycles.download();  // the last launch's copies
  std::sort(c.begin(), c.end());
  st.counters["cycles"] = value(static_cast<double>(c[c.size() / 2]));
  st.counters["cycles_min"] = value(static_cast<double>(c.front()));
  st.counters["bytes"] = value(static_cast<double>(l.tiles.tile_bytes()));
  st.counters["working_set_bytes"] = value(static_cast<double>(l.tiles.working_set_bytes()));
}

void add_latency(Planner& p, const LatencySpec& spec, Level level) {
  const DeviceFacts& f = p.facts();
  const std::string tail = spec.method == Method::tensor ? spec.box.name() : "bytes:" + std::to_string(spec.bytes);
  const std::string name = bench_name(spec.method, level, "latency", tail);
  if (f.arch() < method_min_arch(spec.method)) {
    p.skip(name, std::string(method_name(spec.method)) + " needs sm_" + std::to_string(method_min_arch(spec.method) / 10) +
                     "; this GPU is compute capability " + f.compute_capability);
    return;
  }
  Latency l;
  l.method = spec.method;
  l.box = spec.box;
  l.copies = kLatencyCopies;
  const uint64_t ws = latency_ws(f, level);
  if (spec.method == Method::tensor) {
    l.tiles = box_tiles(spec.box, ws);
  } else {
    l.tiles.row_bytes = spec.bytes;
    l.tiles.pitch_bytes = std::max<uint64_t>(spec.bytes, kLatencyPitch);
    l.tiles.count = ws / l.tiles.pitch_bytes;
  }
  Launch launch;
  launch.threads = kLatencyThreads;
  launch.blocks = 1;
  launch.smem_per_block = kLatencySmem;
  launch.device_bytes = l.tiles.working_set_bytes();
  launch.note = std::string(level_name(level)) + " ws=" + human_bytes(static_cast<double>(launch.device_bytes)) + ", " +
                std::to_string(l.copies) + " copies of " + human_bytes(static_cast<double>(l.tiles.tile_bytes())) + " one at a time";
  p.add_if_resident(name, launch, [l, level](benchmark::State& st) { run_latency(st, l, level); });
}

std::vector<LatencySpec> latency_specs() {
  std::vector<LatencySpec> v;
  for (uint32_t b : {16u, 1024u, 4096u, 8192u}) v.push_back({Method::ld_st, b});
  v.push_back({Method::cp_async, 16});
  for (uint32_t b : {16u, 1024u, 4096u, 8192u, 16384u}) v.push_back({Method::bulk, b});
  for (const Box& b : {Box{64, 64, 2, 0}, Box{64, 64, 2, 128}}) v.push_back({Method::tensor, 0, b});
  return v;
}

void plan(Planner& p) {
  for (Level level : {Level::l2, Level::hbm}) {
    for (const StreamSpec& s : stream_specs()) add_stream(p, s, level);
    for (const LatencySpec& s : latency_specs()) add_latency(p, s, level);
  }
}

}  // namespace

MH_FAMILY("async", plan);

// Coalescing benchmarks: coalescing/<read|write>/<hbm|l2|l1>/stride:S. Working sets, chosen on purpose
// (README "Coalescing"); each is a power-of-two number of requests, so it shrinks by up to 2x at strides
// that are no power of two (counter working_set_bytes):
//   hbm: up to max(2 GiB, 8 x L2) (>= 4x L2 and, even at stride >= 8, more touched sectors than L2
//        holds), less where free device memory is short (skipped below 4x L2); L2 flushed before every
//        sample, each request made once per launch. Reads: a resident grid sweeping the region in order;
//        writes: the stream (one warp per chunk of kUnroll requests, blocks in order), the layout of the
//        write roof (micro/bench_roofs.cu: 4.70 TB/s where resident grids stayed at 4.3).
//   l2:  up to L2/4 (15 MB on a 60 MB L2), walked 1024 requests per warp per launch.
//   l1:  every SM full of blocks, each walking its own region; the regions of one SM fill 3/4 of its
//        unified L1 (shared-memory carve-out 0), so they stay L1-resident with headroom (16 KiB per
//        block on sm_90: 8 blocks, 256 KiB L1; on sm_75: 4 blocks, 96 KiB L1).
// And coalescing/mix/bcast_row/<l1|l2|hbm|split> (micro/load_mix.cuh): the L1TEX request rate of a broadcast +
// row load mix whose L1 misses come from nowhere (l1), L2, HBM, or HBM for the broadcasts and L2 for the rows
// (split); counter requests_per_second (warp load instructions per second), the rate the GEMM time model
// charges kernels that load operands straight from global memory (split checks its additive rule). About
// 0.15 s for the four.
#include <algorithm>
#include <optional>

#include "harness/bench.cuh"
#include "micro/coalescing.cuh"
#include "micro/load_mix.cuh"
#include "model/access_model.hpp"

namespace {
using namespace mh;
using namespace mh::coalescing;

constexpr int kThreads = kMaxThreads;

// Registers and resident blocks of kThreads per SM: on the GPU, the compiled kernel's (strided_residency);
// for --plan-for, by the facts and the kernel's register cap.
Residency residency(const Planner& pl, bool write, Level level, int stride) {
  const DeviceFacts& f = pl.facts();
  const int cap = register_cap(f.arch());
  return pl.residency({cap, blocks_per_sm(f, kThreads, 0, cap)}, [&] { return strided_residency(write, level, stride); });
}
uint64_t hbm_target_bytes(const DeviceFacts& f) { return std::max<uint64_t>(2ull << 30, 8ull * f.l2_bytes); }

// The plan for a working set of at most max_bytes (hbm; the others fix theirs); nullopt with `why` set
// when none fits.
std::optional<Plan> bench_plan(const DeviceFacts& f, int fit, bool write, Level level, int stride, uint64_t max_bytes,
                               std::string* why) {
  if (fit < 1) {
    *why = "no block of " + std::to_string(kThreads) + " threads fits on one SM";
    return std::nullopt;
  }
  // hbm/l2: a power-of-two number of warps (so that it divides R), as many as fit resident at once.
  int grid = 1;
  while (grid * 2 <= f.sm_count * fit) grid *= 2;
  try {
    switch (level) {
      case Level::hbm:
        if (max_bytes < 4ull * f.l2_bytes) {
          *why = "an HBM working set needs >= 4x L2 = " + std::to_string(4 * f.l2_bytes >> 20) + " MiB, only " +
                 std::to_string(max_bytes >> 20) + " MiB of device memory are usable";
          return std::nullopt;
        }
        return write ? make_stream_plan(stride, kThreads, max_bytes) : make_plan(level, stride, grid, kThreads, max_bytes, 0);
      case Level::l2: return make_plan(level, stride, grid, kThreads, f.l2_bytes / 4, 1024);
      default: return make_plan(level, stride, f.sm_count * fit, kThreads, f.l1_smem_per_sm_bytes * 3 / 4 / fit, 2048);
    }
  } catch (const std::invalid_argument& e) {
    *why = e.what();
    return std::nullopt;
  }
}

// Bytes the benchmark allocates: the buffer, the checksum, and for hbm the L2 flusher (2x L2).
uint64_t device_bytes(const DeviceFacts& f, const Plan& p) {
  return p.buffer_elems() * 4 + 4 + (p.level == Level::hbm ? 2ull * f.l2_bytes : 0);
}

Launch launch_of(const DeviceFacts& f, const Plan& p, const Residency& r) {
  Launch l;
  l.threads = p.threads;
  l.blocks = p.blocks;
  const bool resident = p.blocks <= f.sm_count * r.blocks_per_sm;  // else the hbm write stream: blocks come and go
  l.blocks_per_sm = resident ? (p.blocks + f.sm_count - 1) / f.sm_count : 0;
  l.regs_per_thread = r.regs_per_thread;
  l.device_bytes = device_bytes(f, p);
  l.note = "working set " + human_bytes(p.buffer_elems() * 4.0) +
           (p.per_block_region() ? " (" + human_bytes(p.region_elems() * 4.0) + " per block, carve-out 0)" : "") +
           (p.level == Level::hbm ? ", L2 flushed" : "") + (resident ? "" : ", one pass of blocks in order");
  return l;
}

void run(benchmark::State& st, bool write, Plan p, int fit) {
  const DeviceFacts& f = current_device_facts();
  if (device_bytes(f, p) > usable_device_bytes()) {  // hbm shrinks to what is free; the others are small
    std::string why;
    const uint64_t room = usable_device_bytes() - std::min<uint64_t>(usable_device_bytes(), 2ull * f.l2_bytes + 4);
    const std::optional<Plan> smaller = p.level == Level::hbm ? bench_plan(f, fit, write, p.level, p.stride, room, &why) : std::nullopt;
    if (!smaller) {
      skip_benchmark(st, why.empty() ? "working set does not fit in free device memory" : why);
      return;
    }
    p = *smaller;
  }
  DeviceBuffer<uint32_t> buf(p.buffer_elems());
  DeviceBuffer<uint32_t> checksum(1);
  fill_values(buf.data(), p.buffer_elems());
  checksum.fill_bytes(0);
  Timing t;
  t.flush_l2 = p.level == Level::hbm;
  run_timed(st, [&] { write ? launch_write(p, buf.data()) : launch_read(p, buf.data(), checksum.data()); }, t);
  const double requests = static_cast<double>(p.requests_per_launch());
  const int sectors = model::strided_sectors_per_request(p.stride);
  st.counters["useful_bytes_per_second"] = rate(requests * 32 * 4);
  st.counters["bus_bytes_per_second"] = rate(requests * sectors * model::kSectorBytes);
  st.counters["working_set_bytes"] = value(static_cast<double>(p.buffer_elems()) * 4);
}

// The data sets, the checksum, and for hbm the L2 flusher (2x L2).
uint64_t mix_device_bytes(const DeviceFacts& f, const load_mix::Plan& p) {
  return p.buffer_elems() * 4 + 4 + (load_mix::from_hbm(p.source) ? 2ull * f.l2_bytes : 0);
}

void run_mix(benchmark::State& st, const load_mix::Plan& p) {
  if (mix_device_bytes(current_device_facts(), p) > usable_device_bytes()) {
    skip_benchmark(st, "working set does not fit in free device memory");
    return;
  }
  DeviceBuffer<uint32_t> buf(p.buffer_elems());
  DeviceBuffer<uint32_t> checksum(1);
  load_mix::fill(buf.data(), p.buffer_elems());
  checksum.fill_bytes(0);
  Timing t;
  t.flush_l2 = load_mix::from_hbm(p.source);
  run_timed(st, [&] { load_mix::launch(p, buf.data(), checksum.data()); }, t);
  st.counters["requests_per_second"] = rate(static_cast<double>(p.requests_per_launch()));
  st.counters["working_set_bytes"] = value(static_cast<double>(p.buffer_elems()) * 4);
}

// coalescing/mix/bcast_row/<source>: a resident grid of load_mix::kThreads blocks.
void plan_mix(Planner& pl) {
  const DeviceFacts& f = pl.facts();
  const int cap = arch_register_cap(load_mix::kThreads, arch_min_blocks(f.arch(), load_mix::kThreads));
  for (load_mix::Source src : {load_mix::Source::l1, load_mix::Source::l2, load_mix::Source::hbm, load_mix::Source::split}) {
    const std::string name = std::string("coalescing/mix/bcast_row/") + load_mix::source_name(src);
    const Residency r = pl.residency({cap, blocks_per_sm(f, load_mix::kThreads, 0, cap)}, [&] { return load_mix::compiled(); });
    try {
      const load_mix::Plan p = load_mix::make_plan(src, f, r.blocks_per_sm);
      Launch l;
      l.threads = load_mix::kThreads;
      l.blocks = p.blocks;
      l.blocks_per_sm = r.blocks_per_sm;
      l.regs_per_thread = r.regs_per_thread;
      l.device_bytes = mix_device_bytes(f, p);
      l.note = "working set " + human_bytes(p.buffer_elems() * 4.0) + ", " + std::to_string(p.tiles) + " tiles of " +
               std::to_string(p.steps) + " steps" + (load_mix::from_hbm(src) ? ", L2 flushed" : "");
      pl.add_if_resident(name, l, [p](benchmark::State& st) { run_mix(st, p); });
      pl.predict(name, {{"sectors_per_request", load_mix::Plan::sectors_per_request()}});
    } catch (const std::invalid_argument& e) {
      pl.skip(name, e.what());
    }
  }
}

void plan(Planner& pl) {
  plan_mix(pl);
  const DeviceFacts& f = pl.facts();
  for (bool write : {false, true})
    for (Level level : {Level::hbm, Level::l2, Level::l1})
      for (int stride : kStrides) {
        const std::string name = std::string("coalescing/") + (write ? "write/" : "read/") + level_name(level) +
                                 "/stride:" + std::to_string(stride);
        std::string why;
        const uint64_t hbm = std::min<uint64_t>(hbm_target_bytes(f), f.global_mem_bytes / 2);
        const Residency r = residency(pl, write, level, stride);
        const std::optional<Plan> p = bench_plan(f, r.blocks_per_sm, write, level, stride, hbm, &why);
        if (!p) {
          pl.skip(name, why);
          continue;
        }
        const int fit = r.blocks_per_sm;
        pl.add_if_resident(name, launch_of(f, *p, r), [write, p = *p, fit](benchmark::State& st) { run(st, write, p, fit); });
        pl.predict(name, {{"sectors_per_request", model::strided_sectors_per_request(stride)}});
      }
}

}  // namespace

MH_FAMILY("coalescing", plan);

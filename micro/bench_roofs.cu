// Benchmarks of the roofs family: ceiling/read/<l1|l2|hbm>, ceiling/write/<l2|hbm>, ceiling/copy/hbm.
// With MH_SWEEP=1 in the environment it also plans sweep/<op>/<level>/...: the search over access width,
// accesses in flight, block size, occupancy, cache operator and working set that chose the kernels below.
//
// Working sets, from the device's facts (counter working_set_bytes):
//   l1:  a quarter of the unified L1 of one SM (64 KiB of 256 KiB on an H200), shared-memory carve-out 0;
//        every SM walks the same bytes, so each SM's L1 holds all of them; 2048 passes per SM per launch.
//   l2:  a third of the L2 (distinct bytes of the whole grid), loads that bypass L1; l2_launch_bytes
//        (64 x L2) per launch, the rule the async family's L2 launches share. The l2 roofs use L2/8 (see
//        kRoofs); ceiling/read/l2 in the owned layout (roofs.cuh): L2/8 rounded to whole chunks per warp.
//   hbm: 64 x L2 (3.8 GB on an H200, at most 1/8 of memory), each byte once per launch: the tail a
//        launch leaves in L2 is the part the next launch reads last, so no L2 flush is needed.
//        Write and copy use the stream layout: a grid of one warp per 512-byte chunk.
#include <algorithm>
#include <iterator>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include "harness/bench.cuh"
#include "harness/registry.cuh"
#include "micro/bench_roofs.cuh"

namespace mh::roofs {
namespace {

// Buffers kept for the whole process: the HBM working sets are GBs, filled once. Write kernels store
// word_value(i) too, so the contents stay what every read expects.
uint32_t* values_buffer(uint64_t words) {
  static DeviceBuffer<uint32_t> buf;
  if (buf.size() < words) {
    buf = DeviceBuffer<uint32_t>();  // free before allocating the larger one
    buf = DeviceBuffer<uint32_t>(words);
    fill_values(buf.data(), words);
  }
  return buf.data();
}

uint32_t* scratch_buffer(uint64_t words) {
  static DeviceBuffer<uint32_t> buf;
  if (buf.size() < words) {
    buf = DeviceBuffer<uint32_t>();
    buf = DeviceBuffer<uint32_t>(words);
  }
  return buf.data();
}

// Measured once per process (it spins the GPU for ~0.2 s).
double observed_clock_mhz() {
  static const double mhz = observed_sm_clock_mhz();
  return mhz;
}

}  // namespace

std::string Config::describe() const {
  const char* k = kind == Kind::read ? "read" : kind == Kind::write ? "write" : "copy";
  std::string s = k;
  if (kind != Kind::write) s += std::string(" ld:") + load_name(ld);
  if (kind != Kind::read) s += std::string(" st:") + store_name(st);
  s += " w:" + std::to_string(width) + " u:" + std::to_string(unroll) + " t:" + std::to_string(threads);
  return stream ? s + " stream" : owned ? s + " owned" : front ? s + " front" : s;
}

void run_walk(benchmark::State& st, const Config& c, uint64_t ws_bytes, uint64_t bytes_per_launch, int placements) {
  if (placements < 1 || (placements > 1 && c.kind != Kind::read))
    throw std::invalid_argument("run_walk: placements must be 1, or more for a read (writes store word_value(i) in place)");
  const DeviceFacts& f = current_device_facts();
  const int fit = resident_blocks_per_sm(c.kind, c.ld, c.st, c.width, c.unroll, c.threads);
  const int per_sm = c.blocks_per_sm > 0 ? c.blocks_per_sm : std::max(1, fit / c.occupancy_div);
  if (fit < per_sm && !c.stream) {
    skip_benchmark(st, "the occupancy API lets " + std::to_string(fit) + " blocks of " + c.describe() +
                           " reside per SM, the plan wants " + std::to_string(per_sm));
    return;
  }
  const uint64_t chunk = 32ull * c.unroll * c.width, warps_per_block = c.threads / 32;
  const uint64_t blocks = c.stream ? (ws_bytes / chunk + warps_per_block - 1) / warps_per_block : uint64_t(f.sm_count) * per_sm;
  const Walk w = c.owned ? make_owned_walk(c.width, c.unroll, static_cast<int>(blocks), c.threads, ws_bytes, bytes_per_launch)
                         : make_walk(c.width, c.unroll, static_cast<int>(blocks), c.threads, ws_bytes,
                                     c.stream ? ws_bytes : bytes_per_launch, c.front || c.stream);
  const uint64_t shift_words = placement_shift(w.working_set_bytes(), placements) / 4;
  uint32_t* values = values_buffer(w.words() + (placements - 1) * shift_words);
  DeviceBuffer<uint32_t> checksum(1);
  checksum.fill_bytes(0);
  uint32_t* dst = c.kind == Kind::copy ? scratch_buffer(w.words()) : nullptr;
  uint64_t launch_no = 0;
  run_timed(st, [&] {
    switch (c.kind) {
      case Kind::read: return launch_read(w, c.ld, values + (launch_no++ % placements) * shift_words, checksum.data());
      case Kind::write: return launch_write(w, c.st, values);
      case Kind::copy: return launch_copy(w, c.ld, c.st, values, dst);
    }
  });
  const double bytes = static_cast<double>(w.bytes_per_launch()) * (c.kind == Kind::copy ? 2 : 1);
  st.counters["bytes_per_second"] = rate(bytes);
  st.counters["bytes_per_clock_per_sm"] = rate(bytes / (observed_clock_mhz() * 1e6 * f.sm_count));
  st.counters["working_set_bytes"] = value(static_cast<double>(w.working_set_bytes()));
  st.counters["blocks_per_sm"] = value(per_sm);
  if (placements > 1) st.counters["placements"] = value(placements);
}

}  // namespace mh::roofs

namespace {
using namespace mh;
using namespace mh::roofs;

enum class Level { l1, l2, hbm };
const char* level_name(Level l) { return l == Level::l1 ? "l1" : l == Level::l2 ? "l2" : "hbm"; }

// l2_div: the L2 working set is l2_bytes / l2_div.
uint64_t working_set(const DeviceFacts& f, Level l, int l2_div = 3) {
  switch (l) {
    case Level::l1: return f.l1_smem_per_sm_bytes / 4;
    case Level::l2: return f.l2_bytes / l2_div;
    default: return std::min<uint64_t>(64 * f.l2_bytes, f.global_mem_bytes / 8);
  }
}

uint64_t bytes_per_launch(const DeviceFacts& f, Level l, uint64_t ws) {
  switch (l) {
    case Level::l1: return 2048 * ws * f.sm_count;
    case Level::l2: return l2_launch_bytes(f.l2_bytes);
    default: return ws;
  }
}

// The kernels that measured best (one H200, 132 SMs at 1980 MHz). Round 1: MH_SWEEP=1, 644
// configurations at --benchmark_min_time=0.01s, walkers then numbered block major. Round 2: the
// ceilings (3 repetitions), the front/stream/occupancy/working-set parts of the sweep, and ncu
// (--clock-control none, one launch each: gpu__time_duration, dram__bytes_*). TB/s = 1e12 B/s.
//   read/l1: 125-126 B/clk/SM (32.7-33.0 TB/s) for most shapes with 8-16 B accesses and >= 4 in
//     flight, plain or .nc alike; 4-byte loads reach 125.7 (nc, u:8, t:512); unroll 1-2 fall below.
//     Working set L1/16 .. L1/2: 123.3 .. 125.9 B/clk/SM. Kept: plain, 16 B, 8 in flight, 256
//     threads: 32.91 TB/s = 125.9 B/clk/SM in round 2; ncu: 99.95 % L1 sector hits, 77 k L2 sectors
//     for 553 M L1 sectors, 73 KB from DRAM.
//   read/l2 (.cg, L1 bypassed; 16 B, 8 in flight, 256 threads) falls with the working set: round 2
//     L2/32 13.94, L2/16 12.31, L2/8 11.30, L2/4 10.18, L2/3 10.12, L2/2 9.48 TB/s; 8-16 B at
//     256-512 threads within 2 % of each other at L2/3. Kept L2/8 (7.5 MB on an H200, next to
//     the 8 MB of published figures): 11.15 TB/s; ncu: 0 % L1 hits, 99 % L2 hits, 7.9 MB from DRAM
//     (the first touch), lts__throughput 84 % of peak. Round 3 (issue 29): ncu counted only 0.79 of
//     those bytes as L2 sectors (lts__t_sectors_srcunit_tex_op_read): at L2/8 the walk layout has
//     ~4.4 warps per chunk (8448 warps, 1920 chunks), and requests of an SM's warps for one sector
//     merge before L2, so the L2/32 .. L2/2 fall above is mostly merging. Now the owned layout (every
//     sector read by one warp only: shared_sectors = 0), whose working set is a whole number of chunks
//     per warp: with 16 B x 2 in flight (1 KiB chunks) and every resident block, 8448 warps x 1 KiB =
//     8.25 MiB on an H200 (L2/7.3; the L2/8 target rounded), 64 KiB in flight per SM, ~1500 clocks
//     of L2 latency at 42 B/clk/SM. 16 B x 8 at full occupancy would need 33 MiB (L2/1.8) to own its
//     chunks; x 4 at half and x 8 at a quarter of the blocks keep 8.25 MiB (the MH_SWEEP=1 owned
//     entries compare them). Measured (H200 GPU-feb60d5f, 2026-12-02, MH_SWEEP=1 beside the run whose
//     roof was x 2): x 2 7.59 TB/s (ncu: L2 sectors x 32 = 1.000 of the bytes, level confirmed), below
//     the async family's TMA 9.06 and cp.async 8.77; x 1 8.39, x 4 8.72 (16.5 MiB: one 2 KiB chunk per
//     warp), x 8 8.75 (33 MiB), x 4 at half occupancy 8.59, x 8 at half 8.71. Kept: x 4 at full
//     occupancy, 16.5 MiB (L2/3.6), within 0.3 % of the fastest and in one L2 partition's 30 MB.
//   read/hbm: round 1 4.61 TB/s for 16 B x 8 in flight at 256 or 512 threads with any operator
//     (plain, .cg, .cs, .nc within 0.1 %), 4-byte loads 4.56; round 2 (walkers warp-in-block major)
//     4.515 TB/s; ncu: dram__throughput 93.7 %, DRAM bytes = bytes read. Kept: .nc, 16 B, 8, 256.
//   write/hbm: persistent grids 4.25 TB/s at full occupancy (.cs, .cg, plain alike), 4.30 with one
//     block of 256 threads per SM. The stream layout (a warp per chunk, one step: the order a
//     one-element-per-thread kernel writes in) beat them: ncu 855.8 us for 4.03 GB = 4.70 TB/s
//     (.cs; plain 858.9 us), dram__throughput 97 %. Kept: stream, .cs, 16 B, 1 per thread, 256.
//   write/l2 (L2/8): 4.57 TB/s, ncu lts__throughput 96 % of peak with 3 MB written to DRAM: the
//     L2 takes writes at about half its read rate. .cs and plain within 1 %; L2/16 .. L2/3 alike.
//   copy/hbm (read + write counted): persistent 3.96 TB/s (.cs/.cs, plain/plain; 16 B x 8); stream
//     ncu 1871 us for 8.05 GB = 4.30 TB/s (plain/plain; nc/cs 1876 us, cs/cs 1888 us),
//     ceiling/memcpy_d2d 4.22 TB/s in the same run. Kept: stream, plain/plain, 16 B, 1, 256.
struct Roof {
  const char* name;
  Level level;
  Config c;
  int l2_div = 3;
};
const Roof kRoofs[] = {
    {"ceiling/read/l1", Level::l1, {Kind::read, Load::plain, Store::plain, 16, 8, 256, 0, 1}},
    {"ceiling/read/l2", Level::l2, {Kind::read, Load::cg, Store::plain, 16, 4, 256, 0, 1, false, false, true}, 8},
    {"ceiling/read/hbm", Level::hbm, {Kind::read, Load::nc, Store::plain, 16, 8, 256, 0, 1}},
    {"ceiling/write/l2", Level::l2, {Kind::write, Load::plain, Store::cs, 16, 8, 256, 0, 1}, 8},
    {"ceiling/write/hbm", Level::hbm, {Kind::write, Load::plain, Store::cs, 16, 1, 256, 0, 1, false, true}},
    {"ceiling/copy/hbm", Level::hbm, {Kind::copy, Load::plain, Store::plain, 16, 1, 256, 0, 1, false, true}},
};

Launch launch_of(const DeviceFacts& f, const Config& c, uint64_t ws, Level level) {  // ws: by value, owned rounds it
  Launch l;
  l.threads = c.threads;
  l.blocks_per_sm = c.blocks_per_sm;
  const int per_sm = c.blocks_per_sm > 0 ? c.blocks_per_sm
                                         : std::max(1, std::min(f.max_blocks_per_sm, f.max_threads_per_sm / c.threads) / c.occupancy_div);
  l.blocks = static_cast<long long>(per_sm) * f.sm_count;
  if (c.stream) {
    l.blocks_per_sm = 0;
    l.blocks = static_cast<long long>(ws / (32ull * c.unroll * c.width) / (c.threads / 32));
  }
  if (c.owned)
    ws = make_owned_walk(c.width, c.unroll, static_cast<int>(l.blocks), c.threads, ws, bytes_per_launch(f, level, ws)).working_set_bytes();
  l.device_bytes = ws * (c.kind == Kind::copy ? 2 : 1);
  l.note = std::string(level_name(level)) + " ws=" + std::to_string(ws) + " " + c.describe();
  return l;
}

void add(Planner& p, const std::string& name, const Config& c, Level level, uint64_t ws) {
  const DeviceFacts& f = p.facts();
  const uint64_t bytes = bytes_per_launch(f, level, ws);
  const Launch l = launch_of(f, c, ws, level);
  // An owned read reaches L2 with every byte it counts (no sector shared between warps): bytes / 32
  // sectors, what ncu's roofs table checks (lts__t_sectors_srcunit_tex_op_read).
  if (c.owned && c.kind == Kind::read)
    p.predict(name, {{"l2_read_sectors",
                      static_cast<double>(make_owned_walk(c.width, c.unroll, static_cast<int>(l.blocks), c.threads, ws, bytes)
                                              .bytes_per_launch()) / 32}});
  p.add_if_resident(name, l, [c, ws, bytes](benchmark::State& st) { run_walk(st, c, ws, bytes); });
}

// MH_SWEEP=1: every width x unroll x block size at the most resident blocks, for each cache operator
// that makes sense at the level; then occupancy and working set around one shape.
void plan_sweep(Planner& p) {
  const DeviceFacts& f = p.facts();
  auto name_of = [](const Config& c, Level level) {
    std::string n = std::string("sweep/") + (c.kind == Kind::read ? "read" : c.kind == Kind::write ? "write" : "copy") + "/" +
                    level_name(level);
    if (c.kind != Kind::write) n += std::string("/ld:") + load_name(c.ld);
    if (c.kind != Kind::read) n += std::string("/st:") + store_name(c.st);
    return n + "/w:" + std::to_string(c.width) + "/u:" + std::to_string(c.unroll) + "/t:" + std::to_string(c.threads);
  };
  struct Ops {
    Kind kind;
    Level level;
    Load ld;
    Store st;
  };
  const Ops ops[] = {
      {Kind::read, Level::l1, Load::plain, Store::plain},  {Kind::read, Level::l1, Load::nc, Store::plain},
      {Kind::read, Level::l2, Load::cg, Store::plain},     {Kind::read, Level::l2, Load::plain, Store::plain},
      {Kind::read, Level::hbm, Load::plain, Store::plain}, {Kind::read, Level::hbm, Load::cg, Store::plain},
      {Kind::read, Level::hbm, Load::cs, Store::plain},    {Kind::read, Level::hbm, Load::nc, Store::plain},
      {Kind::write, Level::l2, Load::plain, Store::plain}, {Kind::write, Level::l2, Load::plain, Store::cs},
      {Kind::write, Level::hbm, Load::plain, Store::plain}, {Kind::write, Level::hbm, Load::plain, Store::cs},
      {Kind::write, Level::hbm, Load::plain, Store::cg},   {Kind::copy, Level::hbm, Load::plain, Store::plain},
      {Kind::copy, Level::hbm, Load::cg, Store::cg},       {Kind::copy, Level::hbm, Load::cs, Store::cs},
      {Kind::copy, Level::hbm, Load::nc, Store::cs},
  };
  for (const Ops& o : ops)
    for (int width : kWidths)
      for (int unroll : kUnrolls)
        for (int threads : {256, 512, 1024}) {
          const Config c{o.kind, o.ld, o.st, width, unroll, threads, 0, 1};
          add(p, name_of(c, o.level), c, o.level, working_set(f, o.level));
        }
  // Occupancy: 1/1, 1/2, 1/4 and 1/8 of the resident blocks, 16-byte accesses, 4 and 8 in flight.
  for (const Ops& o : {ops[0], ops[2], ops[6], ops[11]})
    for (int unroll : {4, 8})
      for (int div : {2, 4, 8}) {
        const Config c{o.kind, o.ld, o.st, 16, unroll, 256, 0, div};
        add(p, name_of(c, o.level) + "/occ:1/" + std::to_string(div), c, o.level, working_set(f, o.level));
      }
  // Front layout (grid-stride) for the HBM streams, at 1/1 .. 1/8 of the resident blocks.
  for (const Ops& o : {ops[7], ops[10], ops[11], ops[13], ops[15], ops[16]})
    for (int unroll : {4, 8})
      for (int div : {1, 2, 4, 8}) {
        Config c{o.kind, o.ld, o.st, 16, unroll, 256, 0, div};
        c.front = true;
        add(p, name_of(c, o.level) + "/front/occ:1/" + std::to_string(div), c, o.level, working_set(f, o.level));
      }
  // Stream: one warp per chunk, one step, as many blocks as that takes (writes and copies: a read
  // would end in one same-address atomic per warp).
  for (const Ops& o : {ops[10], ops[11], ops[13], ops[15], ops[16]})
    for (int width : kWidths)
      for (int unroll : {1, 2, 4})
        for (int threads : {256, 1024}) {
          Config c{o.kind, o.ld, o.st, width, unroll, threads, 0, 1};
          c.stream = true;
          add(p, name_of(c, o.level) + "/stream", c, o.level, working_set(f, o.level));
        }
  for (int div : {2, 4, 8}) {
    const Config c{Kind::copy, Load::cs, Store::cs, 16, 8, 256, 0, div};
    add(p, name_of(c, Level::hbm) + "/occ:1/" + std::to_string(div), c, Level::hbm, working_set(f, Level::hbm));
  }
  for (int div : {16, 8, 4, 3})
    for (Store st : {Store::plain, Store::cs}) {
      const Config c{Kind::write, Load::plain, st, 16, 8, 256, 0, 1};
      const uint64_t ws = f.l2_bytes / div;
      add(p, name_of(c, Level::l2) + "/ws:" + std::to_string(ws), c, Level::l2, ws);
    }
  // Working set: L1/16 .. L1/2 per SM, L2/32 .. L2/2.
  for (int div : {16, 8, 4, 2}) {
    const Config c{Kind::read, Load::plain, Store::plain, 16, 8, 256, 0, 1};
    const uint64_t ws = f.l1_smem_per_sm_bytes / div;
    add(p, name_of(c, Level::l1) + "/ws:" + std::to_string(ws), c, Level::l1, ws);
  }
  // Owned layout (L2/8 rounded to whole chunks per warp): accesses in flight per thread x occupancy.
  for (int unroll : {1, 2, 4, 8})
    for (int div : {1, 2, 4, 8}) {
      const Config c{Kind::read, Load::cg, Store::plain, 16, unroll, 256, 0, div, false, false, true};
      add(p, name_of(c, Level::l2) + "/owned/occ:1/" + std::to_string(div), c, Level::l2, working_set(f, Level::l2, 8));
    }
  for (int div : {4, 2}) {  // the kept shape (ceiling/read/l2's) over larger working sets: the working set alone
    const Config c = std::find_if(std::begin(kRoofs), std::end(kRoofs),
                                  [](const Roof& r) { return std::string(r.name) == "ceiling/read/l2"; })->c;
    const uint64_t ws = working_set(f, Level::l2, div);
    add(p, name_of(c, Level::l2) + "/owned/ws:" + std::to_string(ws), c, Level::l2, ws);
  }
  for (int div : {32, 16, 8, 4, 3, 2}) {
    const Config c{Kind::read, Load::cg, Store::plain, 16, 8, 256, 0, 1};
    const uint64_t ws = f.l2_bytes / div;
    add(p, name_of(c, Level::l2) + "/ws:" + std::to_string(ws), c, Level::l2, ws);
  }
}

}  // namespace

// The per-level roofs, planned by the ceiling family (micro/bench_ceilings.cu) with fma and memcpy_d2d.
void mh::roofs::plan_roofs(Planner& p) {
  for (const Roof& r : kRoofs) add(p, r.name, r.c, r.level, working_set(p.facts(), r.level, r.l2_div));
  const char* sweep = std::getenv("MH_SWEEP");
  if (sweep && *sweep && *sweep != '0') plan_sweep(p);
}

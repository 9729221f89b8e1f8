// Tensor-core benchmarks (definitions in micro/tensor.cuh, model in model/tensor_model.hpp; names and
// counters in docs/families/tensor.md):
//   smem_banks/ldmatrix/x:<1|2|4>/trans:<0|1>/layout:<padded|swizzled|conflicted>
//   tensor/mma/<dtype>/throughput/data:<zero|random>, tensor/mma/<dtype>/latency
//   tensor/wgmma/bf16/<ss|rs>/n:<64|128|256>/data:<zero|random>, tensor/wgmma/fp8_e4m3/ss/n:<64|128|256>/data:<...>
// Throughput forms fill every SM (sm_count x the blocks that reside: on the GPU the compiled kernel's by the
// occupancy API, for --plan-for the facts'); the SM clock is the kernel's own (clock64 over %globaltimer,
// median over blocks). Every result is checked against the host after timing (SkipWithError if wrong), and
// the tensor-core kernels also once before, at 2 steps, where the tolerance is tight.
#include <algorithm>

#include "harness/bench.cuh"
#include "micro/tensor.cuh"

namespace {
using namespace mh;
using namespace mh::tensor;

constexpr double kLdWavefrontsPerSm = 1 << 21;       // ~1 ms at one wavefront per clock
constexpr int kLatencySteps = 4096;                   // dependent mma of the latency chain
const Dtype kDtypes[] = {Dtype::fp16, Dtype::bf16, Dtype::tf32, Dtype::int8, Dtype::fp8_e4m3};

// The counters every throughput form reports: `per_launch` FLOP (or bytes) at the kernel's own clock.
void rate_counters(benchmark::State& st, const char* what, double per_launch, double seconds, const std::vector<ClockSpan>& spans) {
  const double mhz = median_mhz(spans.data(), static_cast<int>(spans.size()));
  const int sms = current_device_facts().sm_count;
  st.counters[std::string(what) + "_per_second"] = rate(per_launch);
  if (seconds > 0 && mhz > 0) st.counters[std::string(what) + "_per_clock_per_sm"] = value(per_launch / seconds / (mhz * 1e6) / sms);
  st.counters["sm_clock_mhz"] = value(mhz);
}

// False (and the benchmark skipped with `why`) when this build compiled the kernel's instruction out for this
// GPU (compiled_out in micro/tensor.cuh): the plan cannot know, only the loaded kernel can say.
bool compiled_in(benchmark::State& st, const std::string& why) {
  if (why.empty()) return true;
  skip_benchmark(st, why);
  return false;
}

bool same_residency(benchmark::State& st, const Residency& got, int planned_per_sm) {
  if (got.blocks_per_sm == planned_per_sm) return true;
  skip_benchmark(st, "occupancy API: " + std::to_string(got.blocks_per_sm) + " blocks per SM, the plan has " +
                         std::to_string(planned_per_sm));
  return false;
}

// ---- ldmatrix ---------------------------------------------------------------------------------------------
void ldmatrix(benchmark::State& st, LdPlan p, int planned_per_sm) {
  if (!compiled_in(st, compiled_out(p))) return;
  if (!same_residency(st, ldmatrix_residency(p), planned_per_sm)) return;
  DeviceBuffer<uint32_t> sums(static_cast<size_t>(p.blocks) * kLdThreads);
  DeviceBuffer<ClockSpan> spans(p.blocks);
  const double seconds = run_timed(st, [&] { launch_ldmatrix(p, sums.data(), spans.data()); });
  const std::vector<uint32_t> got = sums.download();
  uint32_t expected[32];
  for (int lane = 0; lane < 32; ++lane) expected[lane] = expected_ldmatrix_sum(p, lane);
  for (size_t t = 0; t < got.size(); ++t)
    if (got[t] != expected[t % 32]) {
      st.SkipWithError(("smem_banks/ldmatrix: thread " + std::to_string(t) + "'s sum differs from the host's").c_str());
      return;
    }
  const std::vector<ClockSpan> sp = spans.download();
  rate_counters(st, "bytes", p.instructions() * 128.0 * p.matrices, seconds, sp);
  const double mhz = median_mhz(sp.data(), static_cast<int>(sp.size()));
  st.counters["cycles_per_instruction"] = value(seconds * mhz * 1e6 / (p.instructions() / current_device_facts().sm_count));
}

const char* layout_name(model::LdLayout l) {
  return l == model::LdLayout::padded ? "padded" : l == model::LdLayout::swizzled ? "swizzled" : "conflicted";
}

// The launch takes the compiled kernel's registers and resident blocks (Planner::residency); false, with the
// benchmark skipped for check_launch's reason, when not one block fits on an SM.
bool resident(Planner& pl, const std::string& name, Launch& l, const Residency& r) {
  l.regs_per_thread = r.regs_per_thread;
  l.blocks_per_sm = r.blocks_per_sm;
  if (l.blocks_per_sm >= 1) return true;
  pl.skip(name, check_launch(pl.facts(), l));
  return false;
}

void add_ldmatrix(Planner& pl, LdPlan p) {
  const DeviceFacts& f = pl.facts();
  const std::string name = "smem_banks/ldmatrix/x:" + std::to_string(p.matrices) + "/trans:" + std::to_string(p.trans ? 1 : 0) +
                           "/layout:" + layout_name(p.layout);
  Launch l;
  l.threads = kLdThreads;
  l.smem_per_block = model::kLdRows * 144;  // the kernel's static tile (the padded layout's size)
  const int planned_regs = 56;              // nvcc 13.0, sm_90: 28 (x1) to 51 (x4)
  const Residency r = pl.residency({planned_regs, blocks_per_sm(f, kLdThreads, l.smem_per_block, planned_regs)},
                                   [p] { return ldmatrix_residency(p); });
  if (!resident(pl, name, l, r)) return;
  const int wavefronts = model::ldmatrix_wavefronts(p.layout, p.matrices);
  const int warps_per_sm = l.blocks_per_sm * kLdThreads / 32;
  p.blocks = f.sm_count * l.blocks_per_sm;
  p.iters = std::max(1, static_cast<int>(kLdWavefrontsPerSm / (warps_per_sm * model::kLdShifts * wavefronts)));
  l.blocks = p.blocks;
  l.device_bytes = static_cast<size_t>(p.blocks) * (kLdThreads * 4 + sizeof(ClockSpan));
  l.note = std::to_string(p.iters) + " x " + std::to_string(model::kLdShifts) + " ldmatrix per warp from a " +
           std::to_string(model::ld_tile_bytes(p.layout)) + " B tile";
  const int per_sm = l.blocks_per_sm;
  pl.add_if_resident(name, l, [p, per_sm](benchmark::State& st) { ldmatrix(st, p, per_sm); });
  pl.predict(name, {{"wavefronts_per_instruction", wavefronts}, {"bytes_per_instruction", 128.0 * p.matrices}});
}

// ---- mma.sync ---------------------------------------------------------------------------------------------
struct Operands {
  std::vector<uint8_t> a, b;
  DeviceBuffer<uint8_t> da, db;
  Operands(Dtype t, Data d, int m, int n, int k)
      : a(make_matrix(t, d, m, k, kSeedA)), b(make_matrix(t, d, k, n, kSeedB)), da(a), db(b) {}
};

// Empty when block 0's tile in `d` is `steps` x A.B; else the error, named.
std::string tile_error(const char* what, Dtype t, const Operands& o, int m, int n, int k, double steps, const DeviceBuffer<uint32_t>& d) {
  const std::string e = check_product(t, o.a, o.b, m, n, k, steps, d.download());
  return e.empty() ? e : std::string(what) + ": " + e;
}

void mma_throughput(benchmark::State& st, Dtype t, Data data, int blocks, int iters, int planned_per_sm) {
  if (!compiled_in(st, compiled_out(t))) return;
  if (!same_residency(st, mma_residency(t), planned_per_sm)) return;
  const MmaShape sh = mma_shape(t);
  Operands o(t, data, sh.m, sh.n, sh.k);
  DeviceBuffer<uint32_t> d(sh.m * sh.n);
  DeviceBuffer<ClockSpan> spans(blocks);
  launch_mma(t, false, o.da.data(), o.db.data(), 1, kMmaThreads, 2, d.data(), spans.data());
  std::string err = tile_error("tensor/mma (2 steps)", t, o, sh.m, sh.n, sh.k, mma_steps(false, 2), d);
  const double seconds = run_timed(st, [&] { launch_mma(t, false, o.da.data(), o.db.data(), blocks, kMmaThreads, iters, d.data(), spans.data()); });
  if (err.empty()) err = tile_error("tensor/mma", t, o, sh.m, sh.n, sh.k, mma_steps(false, iters), d);
  if (!err.empty()) {
    st.SkipWithError(err.c_str());
    return;
  }
  const double instructions = static_cast<double>(blocks) * kMmaThreads / 32 * mma_steps(false, iters);
  rate_counters(st, "flops", instructions * sh.flops(), seconds, spans.download());
}

void mma_latency(benchmark::State& st, Dtype t) {
  if (!compiled_in(st, compiled_out(t))) return;
  const MmaShape sh = mma_shape(t);
  Operands o(t, Data::random, sh.m, sh.n, sh.k);
  DeviceBuffer<uint32_t> d(sh.m * sh.n);
  DeviceBuffer<ClockSpan> spans(1);
  run_timed(st, [&] { launch_mma(t, true, o.da.data(), o.db.data(), 1, 32, kLatencySteps, d.data(), spans.data()); });
  const std::string err = tile_error("tensor/mma latency", t, o, sh.m, sh.n, sh.k, mma_steps(true, kLatencySteps), d);
  if (!err.empty()) {
    st.SkipWithError(err.c_str());
    return;
  }
  st.counters["cycles"] = value(static_cast<double>(spans.download()[0].cycles) / kLatencySteps);
}

void add_mma(Planner& pl, Dtype t) {
  const DeviceFacts& f = pl.facts();
  const std::string base = std::string("tensor/mma/") + dtype_name(t);
  const std::string why = mma_unsupported(f.arch(), t);
  const MmaShape sh = mma_shape(t);
  for (Data data : {Data::zero, Data::random}) {
    const std::string name = base + "/throughput/data:" + data_name(data);
    if (!why.empty()) {
      pl.skip(name, why);
      continue;
    }
    Launch l;
    l.threads = kMmaThreads;
    const Residency r = pl.residency({kMmaPlannedRegs, blocks_per_sm(f, kMmaThreads, 0, kMmaPlannedRegs)}, [t] { return mma_residency(t); });
    if (!resident(pl, name, l, r)) continue;
    const int blocks = f.sm_count * l.blocks_per_sm;
    const int iters = mma_iters(l.blocks_per_sm);
    l.blocks = blocks;
    l.device_bytes = mma_device_bytes(blocks);
    l.note = std::to_string(kMmaChains) + " chains x " + std::to_string(iters) + " mma per warp";
    const int per_sm = l.blocks_per_sm;
    pl.add_if_resident(name, l, [=](benchmark::State& st) { mma_throughput(st, t, data, blocks, iters, per_sm); });
    pl.predict(name, {{"flops_per_instruction", sh.flops()}});
  }
  const std::string name = base + "/latency";
  if (!why.empty()) {
    pl.skip(name, why);
    return;
  }
  Launch l;
  l.threads = 32;
  l.blocks = 1;
  l.device_bytes = 4096;
  l.note = std::to_string(kLatencySteps) + " dependent mma, random operands";
  pl.add_if_resident(name, l, [t](benchmark::State& st) { mma_latency(st, t); });
}

// ---- wgmma ------------------------------------------------------------------------------------------------
void wgmma(benchmark::State& st, Dtype t, int n, bool rs, Data data, int blocks, int iters, int planned_per_sm) {
  if (!compiled_in(st, compiled_out(t, n, rs))) return;
  if (!same_residency(st, wgmma_residency(t, n, rs), planned_per_sm)) return;
  const int k = wgmma_k(t);
  Operands o(t, data, 64, n, k);
  DeviceBuffer<uint32_t> d(64 * n);
  DeviceBuffer<ClockSpan> spans(blocks);
  DeviceBuffer<ClockSpan> check_spans(1);
  auto one_group = [&](const char* what) {
    launch_wgmma(t, n, rs, o.da.data(), o.db.data(), 1, 1, d.data(), check_spans.data());
    return tile_error(what, t, o, 64, n, k, kWgmmaUnroll, d);
  };
  std::string err = one_group("tensor/wgmma (1 group)");
  const double seconds = run_timed(st, [&] { launch_wgmma(t, n, rs, o.da.data(), o.db.data(), blocks, iters, d.data(), spans.data()); });
  // fp8 wgmma accumulates with fewer bits than FP32: on the H200 the timed launch's long random chains
  // stopped growing near 2^14 (-16384 where the host sums -36047), so its result cannot be compared; the
  // same kernel is checked again on one group after the timing instead.
  if (err.empty())
    err = t == Dtype::fp8_e4m3 ? one_group("tensor/wgmma (1 group, after timing)")
                               : tile_error("tensor/wgmma", t, o, 64, n, k, static_cast<double>(iters) * kWgmmaUnroll, d);
  if (!err.empty()) {
    st.SkipWithError(err.c_str());
    return;
  }
  rate_counters(st, "flops", static_cast<double>(blocks) * iters * kWgmmaUnroll * wgmma_flops(t, n), seconds, spans.download());
}

void add_wgmma(Planner& pl, Dtype t, int n, bool rs) {
  const DeviceFacts& f = pl.facts();
  for (Data data : {Data::zero, Data::random}) {
    const std::string name = std::string("tensor/wgmma/") + dtype_name(t) + (rs ? "/rs" : "/ss") + "/n:" + std::to_string(n) +
                             "/data:" + data_name(data);
    if (const std::string why = wgmma_unsupported(f.arch()); !why.empty()) {
      pl.skip(name, why);
      continue;
    }
    Launch l;
    l.threads = kWgmmaThreads;
    l.smem_per_block = wgmma_smem_bytes(n, rs);
    const int planned_regs = wgmma_planned_regs(n);
    const Residency r = pl.residency({planned_regs, blocks_per_sm(f, kWgmmaThreads, l.smem_per_block, planned_regs)},
                                     [t, n, rs] { return wgmma_residency(t, n, rs); });
    if (!resident(pl, name, l, r)) continue;
    const int blocks = f.sm_count * l.blocks_per_sm;
    const int iters = wgmma_iters(t, n, l.blocks_per_sm);
    l.blocks = blocks;
    l.device_bytes = wgmma_device_bytes(blocks, n);
    l.note = std::string(rs ? "A in registers, " : "") + "one warpgroup per block, " + std::to_string(iters) + " x " +
             std::to_string(kWgmmaUnroll) + " wgmma m64n" + std::to_string(n) + "k" + std::to_string(wgmma_k(t)) +
             " on one accumulator";
    const int per_sm = l.blocks_per_sm;
    pl.add_if_resident(name, l, [=](benchmark::State& st) { wgmma(st, t, n, rs, data, blocks, iters, per_sm); });
    // Shared-memory operand bytes each wgmma reads (A if SS, and B; 32 bytes of K a row) per clock at peak:
    // above 128 B/clk/SM (shared memory's wavefront rate) the form cannot reach the peak unless the tensor
    // cores read shared memory faster than the LSU path.
    const double peak = model::hopper_dense_per_clock_per_sm(elem_bytes(t)), operand_bytes = wgmma_smem_bytes(n, rs);
    pl.predict(name, {{"flops_per_instruction", wgmma_flops(t, n)},
                      {"peak_flops_per_clock_per_sm", peak},
                      {"smem_bytes_per_clock_at_peak", operand_bytes * peak / wgmma_flops(t, n)}});
  }
}

// ldmatrix: named smem_banks/ldmatrix/... (issue 29), so planned under that family's name.
void plan_ldmatrix(Planner& pl) {
  for (const LdPlan& p : ldmatrix_configs()) add_ldmatrix(pl, p);
}

void plan(Planner& pl) {
  for (Dtype t : kDtypes) add_mma(pl, t);
  for (Dtype t : {Dtype::bf16, Dtype::fp8_e4m3})
    for (bool rs : {false, true})
      for (int n : {64, 128, 256})
        if (wgmma_supported(t, n, rs)) add_wgmma(pl, t, n, rs);
}

}  // namespace

MH_FAMILY("tensor", plan);
MH_FAMILY("smem_banks", plan_ldmatrix);

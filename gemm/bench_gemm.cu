// The GEMM family: gemm/<kernel>/m:M/n:N/k:K for every row of the kernel table (gemm/gemm.cu).
// Each benchmark first verifies its kernel at its shape (alpha = 1, beta = 0, C poisoned with NaN;
// against cuBLAS, or kernel 3 for cuBLAS: gemm/verify.cuh) and reports max_rel_err and tolerance.
// A failure skips the benchmark with one line and times nothing. Timed runs use alpha = 1, beta = 0.
// The counting model's numbers (model/gemm_model.hpp) go to --model_out: gpubench/analysis/bounds.py multiplies
// them by the unit costs of the same run, gpubench/analysis/ncu_table.py sets them beside ncu's counters.
#include "gemm/cublas.cuh"
#include "gemm/launch_counters.cuh"
#include "gemm/verify.cuh"
#include "harness/bench.cuh"

namespace {
using namespace mh;
using namespace mh::gemm;

struct Shape {
  int m, n, k;
};
// Squares (4092: not a multiple of 32, so every tile edge is exercised), K-short and odd shapes.
constexpr Shape kShapes[] = {{128, 128, 128},    {256, 256, 256},   {512, 512, 512},     {1024, 1024, 1024},
                             {2048, 2048, 2048}, {4092, 4092, 4092}, {4096, 4096, 4096}, {4096, 4096, 1024},
                             {1000, 1000, 1000}};

// Device memory at its peak, while the cross-check's reference exists: A, B, C0, C, the reference's
// value and scale, and |A|, |B|.
size_t device_bytes(const Shape& s) {
  const double mk = double(s.m) * s.k, kn = double(s.k) * s.n, mn = double(s.m) * s.n;
  return static_cast<size_t>(sizeof(float) * (2 * (mk + kn) + 4 * mn));
}

void run(benchmark::State& st, const GemmKernel* kernel, Shape s) {
  if (!fits_device_memory(st, device_bytes(s))) return;
  CublasHandle blas;
  Problem p(s.m, s.n, s.k);
  Check c;
  {
    const Reference<float> ref = device_reference(p, 1.f, 0.f, cross_check_for(*kernel), blas);
    kernel->launch(p.prepare(1.f, 0.f), blas);
    c = check(p.C.data(), ref);
  }
  st.counters["max_rel_err"] = value(c.max_rel_err);
  st.counters["tolerance"] = value(c.tolerance);
  if (!c.pass()) {
    const std::string msg = std::string(kernel->name) + " m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
                            " k=" + std::to_string(s.k) + " fails against " + cross_check_for(*kernel).name + ": " +
                            c.describe();
    st.SkipWithError(msg.c_str());
    return;
  }
  const Gemm g = p.prepare(1.f, 0.f);
  run_timed(st, [&] { kernel->launch(g, blas); });
  st.counters["flops_per_second"] = rate(2.0 * s.m * s.n * s.k);
  if (kernel->threads > 0)  // registers and occupancy read off the compiled kernel that ran
    add_launch_counters(st, kernel_launch(*kernel, g));
}

// The counting model's numbers for a kernel and shape, under the names the counters had before.
Prediction model_of(const DeviceFacts& f, const GemmKernel& k, const Shape& s, int blocks_per_sm) {
  const model::GemmCounts c = model::count_gemm(*k.model, s.m, s.n, s.k, blocks_per_sm, double(f.l2_bytes));
  return {{"model_ffma_thread", c.ffma_thread},
          {"model_ld_requests", c.ld_requests},
          {"model_ld_sectors", c.ld_sectors},
          {"model_ld_lines", c.ld_lines},
          {"model_lds_inst", c.lds_inst},
          {"model_lds_wavefronts", c.lds_wavefronts},
          {"model_sts_wavefronts", c.sts_wavefronts},
          {"model_block_barriers", c.block_barriers},
          {"model_load_rounds", c.load_rounds},
          {"model_l2_read_sectors", c.l2_read_sectors},
          {"model_dram_bytes", c.dram_bytes},
          // L2 reuse (model/gemm_model.hpp tile_reuse): DRAM bytes, and the load requests whose misses DRAM serves.
          {"model_dram_bytes_reuse", c.dram_bytes_reuse},
          {"model_ld_requests_dram", c.ld_requests_dram},
          {"model_blocks_per_sm", c.blocks_per_sm},
          // For the time model (gpubench/analysis/predict.py): issue slots, barriers per warp, tail of the grid.
          {"model_ffma_warp", c.ffma_warp},
          {"model_sts_inst", c.sts_inst},
          {"model_st_requests", c.st_requests},
          {"model_blocks", c.blocks},
          {"model_threads_per_block", k.threads},
          {"model_occupancy_pct", 100.0 * c.blocks_per_sm * k.threads / f.max_threads_per_sm}};
}

void plan(Planner& p) {
  const DeviceFacts& f = p.facts();
  p.context("cublas_math", cublas_math_context());
  for (const GemmKernel& k : gemm_kernels())
    for (const Shape& s : kShapes) {
      const std::string name = std::string("gemm/") + k.name + "/m:" + std::to_string(s.m) + "/n:" +
                               std::to_string(s.n) + "/k:" + std::to_string(s.k);
      Launch l;
      l.device_bytes = device_bytes(s);
      if (k.threads > 0) {
        l.threads = k.threads;
        l.blocks = static_cast<long long>((s.m + k.tile_m - 1) / k.tile_m) * ((s.n + k.tile_n - 1) / k.tile_n);
        l.smem_per_block = k.smem_bytes;
        // On the GPU, the compiled kernel's registers and blocks per SM (the model's too); the facts' for --plan-for.
        const KernelLaunch kl = kernel_launch(k, Gemm{s.m, s.n, s.k});
        const Residency r = p.residency({planned_register_cap(f, k), planned_blocks_per_sm(f, k)},
                                        [&] { return compiled_residency(kl.func, kl.threads, kl.dyn_smem); });
        l.regs_per_thread = r.regs_per_thread;
        l.blocks_per_sm = r.blocks_per_sm;
        l.note = "model: blocks_per_sm=" + std::to_string(l.blocks_per_sm);
      } else {
        l.note = "cuBLAS, " + cublas_math_context();
      }
      const Shape shape = s;
      const GemmKernel* kernel = &k;
      p.add_if_resident(name, l, [kernel, shape](benchmark::State& st) { run(st, kernel, shape); });
      if (k.model && l.blocks_per_sm > 0) p.predict(name, model_of(f, k, s, l.blocks_per_sm));
    }
}

}  // namespace

MH_FAMILY("gemm", plan);

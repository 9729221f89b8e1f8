// The BF16 tensor-core GEMM ladder: gemm/<kernel>/m:M/n:N/k:K for every row of the ladder's table
// (gemm/tc_gemm.cu). Each benchmark first verifies its kernel at its shape (C poisoned with NaN, against the
// FP64 DGEMM reference of the BF16 inputs, gemm/tc_verify.cuh) and reports max_rel_err and tolerance; a
// failure ends the benchmark with one line and times nothing. HBM-resident: A and B (32 MiB each at 4096^3,
// 128 MiB at 8192^3) do not fit the 60 MiB L2 together; L2 keeps the reuse between the blocks in flight.
// The counting model's numbers (model/tc_gemm_model.hpp) go to --model_out: gpubench/analysis/predict.py
// multiplies them by the unit costs of the same run, gpubench/analysis/ncu_table.py sets them beside ncu's.
#include "gemm/launch_counters.cuh"
#include "gemm/tc_cublas.cuh"
#include "gemm/tc_verify.cuh"
#include "harness/bench.cuh"
#include "model/tc_gemm_model.hpp"

namespace {
using namespace mh;
using namespace mh::gemm;

struct Shape {
  int m, n, k;
};
// 4096^3 and 8192^3 (whole waves of 128 x 128 tiles: 1024 and 4096 tiles on 132 SMs x 2 blocks), 4092^3
// (tile quantization; K % 8 != 0, so only cuBLAS runs it, the kernels skip with the reason), and a tall-skinny
// C, 16384 x 200: N is not a multiple of the tile (the second column of tiles is 72 / 128 full) and 256 tiles
// are less than one wave of two blocks per SM.
constexpr Shape kShapes[] = {{4096, 4096, 4096}, {8192, 8192, 8192}, {4092, 4092, 4092}, {16384, 200, 4096}};

std::string describe_shape(const Shape& s) {
  return "m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) + " k=" + std::to_string(s.k);
}

void run(benchmark::State& st, const TcKernel* kernel, Shape s) {
  if (const std::string why = tc_compiled_out(*kernel); !why.empty()) {
    skip_benchmark(st, why);
    return;
  }
  if (!fits_device_memory(st, tc_device_bytes(s.m, s.n, s.k))) return;
  CublasHandle pedantic, blas(kTcCublasMath);
  TcProblem p(s.m, s.n, s.k);
  Check c;
  {
    const Reference<double> ref = tc_device_reference(p, pedantic);
    kernel->launch(p.prepare(), blas);
    c = check(p.C.data(), ref);
  }
  st.counters["max_rel_err"] = value(c.max_rel_err);
  st.counters["tolerance"] = value(c.tolerance);
  if (!c.pass()) {
    const std::string msg = std::string(kernel->name) + " " + describe_shape(s) + " fails against the FP64 reference: " +
                            c.describe();
    st.SkipWithError(msg.c_str());
    return;
  }
  const TcGemm g = p.prepare();
  run_timed(st, [&] { kernel->launch(g, blas); });
  st.counters["flops_per_second"] = rate(2.0 * s.m * s.n * s.k);
  if (kernel->threads > 0) add_launch_counters(st, tc_kernel_launch(*kernel));
}

// The counting model's numbers for a kernel of ours at a shape, blocks_per_sm resident (docs/reference.md lists them).
Prediction model_of(const DeviceFacts& f, const TcKernel& k, const Shape& s, int blocks_per_sm) {
  const model::TcCounts c = model::count_tc_gemm(model::tc_plan(std::string(k.name)), s.m, s.n, s.k, f.sm_count, blocks_per_sm);
  return {{"model_flops", c.flops},
          {"model_wmma_m16n16k16", c.wmma},
          {"model_mma_m16n8k16", c.mma_sync},
          {"model_wgmma", c.wgmma},
          {"model_wgmma_n", c.wgmma_n},
          {"model_ld_global_bytes", c.ld_global_bytes},
          {"model_cp_async_bytes", c.cp_async_bytes},
          {"model_tma_bytes", c.tma_bytes},
          {"model_tma_multicast_bytes", c.tma_multicast_bytes},
          {"model_l2_read_bytes", c.l2_read_bytes},
          {"model_dram_bytes", c.dram_bytes},
          {"model_c_store_bytes", c.c_store_bytes},
          {"model_ldmatrix_inst", c.ldmatrix_inst},
          {"model_ldmatrix_wavefronts", c.ldmatrix_wavefronts},
          {"model_wmma_load_wavefronts", c.wmma_load_wavefronts},
          {"model_wmma_stage_wavefronts", c.wmma_stage_wavefronts},
          {"model_sts_inst", c.sts_inst},
          {"model_smem_fill_wavefronts", c.smem_fill_wavefronts},
          {"model_block_barriers", c.block_barriers},
          {"model_mbarrier_waits", c.mbarrier_waits},
          {"model_blocks", c.blocks},
          {"model_blocks_per_sm", c.blocks_per_sm},
          {"model_waves", c.waves},
          {"model_tile_quantization", c.tile_quantization},
          {"model_stages", c.stages},
          {"model_warp_specialized", c.warp_specialized ? 1 : 0},
          {"model_threads_per_block", c.threads_per_block}};
}

void plan(Planner& p) {
  const DeviceFacts& f = p.facts();
  p.context("tc_cublas", tc_cublas_context());
  for (const TcKernel& k : tc_kernels())
    for (const Shape& s : kShapes) {
      const std::string name = std::string("gemm/") + k.name + "/m:" + std::to_string(s.m) + "/n:" +
                               std::to_string(s.n) + "/k:" + std::to_string(s.k);
      const std::string why = tc_unsupported(k, f.arch(), s.k);
      if (!why.empty()) {
        p.skip(name, why);
        continue;
      }
      Launch l;
      l.device_bytes = tc_device_bytes(s.m, s.n, s.k);
      if (k.threads > 0) {
        l.threads = k.threads;
        l.blocks = static_cast<long long>((s.m + k.tile_m - 1) / k.tile_m) * ((s.n + k.tile_n - 1) / k.tile_n);
        l.smem_per_block = k.smem_bytes;
        // On the GPU, the compiled kernel's registers and blocks per SM; the facts' for --plan-for.
        const Residency r = p.residency(tc_planned_residency(f, k), [&k] { return tc_compiled_residency(k); });
        l.regs_per_thread = r.regs_per_thread;
        l.blocks_per_sm = r.blocks_per_sm;
        l.note = std::string(k.tiles) + ", HBM-resident A and B";
      } else {
        l.note = tc_cublas_context();
      }
      const TcKernel* kernel = &k;
      p.add_if_resident(name, l, [kernel, s](benchmark::State& st) { run(st, kernel, s); });
      if (k.threads > 0 && l.blocks_per_sm > 0) p.predict(name, model_of(f, k, s, l.blocks_per_sm));
    }
}

}  // namespace

// Under the gemm family (issue 30: gemm/<kernel>/..., the reference gemm/cublas_bf16/...): a second plan of it.
MH_FAMILY("gemm", plan);

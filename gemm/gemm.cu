// The GEMM family: the table of kernels and their benchmarks, gemm/<kernel>/m:M/n:N/k:K.
// Each benchmark first verifies its kernel at its shape (alpha = 1, beta = 0, C poisoned with NaN;
// against cuBLAS, or kernel 3 for cuBLAS: gemm/verify.cuh) and reports max_rel_err and tolerance.
// A failure skips the benchmark with one line and times nothing. Timed runs use alpha = 1, beta = 0.
#include <stdexcept>

#include "gemm/1_naive.cuh"
#include "gemm/2_coalesced.cuh"
#include "gemm/3_smem.cuh"
#include "gemm/3a_smem_conflicted.cuh"
#include "gemm/3b_smem_padded.cuh"
#include "gemm/4_blocktile_1d.cuh"
#include "gemm/5_blocktile_2d.cuh"
#include "gemm/6_vectorized.cuh"
#include "gemm/7_warptile.cuh"
#include "gemm/8_warptile_tuned.cuh"
#include "gemm/cublas.cuh"
#include "gemm/launch_counters.cuh"
#include "gemm/verify.cuh"
#include "harness/bench.cuh"
#include "model/gemm_model.hpp"

namespace mh::gemm {

// Kernels 1-3: 1024 threads, static shared memory only.
template <class Kernel>
KernelLaunch tile_launch(Kernel kernel) {
  return {reinterpret_cast<const void*>(kernel), kTile * kTile, 0, ""};
}

const std::vector<GemmKernel>& gemm_kernels() {
  static const std::vector<GemmKernel> table = {
      {"naive", [](const Gemm& g, cublasHandle_t) { launch_naive(g); }, [](const Gemm&) { return tile_launch(naive_kernel); }},
      {"coalesced", [](const Gemm& g, cublasHandle_t) { launch_coalesced(g); }, [](const Gemm&) { return tile_launch(coalesced_kernel); }},
      {"smem", [](const Gemm& g, cublasHandle_t) { launch_smem(g); }, [](const Gemm&) { return tile_launch(smem_kernel); }},
      {"smem_conflicted", [](const Gemm& g, cublasHandle_t) { launch_smem_conflicted(g); }, [](const Gemm&) { return tile_launch(smem_transposed_kernel<kTile>); }},
      {"smem_padded", [](const Gemm& g, cublasHandle_t) { launch_smem_padded(g); }, [](const Gemm&) { return tile_launch(smem_transposed_kernel<kTile + 1>); }},
      {"blocktile_1d", [](const Gemm& g, cublasHandle_t) { launch_blocktile_1d(g); }, describe_blocktile_1d},
      {"blocktile_2d", [](const Gemm& g, cublasHandle_t) { launch_blocktile_2d(g); }, describe_blocktile_2d},
      {"vectorized", [](const Gemm& g, cublasHandle_t) { launch_vectorized(g); }, describe_vectorized},
      {"warptile", [](const Gemm& g, cublasHandle_t) { launch_warptile<WarptileDefault>(g); },
       describe_warptile<WarptileDefault>},
      {"warptile_tuned", [](const Gemm& g, cublasHandle_t) { launch_warptile<WarptileTuned>(g); },
       describe_warptile<WarptileTuned>},
      {"cublas", [](const Gemm& g, cublasHandle_t h) { cublas_sgemm(h, g); }},
  };
  return table;
}

const GemmKernel& find_kernel(const std::string& name) {
  for (const GemmKernel& k : gemm_kernels())
    if (name == k.name) return k;
  throw std::invalid_argument("no GEMM kernel named '" + name + "'");
}

const GemmKernel& cross_check_for(const GemmKernel& k) {
  return find_kernel(std::string(k.name) == "cublas" ? "smem" : "cublas");
}

}  // namespace mh::gemm

namespace {
using namespace mh;
using namespace mh::gemm;

// The counting model's numbers for this kernel and shape (model/gemm_model.hpp), as model_* counters:
// plots/bounds.py multiplies them by the unit costs of the same run, plots/ncu_table.py sets them
// beside ncu's counters. cuBLAS has no model.
void add_model_counters(benchmark::State& st, const std::string& kernel, int M, int N, int K) {
  if (kernel == "cublas") return;
  const model::GemmCounts c = model::count_gemm(model::gemm_kernel_from_name(kernel), M, N, K);
  const std::pair<const char*, double> counts[] = {
      {"model_ffma_thread", c.ffma_thread},       {"model_ld_requests", c.ld_requests},
      {"model_ld_sectors", c.ld_sectors},         {"model_ld_lines", c.ld_lines},
      {"model_lds_inst", c.lds_inst},             {"model_lds_wavefronts", c.lds_wavefronts},
      {"model_sts_wavefronts", c.sts_wavefronts}, {"model_block_barriers", c.block_barriers},
      {"model_l2_read_sectors", c.l2_read_sectors}, {"model_dram_bytes", c.dram_bytes},
      {"model_blocks_per_sm", c.blocks_per_sm},
      {"model_occupancy_pct", 100.0 * c.blocks_per_sm * c.threads_per_block / current_device_facts().max_threads_per_sm}};
  for (const auto& [name, v] : counts) st.counters[name] = value(v);
}

void BM_gemm(benchmark::State& st, const GemmKernel* kernel) {
  const int M = static_cast<int>(st.range(0)), N = static_cast<int>(st.range(1)), K = static_cast<int>(st.range(2));
  CublasHandle blas;
  Problem p(M, N, K);
  Check c;
  {
    const Reference<float> ref = device_reference(p, 1.f, 0.f, cross_check_for(*kernel), blas);
    kernel->launch(p.prepare(1.f, 0.f), blas);
    c = check(p.C.data(), ref);
  }
  st.counters["max_rel_err"] = value(c.max_rel_err);
  st.counters["tolerance"] = value(c.tolerance);
  if (!c.pass()) {
    const std::string msg = std::string(kernel->name) + " m=" + std::to_string(M) + " n=" + std::to_string(N) +
                            " k=" + std::to_string(K) + " fails against " + cross_check_for(*kernel).name + ": " +
                            c.describe();
    st.SkipWithError(msg.c_str());
    return;
  }
  const Gemm g = p.prepare(1.f, 0.f);
  run_timed(st, [&] { kernel->launch(g, blas); });
  st.counters["flops_per_second"] = rate(2.0 * M * N * K);
  add_model_counters(st, kernel->name, M, N, K);
  if (kernel->describe) add_launch_counters(st, kernel->describe(g));
}

struct Shape {
  int m, n, k;
};
// Squares (4092: not a multiple of 32, so every tile edge is exercised), K-short and odd shapes.
constexpr Shape kShapes[] = {{128, 128, 128},    {256, 256, 256},   {512, 512, 512},     {1024, 1024, 1024},
                             {2048, 2048, 2048}, {4092, 4092, 4092}, {4096, 4096, 4096}, {4096, 4096, 1024},
                             {1000, 1000, 1000}};

const bool registered = [] {
  benchmark::AddCustomContext("cublas_math", cublas_math_context());
  for (const GemmKernel& k : gemm_kernels()) {
    auto* b = benchmark::RegisterBenchmark((std::string("gemm/") + k.name).c_str(), BM_gemm, &k);
    b->ArgNames({"m", "n", "k"})->UseManualTime()->Unit(benchmark::kMicrosecond);
    for (const Shape& s : kShapes) b->Args({s.m, s.n, s.k});
  }
  return true;
}();

}  // namespace

// The sweep that chose kernel 8's tiles (gemm/8_warptile_tuned.cuh): warp-tiled candidates at 4096^3
// (16-byte path only), each verified against cuBLAS (NaN-poisoned C, gemm/verify.cuh) and timed like
// gemm/<kernel>:
//   gemm_sweep/warptile/bm:BM/bn:BN/bk:BK/wm:WM/wn:WN/ln:LN/stages:S/map:MAP/m:4096/n:4096/k:4096
// with flops_per_second, regs_per_thread and blocks_per_sm. Built only with -DMH_GEMM_SWEEP=ON (each
// candidate is a separately compiled kernel; the candidates are spread over gemm/sweep/*.cu so that
// they compile in parallel). Run:
//   gpubench --benchmark_filter='gemm_sweep/' --benchmark_repetitions=3 --benchmark_min_time=0.05s
#pragma once
#include <stdexcept>
#include <string>

#include "gemm/7_warptile.cuh"
#include "gemm/cublas.cuh"
#include "gemm/launch_counters.cuh"
#include "gemm/verify.cuh"
#include "harness/registry.cuh"

namespace mh::gemm::sweep {

template <class Cfg>
void launch_vec(const Gemm& g) {
  if (!vectorizable(g)) throw std::invalid_argument("the sweep times the 16-byte path only");
  allow_dynamic_smem(warptile_kernel<Cfg, true>, Cfg::kSmemBytes, "warptile_kernel");
  launch_blocktiles(warptile_kernel<Cfg, true>, Cfg::BM, Cfg::BN, Cfg::kThreads, Cfg::kSmemBytes, g, nullptr,
                    "warptile_kernel<sweep>");
}

template <class Cfg>
void body(benchmark::State& st, int n) {
  CublasHandle blas;
  Problem p(n, n, n);
  const GemmKernel cublas{"cublas", [](const Gemm& g, cublasHandle_t h) { cublas_sgemm(h, g); }};
  const Reference<float> ref = device_reference(p, 1.f, 0.f, cublas, blas);
  launch_vec<Cfg>(p.prepare(1.f, 0.f));
  const Check c = check(p.C.data(), ref);
  st.counters["max_rel_err"] = value(c.max_rel_err);
  if (!c.pass()) {
    st.SkipWithError(("fails against cublas: " + c.describe()).c_str());
    return;
  }
  const Gemm g = p.prepare(1.f, 0.f);
  run_timed(st, [&] { launch_vec<Cfg>(g); });
  st.counters["flops_per_second"] = rate(2.0 * n * n * n);
  add_launch_counters(st, {reinterpret_cast<const void*>(warptile_kernel<Cfg, true>), Cfg::kThreads, Cfg::kSmemBytes,
                           Cfg::describe()});
}

template <class Cfg>
void add_candidate(Planner& p, int n) {
  const std::string name = "gemm_sweep/warptile/bm:" + std::to_string(Cfg::BM) + "/bn:" + std::to_string(Cfg::BN) +
                           "/bk:" + std::to_string(Cfg::BK) + "/wm:" + std::to_string(Cfg::WM) + "/wn:" +
                           std::to_string(Cfg::WN) + "/ln:" + std::to_string(Cfg::LN) + "/stages:" +
                           std::to_string(Cfg::kStages) +
                           (Cfg::kMap == LaneMap::checkerboard ? "/map:checkerboard" : "/map:row_major") + "/m:" + std::to_string(n) + "/n:" + std::to_string(n) +
                           "/k:" + std::to_string(n);
  Launch l;
  l.threads = Cfg::kThreads;
  l.blocks = (long long)((n + Cfg::BM - 1) / Cfg::BM) * ((n + Cfg::BN - 1) / Cfg::BN);
  l.smem_per_block = Cfg::kSmemBytes;
  l.regs_per_thread = Cfg::kRegBudget;
  l.device_bytes = 8 * sizeof(float) * size_t(n) * n;  // A, B, C0, C, reference value and scale, |A|, |B|
  l.note = Cfg::describe();
  p.add_if_resident(name, l, [n](benchmark::State& st) { body<Cfg>(st, n); });
}

template <class... Cfgs>
void add_all(Planner& p) {
  (add_candidate<Cfgs>(p, 4096), ...);
}

}  // namespace mh::gemm::sweep

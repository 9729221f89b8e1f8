// The table of every GEMM in the suite: launcher, counting model and launch geometry in one row, so
// the benchmarks (gemm/bench_gemm.cu), the model predictions and the tests share it. A new kernel is a
// header gemm/<n>_<kernel>.cuh and one row here.
#include <stdexcept>

#include "gemm/1_naive.cuh"
#include "gemm/2_coalesced.cuh"
#include "gemm/3_smem.cuh"
#include "gemm/3a_smem_conflicted.cuh"
#include "gemm/3b_smem_padded.cuh"
#include "gemm/cublas.cuh"

namespace mh::gemm {

const std::vector<GemmKernel>& gemm_kernels() {
  using M = model::GemmKernel;
  constexpr size_t kTileBytes = sizeof(float) * kTile * kTile;
  static const std::vector<GemmKernel> table = {
      {"naive", [](const Gemm& g, cublasHandle_t) { launch_naive(g); }, M::naive, kTileThreads, kTile, kTile, 0,
       reinterpret_cast<const void*>(naive_kernel)},
      {"coalesced", [](const Gemm& g, cublasHandle_t) { launch_coalesced(g); }, M::coalesced, kTileThreads, kTile, kTile,
       0, reinterpret_cast<const void*>(coalesced_kernel)},
      {"smem", [](const Gemm& g, cublasHandle_t) { launch_smem(g); }, M::smem, kTileThreads, kTile, kTile,
       2 * kTileBytes, reinterpret_cast<const void*>(smem_kernel)},
      {"smem_conflicted", [](const Gemm& g, cublasHandle_t) { launch_smem_conflicted(g); }, M::smem_conflicted,
       kTileThreads, kTile, kTile, 2 * kTileBytes, reinterpret_cast<const void*>(smem_transposed_kernel<kTile>)},
      {"smem_padded", [](const Gemm& g, cublasHandle_t) { launch_smem_padded(g); }, M::smem_padded, kTileThreads, kTile,
       kTile, kTileBytes + sizeof(float) * kTile * (kTile + 1),
       reinterpret_cast<const void*>(smem_transposed_kernel<kTile + 1>)},
      {"cublas", [](const Gemm& g, cublasHandle_t h) { cublas_sgemm(h, g); }, std::nullopt},
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

int planned_blocks_per_sm(const DeviceFacts& f, const GemmKernel& k) {
  if (k.threads == 0) return 0;
  return blocks_per_sm(f, k.threads, k.smem_bytes, arch_register_cap(k.threads, arch_min_blocks(f.arch(), k.threads)));
}

}  // namespace mh::gemm

// The table of every GEMM in the suite: launcher, counting model and launch geometry in one row, so
// the benchmarks (gemm/bench_gemm.cu), the model predictions and the tests share it. A new kernel is a
// header gemm/<n>_<kernel>.cuh and one row here.
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

namespace mh::gemm {
namespace {

template <class Cfg>
GemmKernel warptile_row(const char* name, model::GemmKernel m) {
  return {name, [](const Gemm& g, cublasHandle_t) { launch_warptile<Cfg>(g); }, m, Cfg::kThreads, Cfg::BM, Cfg::BN,
          Cfg::kSmemBytes, reinterpret_cast<const void*>(warptile_kernel<Cfg, true>), describe_warptile<Cfg>,
          Cfg::kMinBlocks};
}

}  // namespace

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
      {"blocktile_1d", [](const Gemm& g, cublasHandle_t) { launch_blocktile_1d(g); }, M::blocktile_1d,
       blocktile_1d::kThreads, blocktile_1d::BM, blocktile_1d::BN, size_t(tile_smem_bytes(kBlocktile1d)),
       reinterpret_cast<const void*>(blocktile_1d_kernel), describe_blocktile_1d, 2},
      {"blocktile_2d", [](const Gemm& g, cublasHandle_t) { launch_blocktile_2d(g); }, M::blocktile_2d,
       blocktile_2d::kThreads, blocktile_2d::BM, blocktile_2d::BN, size_t(tile_smem_bytes(kBlocktile2d)),
       reinterpret_cast<const void*>(blocktile_2d_kernel), describe_blocktile_2d, min_blocks_for(blocktile_2d::kThreads, 128)},
      {"vectorized", [](const Gemm& g, cublasHandle_t) { launch_vectorized(g); }, M::vectorized, vectorized::kThreads,
       vectorized::BM, vectorized::BN, size_t(tile_smem_bytes(kVectorized)),
       reinterpret_cast<const void*>(vectorized_kernel<true>), describe_vectorized, min_blocks_for(vectorized::kThreads, 128)},
      warptile_row<WarptileDefault>("warptile", M::warptile),
      warptile_row<WarptileTuned>("warptile_tuned", M::warptile_tuned),
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

int planned_register_cap(const DeviceFacts& f, const GemmKernel& k) {
  return arch_register_cap(k.threads, k.min_blocks > 0 ? k.min_blocks : arch_min_blocks(f.arch(), k.threads));
}

KernelLaunch kernel_launch(const GemmKernel& k, const Gemm& g) {
  return k.describe ? k.describe(g) : KernelLaunch{k.kernel, k.threads, 0, ""};
}

int planned_blocks_per_sm(const DeviceFacts& f, const GemmKernel& k) {
  if (k.threads == 0) return 0;
  return blocks_per_sm(f, k.threads, k.smem_bytes, planned_register_cap(f, k));
}

}  // namespace mh::gemm

// The table of the BF16 tensor-core ladder: launcher, architecture and launch geometry in one row, shared
// by the benchmarks (gemm/bench_tc_gemm.cu) and the tests. A new kernel is a header gemm/<n>_<kernel>.cuh
// (or an *_sm90a.cu file) and one row here.
#include <stdexcept>

#include "gemm/10_mma_swizzled.cuh"
#include "gemm/10a_mma_conflicted.cuh"
#include "gemm/11_cp_async.cuh"
#include "gemm/11a_cp_async_1stage.cuh"
#include "gemm/12_wgmma_tma.cuh"
#include "gemm/13_wgmma_ws.cuh"
#include "gemm/9_wmma.cuh"
#include "gemm/tc_cublas.cuh"
#include "gemm/tc_names.hpp"
#include "harness/arch.hpp"
#include "harness/device_info.cuh"

namespace mh::gemm {
namespace {

using namespace tc;

// A row for a kernel of the 128 x 128 block tile (gemm/tc_tile.cuh).
TcKernel block_tile_row(const char* name, void (*launch)(const TcGemm&, cublasHandle_t), const void* kernel,
                        size_t smem, size_t dyn_smem, const char* tiles, void (*prepare)() = nullptr) {
  return {name, launch, 800, kThreads, BM, BN, smem, dyn_smem, kernel, tiles, kMinBlocks, prepare};
}

template <int kStages>
TcKernel cp_async_row(const char* name, const char* tiles) {
  return block_tile_row(
      name, [](const TcGemm& g, cublasHandle_t) { launch_cp_async<kStages>(g); },
      reinterpret_cast<const void*>(cp_async_kernel<kStages>), kCpAsyncSmemBytes<kStages>, kCpAsyncSmemBytes<kStages>,
      tiles, prepare_cp_async<kStages>);
}

}  // namespace

const std::vector<TcKernel>& tc_kernels() {
  static_assert(kCpAsyncStages == 3 && kCpAsyncAblationStages == 1, "the labels below name the stage counts");
  static const std::vector<TcKernel> table = {
      {"cublas_bf16", [](const TcGemm& g, cublasHandle_t h) { cublas_bf16(h, g); }, 800},
      block_tile_row("wmma", [](const TcGemm& g, cublasHandle_t) { launch_wmma(g); },
                     reinterpret_cast<const void*>(wmma_kernel), kWmmaSmemBytes, 0,
                     "BM=128 BN=128 BK=64 warps=2x4 warp_tile=64x32 stages=1 layout=padded"),
      block_tile_row("mma_swizzled", [](const TcGemm& g, cublasHandle_t) { launch_mma_swizzled(g); },
                     reinterpret_cast<const void*>(mma_kernel<Layout::swizzled>), 2 * kTileBytes<Layout::swizzled>, 0,
                     "BM=128 BN=128 BK=64 warps=2x4 warp_tile=64x32 stages=1 layout=swizzled"),
      block_tile_row("mma_conflicted", [](const TcGemm& g, cublasHandle_t) { launch_mma_conflicted(g); },
                     reinterpret_cast<const void*>(mma_kernel<Layout::plain>), 2 * kTileBytes<Layout::plain>, 0,
                     "BM=128 BN=128 BK=64 warps=2x4 warp_tile=64x32 stages=1 layout=plain"),
      cp_async_row<kCpAsyncStages>("cp_async", "BM=128 BN=128 BK=64 warps=2x4 warp_tile=64x32 stages=3 layout=swizzled"),
      cp_async_row<kCpAsyncAblationStages>("cp_async_1stage",
                                           "BM=128 BN=128 BK=64 warps=2x4 warp_tile=64x32 stages=1 layout=swizzled"),
      {"wgmma_tma", [](const TcGemm& g, cublasHandle_t) { launch_wgmma_tma(g); }, 900, kWgmmaThreads, BM, BN,
       kWgmmaDynSmemBytes + kWgmmaStaticSmemBytes, kWgmmaDynSmemBytes, wgmma_tma_kernel_ptr(),
       "BM=128 BN=128 BK=64 warpgroups=2 wgmma=m64n128k16 stages=3 tma_swizzle=128B", kWgmmaMinBlocks, prepare_wgmma_tma},
      {"wgmma_ws", [](const TcGemm& g, cublasHandle_t) { launch_wgmma_ws(g); }, 900, kWsThreads, kWsBM, kWsBN,
       kWsDynSmemBytes + kWsStaticSmemBytes, kWsDynSmemBytes, wgmma_ws_kernel_ptr(),
       "BM=128 BN=256 BK=64 warpgroups=1+2 wgmma=m64n256k16 stages=4 tma_swizzle=128B", kWsMinBlocks, prepare_wgmma_ws},
      // Persistent: the plan's grid (one block per tile) is what it computes; it launches min(tiles, SMs x resident).
      {"wgmma_persistent", [](const TcGemm& g, cublasHandle_t) { launch_wgmma_persistent(g); }, 900, kWsThreads, kWsBM,
       kWsBN, kWsDynSmemBytes + kWsStaticSmemBytes, kWsDynSmemBytes, wgmma_persistent_kernel_ptr(),
       "BM=128 BN=256 BK=64 warpgroups=1+2 wgmma=m64n256k16 stages=4 tma_swizzle=128B persistent group_m=16",
       kWsMinBlocks, prepare_wgmma_persistent},
      {"wgmma_multicast", [](const TcGemm& g, cublasHandle_t) { launch_wgmma_multicast(g); }, 900, kWsThreads, kWsBM,
       kWsBN, kWsDynSmemBytes + kWsStaticSmemBytes, kWsDynSmemBytes, wgmma_multicast_kernel_ptr(),
       "BM=128 BN=256 BK=64 warpgroups=1+2 wgmma=m64n256k16 stages=4 tma_swizzle=128B persistent group_m=16 "
       "cluster=2 multicast=B",
       kWsMinBlocks, prepare_wgmma_multicast},
  };
  return table;
}

const TcKernel& find_tc_kernel(const std::string& name) {
  for (const TcKernel& k : tc_kernels())
    if (name == k.name) return k;
  throw std::invalid_argument("no tensor-core GEMM kernel named '" + name + "'");
}

std::vector<std::string> tc_kernel_names() {
  std::vector<std::string> names;
  for (const TcKernel& k : tc_kernels()) names.emplace_back(k.name);
  return names;
}

std::string tc_unsupported(const TcKernel& k, int arch, int K) {
  if (k.min_arch == 900 && arch != 900)
    return std::string(k.name) + " is sm_90a code (wgmma, TMA) and runs on compute capability 9.0 alone; this GPU is " +
           std::to_string(arch / 100) + "." + std::to_string(arch / 10 % 10);
  if (arch < k.min_arch)
    return std::string(k.name) + " needs compute capability " + std::to_string(k.min_arch / 100) + "." +
           std::to_string(k.min_arch / 10 % 10) + " (BF16 tensor cores)" +
           "; this GPU is " + std::to_string(arch / 100) + "." + std::to_string(arch / 10 % 10);
  if (k.threads > 0 && K % 8 != 0)
    return std::string(k.name) + " reads rows of A and B in 16-byte pieces and needs K % 8 == 0; K = " + std::to_string(K);
  return "";
}

std::string tc_compiled_out(const TcKernel& k) {
  if (k.kernel == nullptr) return "";  // cuBLAS
  // K = 8 passes the K rule: only the architecture's reasons. Asking the runtime about sm_90a code on another
  // GPU would fail (no image for it), so those reasons come first.
  const std::string why = tc_unsupported(k, current_device_facts().arch(), 8);
  if (!why.empty()) return why;
  return compiled_out_reason(k.kernel, k.min_arch, std::string("gemm/") + k.name);
}

KernelLaunch tc_kernel_launch(const TcKernel& k) { return {k.kernel, k.threads, k.dyn_smem, k.tiles}; }

Residency tc_compiled_residency(const TcKernel& k) {
  if (k.prepare) k.prepare();
  return compiled_residency(k.kernel, k.threads, k.dyn_smem);
}

Residency tc_planned_residency(const DeviceFacts& f, const TcKernel& k) {
  const int cap = arch_register_cap(k.threads, k.min_blocks);
  return {cap, blocks_per_sm(f, k.threads, k.smem_bytes, cap)};
}

}  // namespace mh::gemm

// The copy-only run of kernel 12's TMA pipeline (gemm/12_tma_tiles.cuh says what and why): the same loop
// (sm90::tma_pipeline), tensor maps, launch bounds, shared memory and grid as gemm/12_wgmma_tma_sm90a.cu; the
// consume step reads one word of each landed tile instead of issuing wgmma.
#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstring>
#include <stdexcept>
#include <string>

#include "gemm/12_tma_tiles.cuh"
#include "gemm/12_wgmma_tma.cuh"
#include "gemm/tc_sm90a.cuh"
#include "gemm/tc_tile.cuh"

namespace mh::gemm::tc {
namespace {

constexpr int kTileBytesTma = BM * BK * 2;  // 16 KiB: kernel 12's box

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
__device__ __forceinline__ uint32_t ld_shared_u32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
  return v;
}
#endif

__global__ void __launch_bounds__(kWgmmaThreads, kWgmmaMinBlocks)
    tma_tiles_copy_kernel(int K, uint32_t* sums, const __grid_constant__ CUtensorMap map_a,
                     const __grid_constant__ CUtensorMap map_b) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full[kWgmmaStages];
  const uint32_t tiles_base = (smem_addr(smem_raw) + 1023) & ~1023u;
  uint32_t sum = kTileFoldSeed;
  sm90::tma_pipeline<kWgmmaStages, kTileBytesTma>(full, tiles_base, &map_a, &map_b, blockIdx.x * BM, blockIdx.y * BN,
                                                  tma_tiles_per_block(K), [&](int t, uint32_t stage) {
    if (threadIdx.x == 0) {
      const uint32_t at = stage + tile_word_offset(t);
      sum = tile_fold(tile_fold(sum, ld_shared_u32(at)), ld_shared_u32(at + kTileBytesTma));
    }
  });
  if (threadIdx.x == 0) sums[blockIdx.y * gridDim.x + blockIdx.x] = sum;
#endif
}

void prepare_tma_tiles() {
  CUDA_CHECK(cudaFuncSetAttribute(tma_tiles_copy_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kWgmmaDynSmemBytes)));
}

// Two BF16 elements as the 32-bit word shared memory holds them (little-endian: the first in the low half).
uint32_t pair_word(const bf16* p) {
  uint16_t lo, hi;
  std::memcpy(&lo, p, 2);
  std::memcpy(&hi, p + 1, 2);
  return uint32_t(lo) | uint32_t(hi) << 16;
}

}  // namespace

const TcKernel& tma_tiles_kernel() {
  static const TcKernel k{"tma_tiles", nullptr, 900, kWgmmaThreads, BM, BN, kWgmmaDynSmemBytes + kWgmmaStaticSmemBytes,
                          kWgmmaDynSmemBytes, reinterpret_cast<const void*>(tma_tiles_copy_kernel),
                          "BM=128 BN=128 BK=64 stages=3 tma_swizzle=128B, copy only", kWgmmaMinBlocks, prepare_tma_tiles};
  return k;
}

void launch_tma_tiles(const TcGemm& g, uint32_t* sums) {
  if (g.K % 8 != 0 || g.K <= 0)
    throw std::invalid_argument("tma_tiles_copy_kernel: K = " + std::to_string(g.K) + " is not a positive multiple of 8");
  if (g.M == 0 || g.N == 0) return;
  prepare_tma_tiles();
  const CUtensorMap a = sm90::tile_map(g.A, g.M, g.K, BM), b = sm90::tile_map(g.B, g.N, g.K, BN);  // kernel 12's maps
  const dim3 grid((g.M + BM - 1) / BM, (g.N + BN - 1) / BN);
  tma_tiles_copy_kernel<<<grid, kWgmmaThreads, kWgmmaDynSmemBytes>>>(g.K, sums, a, b);
  CUDA_CHECK_LAUNCH("tma_tiles_copy_kernel");
}

std::vector<uint32_t> tma_tiles_sums(const std::vector<bf16>& A, const std::vector<bf16>& B, int M, int N, int K) {
  const int gx = (M + BM - 1) / BM, gy = (N + BN - 1) / BN;
  auto word = [K](const std::vector<bf16>& X, int rows, int row, int t) {  // TMA's zeros past the last row
    return row < rows ? pair_word(&X[size_t(row) * K + size_t(t) * BK]) : 0u;
  };
  std::vector<uint32_t> sums(size_t(gx) * gy);
  for (int by = 0; by < gy; ++by)
    for (int bx = 0; bx < gx; ++bx) {
      uint32_t sum = kTileFoldSeed;
      for (int t = 0; t < tma_tiles_per_block(K); ++t)
        sum = tile_fold(tile_fold(sum, word(A, M, bx * BM + tile_word_row(t), t)), word(B, N, by * BN + tile_word_row(t), t));
      sums[size_t(by) * gx + bx] = sum;
    }
  return sums;
}

}  // namespace mh::gemm::tc

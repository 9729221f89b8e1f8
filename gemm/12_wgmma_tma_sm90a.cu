// Kernel 12 (sm_90a): kernel 11's 128 x 128 x 64 block tile and 3-stage pipeline, with both of its halves
// handed to Hopper's asynchronous units. TMA (cp.async.bulk.tensor, one thread issues a whole 16 KiB tile)
// replaces the 256 threads' 16-byte cp.async copies and their address arithmetic, and writes the tiles in
// the 128-byte swizzle (chunk c of row r at c ^ (r % 8): kernel 10's layout); wgmma m64n128k16 replaces the
// ldmatrix + mma.sync of 8 warps: each warpgroup (4 warps) multiplies its 64 x 64 slice of A by the 128 x 64
// B tile straight from shared memory, so no ldmatrix wavefronts and no fragment registers are spent on the
// operands (kernels 9-11's shared-memory bound, docs/families/tc-gemm.md, goes away; L2 -> SM bytes remain).
// Pipeline: stage s has an mbarrier that its TMA completes (arrive.expect_tx of the 32 KiB, then the bytes).
// Per tile t: every thread waits for stage t % 3's phase, the warpgroups issue 4 wgmma (k16 steps: the
// descriptors' start address advances 32 bytes within the swizzled rows) and wait for them, a barrier marks
// the stage free, and thread 0 refills it with tile t + 3 (that loop: gemm/tc_sm90a.cuh's tma_pipeline, which the
// copy-only benchmark async/tma/l2/bandwidth/kind:gemm_tiles runs without the wgmma, gemm/12_tma_tiles_sm90a.cu).
// Not yet warp-specialized (issue 30's next step).
// TMA zero-fills outside the matrix (M, N edges, the K tail); stores are guarded: any M, N; K % 8 == 0
// (TMA's 16-byte row pitch). An mbarrier wait gives up once 1 s has passed since the block started (a broken
// pipeline must not hang a run: the result is then wrong and the verification says so; a budget per wait
// instead would add up to 2 s x 64 k-tiles x 4 waves at 4096^3).
// The tensor maps come from the driver's cuTensorMapEncodeTiled through cudaGetDriverEntryPointByVersion
// (gpubench does not link libcuda).
#include <cuda.h>
#include <cudaTypedefs.h>

#include <stdexcept>
#include <string>

#include "gemm/12_wgmma_tma.cuh"
#include "gemm/tc_sm90a.cuh"
#include "gemm/tc_tile.cuh"
#include "harness/wgmma_operands.cuh"
#include "harness/device_info.cuh"

namespace mh::gemm::tc {
namespace {

constexpr int kTileBytesTma = BM * BK * 2;  // 16 KiB, 128 rows of 128 bytes
constexpr int kStageBytesTma = 2 * kTileBytesTma;
constexpr int kAccRegs = 64;  // m64n128 FP32 accumulators per thread
static_assert(BK * 2 == 128, "one tile row is one 128-byte swizzle row");
static_assert(kWgmmaDynSmemBytes == size_t(kWgmmaStages) * kStageBytesTma + 1024, "gemm/12_wgmma_tma.cuh");

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// The descriptors, mbarriers with bounded waits, TMA tile loads and this kernel's pipeline loop (tma_pipeline) of
// gemm/tc_sm90a.cuh (kernels 12-15 share them; the loop also runs without the wgmma in gemm/12_tma_tiles_sm90a.cu);
// this step's own piece is the m64n128 wgmma below.
using sm90::smem_desc;

__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[kAccRegs], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {" MH_WG_REGS64 "}, %64, %65, p, 1, 1, 0, 0;\n"
      "}\n"
      : MH_WG_ACC64(d)
      : "l"(desc_a), "l"(desc_b), "r"(1)
      : "memory");
}

// The accumulators as written by the asynchronous wgmma: the compiler must not read them before the wait.
__device__ __forceinline__ void fence_acc(float (&d)[kAccRegs]) {
#pragma unroll
  for (int i = 0; i < kAccRegs; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The warpgroup's 64 x 128 of C (first row row0) from the wgmma D fragment: thread T, warp w = T / 32 of the
// warpgroup, lane l: d[4j + e] is row 16 w + l / 4 + 8 (e / 2), column 8 j + 2 (l % 4) + e % 2 (PTX ISA,
// wgmma D fragments): per 8 columns, mma.sync's m16n8 C fragment.
__device__ __forceinline__ void store_wgmma(const TcGemm& g, const float (&d)[kAccRegs], int row0, int col0) {
  const int lane = threadIdx.x % 32, w = (threadIdx.x / 32) % 4;
#pragma unroll
  for (int j = 0; j < kAccRegs / 4; ++j)
#pragma unroll
    for (int half = 0; half < 2; ++half)
      store_pair(g, row0 + 16 * w + lane / 4 + 8 * half, col0 + 8 * j + 2 * (lane % 4), d[4 * j + 2 * half],
                 d[4 * j + 2 * half + 1]);
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

__global__ void __launch_bounds__(kWgmmaThreads, kWgmmaMinBlocks)
    wgmma_tma_kernel(TcGemm g, const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full[kWgmmaStages];
  const uint32_t tiles_base = (smem_addr(smem_raw) + 1023) & ~1023u;
  const int wg = threadIdx.x / 128;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  float d[kAccRegs];
#pragma unroll
  for (int i = 0; i < kAccRegs; ++i) d[i] = 0.f;
  sm90::tma_pipeline<kWgmmaStages, kTileBytesTma>(full, tiles_base, &map_a, &map_b, m0, n0, (g.K + BK - 1) / BK,
                                                  [&](int, uint32_t stage) {
    const uint32_t a = stage + wg * 64 * 128, b = stage + kTileBytesTma;
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#pragma unroll
    for (int ks = 0; ks < BK / 16; ++ks) wgmma_m64n128k16(d, smem_desc(a + 32 * ks), smem_desc(b + 32 * ks));
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
    fence_acc(d);
  });
  store_wgmma(g, d, m0 + 64 * wg, n0);
#endif
}

}  // namespace

void prepare_wgmma_tma() {
  CUDA_CHECK(cudaFuncSetAttribute(wgmma_tma_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  static_cast<int>(kWgmmaDynSmemBytes)));
}

void launch_wgmma_tma(const TcGemm& g) {
  if (g.K % 8 != 0)
    throw std::invalid_argument("wgmma_tma_kernel: K = " + std::to_string(g.K) + " is not a multiple of 8");
  if (g.M == 0 || g.N == 0) return;
  if (g.K == 0) {  // no tile to load: C = 0 (a tensor map of zero width does not exist)
    CUDA_CHECK(cudaMemsetAsync(g.C, 0, size_t(g.M) * g.N * sizeof(float)));
    return;
  }
  prepare_wgmma_tma();
  const CUtensorMap a = sm90::tile_map(g.A, g.M, g.K, BM), b = sm90::tile_map(g.B, g.N, g.K, BN);  // 128 x 64 boxes
  const dim3 grid((g.M + BM - 1) / BM, (g.N + BN - 1) / BN);
  wgmma_tma_kernel<<<grid, kWgmmaThreads, kWgmmaDynSmemBytes>>>(g, a, b);
  CUDA_CHECK_LAUNCH("wgmma_tma_kernel");
}

const void* wgmma_tma_kernel_ptr() { return reinterpret_cast<const void*>(wgmma_tma_kernel); }

}  // namespace mh::gemm::tc

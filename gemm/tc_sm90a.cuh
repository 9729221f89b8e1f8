// Hopper pieces of the warp-specialized steps of the BF16 ladder (kernels 13, 14; included by *_sm90a.cu files
// only): mbarriers with bounded waits, TMA tile loads, wgmma shared-memory descriptors, wgmma m64n256k16, the
// accumulator store, and the host's tensor maps; kernel 12 (gemm/12_wgmma_tma_sm90a.cu) uses them too, and its
// TMA pipeline loop (tma_pipeline) is here, shared with the copy-only run of it (gemm/12_tma_tiles_sm90a.cu).
#pragma once
#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <string>

#include "gemm/tc_gemm.cuh"
#include "gemm/tc_tile.cuh"  // smem_addr, store_pair
#include "harness/wgmma_operands.cuh"
#include "harness/cuda_check.cuh"
#include "harness/device_info.cuh"

namespace mh::gemm::tc::sm90 {

constexpr int kAcc256 = 128;  // FP32 accumulators per thread of an m64n256 wgmma (64 x 256 / 128 threads)
// A bounded wait gives up this long after the block started: a broken pipeline fails the verification (C
// wrong or NaN) within about a second per wave instead of hanging the run. A correct block needs < 10 ms.
constexpr long long kWaitBudgetNs = 1000000000ll;

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// wgmma shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format") of a K-major tile written by
// TMA's 128-byte swizzle, rows of 128 bytes: start address >> 4 (bits 0-13); leading byte offset (16-29)
// unused by a K-major swizzled operand whose K extent (16 elements = 32 bytes) lies inside one swizzle row,
// 1 by convention; stride byte offset >> 4 (32-45) = 1024 bytes from one 8-row core-matrix group to the
// next; base offset (49-51) 0 because every tile starts on a 1024-byte boundary; swizzle mode (62-63) 1 = 128 B.
// The k16 steps inside a 64-wide tile advance the start address by 32 bytes: the hardware applies the XOR
// to the computed address, as TMA did when writing.
__device__ __forceinline__ uint64_t smem_desc(uint32_t addr) {
  return uint64_t((addr & 0x3FFFF) >> 4) | uint64_t(1) << 16 | uint64_t(1024 >> 4) << 32 | uint64_t(1) << 62;
}

__device__ __forceinline__ void mbar_init(uint32_t bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

// The producer's arrival on a full barrier, announcing the bytes its TMA loads will deliver.
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

// A consumer's arrival on an empty barrier (release semantics: its reads of the stage happen before).
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

// Waits for the phase of parity `parity` of the barrier to complete, or until %globaltimer passes deadline.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity, long long deadline) {
  while (!mbar_try_wait(bar, parity))
    if (global_ns() > deadline) return;
}

// Box (k0, row0) of the tensor map into shared memory at dst, completing its bytes on mbarrier bar.
__device__ __forceinline__ void tma_load(uint32_t dst, const CUtensorMap* map, int k0, int row0, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(k0), "r"(row0), "r"(bar)
      : "memory");
}

// The same box into shared memory at offset dst of every block of the cluster in cta_mask, each completing on
// its own mbarrier at offset bar (PTX: .multicast::cluster, fast on sm_90a).
__device__ __forceinline__ void tma_load_multicast(uint32_t dst, const CUtensorMap* map, int k0, int row0, uint32_t bar,
                                                   uint16_t cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3}], "
      "[%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(k0), "r"(row0), "r"(bar), "h"(cta_mask)
      : "memory");
}

// An arrival on the mbarrier at shared offset bar of the cluster's block `rank` (this block's own included).
// Release at CTA scope (the instruction's default), as a consumer freeing a stage needs: the stage's reads are
// wgmma's, finished at wgmma_wait before the arrival, and the producer orders its TMA writes after the phase
// flip it waits on. `.release.cluster` made kernel 15 1.87x slower on an H200 (404 vs 748 TFLOP/s at 4096^3,
// results/experiments/wgmma_multicast_cta_release/).
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t bar, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(bar), "r"(rank));
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(remote) : "memory");
}

__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

// Every thread of the cluster: what each block wrote before (its mbarrier inits) is visible to all after.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int kPending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// d (+)= A (64 x 16, descriptor a) * B (16 x 256, descriptor b, K-major); accumulate = 0 ignores d's old value.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[kAcc256], uint64_t desc_a, uint64_t desc_b, int accumulate) {
  asm volatile(
      "{\n"
      ".reg .pred p;\n"
      "setp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {" MH_WG_REGS128 "}, %128, %129, p, 1, 1, 0, 0;\n"
      "}\n"
      : MH_WG_ACC128(d)
      : "l"(desc_a), "l"(desc_b), "r"(accumulate)
      : "memory");
}

// The accumulators as the asynchronous wgmma left them: the compiler must not read them before the wait.
__device__ __forceinline__ void fence_acc(float (&d)[kAcc256]) {
#pragma unroll
  for (int i = 0; i < kAcc256; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// The warpgroup's 64 x 256 of C (first element row0, col0) from the wgmma D fragment, guarded: warp w of the
// warpgroup, lane l: d[4j + e] is row 16 w + l / 4 + 8 (e / 2), column 8 j + 2 (l % 4) + e % 2 (PTX ISA,
// wgmma D fragments: per 8 columns, mma.sync's m16n8 C fragment). A quad writes 32 contiguous bytes.
__device__ __forceinline__ void store_acc256(const TcGemm& g, const float (&d)[kAcc256], int row0, int col0) {
  const int lane = threadIdx.x % 32, w = (threadIdx.x / 32) % 4;
#pragma unroll
  for (int j = 0; j < kAcc256 / 4; ++j)
#pragma unroll
    for (int half = 0; half < 2; ++half)
      store_pair(g, row0 + 16 * w + lane / 4 + 8 * half, col0 + 8 * j + 2 * (lane % 4), d[4 * j + 2 * half],
                 d[4 * j + 2 * half + 1]);
}

// Registers move from the producer warpgroup to the consumers (PTX setmaxnreg; every warp of the warpgroup
// executes it; needs __launch_bounds__ with a minimum of blocks so the launch's count is known).
template <int kRegs>
__device__ __forceinline__ void regs_dealloc() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void regs_alloc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// Kernel 12's TMA pipeline, written once for the kernel and for its copy-only run (gemm/12_tma_tiles_sm90a.cu,
// the benchmark async/tma/l2/bandwidth/kind:gemm_tiles/...: the rate at which this loop's tiles arrive, issue 30).
// Stage s of kStages holds tile t's A box (kTileBytes, rows m0..) and then its B box (rows n0..) from `base` on;
// full[s] is the stage's mbarrier, which TMA completes. Thread 0 inits the barriers and fills the first kStages
// stages; then per tile t every thread waits for stage t % kStages's fill, runs consume(t, stage address), a
// block barrier marks the stage free, and thread 0 refills it with tile t + kStages. A wait gives up
// kWaitBudgetNs after the block started (the result is then wrong, and the caller's check says so).
template <int kStages, int kTileBytes, class Consume>
__device__ __forceinline__ void tma_pipeline(uint64_t (&full)[kStages], uint32_t base, const CUtensorMap* map_a,
                                             const CUtensorMap* map_b, int m0, int n0, int tiles, Consume consume) {
  auto stage = [&](int s) { return base + s * 2 * kTileBytes; };
  auto load = [&](int t) {  // thread 0: tile t into stage t % kStages
    const int s = t % kStages;
    const uint32_t bar = smem_addr(&full[s]);
    mbar_expect_tx(bar, 2 * kTileBytes);
    tma_load(stage(s), map_a, t * BK, m0, bar);
    tma_load(stage(s) + kTileBytes, map_b, t * BK, n0, bar);
  };
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(smem_addr(&full[s]), 1);
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");  // the inits visible to TMA
  }
  __syncthreads();
  const long long deadline = global_ns() + kWaitBudgetNs;  // for the block; a correct one needs < 10 ms
  if (threadIdx.x == 0)
    for (int t = 0; t < kStages && t < tiles; ++t) load(t);
  for (int t = 0; t < tiles; ++t) {
    const int s = t % kStages;
    mbar_wait(smem_addr(&full[s]), (t / kStages) % 2, deadline);  // the stage's (t / stages)-th fill has landed
    __syncwarp();  // the warp converged again after its polling loop (wgmma instructions are .sync.aligned)
    consume(t, stage(s));
    __syncthreads();  // every thread is done reading stage s
    if (threadIdx.x == 0 && t + kStages < tiles) load(t + kStages);
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

inline PFN_cuTensorMapEncodeTiled_v12000 encode_tiled() {
  static const PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* p = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &p, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || p == nullptr)
      throw CudaError("cuTensorMapEncodeTiled: not found in the driver (needs a CUDA 12.0+ driver)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(p);
  }();
  return fn;
}

// A K-major BF16 matrix of `rows` rows of K as boxes of box_rows rows x 64 (128 bytes), 128-byte swizzle,
// zeros outside the matrix (M, N edges and the K tail need no code in the kernels).
inline CUtensorMap tile_map(const bf16* X, int rows, int K, int box_rows) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cuuint64_t(K), cuuint64_t(rows)};
  const cuuint64_t pitch[1] = {cuuint64_t(K) * sizeof(bf16)};
  const cuuint32_t box[2] = {64, cuuint32_t(box_rows)};
  const cuuint32_t step[2] = {1, 1};
  const CUresult r = encode_tiled()(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<bf16*>(X), dims, pitch, box, step,
                                    CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw CudaError("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(r)) + ") for " + std::to_string(rows) +
                    " rows of K = " + std::to_string(K) + ", boxes of " + std::to_string(box_rows) + " rows");
  return map;
}

}  // namespace mh::gemm::tc::sm90

// What kernels 9-11 of the BF16 ladder share: the block tile, the shared-memory tile layouts, the
// global -> shared copies, the ldmatrix / mma.sync fragment code and the register epilogue. Each kernel file
// says which of these it uses and what it changes against the previous step.
//
// Block tile: 128 x 128 of C, K in steps of BK = 64, 256 threads = 8 warps as 2 (M) x 4 (N), each warp 64 x 32
// of C. A shared tile is 128 rows of BK BF16 (128 bytes = 8 chunks of 16 bytes) of A (rows m) or of B (rows n).
// Every kernel asks __launch_bounds__(256, 2): two blocks per SM, at most 128 registers per thread.
#pragma once
#include <cuda_bf16.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "gemm/tc_gemm.cuh"
#include "gemm/tc_shape.hpp"
#include "model/tensor_model.hpp"  // mma_c_element: the C fragment layout

// BF16 mma.sync, cp.async and BF16 WMMA exist from sm_80 on: other device passes compile empty kernels
// (the plans skip them with the reason, so they never run).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define MH_TC_SM80 1
#else
#define MH_TC_SM80 0
#endif

namespace mh::gemm::tc {

// The block tile, warp tile, layouts (Layout, kRowBytes, kTileBytes, chunk_offset) and the ldmatrix lane
// addressing are gemm/tc_shape.hpp's, shared with the counting model (model/tc_gemm_model.hpp). How a tile's
// rows sit in shared memory:
//   plain:    row r at 128 r bytes. The 8 rows an ldmatrix phase reads at one chunk are 128 bytes apart: all
//             in the same four banks, an 8-way conflict (kernel 10a).
//   padded:   row r at 144 r bytes (BK + 8 elements, WMMA's ldm = 72): 8 rows land in 8 different 16-byte
//             bank groups, at the price of 1/8 more shared memory (kernel 9).
//   swizzled: row r at 128 r bytes, chunk c stored at chunk c ^ (r % 8): the 8 rows of a phase hit 8 different
//             bank groups, nothing wasted (kernels 10, 11). The same XOR as TMA's 128-byte swizzle.

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Chunk `chunk` of row `row` of the tile whose first row is r0 and first k is k0, in a K-major matrix X of
// `rows` rows of K: its address, or null outside the matrix (the copy zero-fills it). With K % 8 == 0 a
// chunk is wholly inside or wholly outside.
__device__ __forceinline__ const bf16* chunk_src(const bf16* X, int rows, int K, int r0, int k0, int row, int chunk) {
  const int r = r0 + row, k = k0 + chunk * 8;
  return r < rows && k < K ? X + size_t(r) * K + k : nullptr;
}

// The thread's i-th chunk of a tile: consecutive threads take consecutive chunks of a row (coalesced
// 128-byte rows in global memory; a quarter-warp's 16-byte stores fill one row: conflict-free in every layout).
struct ChunkPos {
  int row, chunk;
};
__device__ __forceinline__ ChunkPos chunk_pos(int i) {
  const int idx = threadIdx.x + i * kThreads;
  return {idx / kRowChunks, idx % kRowChunks};
}

// Synchronous copy of one tile: 16-byte global loads into registers, then 16-byte shared stores.
template <Layout L>
__device__ __forceinline__ void load_tile(uint8_t* tile, const bf16* X, int rows, int K, int r0, int k0) {
  uint4 v[kChunksPerThread];
#pragma unroll
  for (int i = 0; i < kChunksPerThread; ++i) {
    const ChunkPos p = chunk_pos(i);
    const bf16* src = chunk_src(X, rows, K, r0, k0, p.row, p.chunk);
    v[i] = src ? *reinterpret_cast<const uint4*>(src) : make_uint4(0, 0, 0, 0);
  }
#pragma unroll
  for (int i = 0; i < kChunksPerThread; ++i) {
    const ChunkPos p = chunk_pos(i);
    *reinterpret_cast<uint4*>(tile + chunk_offset<L>(p.row, p.chunk)) = v[i];
  }
}

// Asynchronous copy of one tile (cp.async.cg, 16 bytes, L1 bypassed): global -> shared without registers.
// A chunk outside the matrix copies 0 source bytes, which zero-fills its 16 (the source address is then
// the matrix's base, valid but unread).
template <Layout L>
__device__ __forceinline__ void load_tile_async(uint8_t* tile, const bf16* X, int rows, int K, int r0, int k0) {
#if MH_TC_SM80
#pragma unroll
  for (int i = 0; i < kChunksPerThread; ++i) {
    const ChunkPos p = chunk_pos(i);
    const bf16* src = chunk_src(X, rows, K, r0, k0, p.row, p.chunk);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(tile + chunk_offset<L>(p.row, p.chunk))),
                 "l"(src ? src : X), "r"(src ? 16 : 0)
                 : "memory");
  }
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if MH_TC_SM80
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}

// Waits until at most kPending of this thread's committed groups are still in flight.
template <int kPending>
__device__ __forceinline__ void cp_async_wait() {
#if MH_TC_SM80
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
#endif
}

// Both tiles of one block tile into a stage buffer (kStageBytes, gemm/tc_shape.hpp): A rows m0.., then B rows
// n0.., k0 .. k0 + BK - 1, by cp.async. Kernel 11's copy; the tensor family's copy micro issues the same.
__device__ __forceinline__ void load_stage_async(uint8_t* stage, const bf16* A, int M, const bf16* B, int N, int K,
                                                 int m0, int n0, int k0) {
  load_tile_async<Layout::swizzled>(stage, A, M, K, m0, k0);
  load_tile_async<Layout::swizzled>(stage + kTileBytes<Layout::swizzled>, B, N, K, n0, k0);
}

// The multi-stage cp.async main loop of kernels 11 and 11a, and of the micro that times it
// (micro/mma_ldmatrix.cuh, the copy kinds): `tiles` block tiles through a ring of kStages buffers of
// kStageBytes at `smem`; copy(t, buffer) issues tile t's cp.async, compute(buffer) works on a landed tile.
// Per tile t: issue the copy of tile t + kStages - 1 into the buffer tile t - 1 used, commit it as one
// group, wait until tile t's group has landed (cp.async.wait_group kStages - 1), barrier (every thread's
// chunks visible), compute, barrier (every warp done reading before that buffer is refilled). One group is
// committed per tile, empty ones too, so group i always holds tile i.
template <int kStages, class Copy, class Compute>
__device__ __forceinline__ void cp_async_pipeline(uint8_t* smem, int tiles, Copy&& copy, Compute&& compute) {
  auto buffer = [smem](int t) { return smem + (t % kStages) * kStageBytes; };
  for (int t = 0; t < kStages - 1; ++t) {
    if (t < tiles) copy(t, buffer(t));
    cp_async_commit();
  }
  for (int t = 0; t < tiles; ++t) {
    if (t + kStages - 1 < tiles) copy(t + kStages - 1, buffer(t + kStages - 1));
    cp_async_commit();
    cp_async_wait<kStages - 1>();  // groups 0 .. t complete: tile t has landed (this thread's chunks)
    __syncthreads();               // ... and every thread's
    compute(static_cast<const uint8_t*>(buffer(t)));
    __syncthreads();  // every warp is done with this buffer before the next iteration's copy refills it
  }
}

// ldmatrix .x4: lanes 8j .. 8j+7 give the 16-byte row addresses of 8x8 matrix j; every lane receives, in
// r[j], the two BF16 of matrix j at row lane / 4, columns 2 (lane % 4), +1 (PTX ISA, ldmatrix).
// "memory": it reads shared memory, so it must not move across the barriers around it.
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
#if MH_TC_SM80
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
#endif
}

// d += a b, m16n8k16, A row-major (16 x 16), B column-major (16 x 8), BF16 in, FP32 accumulate.
__device__ __forceinline__ void mma_bf16(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if MH_TC_SM80
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

using WarpAcc = float[kMTiles][kNTiles][4];

// One BK-deep block tile of a warp's 64 x 32 of C, from tiles As (rows m) and Bs (rows n) in layout L.
// Fragments per the PTX ISA's m16n8k16 .bf16 layouts (g = lane / 4, t = lane % 4):
//   A: a[0] = (row g, k 2t..2t+1), a[1] = (g+8, 2t..), a[2] = (g, 8+2t..), a[3] = (g+8, 8+2t..):
//      ldmatrix matrices j = 0..3 are (rows 0-7 | 8-15) x (k 0-7 | 8-15) with the row half in bit 0 of j,
//      so lane l addresses row (l % 8) + 8 ((l / 8) % 2), chunk l / 16 of the k16 step.
//   B: b[0] = (k 2t..2t+1, column g), b[1] = (k 8+2t.., g): rows n of Bs are the columns of B, so an 8x8
//      matrix of Bs (8 n x 8 k) is one register; one .x4 loads two n8 tiles, matrices (n 0-7, k 0-7),
//      (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15): lane l addresses n (l % 8) + 8 (l / 16),
//      chunk (l / 8) % 2.
//   C: c[0..1] = (row g, columns 2t, 2t+1), c[2..3] = (row g+8, same columns).
// load_step_fragments: the warp's kLdsmA + kLdsmB ldmatrix.x4 of k16 step `ks` (a_base, b_base: the tiles'
// shared addresses); mma_step: its kMTiles x kNTiles mma.sync; mma_block_tile: both for the BK / 16 steps.
// (The tensor family's micro/mma_ldmatrix.cu times the three apart.)
template <Layout L>
__device__ __forceinline__ void load_step_fragments(uint32_t a_base, uint32_t b_base, int wm0, int wn0, int ks,
                                                    uint32_t (&a)[kMTiles][4], uint32_t (&b)[kNTiles][2]) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int mi = 0; mi < kLdsmA; ++mi) {
    const TilePos p = ldsm_a_pos(wm0, mi, ks, lane);
    ldmatrix_x4(a[mi], a_base + chunk_offset<L>(p.row, p.chunk));
  }
#pragma unroll
  for (int nj = 0; nj < kLdsmB; ++nj) {
    uint32_t r[4];
    const TilePos p = ldsm_b_pos(wn0, nj, ks, lane);
    ldmatrix_x4(r, b_base + chunk_offset<L>(p.row, p.chunk));
    b[2 * nj][0] = r[0];
    b[2 * nj][1] = r[1];
    b[2 * nj + 1][0] = r[2];
    b[2 * nj + 1][1] = r[3];
  }
}

// The kMTiles x kNTiles mma.sync of one k16 step on its fragments.
__device__ __forceinline__ void mma_step(WarpAcc& acc, const uint32_t (&a)[kMTiles][4], const uint32_t (&b)[kNTiles][2]) {
#pragma unroll
  for (int mi = 0; mi < kMTiles; ++mi)
#pragma unroll
    for (int ni = 0; ni < kNTiles; ++ni) mma_bf16(acc[mi][ni], a[mi], b[ni]);
}

template <Layout L>
__device__ __forceinline__ void mma_block_tile(const uint8_t* As, const uint8_t* Bs, WarpAcc& acc, int wm0, int wn0) {
  const uint32_t a_base = smem_addr(As), b_base = smem_addr(Bs);
#pragma unroll
  for (int ks = 0; ks < BK / 16; ++ks) {
    uint32_t a[kMTiles][4], b[kNTiles][2];
    load_step_fragments<L>(a_base, b_base, wm0, wn0, ks, a, b);
    mma_step(acc, a, b);
  }
}

// C[row][col], C[row][col + 1] = x, y (col even), guarded at the edges: one float2 where the row pitch is even
// (then 8-byte aligned), else two floats.
__device__ __forceinline__ void store_pair(const TcGemm& g, int row, int col, float x, float y) {
  if (row >= g.M) return;
  float* c = g.C + size_t(row) * g.N + col;
  if (g.N % 2 == 0 && col + 1 < g.N) {
    *reinterpret_cast<float2*>(c) = make_float2(x, y);
  } else {
    if (col < g.N) c[0] = x;
    if (col + 1 < g.N) c[1] = y;
  }
}

// The warp's accumulators to C (row0, col0: the warp tile's first element), straight from the C fragments:
// a quad writes 8 consecutive floats of a row.
__device__ __forceinline__ void store_acc(const TcGemm& g, const WarpAcc& acc, int row0, int col0) {
  const int lane = threadIdx.x % 32;
#pragma unroll
  for (int mi = 0; mi < kMTiles; ++mi)
#pragma unroll
    for (int ni = 0; ni < kNTiles; ++ni)
#pragma unroll
      for (int i = 0; i < 4; i += 2) {  // elements i, i + 1: one row, two adjacent columns
        const mh::model::RowCol e = mh::model::mma_c_element(lane, i);
        store_pair(g, row0 + mi * 16 + e.row, col0 + ni * 8 + e.col, acc[mi][ni][i], acc[mi][ni][i + 1]);
      }
}

// Host: launches kernel(g) over the 128 x 128 tiles of C (blockIdx.x: rows, blockIdx.y: columns). Refuses
// K % 8 != 0 (tc_unsupported says why) before any CUDA call; an empty C launches nothing. `prepare` (the
// dynamic shared memory opt-in) runs just before the launch.
template <class Kernel>
void launch_block_tiles(Kernel kernel, size_t dyn_smem, const TcGemm& g, const char* name, void (*prepare)() = nullptr) {
  if (g.K % 8 != 0)
    throw std::invalid_argument(std::string(name) + ": K = " + std::to_string(g.K) + " is not a multiple of 8");
  if (g.M == 0 || g.N == 0) return;
  if (prepare) prepare();
  const dim3 grid((g.M + BM - 1) / BM, (g.N + BN - 1) / BN);
  kernel<<<grid, kThreads, dyn_smem>>>(g);
  CUDA_CHECK_LAUNCH(name);
}

}  // namespace mh::gemm::tc

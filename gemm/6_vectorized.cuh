// Kernel 6, vectorised: kernel 5's tiles and thread patches, with 16-byte accesses wherever the data
// allow, and the A tile stored transposed so that A, too, is read from shared memory 16 bytes at a time.
// BM = BN = 128, BK = 8; thread t = (tr, tc) = (t / 16, t % 16) owns C[8 tr + m][8 tc + n], m, n < 8.
//   Global loads, one float4 of each tile per thread: A[t / 2][4 (t % 2) ..] (a warp: 16 rows x 32
//   bytes) and B[t / 32][4 (t % 32) ..] (512 consecutive bytes) -> one LDG.128 each, coalesced.
//   Shared stores: Bs[k][4 (t % 32) ..] is one STS.128 of 512 consecutive bytes (4 wavefronts, the
//   minimum); the A float4 goes to As[4 (t % 2) + j][t / 2], four STS: the two lanes with the same
//   row share a bank -> 2-way conflicts, on 4 stores per tile against 32 shared reads.
//   Shared reads, per k: As[k][8 tr ..] and Bs[k][8 tc ..] are two LDS.128 each (kernel 5 as nvcc
//   compiles it issues as many: its A rows are read along k, 4 k at a time).
//     A: two addresses per warp (tr = 2w, 2w + 1), one per half-warp: broadcast.
//     B: in a quarter-warp the 8 lanes are 32 bytes apart, lanes tc and tc + 4 share banks: 2-way,
//       8 wavefronts per LDS.128, as in kernel 5. So per k: 2 x 2 + 2 x 8 = 20 wavefronts for 64 FFMA,
//       the same as kernel 5: this step changes the global side (1 LDG.128 instead of 4 LDG per tile
//       and operand, STG.128 for C), not the shared one.
//   The C stores are float4 (STG.128).
// The 16-byte path needs K % 4 == 0 and N % 4 == 0 (16-byte aligned rows); otherwise the same kernel
// runs with guarded 4-byte loads and stores (kVec = false), so any M, N, K works.
// 64 accumulators: __launch_bounds__(256, 2) caps registers at 128, two blocks (16 warps) per SM.
// Included once, by gemm/gemm.cu; the tests reach it through gemm_kernels().
#pragma once
#include "gemm/blocktile.cuh"

namespace mh::gemm {

namespace vectorized {
// The shape and the index maps are gemm/tile_maps.hpp's (kVectorized), shared with the counting model.
constexpr int BM = kVectorized.BM, BN = kVectorized.BN, BK = kVectorized.BK, TM = kVectorized.TM, TN = kVectorized.TN;
constexpr int kThreads = kVectorized.threads;
static_assert(a_loads(kVectorized) == 1 && b_loads(kVectorized) == 1 && kVectorized.load_floats == 4 &&
                  kVectorized.a_transposed,
              "one float4 of each tile per thread; As is [BK][BM]");
}  // namespace vectorized

template <bool kVec>
__global__ void __launch_bounds__(vectorized::kThreads, min_blocks_for(vectorized::kThreads, 128))
vectorized_kernel(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
                  float beta, float* __restrict__ C) {
  using namespace vectorized;
  constexpr TileShape kShape = kVectorized;
  __shared__ __align__(16) float As[as_rows(kShape)][as_cols(kShape)];  // transposed: As[k][r] = A[row0 + r][t + k]
  __shared__ __align__(16) float Bs[BK][BN];
  const TileElem p = thread_patch(kShape, threadIdx.x);  // C elements patch_elem(p, m, n), m < TM, n < TN
  const TileElem la = a_load(kShape, threadIdx.x, 0), lb = b_load(kShape, threadIdx.x, 0);  // this thread's float4s
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM][TN] = {};
  for (int t = 0; t < K; t += BK) {
    const float4 a4 = load4<kVec>(A, M, K, row0 + la.row, t + la.col);
    const auto stash = [&](int j, float v) {  // A-tile element (la.row, la.col + j)
      const TileElem x = as_index(kShape, {la.row, la.col + j});
      As[x.row][x.col] = v;
    };
    stash(0, a4.x);
    stash(1, a4.y);
    stash(2, a4.z);
    stash(3, a4.w);
    *reinterpret_cast<float4*>(&Bs[lb.row][lb.col]) = load4<kVec>(B, K, N, t + lb.row, col0 + lb.col);
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int m = 0; m < TM; m += 4) {
        const TileElem x = as_index(kShape, {patch_elem(kShape, p, m, 0).row, k});
        *reinterpret_cast<float4*>(&a[m]) = *reinterpret_cast<const float4*>(&As[x.row][x.col]);
      }
#pragma unroll
      for (int n = 0; n < TN; n += 4) *reinterpret_cast<float4*>(&b[n]) = *reinterpret_cast<const float4*>(&Bs[k][patch_elem(kShape, p, 0, n).col]);
#pragma unroll
      for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n) acc[m][n] += a[m] * b[n];
    }
    __syncthreads();
  }
#pragma unroll
  for (int m = 0; m < TM; ++m)
#pragma unroll
    for (int n = 0; n < TN; n += 4) {
      const TileElem e = patch_elem(kShape, p, m, n);
      store4<kVec>(C, M, N, row0 + e.row, col0 + e.col, make_float4(acc[m][n], acc[m][n + 1], acc[m][n + 2], acc[m][n + 3]),
                   alpha, beta);
    }
}

inline void launch_vectorized(const Gemm& g, cudaStream_t s = nullptr) {
  using namespace vectorized;
  if (vectorizable(g))
    launch_blocktiles(vectorized_kernel<true>, BM, BN, kThreads, 0, g, s, "vectorized_kernel<true>");
  else
    launch_blocktiles(vectorized_kernel<false>, BM, BN, kThreads, 0, g, s, "vectorized_kernel<false>");
}

inline KernelLaunch describe_vectorized(const Gemm& g) {
  using namespace vectorized;
  const bool v = vectorizable(g);
  return {v ? reinterpret_cast<const void*>(vectorized_kernel<true>) : reinterpret_cast<const void*>(vectorized_kernel<false>),
          kThreads, 0, std::string("BM=128 BN=128 BK=8 TM=8 TN=8 threads=256 vec=") + (v ? "16B" : "4B")};
}

}  // namespace mh::gemm

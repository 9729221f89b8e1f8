// Kernel 4, 1D block tiling: a 64x64 tile of C per block of 512 threads, each thread a column of
// TM = 8 elements, so each value of B read from shared memory feeds 8 FFMAs (kernel 3: one).
// BM = BN = 64, BK = 8; thread t = (tr, tc) = (t / 64, t % 64) owns C[8 tr .. 8 tr + 7][tc].
//   Global loads, one float of each tile per thread: As from A[t / 8][t % 8] (a warp reads 4 rows x
//   32 bytes: 4 requests' worth of sectors, each fully used), Bs from B[t / 64][t % 64] (32 consecutive
//   floats) -> coalesced. The stores to shared memory are 32 consecutive words: conflict-free.
//   Shared reads, per k: Bs[k][tc] is 32 consecutive words (conflict-free); As[8 tr + m][k] is one
//   address per warp (all its lanes share tr): a broadcast. nvcc reads each As row's 8 floats with two
//   LDS.128 (cuobjdump -sass), so per tile a warp issues 16 LDS.128 for A and 8 LDS for B, for 64 FFMA.
// Out-of-range tile elements are zero-filled, so any M, N, K works; stores are guarded.
// 512 threads x 8 accumulators: __launch_bounds__(512, 2) lets ptxas use up to 64 registers; it takes
// fewer (the benchmark reports regs_per_thread and blocks_per_sm from the compiled kernel).
// Included once, by gemm/gemm.cu; the tests reach it through gemm_kernels().
#pragma once
#include "gemm/blocktile.cuh"

namespace mh::gemm {

namespace blocktile_1d {
constexpr int BM = 64, BN = 64, BK = 8, TM = 8, kThreads = BM * BN / TM;
static_assert(BM * BK == kThreads && BK * BN == kThreads, "one element of each tile per thread");
}  // namespace blocktile_1d

__global__ void __launch_bounds__(blocktile_1d::kThreads, 2)
blocktile_1d_kernel(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
                    float beta, float* __restrict__ C) {
  using namespace blocktile_1d;
  __shared__ float As[BM][BK];  // As[r][k] = A[row0 + r][t + k]
  __shared__ float Bs[BK][BN];  // Bs[k][c] = B[t + k][col0 + c]
  const int tr = threadIdx.x / BN, tc = threadIdx.x % BN;
  const int ar = threadIdx.x / BK, ak = threadIdx.x % BK;  // this thread's element of the A tile
  const int row0 = blockIdx.y * BM, col0 = blockIdx.x * BN;
  float acc[TM] = {};
  for (int t = 0; t < K; t += BK) {
    As[ar][ak] = row0 + ar < M && t + ak < K ? A[size_t(row0 + ar) * K + t + ak] : 0.f;
    Bs[tr][tc] = t + tr < K && col0 + tc < N ? B[size_t(t + tr) * N + col0 + tc] : 0.f;  // BK == 512 / BN rows
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      const float b = Bs[k][tc];
#pragma unroll
      for (int m = 0; m < TM; ++m) acc[m] += As[tr * TM + m][k] * b;
    }
    __syncthreads();
  }
  for (int m = 0; m < TM; ++m) {
    const int row = row0 + tr * TM + m, col = col0 + tc;
    if (row < M && col < N) store_c(C + size_t(row) * N + col, acc[m], alpha, beta);
  }
}

inline void launch_blocktile_1d(const Gemm& g, cudaStream_t s = nullptr) {
  using namespace blocktile_1d;
  launch_blocktiles(blocktile_1d_kernel, BM, BN, kThreads, 0, g, s, "blocktile_1d_kernel");
}

inline KernelLaunch describe_blocktile_1d(const Gemm&) {
  using namespace blocktile_1d;
  return {reinterpret_cast<const void*>(blocktile_1d_kernel), kThreads, 0, "BM=64 BN=64 BK=8 TM=8 threads=512"};
}

}  // namespace mh::gemm

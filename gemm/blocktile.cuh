// What kernels 4-8 (block-tiled: each thread computes several elements of C) share: the grid over
// BM x BN tiles of C, guarded 4-float loads and stores with a 16-byte fast path, the shared-memory
// opt-in, and the register budget behind their __launch_bounds__.
// Grid (ceil(N / BN), ceil(M / BM)): blockIdx.x picks the tile's columns, blockIdx.y its rows, so the
// blocks that run together share rows of A (one BM-row panel per 4096 / BN consecutive blocks).
#pragma once
#include <cstdint>
#include <stdexcept>
#include <string>

#include "gemm/gemm.cuh"
#include "harness/device_info.cuh"

namespace mh::gemm {

// kRegsPerSm (harness/arch.hpp): the launchers check it against the device (regs_per_sm) before trusting
// a __launch_bounds__ built on it.
// Minimum resident blocks per SM to ask __launch_bounds__ for, so that ptxas keeps each thread within
// `regs` registers: the register file divided by what one block needs at that budget.
constexpr int min_blocks_for(int threads, int regs) { return kRegsPerSm / (threads * regs) > 0 ? kRegsPerSm / (threads * regs) : 1; }

// Four consecutive floats X[r][c .. c+3] of a rows x cols row-major matrix, zero outside it.
// kVec: cols % 4 == 0 and X 16-byte aligned (and c % 4 == 0), so the four are all inside or all outside
// and one 16-byte LDG.128 fetches them; else four guarded 4-byte loads.
template <bool kVec>
__device__ __forceinline__ float4 load4(const float* __restrict__ X, int rows, int cols, int r, int c) {
  if (kVec) {
    return r < rows && c < cols ? *reinterpret_cast<const float4*>(X + size_t(r) * cols + c) : make_float4(0, 0, 0, 0);
  }
  const bool in = r < rows;
  const float* x = X + size_t(r) * cols + c;
  return make_float4(in && c < cols ? x[0] : 0.f, in && c + 1 < cols ? x[1] : 0.f, in && c + 2 < cols ? x[2] : 0.f,
                     in && c + 3 < cols ? x[3] : 0.f);
}

// C[r][c .. c+3] = alpha acc (+ beta C), the elements inside C only; kVec as for load4.
template <bool kVec>
__device__ __forceinline__ void store4(float* __restrict__ C, int M, int N, int r, int c, float4 acc, float alpha,
                                       float beta) {
  if (r >= M) return;
  float* p = C + size_t(r) * N + c;
  if (kVec) {
    if (c >= N) return;
    float4 v = make_float4(alpha * acc.x, alpha * acc.y, alpha * acc.z, alpha * acc.w);
    if (beta != 0.f) {
      const float4 old = *reinterpret_cast<const float4*>(p);
      v.x += beta * old.x, v.y += beta * old.y, v.z += beta * old.z, v.w += beta * old.w;
    }
    *reinterpret_cast<float4*>(p) = v;
    return;
  }
  const float a[4] = {acc.x, acc.y, acc.z, acc.w};
#pragma unroll
  for (int j = 0; j < 4; ++j)
    if (c + j < N) store_c(p + j, a[j], alpha, beta);
}

// Whether a problem can take the 16-byte path: rows of A and B (K and N floats) and of C start on
// 16-byte boundaries. Otherwise the same kernel runs its scalar path (same tiles, guarded 4-byte accesses).
inline bool vectorizable(const Gemm& g) {
  const auto aligned = [](const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; };
  return g.K % 4 == 0 && g.N % 4 == 0 && aligned(g.A) && aligned(g.B) && aligned(g.C);
}

// Lets `kernel` use `bytes` of dynamic shared memory: above the 48 KiB default it needs the opt-in,
// which this device must offer. Throws one line otherwise.
template <class Kernel>
void allow_dynamic_smem(Kernel kernel, size_t bytes, const char* name) {
  const DeviceFacts& f = current_device_facts();
  if (f.regs_per_sm != kRegsPerSm)
    throw std::runtime_error(std::string(name) + ": built for " + std::to_string(kRegsPerSm) +
                             " registers per SM, the device has " + std::to_string(f.regs_per_sm));
  if (bytes <= f.smem_per_block_bytes) return;
  if (bytes > f.smem_per_block_optin_bytes)
    throw std::runtime_error(std::string(name) + " needs " + std::to_string(bytes) +
                             " bytes of shared memory per block; the device allows " +
                             std::to_string(f.smem_per_block_optin_bytes));
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
}

// Launches kernel(M, N, K, alpha, A, B, beta, C) over the BM x BN tiles of C (nothing for an empty C).
template <class Kernel>
void launch_blocktiles(Kernel kernel, int BM, int BN, int threads, size_t dyn_smem, const Gemm& g, cudaStream_t s,
                       const char* name) {
  if (g.M == 0 || g.N == 0) return;
  const dim3 grid((g.N + BN - 1) / BN, (g.M + BM - 1) / BM);
  kernel<<<grid, threads, dyn_smem, s>>>(g.M, g.N, g.K, g.alpha, g.A, g.B, g.beta, g.C);
  CUDA_CHECK_LAUNCH(name);
}

}  // namespace mh::gemm

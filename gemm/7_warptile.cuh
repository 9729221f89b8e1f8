// Kernel 7, warp tiling: kernel 6's transposed, 16-byte tiles, with the thread -> C map organised by
// warp. The block's BM x BN tile splits into (BM / WM) x (BN / WN) warp tiles; a warp covers its WM x WN
// tile in MITER x NITER sub-tiles of (LM * 4) x (LN * 4), lane = (lm, ln) (LaneMap below; row-major:
// (lane / LN, lane % LN)) owning a 4x4 patch of each sub-tile: rows wm0 + i (LM 4) + 4 lm + r, columns
// wn0 + j (LN 4) + 4 ln + c.
// Default (kernel 7): BM = BN = 128, BK = 16, WM = 32, WN = 64, LN = 8 -> MITER = NITER = 2, 8 warps,
// 256 threads, 8x8 accumulators per thread.
//   Global loads, float4 f = t + threads i: A[f / (BK/4)][4 (f % (BK/4)) ..] (a warp: 32 / (BK/4) rows,
//   BK * 4 bytes each, whole sectors) and B[f / (BN/4)][4 (f % (BN/4)) ..] (512 consecutive bytes):
//   coalesced LDG.128.
//   Shared stores: B as STS.128 of 512 consecutive bytes (4 wavefronts, the minimum); A transposed,
//   As[4 (f % (BK/4)) + j][f / (BK/4)], four STS per float4, BK/4 lanes per bank: (BK/4)-way conflicts,
//   BM * BK / threads stores per thread and tile, against 2 (MITER + NITER) BK reads.
//   Shared reads, per k: MITER LDS.128 of As[k][...] and NITER of Bs[k][...]. In a quarter-warp (8 lanes)
//   of a B read the lanes hold 8 consecutive float4 (LN = 8): 128 bytes, all 32 banks; every quarter-warp
//   asks for the same 128 bytes, and Nsight Compute counts 4 wavefronts per B read. An A read is one float4
//   per quarter-warp (a broadcast), 4 distinct over the warp: two quarter-warps share a wavefront, 2 per A
//   read (the pairing rule of model/gemm_model.hpp's gemm_lds_wavefronts, read off ncu's counts of kernels
//   7 and 8: docs/families/gemm.md). So per k a warp spends 2 MITER + 4 NITER wavefronts on 16 MITER NITER
//   FFMA (12 for 64 at the default), the shared pipe at 3/4 of FFMA issue.
//   The C stores: LN lanes x 16 bytes of each row, 128 bytes: whole lines.
// kStages = 1: load tile, barrier, compute, barrier (kernel 7). kStages = 2 (the tuned kernel 8): two
// shared buffers; the next tile's float4s are loaded into registers before the math on the current one
// and stored to the other buffer after it, one barrier per tile, global latency hidden behind the FFMAs.
// The 16-byte path needs K % 4 == 0 and N % 4 == 0; otherwise the same kernel runs guarded 4-byte loads
// and stores (kVec = false), so any M, N, K works (zero-filled tile edges, guarded stores).
// __launch_bounds__: up to 64 accumulators per thread -> a 128-register budget (two 256-thread blocks
// per SM), more -> 255. Shared memory is dynamic; above 48 KiB it takes the checked opt-in.
#pragma once
#include "gemm/blocktile.cuh"

namespace mh::gemm {

// The index maps (gemm/tile_maps.hpp: a_load, b_load, as_word, bs_word, warptile_origin, warptile_patch) and
// the shapes of kernels 7 and 8 (kWarptile, kWarptileTuned) are shared with the counting model.
// Lane -> (lm, ln) within a sub-tile (LaneMap, tile_maps.hpp warptile_lane). Row-major: (lane / LN, lane % LN).
// Checkerboard (LN = 4, LM = 8): lane = 16 h + 8 p + q -> lm = 4 h + q / 2, ln = 2 (q % 2) + (q / 2 + p) % 2, so
// that the two quarter-warps of each half (p = 0, 1) hold the same four rows and the same four columns between
// them (the pairs with lm + ln even, then odd): both ask for the same words, and the second rides on the
// first's wavefront for A and for B alike (by model/bank_model.hpp's pairing; model/gemm_model.hpp's
// gemm_lds_wavefronts counts such 8-16-word quarter-warps as it counts the row-major map's, unmeasured).

template <int BM_, int BN_, int BK_, int WM_, int WN_, int LN_, int kStages_, LaneMap kMap_ = LaneMap::row_major>
struct WarptileConfig {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, LN = LN_, kStages = kStages_;
  static constexpr LaneMap kMap = kMap_;
  static_assert(kMap == LaneMap::row_major || LN == 4, "the checkerboard map is for 8 x 4 lanes");
  static constexpr int TM = 4, TN = 4;  // one float4 of A and one of B per lane and sub-tile
  static constexpr int LM = 32 / LN, SUBM = LM * TM, SUBN = LN * TN;
  static constexpr int MITER = WM / SUBM, NITER = WN / SUBN;
  static constexpr int kThreads = 32 * (BM / WM) * (BN / WN);
  static constexpr int kALoads = BM * BK / 4 / kThreads, kBLoads = BK * BN / 4 / kThreads;  // float4s per thread
  static constexpr int kAcc = MITER * TM * NITER * TN;
  static constexpr int kRegBudget = kAcc <= 64 ? 128 : 255;
  static constexpr int kMinBlocks = min_blocks_for(kThreads, kRegBudget);
  static constexpr int kStageFloats = BK * (BM + BN);
  static constexpr size_t kSmemBytes = size_t(kStages) * kStageFloats * sizeof(float);
  static_assert(32 % LN == 0 && WM % SUBM == 0 && WN % SUBN == 0 && BM % WM == 0 && BN % WN == 0, "tile shapes");
  static_assert(BK % 4 == 0 && kALoads * 4 * kThreads == BM * BK && kBLoads * 4 * kThreads == BK * BN,
                "whole float4s of each tile per thread");
  static_assert(kStages == 1 || kStages == 2, "one or two shared buffers");
  // As gemm/tile_maps.hpp's maps take it.
  static constexpr TileShape shape() {
    TileShape s;
    s.BM = BM, s.BN = BN, s.BK = BK, s.threads = kThreads, s.TM = TM, s.TN = TN, s.load_floats = 4, s.a_transposed = true;
    s.stages = kStages, s.WM = WM, s.WN = WN, s.LN = LN, s.lanes = kMap;
    return s;
  }
  static_assert(tiles_evenly(shape()), "the maps' assumptions");
  static std::string describe() {
    return "BM=" + std::to_string(BM) + " BN=" + std::to_string(BN) + " BK=" + std::to_string(BK) + " WM=" +
           std::to_string(WM) + " WN=" + std::to_string(WN) + " LN=" + std::to_string(LN) + " TM=4 TN=4 stages=" +
           std::to_string(kStages) + " threads=" + std::to_string(kThreads) +
           (kMap == LaneMap::checkerboard ? " lanes=checkerboard" : " lanes=row_major");
  }
};

// Kernel 7's shape as a configuration; kernel 8's: gemm/8_warptile_tuned.cuh.
template <const TileShape& S>
using WarptileOf = WarptileConfig<S.BM, S.BN, S.BK, S.WM, S.WN, S.LN, S.stages, S.lanes>;
using WarptileDefault = WarptileOf<kWarptile>;

// One tile's float4s of A and B in registers, on their way from global to shared memory.
template <class Cfg>
struct WarptileRegs {
  float4 a[Cfg::kALoads], b[Cfg::kBLoads];
};

// This thread's float4s of the tiles at k = t (zero-filled past the edges when !kVec).
template <class Cfg, bool kVec>
__device__ __forceinline__ void warptile_fetch(WarptileRegs<Cfg>& r, const float* __restrict__ A,
                                               const float* __restrict__ B, int M, int N, int K, int row0, int col0,
                                               int t) {
  constexpr TileShape kShape = Cfg::shape();
#pragma unroll
  for (int i = 0; i < Cfg::kALoads; ++i) {
    const TileElem e = a_load(kShape, threadIdx.x, i);
    r.a[i] = load4<kVec>(A, M, K, row0 + e.row, t + e.col);
  }
#pragma unroll
  for (int i = 0; i < Cfg::kBLoads; ++i) {
    const TileElem e = b_load(kShape, threadIdx.x, i);
    r.b[i] = load4<kVec>(B, K, N, t + e.row, col0 + e.col);
  }
}

// The registers into a stage: A transposed word by word, B as float4s.
template <class Cfg>
__device__ __forceinline__ void warptile_stash(const WarptileRegs<Cfg>& r, float* As) {
  constexpr TileShape kShape = Cfg::shape();
  float* Bs = As + Cfg::BK * Cfg::BM;
#pragma unroll
  for (int i = 0; i < Cfg::kALoads; ++i) {
    const TileElem e = a_load(kShape, threadIdx.x, i);
    As[as_word(kShape, {e.row, e.col + 0})] = r.a[i].x;
    As[as_word(kShape, {e.row, e.col + 1})] = r.a[i].y;
    As[as_word(kShape, {e.row, e.col + 2})] = r.a[i].z;
    As[as_word(kShape, {e.row, e.col + 3})] = r.a[i].w;
  }
#pragma unroll
  for (int i = 0; i < Cfg::kBLoads; ++i)
    *reinterpret_cast<float4*>(Bs + bs_word(kShape, b_load(kShape, threadIdx.x, i))) = r.b[i];
}

// A stage's BK steps into the accumulators of the thread whose sub-tile (0, 0) patch starts at o.
template <class Cfg>
__device__ __forceinline__ void warptile_compute(float (&acc)[Cfg::MITER * Cfg::TM][Cfg::NITER * Cfg::TN],
                                                 const float* As, TileElem o) {
  constexpr int TM = Cfg::TM, TN = Cfg::TN, MITER = Cfg::MITER, NITER = Cfg::NITER;
  constexpr TileShape kShape = Cfg::shape();
  const float* Bs = As + Cfg::BK * Cfg::BM;
#pragma unroll
  for (int k = 0; k < Cfg::BK; ++k) {
    float a[MITER * TM], b[NITER * TN];
#pragma unroll
    for (int i = 0; i < MITER; ++i)
      *reinterpret_cast<float4*>(&a[i * TM]) =
          *reinterpret_cast<const float4*>(As + as_word(kShape, {warptile_patch(kShape, o, i, 0).row, k}));
#pragma unroll
    for (int j = 0; j < NITER; ++j)
      *reinterpret_cast<float4*>(&b[j * TN]) =
          *reinterpret_cast<const float4*>(Bs + bs_word(kShape, {k, warptile_patch(kShape, o, 0, j).col}));
#pragma unroll
    for (int m = 0; m < MITER * TM; ++m)
#pragma unroll
      for (int n = 0; n < NITER * TN; ++n) acc[m][n] = fmaf(a[m], b[n], acc[m][n]);
  }
}

template <class Cfg, bool kVec>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks)
warptile_kernel(int M, int N, int K, float alpha, const float* __restrict__ A, const float* __restrict__ B,
                float beta, float* __restrict__ C) {
  constexpr int BK = Cfg::BK, TM = Cfg::TM, TN = Cfg::TN, MITER = Cfg::MITER, NITER = Cfg::NITER;
  constexpr TileShape kShape = Cfg::shape();
  extern __shared__ float4 smem4[];  // stage s: As = [BK][BM] (A transposed), then Bs = [BK][BN]
  float* const smem = reinterpret_cast<float*>(smem4);
  const TileElem o = warptile_origin(kShape, threadIdx.x);  // this thread's patch of sub-tile (0, 0)
  const int row0 = blockIdx.y * Cfg::BM, col0 = blockIdx.x * Cfg::BN;
  WarptileRegs<Cfg> regs;
  auto fetch = [&](int t) { warptile_fetch<Cfg, kVec>(regs, A, B, M, N, K, row0, col0, t); };
  auto stage = [&](int s) { return smem + s * Cfg::kStageFloats; };

  float acc[MITER * TM][NITER * TN] = {};
  const int tiles = (K + BK - 1) / BK;
  if (tiles > 0) {
    fetch(0);
    warptile_stash<Cfg>(regs, stage(0));
  }
  __syncthreads();
  for (int t = 0; t < tiles; ++t) {
    if (Cfg::kStages == 2) {
      const int s = t & 1;
      if (t + 1 < tiles) fetch((t + 1) * BK);  // in flight during the math
      warptile_compute<Cfg>(acc, stage(s), o);
      if (t + 1 < tiles) warptile_stash<Cfg>(regs, stage(s ^ 1));  // s ^ 1 was last read before the previous barrier
      __syncthreads();
    } else {
      warptile_compute<Cfg>(acc, stage(0), o);
      __syncthreads();  // everyone is done reading before the next tile overwrites it
      if (t + 1 < tiles) {
        fetch((t + 1) * BK);
        warptile_stash<Cfg>(regs, stage(0));
      }
      __syncthreads();
    }
  }

#pragma unroll
  for (int i = 0; i < MITER; ++i)
#pragma unroll
    for (int r = 0; r < TM; ++r)
#pragma unroll
      for (int j = 0; j < NITER; ++j) {
        const float* v = &acc[i * TM + r][j * TN];
        const TileElem e = warptile_patch(kShape, o, i, j);
        store4<kVec>(C, M, N, row0 + e.row + r, col0 + e.col, make_float4(v[0], v[1], v[2], v[3]), alpha, beta);
      }
}

template <class Cfg>
void launch_warptile(const Gemm& g, cudaStream_t s = nullptr) {
  if (vectorizable(g)) {
    allow_dynamic_smem(warptile_kernel<Cfg, true>, Cfg::kSmemBytes, "warptile_kernel");
    launch_blocktiles(warptile_kernel<Cfg, true>, Cfg::BM, Cfg::BN, Cfg::kThreads, Cfg::kSmemBytes, g, s,
                      "warptile_kernel<vec>");
  } else {
    allow_dynamic_smem(warptile_kernel<Cfg, false>, Cfg::kSmemBytes, "warptile_kernel");
    launch_blocktiles(warptile_kernel<Cfg, false>, Cfg::BM, Cfg::BN, Cfg::kThreads, Cfg::kSmemBytes, g, s,
                      "warptile_kernel<scalar>");
  }
}

template <class Cfg>
KernelLaunch describe_warptile(const Gemm& g) {
  const bool v = vectorizable(g);
  return {v ? reinterpret_cast<const void*>(warptile_kernel<Cfg, true>)
            : reinterpret_cast<const void*>(warptile_kernel<Cfg, false>),
          Cfg::kThreads, Cfg::kSmemBytes, Cfg::describe() + (v ? " vec=16B" : " vec=4B")};
}

}  // namespace mh::gemm

// Kernel 8, tuned warp tiling: kernel 7 (gemm/7_warptile.cuh) with two shared buffers (the next tile's
// loads in flight during the math, one barrier per tile) and the tile shape that won a sweep on the H200
// at 4096^3: gemm/sweep/ (sweep.cuh), built with -DMH_GEMM_SWEEP=ON, times each candidate
// (gemm_sweep/warptile/...), and the fastest is written into gemm/tile_maps.hpp (kWarptileTuned, which the
// counting model reads too). Its parameters are the benchmark's label in the JSON ("BM=... stages=2 threads=...").
// The winner (H200, 2026-11-30): BM = BN = 128, BK = 8, 4 warps of 32 x 128 (WM x WN), LN = 8, so
// MITER = 2, NITER = 4: an 8 x 16 patch of C per thread, 128 threads. Per k a warp issues 2 + 4 LDS.128,
// 2 x 2 + 4 x 4 = 20 wavefronts for 128 FFMA (kernel 7: 12 for 64; ncu counts both), the shared pipe at
// 5/8 of the FFMA issue time. 128 accumulators take ptxas to 193 registers (no spills; 201 before its load
// indices became unsigned shifts): two 128-thread blocks, 8 warps per SM (blocks_per_sm, regs_per_thread in
// the JSON). In the sweep every 128 x 256 and 256 x 128 tile
// (one block per SM) lost, BK = 8 beat BK = 16 for the same warp tile, two stages beat one, and the
// checkerboard lane map beat the row-major one for the same 64 x 32 warp tile (the bank model's
// wavefront count said it should; the pairing rule read off ncu since counts them alike, unmeasured on
// that map), without reaching the 32 x 128 warp tile.
// Included once, by gemm/gemm.cu; the tests reach it through gemm_kernels().
#pragma once
#include "gemm/7_warptile.cuh"

namespace mh::gemm {

using WarptileTuned = WarptileOf<kWarptileTuned>;  // the shape: gemm/tile_maps.hpp

}  // namespace mh::gemm

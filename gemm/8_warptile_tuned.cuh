// Kernel 8, tuned warp tiling: kernel 7 (gemm/7_warptile.cuh) with two shared buffers (the next tile's
// loads in flight during the math, one barrier per tile) and the tile shape that won a sweep on the H200
// at 4096^3: gemm/sweep/ (sweep.cuh), built with -DMH_GEMM_SWEEP=ON, times each candidate
// (gemm_sweep/warptile/...), and the winner is written here. Its parameters are the benchmark's label
// in the JSON ("BM=... stages=2 threads=...").
// Included once, by gemm/gemm.cu; the tests reach it through gemm_kernels().
#pragma once
#include "gemm/7_warptile.cuh"

namespace mh::gemm {

using WarptileTuned = WarptileConfig<128, 128, 16, 32, 64, 8, 2>;

}  // namespace mh::gemm

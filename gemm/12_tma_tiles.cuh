// Kernel 12's tile stream without its wgmma (issue 30): the copy-only run of kernel 12's own TMA pipeline loop
// (gemm/tc_sm90a.cuh's tma_pipeline) over the same tensor maps (sm90::tile_map, 128 x 64 boxes, 128-byte
// swizzle), stages, threads, dynamic shared memory (hence blocks per SM) and grid raster (ceil(M / 128) x
// ceil(N / 128), blockIdx.x along M) as gemm/12_wgmma_tma_sm90a.cu. Its consume step folds one word of each
// landed A tile and B tile into the block's checksum (thread 0; the tiles are read, so a missing or misplaced
// tile shows), which the host reproduces from its copy of the BF16 inputs (tma_tiles_sums). It measures the
// rate at which that loop's tiles arrive: neighbouring blocks' concurrent requests for the same tile merge
// before the L2 slices, so it can pass the L2 read roof (docs/families/async-copy.md, "GEMM tiles").
// Benchmark: gemm/bench_tma_tiles.cu, async/tma/l2/bandwidth/kind:gemm_tiles/m:M/n:N/k:K.
#pragma once
#include <cstdint>
#include <vector>

#include "gemm/tc_gemm.cuh"
#include "gemm/tc_shape.hpp"

namespace mh::gemm::tc {

// The fold (FNV-1a over 32-bit words: order matters, so a tile out of place changes it) and its start.
constexpr uint32_t kTileFoldSeed = 2166136261u;
__host__ __device__ inline uint32_t tile_fold(uint32_t sum, uint32_t word) { return (sum ^ word) * 16777619u; }
// The word tile t's consume step folds from each of its A and B tiles: the first two elements (k0, k0 + 1) of row
// t % 128 of the 128-row box, at byte offset tile_word_offset(t) of the swizzled stage (128-byte swizzle: chunk
// c of row r at c ^ (r % 8); chunk 0 of row r at r % 8).
__host__ __device__ inline int tile_word_row(int t) { return t % BM; }
__host__ __device__ inline uint32_t tile_word_offset(int t) {
  const uint32_t r = static_cast<uint32_t>(tile_word_row(t));
  return r * 128 + (r % 8) * 16;
}

// Blocks of a launch (the GEMM's grid) and k-tiles each block streams.
inline int tma_tiles_blocks(int M, int N) { return ((M + BM - 1) / BM) * ((N + BN - 1) / BN); }
__host__ __device__ inline int tma_tiles_per_block(int K) { return (K + BK - 1) / BK; }
// Bytes a launch delivers into shared memory: every block's A and B tile of every k-step (the 16 KiB boxes,
// zero-filled parts outside the matrix included: TMA writes them too).
inline double tma_tiles_bytes(int M, int N, int K) {
  return double(tma_tiles_blocks(M, N)) * tma_tiles_per_block(K) * 2.0 * BM * BK * 2;
}

// The copy kernel's row in the form of the ladder's table (name "tma_tiles", kernel 12's threads, tile, shared
// memory, __launch_bounds__; no GEMM launch): tc_compiled_out, tc_planned_residency and tc_compiled_residency
// take it as they take kernel 12's.
const TcKernel& tma_tiles_kernel();
// One launch over A (M x K) and B (N x K) of g (C unused): sums[blockIdx.y * gridDim.x + blockIdx.x] = that block's
// checksum. K % 8 == 0 and K > 0 (the tensor maps), else std::invalid_argument.
void launch_tma_tiles(const TcGemm& g, uint32_t* sums);
// The host's checksums of that launch from host copies of A and B (elements outside the matrix fold as TMA's zeros).
std::vector<uint32_t> tma_tiles_sums(const std::vector<bf16>& A, const std::vector<bf16>& B, int M, int N, int K);

}  // namespace mh::gemm::tc

// The BF16 tensor-core ladder's geometry, written once: block tiles, warp tiles, pipeline depths, thread counts
// and the shared-memory layouts' index formulas of kernels 9-15 (gemm/9_wmma.cuh ... gemm/15_wgmma_multicast_sm90a.cu).
// Plain C++ (no CUDA headers): the kernels include it through gemm/tc_tile.cuh, gemm/12_wgmma_tma.cuh and
// gemm/13_wgmma_ws.cuh, and the counting model (model/tc_gemm_model.hpp) and its host tests include it as is.
#pragma once
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define MH_TC_HD __host__ __device__ __forceinline__
#else
#define MH_TC_HD inline
#endif

namespace mh::gemm::tc {

// Kernels 9-11 (gemm/tc_tile.cuh): block tile 128 x 128 of C, K in steps of BK = 64, 256 threads = 8 warps as
// 2 (M) x 4 (N), each warp 64 x 32 of C; __launch_bounds__(256, 2).
constexpr int BM = 128, BN = 128, BK = 64, kThreads = 256, kMinBlocks = 2;
constexpr int WM = 64, WN = 32, kWarpsN = BN / WN;  // warp w covers rows (w / 4) * 64, columns (w % 4) * 32
constexpr int kMTiles = WM / 16, kNTiles = WN / 8;   // m16n8k16 tiles per warp: 4 x 4
constexpr int kRowChunks = BK / 8;                   // 16-byte chunks per tile row
constexpr int kChunksPerThread = BM * kRowChunks / kThreads;
static_assert(BM == BN, "one copy routine serves the A and the B tile");
static_assert(BM * kRowChunks % kThreads == 0, "every thread copies the same number of chunks");
static_assert((BM / WM) * kWarpsN * 32 == kThreads, "the warps tile the block");

// How a tile's rows sit in shared memory (gemm/tc_tile.cuh says why each exists).
enum class Layout { plain, padded, swizzled };
template <Layout L>
constexpr int kRowBytes = L == Layout::padded ? (BK + 8) * 2 : BK * 2;
template <Layout L>
constexpr int kTileBytes = BM * kRowBytes<L>;

// Byte offset of chunk `chunk` (8 BF16, k = 8 chunk ... 8 chunk + 7) of tile row `row`: the one place the
// layouts are written down; the copies, the fragment loads and the model all go through it.
template <Layout L>
MH_TC_HD uint32_t chunk_offset(int row, int chunk) {
  const int c = L == Layout::swizzled ? chunk ^ (row % 8) : chunk;
  return static_cast<uint32_t>(row * kRowBytes<L> + c * 16);
}
// One buffer of kernel 11's shared-memory ring (gemm/tc_tile.cuh, cp_async_pipeline): the A tile, then the B tile.
constexpr int kStageBytes = 2 * kTileBytes<Layout::swizzled>;

// The tile row and chunk that lane `lane` of a warp addresses in its ldmatrix .x4 of k16 step `ks`
// (gemm/tc_tile.cuh, mma_block_tile, says why): for A fragment mi (rows wm0 + 16 mi ...) and for the pair of
// B fragments nj (rows n = wn0 + 16 nj ...).
struct TilePos {
  int row, chunk;
};
// Warp `warp`'s WM x WN tile of the block tile: its first row (A, C) and first column (B, C).
MH_TC_HD int warp_m0(int warp) { return (warp / kWarpsN) * WM; }
MH_TC_HD int warp_n0(int warp) { return (warp % kWarpsN) * WN; }
MH_TC_HD TilePos ldsm_a_pos(int wm0, int mi, int ks, int lane) {
  return {wm0 + mi * 16 + lane % 8 + 8 * ((lane / 8) % 2), 2 * ks + lane / 16};
}
MH_TC_HD TilePos ldsm_b_pos(int wn0, int nj, int ks, int lane) {
  return {wn0 + nj * 16 + lane % 8 + 8 * (lane / 16), 2 * ks + (lane / 8) % 2};
}
// Per warp and k16 step: ldmatrix .x4 of A (one per m16 tile) and of B (one per two n8 tiles).
constexpr int kLdsmA = kMTiles, kLdsmB = kNTiles / 2;

// Kernel 9's WMMA: 16 x 16 x 16 fragments, WM / 16 x WN / 16 per warp and k16 step.
constexpr int kWmmaEdge = 16;

// Kernel 11 and its one-stage ablation 11a.
constexpr int kCpAsyncStages = 3;
constexpr int kCpAsyncAblationStages = 1;

// Kernel 12 (gemm/12_wgmma_tma.cuh): kernel 11's block tile, two warpgroups of wgmma m64n128k16, 3 stages.
constexpr int kWgmmaStages = 3;
constexpr int kWgmmaThreads = 256;
constexpr int kWgmmaMinBlocks = 2;
constexpr int kWgmmaM = 64, kWgmmaK = 16;  // wgmma's fixed m and k (BF16)
constexpr int kWgmmaN = BN;                // kernel 12's n: a warpgroup's 64 rows x the whole B tile

// Kernels 13-15 (gemm/13_wgmma_ws.cuh): block tile 128 x 256, two consumer warpgroups of m64n256k16.
constexpr int kWsBM = 128, kWsBN = 256, kWsBK = 64;
constexpr int kWsStages = 4;
constexpr int kWsThreads = 384;
constexpr int kWsMinBlocks = 1;
constexpr int kWsConsumerWarpgroups = 2;
constexpr int kWsN = kWsBN;  // a consumer warpgroup's wgmma n
constexpr size_t kWsATileBytes = size_t(kWsBM) * kWsBK * 2;  // 16 KiB
constexpr size_t kWsBTileBytes = size_t(kWsBN) * kWsBK * 2;  // 32 KiB
constexpr size_t kWsStageBytes = kWsATileBytes + kWsBTileBytes;
constexpr int kPersistentGroupM = 16;  // kernel 14's grouped walk
constexpr int kMulticastCluster = 2;   // kernel 15: blocks per cluster sharing (multicasting) the B tile
static_assert(kWsBM == kWsConsumerWarpgroups * kWgmmaM, "each consumer warpgroup owns 64 rows");

}  // namespace mh::gemm::tc

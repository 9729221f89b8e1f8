#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "micro/mma_ldmatrix.cuh"

#include "gemm/tc_tile.cuh"
#include "harness/cuda_check.cuh"

namespace mh::tensor::mix {
namespace {

using namespace mh::gemm::tc;
using mh::gemm::bf16;
constexpr Layout kLayout = Layout::swizzled;  // the layout of kernels 10 and 11
constexpr uint32_t kTileBytesSw = kTileBytes<kLayout>;

// BF16 bits of a small integer (exact).
MH_TC_HD uint16_t bf16_bits(int v) {
  const float f = static_cast<float>(v);
  uint32_t u;
  memcpy(&u, &f, 4);
  return static_cast<uint16_t>(u >> 16);
}

// Byte offset, in the A-then-B tiles, of element k of row `row` of tile b_tile (the kernels' chunk_offset).
MH_TC_HD uint32_t element_offset(bool b_tile, int row, int k) {
  return (b_tile ? kTileBytesSw : 0u) + chunk_offset<kLayout>(row, k / 8) + 2 * (k % 8);
}

__device__ void fill_tiles(uint8_t* tiles) {
  for (int i = threadIdx.x; i < 2 * BM * BK; i += blockDim.x) {
    const bool b_tile = i >= BM * BK;
    const int row = (i % (BM * BK)) / BK, k = i % BK;
    *reinterpret_cast<uint16_t*>(tiles + element_offset(b_tile, row, k)) = bf16_bits(tile_value(b_tile, row, k));
  }
}

// The thread's accumulators weighted by their C elements' c_weight (m16n8 C fragment: gemm/tc_tile.cuh).
__device__ unsigned long long acc_sum(const WarpAcc& acc, int wm0, int wn0) {
  const int lane = threadIdx.x % 32;
  long long s = 0;
#pragma unroll
  for (int mi = 0; mi < kMTiles; ++mi)
#pragma unroll
    for (int ni = 0; ni < kNTiles; ++ni)
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const mh::model::RowCol e = mh::model::mma_c_element(lane, i);
        s += __float2ll_rn(acc[mi][ni][i]) * c_weight(wm0 + mi * 16 + e.row, wn0 + ni * 8 + e.col);
      }
  return static_cast<unsigned long long>(s);
}

// One kind's timed loop (not unrolled: each trip's ldmatrix read distinct addresses, the next trip the same
// ones again, as the kernels' loop over block tiles does); returns the thread's checksum.
template <Kind K>
__device__ unsigned long long timed_loop(const uint8_t* tiles, int trips, int wm0, int wn0) {
  const uint32_t a_base = smem_addr(tiles), b_base = a_base + kTileBytesSw;
  if constexpr (K == Kind::mix) {
    WarpAcc acc = {};
#pragma unroll 1
    for (int t = 0; t < trips; ++t) mma_block_tile<kLayout>(tiles, tiles + kTileBytesSw, acc, wm0, wn0);
    return acc_sum(acc, wm0, wn0);
  } else if constexpr (K == Kind::ldmatrix) {
    uint32_t sum = 0;
#pragma unroll 1
    for (int t = 0; t < trips; ++t)
#pragma unroll
      for (int ks = 0; ks < kStepsPerTrip; ++ks) {
        uint32_t a[kMTiles][4], b[kNTiles][2];
        load_step_fragments<kLayout>(a_base, b_base, wm0, wn0, ks, a, b);
#pragma unroll
        for (int mi = 0; mi < kMTiles; ++mi) sum += a[mi][0] + a[mi][1] + a[mi][2] + a[mi][3];
#pragma unroll
        for (int ni = 0; ni < kNTiles; ++ni) sum += b[ni][0] + b[ni][1];
      }
    return sum;
  } else {
    uint32_t a[kMTiles][4], b[kNTiles][2];
    load_step_fragments<kLayout>(a_base, b_base, wm0, wn0, 0, a, b);
    WarpAcc acc = {};
#pragma unroll 1
    for (int t = 0; t < trips; ++t) {
      // Opaque, free at run time: the fragments are not loop-invariant to ptxas (nothing hoisted or merged).
#pragma unroll
      for (int mi = 0; mi < kMTiles; ++mi) asm volatile("" : "+r"(a[mi][0]), "+r"(a[mi][1]), "+r"(a[mi][2]), "+r"(a[mi][3]));
#pragma unroll
      for (int ni = 0; ni < kNTiles; ++ni) asm volatile("" : "+r"(b[ni][0]), "+r"(b[ni][1]));
#pragma unroll
      for (int ks = 0; ks < kStepsPerTrip; ++ks) mma_step(acc, a, b);
    }
    return acc_sum(acc, wm0, wn0);
  }
}

template <Kind K>
__global__ void __launch_bounds__(kThreads, kMinBlocks) mix_kernel(int trips, unsigned long long* sums, ClockSpan* spans) {
#if MH_TC_SM80
  extern __shared__ __align__(128) uint8_t tiles[];
  fill_tiles(tiles);
  __syncthreads();
  const int warp = threadIdx.x / 32, wm0 = warp_m0(warp), wn0 = warp_n0(warp);  // the kernels' warp tiles
  const long long c0 = clock64(), n0 = global_ns();
  const unsigned long long sum = timed_loop<K>(tiles, trips, wm0, wn0);
  const long long c1 = clock64(), n1 = global_ns();
  if (threadIdx.x == 0) spans[blockIdx.x] = {c1 - c0, n1 - n0};
  sums[size_t(blockIdx.x) * kThreads + threadIdx.x] = sum;
#endif
}

const void* kernel_of(Kind k) {
  switch (k) {
    case Kind::mix: return reinterpret_cast<const void*>(mix_kernel<Kind::mix>);
    case Kind::ldmatrix: return reinterpret_cast<const void*>(mix_kernel<Kind::ldmatrix>);
    case Kind::mma: return reinterpret_cast<const void*>(mix_kernel<Kind::mma>);
  }
  throw std::invalid_argument("unknown mma_ldmatrix kind");
}

void allow_smem(Kind k, size_t smem) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel_of(k), cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
}

// The 32-bit word at byte `offset` of the tiles, as the host builds them.
uint32_t tile_word(uint32_t offset) {
  uint32_t w = 0;
  for (int half = 0; half < 2; ++half) {
    const uint32_t byte = offset + 2 * half;
    const bool b_tile = byte >= kTileBytesSw;
    const uint32_t in_tile = byte - (b_tile ? kTileBytesSw : 0), row = in_tile / kRowBytes<kLayout>;
    const uint32_t stored_chunk = in_tile % kRowBytes<kLayout> / 16;
    const uint32_t chunk = stored_chunk ^ (row % 8);  // the swizzle is its own inverse
    const int k = static_cast<int>(chunk * 8 + in_tile % 16 / 2);
    w |= static_cast<uint32_t>(bf16_bits(tile_value(b_tile, static_cast<int>(row), k))) << (16 * half);
  }
  return w;
}


// The copy kinds' kernel: kernels 11 / 11a's loop (cp_async_pipeline) over `trips` tiles of the L2-resident
// set; block b's panels and trip t's k tile as micro/mma_ldmatrix.cuh says.
template <CopyKind K, int kStages>
__global__ void __launch_bounds__(kThreads, kMinBlocks)
    copy_kernel(const bf16* A, const bf16* B, int trips, unsigned long long* sums, ClockSpan* spans) {
#if MH_TC_SM80
  extern __shared__ __align__(128) uint8_t smem[];
  const int warp = threadIdx.x / 32, wm0 = warp_m0(warp), wn0 = warp_n0(warp);
  const int m0 = blockIdx.x % kSetRowBlocks * BM, n0 = blockIdx.x / kSetRowBlocks % kSetRowBlocks * BN;
  WarpAcc acc = {};
  const long long c0 = clock64(), n0s = global_ns();
  cp_async_pipeline<kStages>(
      smem, trips,
      [&](int t, uint8_t* stage) { load_stage_async(stage, A, kSetRows, B, kSetRows, kSetK, m0, n0, t % kSetTiles * BK); },
      [&](const uint8_t* stage) {
        if constexpr (K == CopyKind::mix_copy) mma_block_tile<kLayout>(stage, stage + kTileBytesSw, acc, wm0, wn0);
      });
  const long long c1 = clock64(), n1s = global_ns();
  if (threadIdx.x == 0) spans[blockIdx.x] = {c1 - c0, n1s - n0s};
  unsigned long long sum = 0;
  if constexpr (K == CopyKind::mix_copy) {
    sum = acc_sum(acc, wm0, wn0);
  } else {  // the words of this thread's chunks in every buffer (the loop's last barrier made them visible)
    uint32_t words = 0;
    for (int s = 0; s < kStages; ++s)
#pragma unroll
      for (int i = 0; i < kChunksPerThread; ++i)
        for (int tile = 0; tile < 2; ++tile) {
          const ChunkPos p = chunk_pos(i);
          const uint8_t* chunk = smem + s * kStageBytes + tile * kTileBytesSw + chunk_offset<kLayout>(p.row, p.chunk);
          const uint4 v = *reinterpret_cast<const uint4*>(chunk);
          words += v.x + v.y + v.z + v.w;
        }
    sum = words;
  }
  sums[size_t(blockIdx.x) * kThreads + threadIdx.x] = sum;
#endif
}

template <CopyKind K>
const void* copy_kernel_of(int stages) {
  if (stages == kCpAsyncStages) return reinterpret_cast<const void*>(copy_kernel<K, kCpAsyncStages>);
  if (stages == kCpAsyncAblationStages) return reinterpret_cast<const void*>(copy_kernel<K, kCpAsyncAblationStages>);
  throw std::invalid_argument("mma_ldmatrix: no copy kernel of " + std::to_string(stages) + " stages");
}

const void* kernel_of(CopyKind k, int stages) {
  return k == CopyKind::copy ? copy_kernel_of<CopyKind::copy>(stages) : copy_kernel_of<CopyKind::mix_copy>(stages);
}

void allow_smem(CopyKind k, int stages, size_t smem) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel_of(k, stages), cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
}

// The weighted C (acc_sum's weights) of warp `warp`'s tile for the set's k tile j: one trip's share of mix_copy.
long long set_tile_sum(int warp, int j) {
  const int wm0 = warp_m0(warp), wn0 = warp_n0(warp);
  long long tile = 0;
  for (int m = wm0; m < wm0 + WM; ++m)
    for (int n = wn0; n < wn0 + WN; ++n) {
      long long c = 0;
      for (int k = j * BK; k < (j + 1) * BK; ++k) c += set_value(false, m, k) * set_value(true, n, k);
      tile += c * c_weight(m, n);
    }
  return tile;
}

// The sum (mod 2^32) of the 32-bit words of the set's k tile j of A and of B (any row block: they are alike).
uint32_t set_tile_words(int j) {
  uint32_t w = 0;
  for (int b = 0; b < 2; ++b)
    for (int row = 0; row < BM; ++row)
      for (int k = j * BK; k < (j + 1) * BK; k += 2)
        w += bf16_bits(set_value(b == 1, row, k)) | static_cast<uint32_t>(bf16_bits(set_value(b == 1, row, k + 1))) << 16;
  return w;
}

}  // namespace

const char* kind_name(Kind k) { return k == Kind::mix ? "mix" : k == Kind::ldmatrix ? "ldmatrix" : "mma"; }

size_t pinning_smem(const DeviceFacts& f, int blocks_per_sm) { return mh::pinning_smem(f, blocks_per_sm, kTilesBytes); }

Residency residency(Kind k, size_t smem) {
  allow_smem(k, smem);
  return compiled_residency(kernel_of(k), kThreads, smem);
}

std::string compiled_out(Kind k) { return compiled_out_reason(kernel_of(k), 800, "mma.sync m16n8k16 bf16 / ldmatrix"); }

int trips_for(int warps_per_sm, double target_clocks) {
  constexpr double kClocksPerWarpStep = 24.0;
  return std::max(1, static_cast<int>(target_clocks / (kClocksPerWarpStep * warps_per_sm * kStepsPerTrip)));
}

void launch(Kind k, int blocks, size_t smem, int trips, unsigned long long* sums, ClockSpan* spans, cudaStream_t s) {
  if (smem < kTilesBytes) throw std::invalid_argument("mma_ldmatrix: shared memory below the two tiles");
  if (blocks < 1 || trips < 1) throw std::invalid_argument("mma_ldmatrix: blocks and trips must be >= 1");
  allow_smem(k, smem);
  void* args[] = {&trips, &sums, &spans};
  CUDA_CHECK(cudaLaunchKernel(kernel_of(k), dim3(blocks), dim3(kThreads), args, smem, s));
  CUDA_CHECK_LAUNCH("mma_ldmatrix mix_kernel");
}

unsigned long long expected_warp_sum(Kind k, int warp, int trips) {
  const int wm0 = warp_m0(warp), wn0 = warp_n0(warp);
  if (k == Kind::ldmatrix) {  // every lane gives one 16-byte row address per ldmatrix; its 4 words go to 4 lanes
    uint32_t per_trip = 0;
    for (int ks = 0; ks < kStepsPerTrip; ++ks)
      for (int lane = 0; lane < 32; ++lane) {
        for (int mi = 0; mi < kLdsmA; ++mi) {
          const TilePos p = ldsm_a_pos(wm0, mi, ks, lane);
          for (int w = 0; w < 4; ++w) per_trip += tile_word(element_offset(false, p.row, 8 * p.chunk) + 4 * w);
        }
        for (int nj = 0; nj < kLdsmB; ++nj) {
          const TilePos p = ldsm_b_pos(wn0, nj, ks, lane);
          for (int w = 0; w < 4; ++w) per_trip += tile_word(element_offset(true, p.row, 8 * p.chunk) + 4 * w);
        }
      }
    return static_cast<uint32_t>(per_trip * static_cast<uint32_t>(trips));
  }
  // mix: every k of the tile once per trip; mma: the first k16 step's k, kStepsPerTrip times per trip; each C
  // element weighted as acc_sum does.
  const int depth = k == Kind::mix ? BK : 16, repeats = k == Kind::mix ? 1 : kStepsPerTrip;
  long long tile = 0;
  for (int m = wm0; m < wm0 + WM; ++m)
    for (int n = wn0; n < wn0 + WN; ++n) {
      long long c = 0;
      for (int kk = 0; kk < depth; ++kk) c += tile_value(false, m, kk) * tile_value(true, n, kk);
      tile += c * c_weight(m, n);
    }
  return static_cast<unsigned long long>(tile * repeats * trips);
}

std::string check_sums(Kind k, int trips, const std::vector<unsigned long long>& sums) {
  if (sums.empty() || sums.size() % kThreads) return "mma_ldmatrix: checksums of whole blocks expected";
  const int warps_per_block = kThreads / 32;
  std::vector<unsigned long long> want(warps_per_block);
  for (int w = 0; w < warps_per_block; ++w) want[w] = expected_warp_sum(k, w, trips);
  for (size_t w0 = 0; w0 < sums.size(); w0 += 32) {
    unsigned long long got = 0;
    for (size_t t = w0; t < w0 + 32; ++t) got += sums[t];
    if (k == Kind::ldmatrix) got = static_cast<uint32_t>(got);
    const int warp = static_cast<int>(w0 / 32 % warps_per_block);
    if (got != want[warp])
      return std::string("tensor/mma_ldmatrix/") + kind_name(k) + ": block " + std::to_string(w0 / kThreads) + " warp " +
             std::to_string(warp) + " sums to " + std::to_string(got) + ", the host's " + std::to_string(want[warp]);
  }
  return "";
}

const char* kind_name(CopyKind k) { return k == CopyKind::copy ? "copy" : "mix_copy"; }

bool has_stages(int stages) { return stages == kCpAsyncStages || stages == kCpAsyncAblationStages; }

std::vector<uint16_t> host_set(bool b_matrix) {
  std::vector<uint16_t> x(size_t(kSetRows) * kSetK);
  for (int r = 0; r < kSetRows; ++r)
    for (int k = 0; k < kSetK; ++k) x[size_t(r) * kSetK + k] = bf16_bits(set_value(b_matrix, r, k));
  return x;
}

Residency residency(CopyKind k, int stages, size_t smem) {
  allow_smem(k, stages, smem);
  return compiled_residency(kernel_of(k, stages), kThreads, smem);
}

std::string compiled_out(CopyKind k, int stages) {
  return compiled_out_reason(kernel_of(k, stages), 800, "cp.async / mma.sync m16n8k16 bf16 / ldmatrix");
}

void launch(CopyKind k, int stages, int blocks, size_t smem, int trips, const uint16_t* A, const uint16_t* B,
            unsigned long long* sums, ClockSpan* spans, cudaStream_t s) {
  if (smem < ring_bytes(stages)) throw std::invalid_argument("mma_ldmatrix: shared memory below the ring");
  // trips >= stages: every buffer holds a copied tile at the end; a C element's sum stays below 2^24 (exact).
  if (blocks < 1 || trips < stages || trips > (1 << 24) / (BK * 9))
    throw std::invalid_argument("mma_ldmatrix: blocks >= 1 and stages <= trips <= 2^24 / 576 expected");
  allow_smem(k, stages, smem);
  using mh::gemm::bf16;
  const bf16 *a = reinterpret_cast<const bf16*>(A), *b = reinterpret_cast<const bf16*>(B);  // BF16 bits
  void* args[] = {&a, &b, &trips, &sums, &spans};
  CUDA_CHECK(cudaLaunchKernel(kernel_of(k, stages), dim3(blocks), dim3(kThreads), args, smem, s));
  CUDA_CHECK_LAUNCH("mma_ldmatrix copy_kernel");
}

unsigned long long expected_sum(CopyKind k, int stages, int warp, int trips) {
  if (k == CopyKind::copy) {  // buffer s ends with the last tile t < trips with t % stages == s
    uint32_t w = 0;
    for (int s = 0; s < stages && s < trips; ++s) w += set_tile_words(((trips - 1 - s) / stages * stages + s) % kSetTiles);
    return w;
  }
  long long per_tile[kSetTiles];
  for (int j = 0; j < kSetTiles; ++j) per_tile[j] = set_tile_sum(warp, j);
  long long sum = 0;
  for (int t = 0; t < trips; ++t) sum += per_tile[t % kSetTiles];
  return static_cast<unsigned long long>(sum);
}

std::string check_sums(CopyKind k, int stages, int trips, const std::vector<unsigned long long>& sums) {
  if (sums.empty() || sums.size() % kThreads) return "mma_ldmatrix: checksums of whole blocks expected";
  const int warps_per_block = kThreads / 32, group = k == CopyKind::copy ? kThreads : 32;
  std::vector<unsigned long long> want(warps_per_block);
  for (int w = 0; w < warps_per_block; ++w) want[w] = expected_sum(k, stages, w, trips);
  for (size_t g0 = 0; g0 < sums.size(); g0 += group) {
    unsigned long long got = 0;
    for (size_t t = g0; t < g0 + group; ++t) got += sums[t];
    if (k == CopyKind::copy) got = static_cast<uint32_t>(got);
    const int warp = static_cast<int>(g0 / 32 % warps_per_block);
    if (got != want[warp])
      return std::string("tensor/mma_ldmatrix/") + kind_name(k) + "/stages:" + std::to_string(stages) + ": block " +
             std::to_string(g0 / kThreads) + (k == CopyKind::copy ? "" : " warp " + std::to_string(warp)) + " sums to " +
             std::to_string(got) + ", the host's " + std::to_string(want[warp]);
  }
  return "";
}

}  // namespace mh::tensor::mix

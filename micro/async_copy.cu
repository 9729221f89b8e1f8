#include <algorithm>
#include <map>
#include <type_traits>
#include <stdexcept>

#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include "micro/async_copy.cuh"

#include "harness/device_info.cuh"
#include "micro/roofs.cuh"

namespace mh::async_copy {
namespace {

// ---- PTX wrappers. Each is compiled only for the architectures that have the instruction; the plans
// skip a method elsewhere, and method_compiled() catches a build that compiled it out. ----------------

__device__ __forceinline__ uint32_t smem_addr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ long long clock_now() {
  long long t;
  asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
  return t;
}

// cp.async of W bytes: .cg (L2 only) exists for 16 bytes alone, so 4 and 8 use .ca.
template <int W>
__device__ __forceinline__ void cp_async(uint32_t dst, const void* src) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  if constexpr (W == 16)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
  else
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"(dst), "l"(src), "n"(W) : "memory");
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;" ::: "memory");
#endif
}
// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
#endif
}

// mbarrier protocol of every TMA ring here: a barrier per stage, initialised with an arrival count of
// 1. Per fill, the one producer thread arrives with expect_tx(bytes of the fill) — the phase then waits
// for that many bytes — and issues the copies, which complete_tx their bytes on the barrier. The phase
// completes when the arrival and all bytes are in; waiters test its parity: fill n of a stage is the
// barrier's phase n, waited on with parity n & 1.
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
#endif
}
// Makes the initialised barriers visible to the async proxy (the TMA unit) before any copy uses them.
__device__ __forceinline__ void mbar_init_fence() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes) : "memory");
#endif
}
__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 1;
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
#endif
  return done != 0;
}
// A bounded wait: gives up after ~2^30 cycles (about half a second), so that a copy that never completes
// (a wrong tx count, a bad tensor map) ends in a counted timeout and a wrong checksum, never a hang.
constexpr long long kWaitCycles = 1ll << 30;
__device__ __forceinline__ bool mbar_wait(uint32_t bar, uint32_t parity) {
  if (mbar_try_wait(bar, parity)) return true;
  const long long start = clock_now();
  while (clock_now() - start < kWaitCycles)
    if (mbar_try_wait(bar, parity)) return true;
  return false;
}
// One 1-D TMA copy global -> own shared memory (a CTA's shared::cta address is its shared::cluster one).
__device__ __forceinline__ void bulk_copy(uint32_t dst, const void* src, uint32_t bytes, uint32_t bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
#endif
}
// One 2-D TMA tile: the box at element coordinates (x, y) of the tensor map.
__device__ __forceinline__ void tensor_copy(uint32_t dst, const CUtensorMap* map, uint32_t x, uint32_t y, uint32_t bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
                   dst),
               "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(bar)
               : "memory");
#endif
}

// ---- Shared pieces of the kernels ----------------------------------------------------------------

struct StreamArgs {
  const unsigned char* src;
  Tiles tiles;
  int blocks;
  uint32_t tiles_per_block;
  uint32_t copy_bytes;  // bulk
  int stages;
  uint32_t box_inner;   // tensor: box width in elements (the x step between tiles)
  uint32_t* sums;
  uint32_t* timeouts;
};

constexpr uint32_t kAlign = 1024;  // stage alignment (the 128-byte swizzle repeats every 1 KiB); kLatencySmem has this slack
constexpr uint32_t kBarBytes = 64;  // up to 8 mbarriers
constexpr uint32_t kReduceBytes = 32 * 4;
__host__ __device__ inline uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }
__host__ __device__ inline uint32_t stage_stride(uint64_t tile_bytes) { return static_cast<uint32_t>(round_up(tile_bytes, kAlign)); }

// The dynamic shared memory from its first kAlign-aligned shared address (the launch adds kAlign of slack).
__device__ __forceinline__ unsigned char* aligned_smem() {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  return smem_raw + (kAlign - smem_addr(smem_raw) % kAlign) % kAlign;
}

// This thread's share of a staged tile: every 16-byte vector i = tid, tid + n, ... summed word by word.
__device__ __forceinline__ uint32_t sum_words(const unsigned char* stage, uint32_t bytes, uint32_t tid, uint32_t n) {
  const uint4* v = reinterpret_cast<const uint4*>(stage);
  uint32_t s = 0;
  for (uint32_t i = tid; i < bytes / 16; i += n) {
    const uint4 x = v[i];
    s += x.x + x.y + x.z + x.w;
  }
  return s;
}

__device__ __forceinline__ uint32_t warp_sum(uint32_t v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// The block's checksum into sums[blockIdx.x], through the reduction slots after the barriers.
__device__ void write_block_sum(const StreamArgs& a, unsigned char* smem, uint32_t sum) {
  uint32_t* slots = reinterpret_cast<uint32_t*>(smem + a.stages * stage_stride(a.tiles.tile_bytes()) + kBarBytes);
  sum = warp_sum(sum);
  if (threadIdx.x % 32 == 0) slots[threadIdx.x / 32] = sum;
  __syncthreads();
  if (threadIdx.x < 32) {
    uint32_t s = threadIdx.x < blockDim.x / 32 ? slots[threadIdx.x] : 0;
    s = warp_sum(s);
    if (threadIdx.x == 0) a.sums[blockIdx.x] = s;
  }
}

// A 2-D tile's box coordinates (elements) in the tensor map: x along the row, y the first row.
struct BoxAt {
  uint32_t x, y;
};
__device__ __forceinline__ BoxAt box_at(const Tiles& tiles, uint32_t box_inner, uint64_t t) {
  return {static_cast<uint32_t>(t % tiles.tiles_per_row) * box_inner, static_cast<uint32_t>(t / tiles.tiles_per_row) * tiles.rows};
}

__device__ __forceinline__ const unsigned char* tile_src(const StreamArgs& a, uint32_t k) {
  return a.src + a.tiles.origin(tile_of(a.tiles, a.blocks, blockIdx.x, k));
}

// ---- Stream kernels --------------------------------------------------------------------------------

// Baseline: each thread loads its 16-byte vectors of the tile (all in flight), stores them to shared
// memory, and the block consumes the tile. .cg loads: L2 only, the path cp.async.cg and TMA take.
__global__ void __launch_bounds__(kThreads, kMinBlocks) ld_st_kernel(StreamArgs a) {
  constexpr int kVec = kTileBytes / (kThreads * 16);
  unsigned char* smem = aligned_smem();
  uint4* stage = reinterpret_cast<uint4*>(smem);
  uint32_t sum = 0;
  for (uint32_t k = 0; k < a.tiles_per_block; ++k) {
    const uint4* src = reinterpret_cast<const uint4*>(tile_src(a, k));
    uint4 v[kVec];
#pragma unroll
    for (int j = 0; j < kVec; ++j) v[j] = __ldcg(src + j * kThreads + threadIdx.x);
#pragma unroll
    for (int j = 0; j < kVec; ++j) stage[j * kThreads + threadIdx.x] = v[j];
    __syncthreads();
    sum += sum_words(smem, kTileBytes, threadIdx.x, kThreads);
    __syncthreads();  // the tile is read by all before the next one overwrites it
  }
  write_block_sum(a, smem, sum);
}

// cp.async ring of S stages: tile k + S - 1 is issued while tile k is consumed. A group is committed
// every step, empty past the last tile, so wait_group<S - 1> always means "tile k has landed".
template <int W, int S>
__global__ void __launch_bounds__(kThreads, kMinBlocks) cp_async_kernel(StreamArgs a) {
  constexpr int kPer = kTileBytes / (kThreads * W);
  unsigned char* smem = aligned_smem();
  const uint32_t base = smem_addr(smem);
  auto issue = [&](uint32_t k) {
    if (k < a.tiles_per_block) {
      const unsigned char* src = tile_src(a, k);
      const uint32_t dst = base + (k % S) * kTileBytes;
#pragma unroll
      for (int j = 0; j < kPer; ++j) {
        const uint32_t off = (j * kThreads + threadIdx.x) * W;
        cp_async<W>(dst + off, src + off);
      }
    }
    cp_async_commit();
  };
  for (int k = 0; k < S - 1; ++k) issue(k);
  uint32_t sum = 0;
  for (uint32_t k = 0; k < a.tiles_per_block; ++k) {
    issue(k + S - 1);  // into the stage tile k - 1 left, released by the barrier that ended step k - 1
    cp_async_wait<S - 1>();
    __syncthreads();  // every thread's copies of tile k are visible
    sum += sum_words(smem + (k % S) * kTileBytes, kTileBytes, threadIdx.x, kThreads);
    __syncthreads();
  }
  write_block_sum(a, smem, sum);
}

// The TMA ring shared by bulk and tensor: produce(k, dst, bar) fills stage k % S from warp 0 (it does
// nothing for k past the block's tiles); every thread waits on the stage's barrier, consumes, and a
// block barrier releases the stage for the fill S steps later.
template <class Produce>
__device__ void tma_ring(const StreamArgs& a, Produce produce) {
  unsigned char* smem = aligned_smem();
  const int S = a.stages;
  const uint32_t stride = stage_stride(a.tiles.tile_bytes());
  const uint32_t base = smem_addr(smem), bars = base + S * stride;
  if (threadIdx.x == 0) {
    for (int s = 0; s < S; ++s) mbar_init(bars + 8 * s, 1);
    mbar_init_fence();
  }
  __syncthreads();
  const bool producer = threadIdx.x < 32;
  for (int k = 0; k < S - 1; ++k)
    if (producer && k < static_cast<int>(a.tiles_per_block)) produce(k, base + (k % S) * stride, bars + 8 * (k % S));
  uint32_t sum = 0;
  bool ok = true;
  for (uint32_t k = 0; k < a.tiles_per_block; ++k) {
    const uint32_t next = k + S - 1;
    if (producer && next < a.tiles_per_block) produce(next, base + (next % S) * stride, bars + 8 * (next % S));
    if (ok && !mbar_wait(bars + 8 * (k % S), (k / S) & 1)) {
      ok = false;  // counted once; this thread waits no more (its later phases are out of step)
      atomicAdd(a.timeouts, 1u);
    }
    sum += sum_words(smem + (k % S) * stride, static_cast<uint32_t>(a.tiles.tile_bytes()), threadIdx.x, kThreads);
    __syncthreads();
  }
  write_block_sum(a, smem, sum);
}

// 1-D bulk copies: a tile of tile_bytes / copy_bytes copies, spread over warp 0's lanes; lane 0 arms
// the barrier with the whole tile's bytes before any copy is issued (the __syncwarp orders it).
__global__ void __launch_bounds__(kThreads, kMinBlocks) bulk_kernel(StreamArgs a) {
  const uint32_t tile = static_cast<uint32_t>(a.tiles.tile_bytes()), copies = tile / a.copy_bytes;
  tma_ring(a, [&](uint32_t k, uint32_t dst, uint32_t bar) {
    const unsigned char* src = tile_src(a, k);
    if (threadIdx.x == 0) mbar_arrive_expect_tx(bar, tile);
    __syncwarp();
    for (uint32_t c = threadIdx.x; c < copies; c += 32) bulk_copy(dst + c * a.copy_bytes, src + c * a.copy_bytes, a.copy_bytes, bar);
  });
}

// 2-D tensor tiles: one box per tile, at element coordinates of the tile's origin.
__global__ void __launch_bounds__(kThreads, kMinBlocks) tensor_kernel(StreamArgs a, const __grid_constant__ CUtensorMap map) {
  const uint32_t tile = static_cast<uint32_t>(a.tiles.tile_bytes());
  tma_ring(a, [&](uint32_t k, uint32_t dst, uint32_t bar) {
    if (threadIdx.x != 0) return;
    const BoxAt at = box_at(a.tiles, a.box_inner, tile_of(a.tiles, a.blocks, blockIdx.x, k));
    mbar_arrive_expect_tx(bar, tile);
    tensor_copy(dst, &map, at.x, at.y, bar);
  });
}

// ---- Latency kernel: one warp ------------------------------------------------------------------------

struct LatencyArgs {
  const unsigned char* src;
  Tiles tiles;
  uint64_t first;
  uint32_t copies;
  uint32_t box_inner;
  long long* cycles;
  uint32_t* sum;
  uint32_t* timeouts;
  uint32_t* first_copy;
};

// One copy of `bytes` at src into smem; returns lane 0's clock64 span from issue to completion.
// kVec (ld_st): 16-byte vectors per lane, all loaded before any is stored.
template <Method M, int kVec>
__device__ long long timed_copy(const LatencyArgs& a, const CUtensorMap* map, uint64_t t, unsigned char* smem, uint32_t bar,
                                uint32_t phase, bool& ok) {
  const uint32_t lane = threadIdx.x, bytes = static_cast<uint32_t>(a.tiles.tile_bytes());
  const unsigned char* src = a.src + a.tiles.origin(t);
  const BoxAt at = M == Method::tensor ? box_at(a.tiles, a.box_inner, t) : BoxAt{0, 0};  // outside the timed span
  __syncwarp();
  const long long c0 = clock_now();
  if constexpr (M == Method::ld_st) {
    uint4 v[kVec];
#pragma unroll
    for (int j = 0; j < kVec; ++j)
      if ((j * 32 + lane) * 16 < bytes) v[j] = __ldcg(reinterpret_cast<const uint4*>(src) + j * 32 + lane);
#pragma unroll
    for (int j = 0; j < kVec; ++j)
      if ((j * 32 + lane) * 16 < bytes) reinterpret_cast<uint4*>(smem)[j * 32 + lane] = v[j];
    __syncwarp();  // lane 0 reads the clock once every lane's loads are in
  } else if constexpr (M == Method::cp_async) {
    if (lane == 0) {
      cp_async<16>(smem_addr(smem), src);
      cp_async_commit();
      cp_async_wait<0>();
    }
  } else {
    if (lane == 0) {
      mbar_arrive_expect_tx(bar, bytes);
      if constexpr (M == Method::bulk) {
        bulk_copy(smem_addr(smem), src, bytes, bar);
      } else {
        tensor_copy(smem_addr(smem), map, at.x, at.y, bar);
      }
    }
    if (ok && !mbar_wait(bar, phase & 1)) {
      ok = false;
      atomicAdd(a.timeouts, 1u);
    }
  }
  return clock_now() - c0;
}

// Copy i of the launch is tile (first + i) mod count; one mbarrier, phase i for copy i. After each copy
// the warp sums the staged words (untimed): the checksum that proves the copy landed.
template <Method M, int kVec>
__global__ void __launch_bounds__(kLatencyThreads) latency_kernel(LatencyArgs a, const __grid_constant__ CUtensorMap map) {
  unsigned char* smem = aligned_smem();
  const uint32_t bar = smem_addr(smem + kMaxLatencyBytes);
  if constexpr (M == Method::bulk || M == Method::tensor) {
    if (threadIdx.x == 0) {
      mbar_init(bar, 1);
      mbar_init_fence();
    }
  }
  uint32_t sum = 0;
  bool ok = true;
  for (uint32_t i = 0; i < a.copies; ++i) {
    const uint64_t t = (a.first + i) % a.tiles.count;
    const long long cycles = timed_copy<M, kVec>(a, &map, t, smem, bar, i, ok);
    if (threadIdx.x == 0) a.cycles[i] = cycles;
    __syncwarp();  // lane 0's cp.async / ld results visible to the warp
    const uint32_t bytes = static_cast<uint32_t>(a.tiles.tile_bytes());
    sum += sum_words(smem, bytes, threadIdx.x, 32);
    if (i == 0 && a.first_copy)
      for (uint32_t w = threadIdx.x; w < bytes / 4; w += 32) a.first_copy[w] = reinterpret_cast<const uint32_t*>(smem)[w];
    __syncwarp();  // read by all before the next copy overwrites it
  }
  sum = warp_sum(sum);
  if (threadIdx.x == 0) *a.sum = sum;
}

const void* stream_kernel(const Stream& s) {
  switch (s.method) {
    case Method::ld_st: return reinterpret_cast<const void*>(ld_st_kernel);
    case Method::bulk: return reinterpret_cast<const void*>(bulk_kernel);
    case Method::tensor: return reinterpret_cast<const void*>(tensor_kernel);
    case Method::cp_async: break;
  }
  auto pick = [&](auto w) -> const void* {
    constexpr int W = decltype(w)::value;
    switch (s.stages) {
      case 1: return reinterpret_cast<const void*>(cp_async_kernel<W, 1>);
      case 2: return reinterpret_cast<const void*>(cp_async_kernel<W, 2>);
      case 4: return reinterpret_cast<const void*>(cp_async_kernel<W, 4>);
    }
    throw std::invalid_argument("async_copy: cp_async stages must be 1, 2 or 4");
  };
  switch (s.width) {
    case 4: return pick(std::integral_constant<int, 4>{});
    case 8: return pick(std::integral_constant<int, 8>{});
    case 16: return pick(std::integral_constant<int, 16>{});
  }
  throw std::invalid_argument("async_copy: cp_async width must be 4, 8 or 16");
}

const void* latency_kernel_for(const Latency& l) {
  switch (l.method) {
    case Method::cp_async: return reinterpret_cast<const void*>(latency_kernel<Method::cp_async, 1>);
    case Method::bulk: return reinterpret_cast<const void*>(latency_kernel<Method::bulk, 1>);
    case Method::tensor: return reinterpret_cast<const void*>(latency_kernel<Method::tensor, 1>);
    case Method::ld_st: break;
  }
  switch (l.tiles.row_bytes) {
    case 16: return reinterpret_cast<const void*>(latency_kernel<Method::ld_st, 1>);
    case 1024: return reinterpret_cast<const void*>(latency_kernel<Method::ld_st, 2>);
    case 4096: return reinterpret_cast<const void*>(latency_kernel<Method::ld_st, 8>);
    case 8192: return reinterpret_cast<const void*>(latency_kernel<Method::ld_st, 16>);
  }
  throw std::invalid_argument("async_copy: ld_st latency is compiled for 16, 1024, 4096 and 8192 bytes");
}

// Dynamic shared memory above the default 48 KiB needs the kernel's opt-in, once per size.
void allow_smem(const void* kernel, size_t bytes) {
  static std::map<const void*, size_t> allowed;
  if (bytes <= 48 * 1024 || allowed[kernel] >= bytes) return;
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  allowed[kernel] = bytes;
}

void require_lt_2_32_words(uint64_t end_word) {
  if (end_word > (1ull << 32)) throw std::invalid_argument("async_copy: working sets stay below 16 GiB (word_value's closed-form sum)");
}

}  // namespace

const char* method_name(Method m) {
  switch (m) {
    case Method::ld_st: return "ld_st";
    case Method::cp_async: return "cp_async";
    case Method::bulk: return "bulk";
    case Method::tensor: return "tensor";
  }
  return "?";
}

int method_min_arch(Method m) { return m == Method::ld_st ? 0 : m == Method::cp_async ? 800 : 900; }

std::string Box::name() const {
  return "elem:" + std::to_string(elem_bytes) + "/box:" + std::to_string(inner) + "x" + std::to_string(rows) +
         "/swizzle:" + (swizzle ? std::to_string(swizzle) : std::string("none"));
}

std::string box_problem(const Box& b) {
  if (b.elem_bytes != 2 && b.elem_bytes != 4) return "elements of 2 or 4 bytes only";
  if (b.inner < 1 || b.inner > 256 || b.rows < 1 || b.rows > 256) return "TMA box dimensions are 1..256 elements";
  if (b.row_bytes() % 16) return "the inner box extent must be a multiple of 16 bytes";
  if (b.swizzle != 0 && b.swizzle != 32 && b.swizzle != 64 && b.swizzle != 128) return "swizzle is none, 32, 64 or 128 bytes";
  if (b.swizzle && b.row_bytes() > b.swizzle) return "the inner box extent (" + std::to_string(b.row_bytes()) + " B) exceeds the swizzle span";
  if (kTensorPitch % b.row_bytes()) return "the inner box extent must divide the tensor's 8 KiB rows";
  if (b.bytes() > kMaxLatencyBytes * 2) return "boxes up to 32 KiB";
  return "";
}

Tiles box_tiles(const Box& b, uint64_t ws_bytes) {
  const std::string why = box_problem(b);
  if (!why.empty()) throw std::invalid_argument("async_copy: box " + b.name() + ": " + why);
  Tiles t;
  t.pitch_bytes = kTensorPitch;
  t.row_bytes = b.row_bytes();
  t.rows = b.rows;
  t.tiles_per_row = static_cast<uint32_t>(kTensorPitch / b.row_bytes());
  const uint64_t box_rows = std::max<uint64_t>(1, ws_bytes / kTensorPitch / b.rows);
  t.count = box_rows * t.tiles_per_row;
  return t;
}

size_t Stream::smem_bytes() const {
  return static_cast<size_t>(stages) * stage_stride(tiles.tile_bytes()) + kBarBytes + kReduceBytes + kAlign;
}

Stream make_stream(Method method, int width, int stages, uint32_t copy_bytes, const Box& box, uint64_t ws_bytes, int blocks,
                   uint32_t tiles_per_block) {
  if (blocks < 1 || tiles_per_block < 1) throw std::invalid_argument("async_copy: a stream needs blocks and tiles");
  Stream s;
  s.method = method;
  s.blocks = blocks;
  s.tiles_per_block = tiles_per_block;
  uint64_t tile = kTileBytes;
  switch (method) {
    case Method::ld_st: s.width = 16; s.stages = 1; break;
    case Method::cp_async:
      if (width != 4 && width != 8 && width != 16) throw std::invalid_argument("async_copy: cp_async copies 4, 8 or 16 bytes");
      if (stages != 1 && stages != 2 && stages != 4) throw std::invalid_argument("async_copy: cp_async stages are 1, 2 or 4");
      s.width = width;
      s.stages = stages;
      break;
    case Method::bulk:
      if (copy_bytes < 16 || copy_bytes % 16 || copy_bytes > 65536)
        throw std::invalid_argument("async_copy: a bulk copy is a multiple of 16 bytes up to 64 KiB");
      s.copy_bytes = copy_bytes;
      tile = std::max<uint64_t>(copy_bytes, kTileBytes);
      s.stages = stages_for(tile);
      break;
    case Method::tensor:
      s.box = box;
      s.tiles = box_tiles(box, ws_bytes);
      s.stages = stages_for(s.tiles.tile_bytes());
      require_lt_2_32_words(s.tiles.working_set_bytes() / 4);
      return s;
  }
  s.tiles.row_bytes = static_cast<uint32_t>(tile);
  s.tiles.pitch_bytes = tile;
  s.tiles.count = std::max<uint64_t>(1, ws_bytes / tile);
  require_lt_2_32_words(s.tiles.working_set_bytes() / 4);
  return s;
}

CUtensorMap make_tensor_map(const void* src, const Box& box, const Tiles& tiles) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !fn) throw CudaError("the driver has no cuTensorMapEncodeTiled (CUDA 12.0+ driver needed)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  const CUtensorMapSwizzle swizzle = box.swizzle == 32   ? CU_TENSOR_MAP_SWIZZLE_32B
                                     : box.swizzle == 64  ? CU_TENSOR_MAP_SWIZZLE_64B
                                     : box.swizzle == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                                                          : CU_TENSOR_MAP_SWIZZLE_NONE;
  const cuuint64_t dims[2] = {tiles.pitch_bytes / box.elem_bytes, tiles.count / tiles.tiles_per_row * tiles.rows};
  const cuuint64_t strides[1] = {tiles.pitch_bytes};  // bytes between rows (dimension 0 is dense)
  const cuuint32_t box_dims[2] = {box.inner, box.rows};
  const cuuint32_t element_strides[2] = {1, 1};
  CUtensorMap map{};
  const CUresult r = encode(&map, box.elem_bytes == 2 ? CU_TENSOR_MAP_DATA_TYPE_UINT16 : CU_TENSOR_MAP_DATA_TYPE_UINT32, 2,
                            const_cast<void*>(src), dims, strides, box_dims, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_128B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) throw CudaError("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(r) + ") for " + box.name());
  return map;
}

bool method_compiled(Method m) {
  if (m == Method::ld_st) return true;
  Stream probe;
  probe.method = m;
  probe.width = 16;
  probe.stages = 2;
  cudaFuncAttributes a{};
  CUDA_CHECK(cudaFuncGetAttributes(&a, stream_kernel(probe)));
  return a.ptxVersion * 10 >= method_min_arch(m);
}

Residency stream_residency(const Stream& s) {
  const void* k = stream_kernel(s);
  allow_smem(k, s.smem_bytes());
  return compiled_residency(k, kThreads, s.smem_bytes());
}

void launch_stream(const Stream& s, const uint32_t* src, const CUtensorMap* map, uint32_t* sums, uint32_t* timeouts, cudaStream_t st) {
  if (s.method == Method::tensor && !map) throw std::invalid_argument("async_copy: a tensor stream needs its tensor map");
  StreamArgs a{reinterpret_cast<const unsigned char*>(src), s.tiles, s.blocks, s.tiles_per_block, s.copy_bytes, s.stages,
               s.box.inner, sums, timeouts};
  const void* k = stream_kernel(s);
  allow_smem(k, s.smem_bytes());
  CUtensorMap m = map ? *map : CUtensorMap{};
  void* args[] = {&a, &m};
  CUDA_CHECK(cudaLaunchKernel(k, dim3(s.blocks), dim3(kThreads), args, s.smem_bytes(), st));
  CUDA_CHECK_LAUNCH(method_name(s.method));
}

bool ld_latency_size(uint32_t bytes) { return bytes == 16 || bytes == 1024 || bytes == 4096 || bytes == 8192; }

void launch_latency(const Latency& l, const uint32_t* src, uint64_t first, const CUtensorMap* map, long long* cycles, uint32_t* sum,
                    uint32_t* timeouts, uint32_t* first_copy, cudaStream_t st) {
  if (l.tiles.tile_bytes() > kMaxLatencyBytes || l.tiles.count == 0) throw std::invalid_argument("async_copy: latency copies are 16 B .. 16 KiB");
  if (l.method == Method::cp_async && l.tiles.tile_bytes() != 16) throw std::invalid_argument("async_copy: cp_async latency is of 16 bytes");
  if (l.method == Method::tensor && !map) throw std::invalid_argument("async_copy: a tensor latency needs its tensor map");
  LatencyArgs a{reinterpret_cast<const unsigned char*>(src), l.tiles, first, l.copies, l.box.inner, cycles, sum, timeouts, first_copy};
  CUtensorMap m = map ? *map : CUtensorMap{};
  void* args[] = {&a, &m};
  CUDA_CHECK(cudaLaunchKernel(latency_kernel_for(l), dim3(1), dim3(kLatencyThreads), args, kLatencySmem, st));
  CUDA_CHECK_LAUNCH("latency_kernel");
}

uint32_t word_range_sum(uint64_t first, uint64_t n) {
  require_lt_2_32_words(first + n);
  // word_value(i) = i * K + C (mod 2^32) below 2^32 words: the sum is K * (n first + n (n - 1) / 2) + C n;
  // mod 2^64 arithmetic is exact mod 2^32.
  const uint64_t tri = n % 2 == 0 ? (n / 2) * (n - 1) : n * ((n - 1) / 2);
  const uint64_t sum_i = n * first + tri;
  return static_cast<uint32_t>(sum_i * 2654435761ull + n * 0x9e3779b9ull);
}

uint32_t tile_sum(const Tiles& t, uint64_t tile) {
  uint32_t s = 0;
  const uint64_t o = t.origin(tile);
  for (uint32_t r = 0; r < t.rows; ++r) s += word_range_sum((o + r * t.pitch_bytes) / 4, t.row_bytes / 4);
  return s;
}

uint32_t expected_block_sum(const Stream& s, uint32_t block) {
  uint32_t sum = 0;
  for (uint32_t k = 0; k < s.tiles_per_block; ++k) sum += tile_sum(s.tiles, tile_of(s.tiles, s.blocks, block, k));
  return sum;
}

std::vector<uint32_t> expected_block_sums(const Stream& s) {
  std::vector<uint32_t> per_tile(s.tiles.count), sums(s.blocks, 0);
  for (uint64_t t = 0; t < s.tiles.count; ++t) per_tile[t] = tile_sum(s.tiles, t);
  for (uint32_t b = 0; b < sums.size(); ++b)
    for (uint32_t k = 0; k < s.tiles_per_block; ++k) sums[b] += per_tile[tile_of(s.tiles, s.blocks, b, k)];
  return sums;
}

uint32_t expected_latency_sum(const Latency& l, uint64_t first) {
  uint32_t sum = 0;
  for (uint32_t i = 0; i < l.copies; ++i) sum += tile_sum(l.tiles, (first + i) % l.tiles.count);
  return sum;
}

}  // namespace mh::async_copy

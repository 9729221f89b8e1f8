#include "micro/roofs.cuh"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>

namespace mh::roofs {
namespace {

template <int kWidth>
struct Vec;
template <>
struct Vec<4> { using T = unsigned int; };
template <>
struct Vec<8> { using T = uint2; };
template <>
struct Vec<16> { using T = uint4; };

template <Load kOp, class T>
__device__ __forceinline__ T load(const T* p) {
  if constexpr (kOp == Load::plain)
    return *p;
  else if constexpr (kOp == Load::cg)
    return __ldcg(p);
  else if constexpr (kOp == Load::cs)
    return __ldcs(p);
  else
    return __ldg(p);
}

template <Store kOp, class T>
__device__ __forceinline__ void store(T* p, T v) {
  if constexpr (kOp == Store::plain)
    *p = v;
  else if constexpr (kOp == Store::cg)
    __stcg(p, v);
  else
    __stcs(p, v);
}

// Sum of a vector's words: one or two IADD3 per load, so the loads, not the adds, take the issue slots.
__device__ __forceinline__ uint32_t fold(unsigned int v) { return v; }
__device__ __forceinline__ uint32_t fold(uint2 v) { return v.x + v.y; }
__device__ __forceinline__ uint32_t fold(uint4 v) { return v.x + v.y + v.z + v.w; }

// The vector holding words i .. i + width/4 - 1 (i a multiple of width/4, so i's high half is theirs).
template <class T>
__device__ __forceinline__ T values_at(uint64_t i) {
  const uint32_t v = word_value(i);
  if constexpr (std::is_same_v<T, unsigned int>)
    return v;
  else if constexpr (std::is_same_v<T, uint2>)
    return {v, v + 2654435761u};
  else
    return {v, v + 2654435761u, v + 2u * 2654435761u, v + 3u * 2654435761u};
}

// Walk::start_chunk on the device. Walk layout: walkers numbered warp-in-block major, so that the
// warps of a block (and the blocks of one SM) start far apart. Front layout: block major, so that a
// block's warps take neighbouring chunks, as a streaming kernel does. Either is a bijection of the
// warps onto 0 .. W-1, so the host reference need not know the numbering.
__device__ __forceinline__ uint64_t first_chunk(uint64_t chunks, bool front) {
  const uint64_t warps = uint64_t(gridDim.x) * (blockDim.x / 32);
  if (front) return ((uint64_t(blockIdx.x) * blockDim.x + threadIdx.x) / 32) % chunks;
  return (uint64_t(threadIdx.x / 32) * gridDim.x + blockIdx.x) * chunks / warps;
}

struct Args {
  uint64_t chunks;
  uint64_t step;  // chunks per step, < chunks
  uint32_t iters;
  bool front;
};

// The inner loop is kUnroll loads at immediate offsets from p, the adds, a pointer bump and the wrap
// test (sm_90 SASS at width 16, unroll 8: 38 instructions per step, 8 of them LDG.E.128 [R+imm]; a
// step moves 4 KiB per warp, 32 clocks of a 128 B/clk L1, against ~10 clocks of issue on 4
// schedulers, so issue is no limit). `#pragma unroll 1`
// keeps at most kUnroll loads per thread in flight; ptxas may start consuming the first before the
// last is issued (it does at width 16, unroll 8: two groups of four).
template <int kWidth, int kUnroll, Load kOp>
__global__ void __launch_bounds__(1024) read_kernel(const uint32_t* buf, Args a, uint32_t* checksum) {
  using T = typename Vec<kWidth>::T;
  constexpr int kChunk = 32 * kUnroll;  // vectors per chunk
  const uint32_t lane = threadIdx.x & 31;
  const T* base = reinterpret_cast<const T*>(buf) + lane;
  const T* end = base + a.chunks * kChunk;
  const uint64_t step = a.step * kChunk, span = a.chunks * kChunk;
  const T* p = base + first_chunk(a.chunks, a.front) * kChunk;
  uint32_t sum = 0;
#pragma unroll 1
  for (uint32_t i = 0; i < a.iters; ++i) {
    T v[kUnroll];
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) v[j] = load<kOp>(p + 32 * j);
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) sum += fold(v[j]);
    p += step;
    if (p >= end) p -= span;
  }
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if (lane == 0) atomicAdd(checksum, sum);  // one atomic per warp, after the loop
}

template <int kWidth, int kUnroll, Store kOp>
__global__ void __launch_bounds__(1024) write_kernel(uint32_t* buf, Args a) {
  using T = typename Vec<kWidth>::T;
  constexpr int kChunk = 32 * kUnroll, kWords = kWidth / 4;
  const uint32_t lane = threadIdx.x & 31;
  T* base = reinterpret_cast<T*>(buf) + lane;
  uint64_t c = first_chunk(a.chunks, a.front);
#pragma unroll 1
  for (uint32_t i = 0; i < a.iters; ++i) {
    T* p = base + c * kChunk;
    const uint64_t word = (c * kChunk + lane) * kWords;
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) store<kOp>(p + 32 * j, values_at<T>(word + 32 * j * kWords));
    c += a.step;
    if (c >= a.chunks) c -= a.chunks;
  }
}

template <int kWidth, int kUnroll, Load kLd, Store kSt>
__global__ void __launch_bounds__(1024) copy_kernel(const uint32_t* src, uint32_t* dst, Args a) {
  using T = typename Vec<kWidth>::T;
  constexpr int kChunk = 32 * kUnroll;
  const uint32_t lane = threadIdx.x & 31;
  const T* s = reinterpret_cast<const T*>(src) + lane;
  T* d = reinterpret_cast<T*>(dst) + lane;
  uint64_t off = first_chunk(a.chunks, a.front) * kChunk;  // vector offset of the current chunk
  const uint64_t end = a.chunks * kChunk, step = a.step * kChunk;
#pragma unroll 1
  for (uint32_t i = 0; i < a.iters; ++i) {
    T v[kUnroll];
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) v[j] = load<kLd>(s + off + 32 * j);
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) store<kSt>(d + off + 32 * j, v[j]);
    off += step;
    if (off >= end) off -= end;
  }
}

__global__ void fill_kernel(uint32_t* buf, uint64_t n) {
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    buf[i] = word_value(i);
}

template <int v>
using Int = std::integral_constant<int, v>;

// Calls fn(Int<width>, Int<unroll>) for the compiled shape.
template <class Fn>
void with_shape(int width, int unroll, Fn&& fn) {
  auto by_unroll = [&](auto w) {
    switch (unroll) {
      case 1: return fn(w, Int<1>{});
      case 2: return fn(w, Int<2>{});
      case 4: return fn(w, Int<4>{});
      case 8: return fn(w, Int<8>{});
    }
    throw std::invalid_argument("unroll must be 1, 2, 4 or 8, got " + std::to_string(unroll));
  };
  switch (width) {
    case 4: return by_unroll(Int<4>{});
    case 8: return by_unroll(Int<8>{});
    case 16: return by_unroll(Int<16>{});
  }
  throw std::invalid_argument("width must be 4, 8 or 16 bytes, got " + std::to_string(width));
}

template <class Fn>
void with_load(Load op, Fn&& fn) {
  switch (op) {
    case Load::plain: return fn(std::integral_constant<Load, Load::plain>{});
    case Load::cg: return fn(std::integral_constant<Load, Load::cg>{});
    case Load::cs: return fn(std::integral_constant<Load, Load::cs>{});
    case Load::nc: return fn(std::integral_constant<Load, Load::nc>{});
  }
  throw std::invalid_argument("unknown load operator");
}

template <class Fn>
void with_store(Store op, Fn&& fn) {
  switch (op) {
    case Store::plain: return fn(std::integral_constant<Store, Store::plain>{});
    case Store::cg: return fn(std::integral_constant<Store, Store::cg>{});
    case Store::cs: return fn(std::integral_constant<Store, Store::cs>{});
  }
  throw std::invalid_argument("unknown store operator");
}

// The copy pairs compiled: plain, L2-only, streaming, and read-only loads with streaming stores.
template <class Fn>
void with_copy_ops(Load ld, Store st, Fn&& fn) {
  using L = Load;
  using S = Store;
  if (ld == L::plain && st == S::plain) return fn(std::integral_constant<L, L::plain>{}, std::integral_constant<S, S::plain>{});
  if (ld == L::cg && st == S::cg) return fn(std::integral_constant<L, L::cg>{}, std::integral_constant<S, S::cg>{});
  if (ld == L::cs && st == S::cs) return fn(std::integral_constant<L, L::cs>{}, std::integral_constant<S, S::cs>{});
  if (ld == L::nc && st == S::cs) return fn(std::integral_constant<L, L::nc>{}, std::integral_constant<S, S::cs>{});
  throw std::invalid_argument(std::string("copy: no kernel for loads ") + load_name(ld) + " with stores " + store_name(st));
}

// Every kernel prefers the whole unified L1 (shared-memory carve-out 0): the L1 roof and the L1
// plateau of the hierarchy need it, and the others use no shared memory.
void prefer_l1(const void* kernel) { CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 0)); }

Args args_of(const Walk& w) { return {w.chunks, w.step_chunks(), w.iters, w.front}; }

}  // namespace

const char* load_name(Load op) {
  switch (op) {
    case Load::plain: return "plain";
    case Load::cg: return "cg";
    case Load::cs: return "cs";
    case Load::nc: return "nc";
  }
  return "?";
}

const char* store_name(Store op) {
  switch (op) {
    case Store::plain: return "plain";
    case Store::cg: return "cg";
    case Store::cs: return "cs";
  }
  return "?";
}

Walk make_walk(int width, int unroll, int blocks, int threads, uint64_t ws_bytes, uint64_t bytes_per_launch, bool front) {
  with_shape(width, unroll, [](auto, auto) {});  // throws on a shape that is not compiled
  if (blocks < 1 || threads < 32 || threads % 32 || threads > 1024)
    throw std::invalid_argument("threads must be a multiple of 32 in [32, 1024] and blocks >= 1");
  Walk w;
  w.width = width;
  w.unroll = unroll;
  w.blocks = blocks;
  w.threads = threads;
  w.front = front;
  w.chunks = std::max<uint64_t>(1, ws_bytes / w.chunk_bytes());
  const uint64_t per_step = w.warps() * w.chunk_bytes();
  const uint64_t iters = std::max<uint64_t>(1, (bytes_per_launch + per_step - 1) / per_step);
  if (iters > UINT32_MAX) throw std::invalid_argument("too many steps per launch");
  w.iters = static_cast<uint32_t>(iters);
  return w;
}

Walk make_owned_walk(int width, int unroll, int blocks, int threads, uint64_t ws_bytes, uint64_t bytes_per_launch) {
  Walk w = make_walk(width, unroll, blocks, threads, 0, bytes_per_launch, true);  // checks the shape
  const uint64_t per_pass = w.warps() * w.chunk_bytes();
  const uint64_t m = std::max<uint64_t>(1, (ws_bytes + per_pass / 2) / per_pass);
  w.chunks = m * w.warps();
  return w;
}

uint64_t access_byte(const Walk& w, uint64_t warp, uint64_t step, uint32_t lane, int j) {
  // first_chunk's numbering: the front layout counts warps block major, the walk layout warp-in-block major.
  const uint64_t per_block = w.threads / 32;
  const uint64_t walker = w.front ? warp : (warp % per_block) * w.blocks + warp / per_block;
  const uint64_t chunk = (w.start_chunk(walker) + step % w.chunks * w.step_chunks()) % w.chunks;
  return chunk * w.chunk_bytes() + (lane + 32ull * j) * w.width;
}

uint64_t shared_sectors(const Walk& w, uint64_t steps) {
  constexpr uint64_t kShared = ~0ull;  // marks a sector read by two or more warps
  std::unordered_map<uint64_t, uint64_t> reader;  // sector -> the one warp that read it, or kShared
  steps = std::min<uint64_t>(steps, w.iters);
  for (uint64_t warp = 0; warp < w.warps(); ++warp)
    for (uint64_t i = 0; i < steps; ++i)
      for (uint32_t lane = 0; lane < 32; ++lane)
        for (int j = 0; j < w.unroll; ++j) {
          const auto [it, fresh] = reader.try_emplace(access_byte(w, warp, i, lane, j) / 32, warp);
          if (!fresh && it->second != warp) it->second = kShared;
        }
  return static_cast<uint64_t>(std::count_if(reader.begin(), reader.end(), [&](const auto& e) { return e.second == kShared; }));
}

void fill_values(uint32_t* buf, uint64_t words, cudaStream_t s) {
  fill_kernel<<<1024, 256, 0, s>>>(buf, words);
  CUDA_CHECK_LAUNCH("fill_kernel");
}

void launch_read(const Walk& w, Load op, const uint32_t* buf, uint32_t* checksum, cudaStream_t s) {
  with_shape(w.width, w.unroll, [&](auto W, auto U) {
    with_load(op, [&](auto O) {
      constexpr auto kernel = read_kernel<decltype(W)::value, decltype(U)::value, decltype(O)::value>;
      static const bool configured = (prefer_l1(reinterpret_cast<const void*>(kernel)), true);
      (void)configured;
      kernel<<<w.blocks, w.threads, 0, s>>>(buf, args_of(w), checksum);
      CUDA_CHECK_LAUNCH("read_kernel");
    });
  });
}

void launch_write(const Walk& w, Store op, uint32_t* buf, cudaStream_t s) {
  with_shape(w.width, w.unroll, [&](auto W, auto U) {
    with_store(op, [&](auto O) {
      constexpr auto kernel = write_kernel<decltype(W)::value, decltype(U)::value, decltype(O)::value>;
      static const bool configured = (prefer_l1(reinterpret_cast<const void*>(kernel)), true);
      (void)configured;
      kernel<<<w.blocks, w.threads, 0, s>>>(buf, args_of(w));
      CUDA_CHECK_LAUNCH("write_kernel");
    });
  });
}

void launch_copy(const Walk& w, Load ld, Store st, const uint32_t* src, uint32_t* dst, cudaStream_t s) {
  with_shape(w.width, w.unroll, [&](auto W, auto U) {
    with_copy_ops(ld, st, [&](auto L, auto S) {
      constexpr auto kernel = copy_kernel<decltype(W)::value, decltype(U)::value, decltype(L)::value, decltype(S)::value>;
      static const bool configured = (prefer_l1(reinterpret_cast<const void*>(kernel)), true);
      (void)configured;
      kernel<<<w.blocks, w.threads, 0, s>>>(src, dst, args_of(w));
      CUDA_CHECK_LAUNCH("copy_kernel");
    });
  });
}

bool copy_pair_compiled(Load ld, Store st) {
  try {
    with_copy_ops(ld, st, [](auto, auto) {});
    return true;
  } catch (const std::invalid_argument&) {
    return false;
  }
}

int resident_blocks_per_sm(Kind kind, Load ld, Store st, int width, int unroll, int threads) {
  int n = 0;
  auto occupancy = [&](const void* kernel) {
    prefer_l1(kernel);
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel, threads, 0));
  };
  with_shape(width, unroll, [&](auto W, auto U) {
    constexpr int kW = decltype(W)::value, kU = decltype(U)::value;
    if (kind == Kind::read)
      with_load(ld, [&](auto L) { occupancy(reinterpret_cast<const void*>(read_kernel<kW, kU, decltype(L)::value>)); });
    else if (kind == Kind::write)
      with_store(st, [&](auto S) { occupancy(reinterpret_cast<const void*>(write_kernel<kW, kU, decltype(S)::value>)); });
    else
      with_copy_ops(ld, st, [&](auto L, auto S) {
        occupancy(reinterpret_cast<const void*>(copy_kernel<kW, kU, decltype(L)::value, decltype(S)::value>));
      });
  });
  return n;
}

uint32_t expected_read_checksum(const Walk& w) {
  const uint64_t chunk_words = w.chunk_bytes() / 4;
  std::vector<uint32_t> chunk_sum(w.chunks, 0);
  for (uint64_t c = 0; c < w.chunks; ++c)
    for (uint64_t i = c * chunk_words; i < (c + 1) * chunk_words; ++i) chunk_sum[c] += word_value(i);
  uint32_t sum = 0;
  for (uint64_t warp = 0; warp < w.warps(); ++warp)
    for (uint64_t i = 0, c = w.start_chunk(warp); i < w.iters; ++i, c = (c + w.step_chunks()) % w.chunks) sum += chunk_sum[c];
  return sum;
}

std::vector<bool> visited_words(const Walk& w) {
  const uint64_t chunk_words = w.chunk_bytes() / 4;
  std::vector<bool> visited(w.words(), false);
  for (uint64_t warp = 0; warp < w.warps(); ++warp)
    for (uint64_t i = 0, c = w.start_chunk(warp); i < w.iters; ++i, c = (c + w.step_chunks()) % w.chunks)
      std::fill(visited.begin() + c * chunk_words, visited.begin() + (c + 1) * chunk_words, true);
  return visited;
}

}  // namespace mh::roofs

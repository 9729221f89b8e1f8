#include "micro/smem_banks.cuh"

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <utility>

namespace mh::smem_banks {
namespace {

// Kernel argument: the pattern's lane offsets (from the host model, so kernel and model cannot disagree).
struct Lanes {
  uint32_t byte[32];     // byte offset of lane i's element from the tile start
  uint32_t table_words;  // 4-byte words of the block's tile
};

Lanes lanes_of(const model::SmemPattern& p) {
  const std::vector<uint64_t> a = model::smem_pattern_addresses(p);
  const uint64_t bytes = (*std::max_element(a.begin(), a.end()) + kAccessesPerIter * p.width + 15) / 16 * 16;
  if (bytes > 48 * 1024)  // the launchers stay within the default dynamic shared-memory limit
    throw std::invalid_argument("smem_banks: the pattern needs more than 48 KiB of shared memory");
  Lanes l{};
  for (int i = 0; i < 32; ++i) l.byte[i] = static_cast<uint32_t>(a[i]);
  l.table_words = static_cast<uint32_t>(bytes / 4);
  return l;
}

template <class F>
void by_width(int width, F&& f) {
  switch (width) {
    case 4: return f(std::integral_constant<int, 4>{});
    case 8: return f(std::integral_constant<int, 8>{});
    case 16: return f(std::integral_constant<int, 16>{});
    default: throw std::invalid_argument("smem_banks: width must be 4, 8 or 16");
  }
}

template <int W>
struct Words {
  uint32_t w[W / 4];
};

__device__ __forceinline__ uint32_t shared_address(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }

// One shared load / store of W bytes at addr + kOff (an immediate: no address math in the loop).
// ld/st.volatile: ptxas may neither merge, hoist nor drop them (plain ld.shared in an asm volatile
// still gets CSE'd out of the loop by ptxas); "memory": ordered against the C++ accesses around them.
template <int W, int kOff>
__device__ __forceinline__ Words<W> lds(uint32_t addr) {
  Words<W> v;
  if constexpr (W == 4)
    asm volatile("ld.volatile.shared.u32 %0, [%1+%2];" : "=r"(v.w[0]) : "r"(addr), "n"(kOff) : "memory");
  else if constexpr (W == 8)
    asm volatile("ld.volatile.shared.v2.u32 {%0, %1}, [%2+%3];" : "=r"(v.w[0]), "=r"(v.w[1]) : "r"(addr), "n"(kOff) : "memory");
  else
    asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4+%5];"
                 : "=r"(v.w[0]), "=r"(v.w[1]), "=r"(v.w[2]), "=r"(v.w[3])
                 : "r"(addr), "n"(kOff)
                 : "memory");
  return v;
}

template <int W, int kOff>
__device__ __forceinline__ void sts(uint32_t addr, const Words<W>& v) {
  if constexpr (W == 4)
    asm volatile("st.volatile.shared.u32 [%0+%1], %2;" ::"r"(addr), "n"(kOff), "r"(v.w[0]) : "memory");
  else if constexpr (W == 8)
    asm volatile("st.volatile.shared.v2.u32 [%0+%1], {%2, %3};" ::"r"(addr), "n"(kOff), "r"(v.w[0]), "r"(v.w[1]) : "memory");
  else
    asm volatile("st.volatile.shared.v4.u32 [%0+%1], {%2, %3, %4, %5};" ::"r"(addr), "n"(kOff), "r"(v.w[0]), "r"(v.w[1]),
                 "r"(v.w[2]), "r"(v.w[3])
                 : "memory");
}

// The 8 requests of one iteration, request j at the pattern shifted by j elements. No address depends on a
// loaded value, so every warp keeps several requests in flight whatever order ptxas gives the adds.
template <int W, int... J>
__device__ __forceinline__ uint32_t load_iteration(uint32_t addr, std::integer_sequence<int, J...>) {
  const Words<W> v[] = {lds<W, J * W>(addr)...};
  uint32_t sum = 0;
#pragma unroll
  for (int j = 0; j < kAccessesPerIter; ++j)
#pragma unroll
    for (int k = 0; k < W / 4; ++k) sum += v[j].w[k];
  return sum;
}

template <int W, int... J>
__device__ __forceinline__ void store_iteration(uint32_t addr, const Words<W> (&v)[kAccessesPerIter],
                                                std::integer_sequence<int, J...>) {
  (sts<W, J * W>(addr, v[J]), ...);
}

using Requests = std::make_integer_sequence<int, kAccessesPerIter>;

// The only shared loads are the timed ones (the tile is filled with stores).
template <int W>
__global__ void __launch_bounds__(kThreads, min_blocks(MH_CUDA_ARCH, W)) load_kernel(Lanes lanes, int iters, uint32_t* warp_sums, ClockSpan* spans) {
  extern __shared__ uint4 tile[];
  uint32_t* words = reinterpret_cast<uint32_t*>(tile);
  for (uint32_t k = threadIdx.x; k < lanes.table_words; k += blockDim.x) words[k] = word_value(k);
  const uint32_t addr = shared_address(tile) + lanes.byte[threadIdx.x % 32];
  __syncthreads();
  const long long c0 = clock64(), t0 = global_ns();
  uint32_t sum = 0;
  for (int i = 0; i < iters; ++i) sum += load_iteration<W>(addr, Requests{});
  __syncthreads();
  if (threadIdx.x == 0) spans[blockIdx.x] = {clock64() - c0, global_ns() - t0};
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
  if (threadIdx.x % 32 == 0) warp_sums[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = sum;
}

// The only shared stores are the timed ones. Every warp stores, to each word, a value that depends on
// the word alone, so the tile is deterministic whatever the order; shared loads only in the write-back.
template <int W>
__global__ void __launch_bounds__(kThreads, min_blocks(MH_CUDA_ARCH, W)) store_kernel(Lanes lanes, int iters, uint32_t salt, uint32_t* tiles,
                                                         ClockSpan* spans) {
  extern __shared__ uint4 tile[];
  const uint32_t off = lanes.byte[threadIdx.x % 32], addr = shared_address(tile) + off;
  Words<W> v[kAccessesPerIter];
#pragma unroll
  for (int j = 0; j < kAccessesPerIter; ++j)
#pragma unroll
    for (int k = 0; k < W / 4; ++k) v[j].w[k] = stored_value(off / 4 + j * (W / 4) + k, salt);
  __syncthreads();
  const long long c0 = clock64(), t0 = global_ns();
  for (int i = 0; i < iters; ++i) store_iteration<W>(addr, v, Requests{});
  __syncthreads();
  if (threadIdx.x == 0) spans[blockIdx.x] = {clock64() - c0, global_ns() - t0};
  const uint32_t* words = reinterpret_cast<const uint32_t*>(tile);
  for (uint32_t k = threadIdx.x; k < lanes.table_words; k += blockDim.x)
    tiles[static_cast<uint64_t>(blockIdx.x) * lanes.table_words + k] = words[k];
}

// One warp. Lane i's slot (its pattern element) holds the slot's own shared address, so
// idx = smem[idx] repeats the pattern every step: a dependent chain of identical warp requests.
template <int W>
__global__ void latency_kernel(Lanes lanes, LatencyResult* out) {
  extern __shared__ uint4 tile[];
  const uint32_t lane = threadIdx.x, base = shared_address(tile), off = lanes.byte[lane];
  Words<W> slot{};
  slot.w[0] = base + off;
  *reinterpret_cast<Words<W>*>(reinterpret_cast<char*>(tile) + off) = slot;
  __syncwarp();
  uint32_t idx = lds<W, 0>(base + off).w[0];  // first load of the chain, outside the timed region
  const long long c0 = clock64();
  for (int s = 0; s < kLatencySteps; s += 8)
#pragma unroll
    for (int u = 0; u < 8; ++u) idx = lds<W, 0>(idx).w[0];
  const long long cycles = clock64() - c0;
  out->final_offset[lane] = idx - base;
  if (lane == 0) out->cycles = cycles;
}

}  // namespace

uint32_t table_bytes(const model::SmemPattern& p) { return lanes_of(p).table_words * 4; }

const void* throughput_kernel(const model::SmemPattern& p, bool store) {
  const void* k = nullptr;
  by_width(p.width, [&](auto w) {
    constexpr int W = decltype(w)::value;
    k = store ? reinterpret_cast<const void*>(store_kernel<W>) : reinterpret_cast<const void*>(load_kernel<W>);
  });
  return k;
}

int resident_blocks_per_sm(const model::SmemPattern& p, bool store) {
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, throughput_kernel(p, store), kThreads, table_bytes(p)));
  return n;
}

void launch_load(const Plan& p, uint32_t* warp_sums, ClockSpan* spans, cudaStream_t s) {
  const Lanes l = lanes_of(p.pattern);
  by_width(p.pattern.width, [&](auto w) {
    load_kernel<decltype(w)::value><<<p.blocks, kThreads, l.table_words * 4, s>>>(l, p.iters, warp_sums, spans);
    CUDA_CHECK_LAUNCH("smem_banks load_kernel");
  });
}

void launch_store(const Plan& p, uint32_t salt, uint32_t* tiles, ClockSpan* spans, cudaStream_t s) {
  const Lanes l = lanes_of(p.pattern);
  by_width(p.pattern.width, [&](auto w) {
    store_kernel<decltype(w)::value><<<p.blocks, kThreads, l.table_words * 4, s>>>(l, p.iters, salt, tiles, spans);
    CUDA_CHECK_LAUNCH("smem_banks store_kernel");
  });
}

void launch_latency(const model::SmemPattern& p, LatencyResult* out, cudaStream_t s) {
  const Lanes l = lanes_of(p);
  by_width(p.width, [&](auto w) {
    latency_kernel<decltype(w)::value><<<1, 32, l.table_words * 4, s>>>(l, out);
    CUDA_CHECK_LAUNCH("smem_banks latency_kernel");
  });
}

std::vector<uint32_t> words_per_iteration(const model::SmemPattern& p) {
  std::vector<uint32_t> words;
  for (uint64_t a : model::smem_pattern_addresses(p))
    for (int j = 0; j < kAccessesPerIter; ++j)
      for (int k = 0; k < p.width / 4; ++k) words.push_back(static_cast<uint32_t>(a / 4 + j * (p.width / 4) + k));
  return words;
}

uint32_t expected_warp_sum(const Plan& p) {
  uint32_t per_iter = 0;
  for (uint32_t w : words_per_iteration(p.pattern)) per_iter += word_value(w);
  return per_iter * static_cast<uint32_t>(p.iters);
}

}  // namespace mh::smem_banks

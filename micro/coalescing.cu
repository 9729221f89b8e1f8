#include "micro/coalescing.cuh"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mh::coalescing {
namespace {

struct Args {
  uint32_t mask;  // R - 1
  uint32_t stride;
  uint64_t region_elems;
  int iters;
  bool per_block;
};

// hbm/l2 loads cache at L2 only (so a level means what it says); l1 loads cache in L1.
template <bool kL1>
__device__ __forceinline__ uint32_t load(const uint32_t* p) {
  if constexpr (kL1)
    return *p;  // a plain global load caches in L1 (LDG.E); __ldca adds .STRONG.SM and extra address math
  else
    return __ldcg(p);
}

// 32-bit request and element offsets (make_plan keeps a region under 2^32 elements) keep the address
// arithmetic to a few instructions per load, so that the loads, not the issue slots, set the pace.
template <bool kWrite, bool kL1>
__global__ void __launch_bounds__(kMaxThreads, MH_MIN_BLOCKS(kMaxThreads)) strided_kernel(uint32_t* buf, Args a, uint32_t* checksum) {
  const uint32_t lane = threadIdx.x & 31;
  const uint32_t W = a.per_block ? blockDim.x / 32 : gridDim.x * blockDim.x / 32;
  const uint32_t w = a.per_block ? threadIdx.x / 32 : (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const uint64_t region = a.per_block ? uint64_t(blockIdx.x) * a.region_elems : 0;
  const uint32_t first = static_cast<uint32_t>(region) + lane * a.stride;  // element index mod 2^32
  char* base = reinterpret_cast<char*>(buf + region + lane * a.stride);
  const uint32_t span = 32 * a.stride, span_bytes = 4 * span;
  uint32_t r = w & a.mask;
  uint32_t sum = 0;
  for (int it = 0; it < a.iters; it += kUnroll) {
    uint32_t req[kUnroll];
#pragma unroll
    for (int j = 0; j < kUnroll; ++j) {
      req[j] = r;
      r = (r + W) & a.mask;
    }
    // Byte address base + req * span_bytes: one wide multiply-add (IMAD.WIDE.U32) per access.
    if constexpr (kWrite) {
#pragma unroll
      for (int j = 0; j < kUnroll; ++j)
        *reinterpret_cast<uint32_t*>(base + uint64_t(req[j]) * span_bytes) = element_value(first + req[j] * span);
    } else {
      uint32_t v[kUnroll];
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) v[j] = load<kL1>(reinterpret_cast<const uint32_t*>(base + uint64_t(req[j]) * span_bytes));
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) sum += v[j];
    }
  }
  if constexpr (!kWrite) {
    // One atomic per warp keeps the checksum off the critical path.
    for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, o);
    if (lane == 0) atomicAdd(checksum, sum);
  }
}

__global__ void fill_kernel(uint32_t* buf, uint64_t n) {
  for (uint64_t i = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += uint64_t(gridDim.x) * blockDim.x)
    buf[i] = element_value(i);
}

Args args_of(const Plan& p) {
  return {p.requests_per_region - 1, static_cast<uint32_t>(p.stride), p.region_elems(), p.iters, p.per_block_region()};
}

template <bool kWrite, bool kL1>
void launch(const Plan& p, uint32_t* buf, uint32_t* checksum, cudaStream_t s) {
  static bool configured = false;
  if (kL1 && !configured) {  // the l1 working set wants the whole unified L1, no shared-memory carve-out
    CUDA_CHECK(cudaFuncSetAttribute(strided_kernel<kWrite, kL1>, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
    configured = true;
  }
  strided_kernel<kWrite, kL1><<<p.blocks, p.threads, 0, s>>>(buf, args_of(p), checksum);
  CUDA_CHECK_LAUNCH("strided_kernel");
}

}  // namespace

Plan make_plan(Level level, int stride, int blocks, int threads, uint64_t max_region_bytes, int iters) {
  if (stride < 1 || stride > 4096) throw std::invalid_argument("stride must be in [1, 4096]");
  if (blocks < 1 || threads < 32 || threads % 32 || threads > kMaxThreads)
    throw std::invalid_argument("threads must be a multiple of 32 in [32, " + std::to_string(kMaxThreads) + "], blocks >= 1");
  Plan p;
  p.level = level;
  p.stride = stride;
  p.blocks = blocks;
  p.threads = threads;
  const uint64_t fit = max_region_bytes / (128ull * stride);
  if (fit == 0) throw std::invalid_argument("working set smaller than one request");
  uint64_t R = 1;
  while (R * 2 <= fit && R * 2 * 32 * stride < (1ull << 32)) R *= 2;
  p.requests_per_region = static_cast<uint32_t>(R);
  const uint64_t W = p.warps_per_group();
  if (level == Level::hbm) {
    if (R % (W * kUnroll)) throw std::invalid_argument("hbm: warps x kUnroll must divide the requests in the region");
    p.iters = static_cast<int>(R / W);
  } else {
    p.iters = (iters + kUnroll - 1) / kUnroll * kUnroll;
    if (uint64_t(p.iters) * W < R) throw std::invalid_argument("iters too small to cover the working set once");
  }
  return p;
}

void launch_read(const Plan& p, const uint32_t* buf, uint32_t* checksum, cudaStream_t s) {
  if (p.level == Level::l1)
    launch<false, true>(p, const_cast<uint32_t*>(buf), checksum, s);
  else
    launch<false, false>(p, const_cast<uint32_t*>(buf), checksum, s);
}

void launch_write(const Plan& p, uint32_t* buf, cudaStream_t s) {
  if (p.level == Level::l1)
    launch<true, true>(p, buf, nullptr, s);
  else
    launch<true, false>(p, buf, nullptr, s);
}

void fill_values(uint32_t* buf, uint64_t elems, cudaStream_t s) {
  fill_kernel<<<1024, 256, 0, s>>>(buf, elems);
  CUDA_CHECK_LAUNCH("fill_kernel");
}

uint32_t expected_read_checksum(const Plan& p) {
  const uint32_t W = p.warps_per_group(), mask = p.requests_per_region - 1;
  uint32_t sum = 0;
  for (int g = 0; g < p.groups(); ++g)
    for (uint32_t w = 0; w < W; ++w)
      for (int i = 0; i < p.iters; ++i) {
        const uint64_t base = g * p.region_elems() + uint64_t((w + uint64_t(i) * W) & mask) * 32 * p.stride;
        for (uint64_t lane = 0; lane < 32; ++lane) sum += element_value(base + lane * p.stride);
      }
  return sum;
}

bool element_touched(const Plan& p, uint64_t i) {
  return (i % p.region_elems()) % p.stride == 0;  // make_plan guarantees every request is made
}

}  // namespace mh::coalescing

#include "micro/coalescing.cuh"

#include "harness/device_info.cuh"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace mh::coalescing {
namespace {

struct Args {
  uint64_t region_elems;    // R requests
  uint32_t step_elems;      // a step: step_chunks chunks of U requests (< region_elems < 2^32)
  uint32_t back_elems;      // region_elems - step_elems: a step from here or beyond wraps
  uint32_t stride;          // the generic kernel's; a compiled one has its own
  uint32_t chunk_requests;  // U: the generic kernel's; kUnroll in a compiled one
  uint32_t chunks;          // C
  uint32_t steps;           // iters / U
  bool per_block, front;
};

// hbm/l2 loads cache at L2 only (so a level means what it says); l1 loads cache in L1.
template <bool kL1>
__device__ __forceinline__ uint32_t load(const uint32_t* p) {
  if constexpr (kL1)
    return *p;  // a plain global load caches in L1 (LDG.E); __ldca adds .STRONG.SM and extra address math
  else
    return __ldcg(p);
}

// One step of a warp is a chunk: U consecutive requests, access j of lane l at p + j * 32 * stride, p
// the chunk's start plus l * stride. With the stride compiled in (kStride > 0, then U = kUnroll) the
// offsets are immediates, so a step is U loads or stores at [p + imm], one address, the adds and one
// wrap compare. sm_90 SASS of the stride-1 read loop (l1; l2/hbm alike with LDG.E.STRONG.GPU):
// IMAD.WIDE.U32 (p = base + 4 off), 16 LDG.E [R.64+imm], 8 IADD3 (the sum, three operands),
// ISETP + SEL + IADD3 (the step, mod the region), ISETP + BRA and a uniform UIADD3 (the counter):
// 30 issue slots for 16 loads of 128 bytes, under 2 per load, where L1 serves one 128-byte wavefront
// per clock and 4 schedulers issue 4 instructions: the loads, not the issue slots, set the pace. The
// write loop: 16 STG.E at immediate offsets, 16 adds for the values (plus IMAD + IADD3 for
// element_value), the same address, step and counter: 40 slots. The kernel before this one spent ~6
// per load (a masked walk and a wide multiply-add per access) and reached 53 B/clk/SM from L1.
// kStride 0 is the generic kernel: the same order, any stride, U = min(kUnroll, R) read from Args.
// Element indices are 32-bit (mod 2^32; make_plan keeps buffers under 2^32 elements).
template <bool kWrite, bool kL1, int kStride>
__global__ void __launch_bounds__(kMaxThreads, MH_MIN_BLOCKS(kMaxThreads)) strided_kernel(uint32_t* buf, Args a, uint32_t* checksum) {
  const uint32_t stride = kStride > 0 ? kStride : a.stride;
  const uint32_t U = kStride > 0 ? kUnroll : a.chunk_requests;
  const uint32_t span = 32 * stride;  // elements from one request to the next
  const uint32_t lane = threadIdx.x & 31, warp = threadIdx.x / 32, warps = blockDim.x / 32;
  // Walker number v of W in the group, and its first chunk (Plan::start_chunk).
  const uint32_t W = a.per_block ? warps : gridDim.x * warps;
  const uint32_t v = a.per_block ? warp : a.front ? blockIdx.x * warps + warp : warp * gridDim.x + blockIdx.x;
  const uint32_t start = a.front ? v % a.chunks : static_cast<uint32_t>(uint64_t(v) * a.chunks / W);
  const uint64_t region = a.per_block ? uint64_t(blockIdx.x) * a.region_elems : 0;
  uint32_t* base = buf + region + lane * stride;
  asm("" : "+l"(base));  // opaque: else ptxas re-adds region + lane * stride to every step's address
  __builtin_assume(__isGlobal(base));  // and still a global pointer (LDG/STG, not generic LD/ST)
  const uint32_t e0 = static_cast<uint32_t>(region) + lane * stride;  // element index of *base, mod 2^32
  uint32_t off = start * U * span;                                     // elements from base to this chunk
  uint32_t sum = 0;
#pragma unroll 1
  for (uint32_t n = a.steps; n; --n) {
    uint32_t* const p = base + off;
    if constexpr (kWrite) {
      const uint32_t v0 = element_value(e0 + off);  // element_value(e + j * span) = v0 + j * span * 2654435761
#pragma unroll
      for (uint32_t j = 0; j < kUnroll; ++j)
        if (j < U) p[j * span] = v0 + j * span * 2654435761u;
    } else {
      uint32_t x[kUnroll];
#pragma unroll
      for (uint32_t j = 0; j < kUnroll; ++j) x[j] = j < U ? load<kL1>(p + j * span) : 0u;
#pragma unroll
      for (int j = 0; j < kUnroll; ++j) sum += x[j];
    }
    off = off >= a.back_elems ? off - a.back_elems : off + a.step_elems;  // + step, mod the region
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
  const uint64_t step = uint64_t(p.step_chunks()) * p.chunk_requests() * 32 * p.stride;
  return {p.region_elems(),
          static_cast<uint32_t>(step),
          static_cast<uint32_t>(p.region_elems() - step),
          static_cast<uint32_t>(p.stride),
          p.chunk_requests(),
          p.chunks(),
          static_cast<uint32_t>(p.iters / p.chunk_requests()),
          p.per_block_region(),
          p.front()};
}

template <int v>
using Int = std::integral_constant<int, v>;

// fn(Int<stride>) for a compiled stride, fn(Int<0>) (the generic kernel) for any other.
template <class Fn, size_t... I>
void with_stride(int stride, Fn&& fn, std::index_sequence<I...>) {
  if (!((stride == kStrides[I] && (fn(Int<kStrides[I]>{}), true)) || ...)) fn(Int<0>{});
}

// The l1 working set wants the whole unified L1: no shared-memory carve-out.
bool prefer_l1(const void* kernel) {
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, 0));
  return true;
}

template <bool kWrite>
void launch(const Plan& p, uint32_t* buf, uint32_t* checksum, cudaStream_t s) {
  auto go = [&](auto S, auto L1) {
    constexpr auto kernel = strided_kernel<kWrite, decltype(L1)::value, decltype(S)::value>;
    if constexpr (decltype(L1)::value) {
      static const bool configured = prefer_l1(reinterpret_cast<const void*>(kernel));
      (void)configured;
    }
    kernel<<<p.blocks, p.threads, 0, s>>>(buf, args_of(p), checksum);
    CUDA_CHECK_LAUNCH("strided_kernel");
  };
  with_stride(
      compiled_stride(p) ? p.stride : 0,
      [&](auto S) { p.level == Level::l1 ? go(S, std::true_type{}) : go(S, std::false_type{}); },
      std::make_index_sequence<std::size(kStrides)>{});
}

// The largest power of two R with R * 128 * stride <= max_region_bytes and R * 32 * stride < 2^32.
uint32_t requests_fitting(int stride, uint64_t max_region_bytes) {
  if (stride < 1 || stride > 4096) throw std::invalid_argument("stride must be in [1, 4096]");
  const uint64_t fit = max_region_bytes / (128ull * stride);
  if (fit == 0) throw std::invalid_argument("working set smaller than one request");
  uint64_t R = 1;
  while (R * 2 <= fit && R * 2 * 32 * stride < (1ull << 32)) R *= 2;
  return static_cast<uint32_t>(R);
}

// Calls fn(group, request) for every request one launch makes.
template <class Fn>
void for_each_request(const Plan& p, Fn&& fn) {
  const uint32_t W = p.warps_per_group();
  for (int g = 0; g < p.groups(); ++g)
    for (uint32_t v = 0; v < W; ++v)
      for (int i = 0; i < p.iters; ++i) fn(g, p.request(v, static_cast<uint32_t>(i)));
}

}  // namespace

Residency strided_residency(bool write, Level level, int stride) {
  Residency r{0, 1 << 30};
  auto take = [&](auto W, auto S) {
    constexpr bool kW = decltype(W)::value;
    constexpr int kS = decltype(S)::value;
    const void* k = level == Level::l1 ? reinterpret_cast<const void*>(strided_kernel<kW, true, kS>)
                                       : reinterpret_cast<const void*>(strided_kernel<kW, false, kS>);
    const Residency one = compiled_residency(k, kMaxThreads, 0);
    r.regs_per_thread = std::max(r.regs_per_thread, one.regs_per_thread);
    r.blocks_per_sm = std::min(r.blocks_per_sm, one.blocks_per_sm);
  };
  for (int s : {stride, 0})
    with_stride(
        s, [&](auto S) { write ? take(std::true_type{}, S) : take(std::false_type{}, S); },
        std::make_index_sequence<std::size(kStrides)>{});
  return r;
}

Plan make_plan(Level level, int stride, int blocks, int threads, uint64_t max_region_bytes, int iters) {
  if (blocks < 1 || threads < 32 || threads % 32 || threads > kMaxThreads)
    throw std::invalid_argument("threads must be a multiple of 32 in [32, " + std::to_string(kMaxThreads) + "], blocks >= 1");
  Plan p;
  p.level = level;
  p.stride = stride;
  p.blocks = blocks;
  p.threads = threads;
  p.requests_per_region = requests_fitting(stride, max_region_bytes);
  if (p.buffer_elems() >= (1ull << 32)) throw std::invalid_argument("working set of 2^32 elements or more");
  const uint64_t R = p.requests_per_region, W = p.warps_per_group();
  if (level == Level::hbm) {
    if (R % (W * kUnroll)) throw std::invalid_argument("hbm: warps x kUnroll must divide the requests in the region");
    p.iters = static_cast<int>(R / W);
  } else {
    p.iters = (iters + kUnroll - 1) / kUnroll * kUnroll;
    // The walk's starts are at most ceil(C / W) chunks apart: that many steps cover the region.
    if (uint64_t(p.iters / p.chunk_requests()) < (p.chunks() + W - 1) / W)
      throw std::invalid_argument("iters too small to cover the working set once");
  }
  return p;
}

Plan make_stream_plan(int stride, int threads, uint64_t max_region_bytes) {
  if (threads < 32 || threads % 32 || threads > kMaxThreads)
    throw std::invalid_argument("threads must be a multiple of 32 in [32, " + std::to_string(kMaxThreads) + "]");
  const uint64_t per_block = uint64_t(kUnroll) * (threads / 32);  // requests one block covers
  const uint64_t R = requests_fitting(stride, max_region_bytes);
  if (R % per_block) throw std::invalid_argument("stream: the region holds fewer requests than one block makes");
  return make_plan(Level::hbm, stride, static_cast<int>(R / per_block), threads, max_region_bytes, 0);
}

bool compiled_stride(const Plan& p) {
  return std::find(std::begin(kStrides), std::end(kStrides), p.stride) != std::end(kStrides) &&
         p.requests_per_region >= uint32_t(kUnroll);
}

void launch_read(const Plan& p, const uint32_t* buf, uint32_t* checksum, cudaStream_t s) {
  launch<false>(p, const_cast<uint32_t*>(buf), checksum, s);
}

void launch_write(const Plan& p, uint32_t* buf, cudaStream_t s) { launch<true>(p, buf, nullptr, s); }

void fill_values(uint32_t* buf, uint64_t elems, cudaStream_t s) {
  fill_kernel<<<1024, 256, 0, s>>>(buf, elems);
  CUDA_CHECK_LAUNCH("fill_kernel");
}

std::vector<uint32_t> request_counts(const Plan& p) {
  std::vector<uint32_t> n(uint64_t(p.groups()) * p.requests_per_region, 0);
  for_each_request(p, [&](int g, uint32_t q) { ++n[uint64_t(g) * p.requests_per_region + q]; });
  return n;
}

uint32_t expected_read_checksum(const Plan& p) {
  const std::vector<uint32_t> n = request_counts(p);
  uint32_t sum = 0;
  for (uint64_t gq = 0; gq < n.size(); ++gq) {  // gq = g * R + q: its first element is gq * 32 * stride
    uint32_t request = 0;
    for (uint64_t lane = 0; lane < 32; ++lane) request += element_value((gq * 32 + lane) * p.stride);
    sum += n[gq] * request;
  }
  return sum;
}

std::vector<bool> touched_elements(const Plan& p) {
  const std::vector<uint32_t> n = request_counts(p);
  std::vector<bool> touched(p.buffer_elems(), false);
  for (uint64_t gq = 0; gq < n.size(); ++gq)
    if (n[gq])
      for (uint64_t lane = 0; lane < 32; ++lane) touched[(gq * 32 + lane) * p.stride] = true;
  return touched;
}

}  // namespace mh::coalescing

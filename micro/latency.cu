#include "micro/latency.cuh"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace mh::latency {
namespace {

// SASS on sm_90 (nvcc 13.0; `cuobjdump -sass build/gpubench`, chase_kernel and spread_kernel): the timed
// loop is unrolled 4 times into LDG.E.64 (ca) / LDG.E.64.STRONG.GPU (cg), each taking the previous LDG's
// destination register as its address, with only the loop counter's IADD3/ISETP between them and no
// other load; a 1-load remainder loop follows; CS2R SR_CLOCKLO and SR_GLOBALTIMERLO bracket both. The
// warm-up loops keep their LDGs only because their values reach a store (sink_if_impossible): without
// it ptxas deleted them.
template <Op kOp>
__device__ __forceinline__ uint64_t load(uint64_t p) {
  uint64_t v;
  // volatile keeps NVVM from merging or moving loads; ptxas still deletes a load whose value is dead,
  // so the warm-up reads fold their values into a sink (sink_if_impossible).
  if constexpr (kOp == Op::ca)  // a plain ld.global: LDG.E.64, which sm_70+ caches in L1 (ld.global.ca
    asm volatile("ld.global.u64 %0, [%1];" : "=l"(v) : "l"(p));  // would be LDG.E.64.STRONG.SM)
  else
    asm volatile("ld.global.cg.u64 %0, [%1];" : "=l"(v) : "l"(p));
  return v;
}

// A store that never happens (ring pointers are never all ones) but that the compiler cannot drop, so
// the loads feeding `acc` stay.
__device__ __forceinline__ void sink_if_impossible(uint64_t acc, uint64_t* sink) {
  if (acc == ~0ull) *sink = acc;
}

__device__ __forceinline__ int sm_id() {
  int r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}

// The timed part every chase kernel shares: `warm` untimed loads, then `loads` timed ones.
template <Op kOp>
__device__ __forceinline__ void timed_chase(uint64_t base, uint64_t stride, uint64_t warm, uint64_t loads,
                                            ChaseResult* out) {
  uint64_t p = base;
#pragma unroll 1
  for (uint64_t i = 0; i < warm; ++i) p = load<kOp>(p);
  const long long c0 = clock64(), t0 = global_ns();
#pragma unroll 4
  for (uint64_t i = 0; i < loads; ++i) p = load<kOp>(p);
  // The clocks may be read while the last load is in flight: one latency in `loads` (>= 512) of them.
  const long long c1 = clock64(), t1 = global_ns();
  *out = {(p - base) / stride, c1 - c0, t1 - t0, t0, sm_id()};
}

template <Op kOp, Carveout kCarve>
__global__ void chase_kernel(uint64_t base, uint64_t slots, uint64_t stride, uint64_t warm, uint64_t loads,
                             bool warm_l1, ChaseResult* out) {
  if (warm_l1) {  // the warp reads every slot once, 32 independent loads at a time: the L1 holds what fits
    uint64_t acc = 0;
    for (uint64_t k = threadIdx.x; k < slots; k += blockDim.x) acc ^= load<kOp>(base + k * stride);
    sink_if_impossible(acc, &out->end_slot);
  }
  __syncwarp();
  if (threadIdx.x == 0) timed_chase<kOp>(base, stride, warm, loads, out);
}

__global__ void fill_kernel(uint64_t base, const uint32_t* next, uint64_t slots, uint64_t stride) {
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < slots; k += uint64_t(gridDim.x) * blockDim.x)
    *reinterpret_cast<uint64_t*>(base + k * stride) = base + next[k] * stride;
}

__global__ void warm_l2_kernel(uint64_t base, uint64_t slots, uint64_t stride, uint64_t* sink) {
  uint64_t acc = 0;
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < slots; k += uint64_t(gridDim.x) * blockDim.x)
    acc ^= load<Op::cg>(base + k * stride);
  sink_if_impossible(acc, sink);
}

__global__ void now_kernel(long long* t) { *t = global_ns(); }

// From now_kernel's reading to the first slot: covers the launch of spread_kernel after it (a few us
// back to back) with room to spare; a late start would run the first chases together (overlap error).
constexpr long long kStartMarginNs = 200000;

template <Op kOp>
__global__ void spread_kernel(uint64_t base, uint64_t stride, uint64_t warm, uint64_t loads, long long slot_ns,
                              const long long* t_start, ChaseResult* out) {
  if (threadIdx.x != 0) return;
  const long long go = *t_start + kStartMarginNs + blockIdx.x * slot_ns;
  while (global_ns() < go) {
  }
  timed_chase<kOp>(base, stride, warm, loads, &out[blockIdx.x]);
}

// A grid filling the chip for the fill and warm kernels.
int wide_grid(uint64_t slots) {
  const DeviceFacts& f = current_device_facts();
  return static_cast<int>(std::clamp<uint64_t>((slots + 255) / 256, 1, uint64_t(f.sm_count) * 8));
}

using ChaseFn = void (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, bool, ChaseResult*);

// Once per instantiation: the carve-out it is named for (0 % or 100 % shared memory).
template <Op kOp, Carveout kCarve>
ChaseFn configured() {
  static const ChaseFn fn = [] {
    const ChaseFn f = chase_kernel<kOp, kCarve>;
    if constexpr (kCarve != Carveout::none)
      CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributePreferredSharedMemoryCarveout,
                                      kCarve == Carveout::min ? 0 : cudaSharedmemCarveoutMaxShared));
    return f;
  }();
  return fn;
}

ChaseFn chase_fn(Op op, Carveout c) {
  if (op == Op::cg) return configured<Op::cg, Carveout::none>();  // the carve-out means nothing to the L2
  switch (c) {
    case Carveout::min: return configured<Op::ca, Carveout::min>();
    case Carveout::max: return configured<Op::ca, Carveout::max>();
    default: return configured<Op::ca, Carveout::none>();
  }
}

using SpreadFn = void (*)(uint64_t, uint64_t, uint64_t, uint64_t, long long, const long long*, ChaseResult*);

template <Op kOp>
SpreadFn spread_configured() {
  static const SpreadFn fn = [] {
    const SpreadFn f = spread_kernel<kOp>;
    CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(one_block_per_sm_smem(current_device_facts()))));
    CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
    int fit = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&fit, f, 32, one_block_per_sm_smem(current_device_facts())));
    if (fit != 1)
      throw std::runtime_error("spread_kernel: " + std::to_string(fit) + " blocks per SM fit with " +
                               std::to_string(one_block_per_sm_smem(current_device_facts())) + " B of shared memory, not 1");
    return f;
  }();
  return fn;
}

}  // namespace

Ring::Ring(const std::vector<uint32_t>& next, uint64_t stride) : slots_(next.size()), stride_(stride) {
  if (next.empty() || stride < sizeof(uint64_t) || stride % sizeof(uint64_t))
    throw std::invalid_argument("a ring needs slots and a stride that is a multiple of 8 bytes");
  buf_ = DeviceBuffer<unsigned char>(slots_ * stride_);
  DeviceBuffer<uint32_t> dnext(next);
  const uint64_t base = reinterpret_cast<uint64_t>(buf_.data());
  fill_kernel<<<wide_grid(slots_), 256>>>(base, dnext.data(), slots_, stride_);
  CUDA_CHECK_LAUNCH("fill_kernel");
  CUDA_CHECK(cudaDeviceSynchronize());
}

std::vector<uint32_t> Ring::download() const {
  const std::vector<unsigned char> raw = buf_.download();
  const uint64_t base = reinterpret_cast<uint64_t>(buf_.data());
  std::vector<uint32_t> next(slots_);
  for (uint64_t k = 0; k < slots_; ++k) {
    uint64_t p;
    std::copy_n(raw.data() + k * stride_, sizeof p, reinterpret_cast<unsigned char*>(&p));
    const bool ok = p >= base && (p - base) % stride_ == 0 && (p - base) / stride_ < slots_;
    next[k] = ok ? static_cast<uint32_t>((p - base) / stride_) : UINT32_MAX;
  }
  return next;
}

void warm_l2(const Ring& r, cudaStream_t s) {
  static DeviceBuffer<uint64_t> sink(1);
  warm_l2_kernel<<<wide_grid(r.slots()), 256, 0, s>>>(reinterpret_cast<uint64_t>(r.base()), r.slots(), r.stride(),
                                                      sink.data());
  CUDA_CHECK_LAUNCH("warm_l2_kernel");
}

void chase(const Ring& r, const ChaseConfig& c, ChaseResult* out, cudaStream_t s) {
  chase_fn(c.op, c.carveout)<<<1, 32, 0, s>>>(reinterpret_cast<uint64_t>(r.base()), r.slots(), r.stride(),
                                               c.warm_loads, c.loads, c.warm_l1, out);
  CUDA_CHECK_LAUNCH("chase_kernel");
}

void chase_every_sm(const Ring& r, const SpreadConfig& c, ChaseResult* out, cudaStream_t s) {
  const DeviceFacts& f = current_device_facts();
  const SpreadFn fn = c.op == Op::ca ? spread_configured<Op::ca>() : spread_configured<Op::cg>();
  static DeviceBuffer<long long> t_start(1);
  now_kernel<<<1, 1, 0, s>>>(t_start.data());
  CUDA_CHECK_LAUNCH("now_kernel");
  fn<<<f.sm_count, 32, one_block_per_sm_smem(current_device_facts()), s>>>(reinterpret_cast<uint64_t>(r.base()), r.stride(), c.warm_loads,
                                                      c.loads, c.slot_ns, t_start.data(), out);
  CUDA_CHECK_LAUNCH("spread_kernel");
}

int overlapping_chases(std::vector<ChaseResult> res) {
  std::sort(res.begin(), res.end(), [](const ChaseResult& a, const ChaseResult& b) { return a.start_ns < b.start_ns; });
  int n = 0;
  long long end = res.empty() ? 0 : res[0].start_ns + res[0].ns;  // the latest end so far
  for (size_t i = 1; i < res.size(); ++i) {
    n += res[i].start_ns < end;
    end = std::max(end, res[i].start_ns + res[i].ns);
  }
  return n;
}

}  // namespace mh::latency

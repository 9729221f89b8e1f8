#include "micro/sync.cuh"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace mh::sync {
namespace {

// SASS on sm_90 (nvcc 13.0), `cuobjdump -sass build/gpubench | grep -E "BAR|WARPSYNC"`:
//   every barrier_kernel: BAR.SYNC.DEFER_BLOCKING 0x0 twice, around the timed span;
//   syncthreads, in the loop: 4 more BAR.SYNC.DEFER_BLOCKING 0x0 with the 8 IMADs of one step. ptxas
//     moves register-only IMADs across a BAR (2, 1, 1, 4 between them), which keeps the per-step sum;
//   named_barrier, in the loop: 4 BAR.SYNC.DEFER_BLOCKING R<n>, R<n>: ptxas packs (count << 16) | id into
//     one register and rebuilds it around each barrier (SHF.R, SHF.L, LOP3), as it does for any barrier
//     with register operands (CUTLASS's NamedBarrier too); those 3 ALU instructions are part of the cost;
//   syncwarp: no WARPSYNC at all. In converged code ptxas drops __syncwarp() (with an __activemask() mask too),
//     so this loop is the baseline's and syncwarp/* reads the method's zero.
template <Kind K>
__device__ __forceinline__ void barrier(uint32_t id, uint32_t count) {
  if constexpr (K == Kind::syncthreads) {
    __syncthreads();
  } else if constexpr (K == Kind::syncwarp) {
    __syncwarp();
  } else if constexpr (K == Kind::named) {
    // "memory": the exchange's shared-memory accesses must stay on their side of the barrier.
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
  }
}

// At most 32 registers a thread, so registers never cap residency below 2048 threads per SM (sm_80/sm_90).
template <Kind K, bool kExchange>
__global__ void __maxnreg__(kRegisterCap) barrier_kernel(int steps, uint32_t* out, ClockSpan* spans) {
  static_assert(!kExchange || K != Kind::none, "the exchange is a race without a barrier");
  static_assert(kPerStep % 2 == 0, "the exchange alternates two buffers per barrier");
  extern __shared__ uint32_t buf[];  // sized to force residency; the exchange uses 2 * blockDim.x of it
  const int tid = threadIdx.x, T = blockDim.x;
  const uint32_t group = group_size(K, T), id = 1 + tid / group;
  const int partner = exchange_partner(K, tid, T);
  uint32_t x = chain_start(blockIdx.x * T + tid);
  __syncthreads();  // the span starts with every warp of the block present
  long long c0 = 0, t0 = 0;
  if (tid == 0) {
    c0 = clock64();
    t0 = global_ns();
  }
#pragma unroll 1
  for (int s = 0; s < steps; ++s) {
#pragma unroll
    for (int j = 0; j < kPerStep; ++j) {
#pragma unroll
      for (int i = 0; i < kChain; ++i) x = chain_link(x);
      // Two buffers: a thread rewrites buffer j & 1 only after the next barrier, so its partner has read it.
      if constexpr (kExchange) buf[(j & 1) * T + tid] = x;
      barrier<K>(id, group);
      if constexpr (kExchange) x ^= buf[(j & 1) * T + partner];
    }
  }
  out[blockIdx.x * T + tid] = x;
  __syncthreads();  // the span ends when the block's last warp is done
  if (tid == 0) spans[blockIdx.x] = {clock64() - c0, global_ns() - t0};
}

using KernelFn = void (*)(int, uint32_t*, ClockSpan*);

// Once per instantiation: allow up to the opt-in shared memory per block, and ask for the largest
// shared-memory carve-out so that the occupancy API and the launch agree on what fits.
template <Kind K, bool kExchange>
KernelFn configured() {
  static const KernelFn fn = [] {
    const KernelFn f = barrier_kernel<K, kExchange>;
    const int optin = static_cast<int>(current_device_facts().smem_per_block_optin_bytes);
    CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
    CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
    return f;
  }();
  return fn;
}

KernelFn kernel_of(const Config& c) {
  switch (c.kind) {
    case Kind::syncthreads: return c.exchange ? configured<Kind::syncthreads, true>() : configured<Kind::syncthreads, false>();
    case Kind::syncwarp: return c.exchange ? configured<Kind::syncwarp, true>() : configured<Kind::syncwarp, false>();
    case Kind::named: return c.exchange ? configured<Kind::named, true>() : configured<Kind::named, false>();
    default: return configured<Kind::none, false>();  // make_config refuses none with the exchange
  }
}

}  // namespace

Config make_config(const DeviceFacts& f, Kind kind, int threads, int blocks_per_sm, int steps, bool exchange) {
  if (threads < 32 || threads > 1024 || threads % 32) throw std::invalid_argument("threads must be a multiple of 32 in [32, 1024]");
  if (blocks_per_sm < 1 || steps < 1) throw std::invalid_argument("blocks_per_sm and steps must be >= 1");
  if (exchange && kind == Kind::none) throw std::invalid_argument("the exchange needs a barrier");
  // The system's shared memory per block (1 KiB on sm_80/sm_90) counts against the SM too.
  const long long per_block =
      static_cast<long long>(f.smem_per_sm_bytes) / blocks_per_sm - static_cast<long long>(f.reserved_smem_per_block_bytes);
  Config c;
  c.kind = kind;
  c.threads = threads;
  c.blocks_per_sm = blocks_per_sm;
  c.blocks = blocks_per_sm * f.sm_count;
  c.smem_bytes = static_cast<size_t>(std::clamp<long long>(per_block, 0, f.smem_per_block_optin_bytes)) / 128 * 128;
  c.steps = steps;
  c.exchange = exchange;
  if (c.smem_bytes < 2 * sizeof(uint32_t) * threads)  // the exchange's two buffers
    throw std::invalid_argument(std::to_string(blocks_per_sm) + " blocks per SM leave too little shared memory per block");
  return c;
}

Config make_config(Kind kind, int threads, int blocks_per_sm, int steps, bool exchange) {
  return make_config(current_device_facts(), kind, threads, blocks_per_sm, steps, exchange);
}

Launch launch_of(const Config& c) {
  Launch l;
  l.threads = c.threads;
  l.blocks_per_sm = c.blocks_per_sm;
  l.blocks = c.blocks;
  l.smem_per_block = c.smem_bytes;
  l.regs_per_thread = kRegisterCap;
  l.device_bytes = static_cast<size_t>(c.blocks) * (c.threads * sizeof(uint32_t) + sizeof(ClockSpan));
  return l;
}

std::string shape_unfit_reason(const DeviceFacts& f, const Shape& s) {
  try {
    return check_launch(f, launch_of(make_config(f, Kind::syncthreads, s.threads, s.blocks_per_sm, 1)));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

int resident_blocks_per_sm(const Config& c) {
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, kernel_of(c), c.threads, c.smem_bytes));
  return n;
}

void launch(const Config& c, uint32_t* out, ClockSpan* spans, cudaStream_t s) {
  kernel_of(c)<<<c.blocks, c.threads, c.smem_bytes, s>>>(c.steps, out, spans);
  CUDA_CHECK_LAUNCH("barrier_kernel");
}

std::vector<uint32_t> expected_out(const Config& c) {
  const int T = c.threads;
  std::vector<uint32_t> out(static_cast<size_t>(c.blocks) * T), before(T);
  for (int b = 0; b < c.blocks; ++b) {
    uint32_t* x = out.data() + static_cast<size_t>(b) * T;
    for (int t = 0; t < T; ++t) x[t] = chain_start(static_cast<uint32_t>(b * T + t));
    for (long long n = 0; n < c.barriers(); ++n) {
      for (int t = 0; t < T; ++t)
        for (int i = 0; i < kChain; ++i) x[t] = chain_link(x[t]);
      if (!c.exchange) continue;
      before.assign(x, x + T);
      for (int t = 0; t < T; ++t) x[t] ^= before[exchange_partner(c.kind, t, T)];
    }
  }
  return out;
}

}  // namespace mh::sync

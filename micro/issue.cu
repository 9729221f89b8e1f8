#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "micro/issue.cuh"

#include "harness/device_info.cuh"

namespace mh::issue {
namespace {

// Steps of 1/1024 keep these exact in float however they are computed: nvcc contracts a * b + c into one
// FMA on the device while the host rounds the product first, so a step of 1e-3 would differ by one rounding.
__host__ __device__ inline float smem_value(int i) { return 0.5f + static_cast<float>(i % 61) * 0x1p-10f; }
__host__ __device__ inline float seed(uint32_t thread, int j) { return 1.0f + static_cast<float>((thread + j) % 97) * 0x1p-10f; }

// Floats per thread a trip loads (at least one register: the multiplier of shapes without loads).
constexpr int frag_floats(int lds, int width) { return lds > 0 ? lds * width / 4 : 1; }

// One trip's FFMA, on the device and in the host replay alike: acc += x * y with x, y the loaded floats taken
// two at a time, round robin, as a GEMM's outer product uses them (every loaded float feeds an FFMA, else
// ptxas drops its load). The accumulators grow by at most 0.32 per FFMA: no overflow in any launch here.
template <int F, int kFrag>
__host__ __device__ inline void trip_ffma(float (&acc)[kAccumulators], const float (&frag)[kFrag]) {
#pragma unroll
  for (int j = 0; j < F; ++j)
    acc[j % kAccumulators] = fmaf(frag[2 * j % kFrag], frag[(2 * j + 1) % kFrag], acc[j % kAccumulators]);
}

template <int F, int kFrag>
__host__ __device__ inline float checksum(const float (&acc)[kAccumulators], const float (&frag)[kFrag], bool loads) {
  float sum = 0.f;
  for (int j = 0; j < kAccumulators; ++j) sum += acc[j];
  if (loads)
    for (int j = 0; j < kFrag; ++j) sum += frag[j];
  return sum;
}

// One shared load of W bytes at shared address `addr` (volatile asm: never merged, hoisted or dropped).
template <int W>
__device__ inline void load_shared(uint32_t addr, float* f) {
  if constexpr (W == 4) {
    asm volatile("ld.shared.f32 %0, [%1];" : "=f"(f[0]) : "r"(addr) : "memory");
  } else if constexpr (W == 8) {
    asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(f[0]), "=f"(f[1]) : "r"(addr) : "memory");
  } else {
    static_assert(W == 16, "width is 4, 8 or 16 bytes");
    asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(f[0]), "=f"(f[1]), "=f"(f[2]), "=f"(f[3]) : "r"(addr) : "memory");
  }
}

// Float index of a lane's first float of load l in trip u of chunk c (the kernel's and the replay's).
template <int L, int W, int U, bool B>
__host__ __device__ constexpr int load_index(int c, int u, int l, int lane) {
  constexpr int kRowFloats = 8 * W;  // 32 lanes x W / 4 floats
  return ((c & 1) * U * L + u * L + l) * kRowFloats + (B ? 0 : lane * W / 4);
}

// At most 64 registers (8 blocks of 128 threads per SM fit): 16 accumulators and up to 24 loaded floats.
template <int F, int L, int W, int U, bool B, bool S>
__global__ void __launch_bounds__(kThreads, 8) issue_kernel(float* out, int chunks, float a) {
  extern __shared__ float4 smem4[];
  float* sm = reinterpret_cast<float*>(smem4);
  constexpr int kFrag = frag_floats(L, W), kFloats = 2 * U * L * 8 * W;
  for (int i = threadIdx.x; i < kFloats; i += blockDim.x) sm[i] = smem_value(i);
  __syncthreads();
  const uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = static_cast<int>(threadIdx.x % 32);
  float acc[kAccumulators], frag[kFrag];
#pragma unroll
  for (int j = 0; j < kAccumulators; ++j) acc[j] = seed(t, j);
#pragma unroll
  for (int j = 0; j < kFrag; ++j) frag[j] = a;
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(sm));
#pragma unroll 1
  for (int c = 0; c < chunks; ++c) {
#pragma unroll
    for (int u = 0; u < U; ++u) {
#pragma unroll
      for (int l = 0; l < L; ++l) load_shared<W>(base + 4u * load_index<L, W, U, B>(c, u, l, lane), frag + l * W / 4);
      trip_ffma<F>(acc, frag);
    }
    if constexpr (S) __syncthreads();
  }
  out[t] = checksum<F>(acc, frag, L > 0);
}

template <int F, int L, int W, int U, bool B>
float replay(uint32_t thread, int chunks, float a) {
  constexpr int kFrag = frag_floats(L, W);
  float acc[kAccumulators], frag[kFrag];
  for (int j = 0; j < kAccumulators; ++j) acc[j] = seed(thread, j);
  for (int j = 0; j < kFrag; ++j) frag[j] = a;
  const int lane = static_cast<int>(thread % kThreads % 32);
  for (int c = 0; c < chunks; ++c)
    for (int u = 0; u < U; ++u) {
      for (int l = 0; l < L; ++l)
        for (int k = 0; k < W / 4; ++k) frag[l * W / 4 + k] = smem_value(load_index<L, W, U, B>(c, u, l, lane) + k);
      trip_ffma<F>(acc, frag);
    }
  return checksum<F>(acc, frag, L > 0);
}

using KernelFn = void (*)(float*, int, float);
using ReplayFn = float (*)(uint32_t, int, float);
struct Entry {
  Shape shape;
  KernelFn kernel;
  ReplayFn replay;
  bool smem_allowed = false;  // cudaFuncAttributeMaxDynamicSharedMemorySize raised to the opt-in limit
};

template <Kind K, int F, int L, int W, int U, bool B, bool S>
Entry entry() {
  static_assert(K != Kind::lds || 2 * F == frag_floats(L, W), "lds alone: one FFMA per two loaded floats");
  return {Shape{K, F, L, W, U, B, S}, issue_kernel<F, L, W, U, B, S>, replay<F, L, W, U, B>};
}

// The shapes (README of the family: docs/families/issue.md). Mixes: the ladder kernels' FFMA per shared
// load, from model/gemm_model.hpp's counts: 64:3 warptile_tuned (128 FFMA : 6 LDS.128 per k), 32:2
// blocktile_2d, vectorized, warptile (64 : 4), 16:6 blocktile_1d (8 FFMA : 2 LDS.128 + 1 LDS.32, here all
// 16-byte), 16:16 LDS.32 the smem kernel (32 FFMA : 40 loads per tile, mostly 4-byte).
std::vector<Entry>& table() {
  static std::vector<Entry> t = {
      entry<Kind::ffma, 32, 0, 4, 8, false, false>(),
      // 8 KiB of rows: 8 blocks per SM fit on every GPU the suite knows (100 KiB of shared memory per SM and up).
      entry<Kind::lds, 2, 4, 4, 8, false, false>(),     entry<Kind::lds, 4, 4, 8, 4, false, false>(),
      entry<Kind::lds, 8, 4, 16, 2, false, false>(),    entry<Kind::lds, 2, 4, 4, 8, true, false>(),
      entry<Kind::lds, 4, 4, 8, 4, true, false>(),      entry<Kind::lds, 8, 4, 16, 2, true, false>(),
      entry<Kind::mix, 64, 3, 16, 4, false, false>(),   entry<Kind::mix, 32, 2, 16, 8, false, false>(),
      entry<Kind::mix, 16, 6, 16, 4, false, false>(),   entry<Kind::mix, 16, 16, 4, 4, false, false>(),
      entry<Kind::mix, 64, 3, 16, 4, false, true>(),    entry<Kind::mix, 32, 2, 16, 8, false, true>(),
      entry<Kind::mix, 16, 6, 16, 4, false, true>(),    entry<Kind::mix, 16, 16, 4, 4, false, true>(),
  };
  return t;
}

Entry& entry_of(const Shape& s) {
  for (Entry& e : table())
    if (e.shape.kind == s.kind && e.shape.lds == s.lds && e.shape.width == s.width && e.shape.broadcast == s.broadcast &&
        e.shape.sync == s.sync)
      return e;
  throw std::invalid_argument("issue: no kernel compiled for shape " + s.name());
}

KernelFn prepared(const Shape& s) {
  Entry& e = entry_of(s);
  if (!e.smem_allowed) {
    CUDA_CHECK(cudaFuncSetAttribute(e.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(current_device_facts().smem_per_block_optin_bytes)));
    e.smem_allowed = true;
  }
  return e.kernel;
}

}  // namespace

std::string Shape::name() const {
  const std::string w = "width:" + std::to_string(width);
  if (kind == Kind::ffma) return "ffma";
  if (kind == Kind::lds) return "lds/" + w + (broadcast ? "/pattern:broadcast" : "/pattern:conflict_free");
  return std::string(sync ? "mix_sync" : "mix") + "/ffma:" + std::to_string(ffma) + "/lds:" + std::to_string(lds) + "/" + w;
}

const std::vector<Shape>& shapes() {
  static const std::vector<Shape> s = [] {
    std::vector<Shape> v;
    for (const Entry& e : table()) v.push_back(e.shape);
    return v;
  }();
  return s;
}

const Shape& find(Kind kind, int lds, int width, bool broadcast, bool sync) {
  return entry_of(Shape{kind, 0, lds, width, 1, broadcast, sync}).shape;
}

int chunks_for(const Shape& s, int warps_per_sm, double target_clocks) {
  const double issue = double(s.ffma + s.lds) * warps_per_sm / 4, wavefronts = double(s.lds) * s.wavefronts_per_lds() * warps_per_sm;
  const double per_chunk = s.unroll * std::max(issue, wavefronts);
  return std::max(2, static_cast<int>(target_clocks / per_chunk) / 2 * 2);
}

size_t pinning_smem(const Shape& s, const DeviceFacts& f, int blocks_per_sm) {
  return mh::pinning_smem(f, blocks_per_sm, std::max<size_t>(s.smem_bytes(), 1));
}

int resident_blocks(const Shape& s, size_t smem) {
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&n, prepared(s), kThreads, smem));
  return n;
}

void launch(const Shape& s, float* out, int blocks, size_t smem, int chunks, float a, cudaStream_t st) {
  if (smem < s.smem_bytes()) throw std::invalid_argument("issue::launch: shared memory below the shape's buffer");
  if (chunks < 1 || blocks < 1) throw std::invalid_argument("issue::launch: blocks and chunks must be >= 1");
  prepared(s)<<<blocks, kThreads, smem, st>>>(out, chunks, a);
  CUDA_CHECK_LAUNCH("issue_kernel");
}

float expected(const Shape& s, uint32_t thread, int chunks, float a) {
  return entry_of(s).replay(thread, chunks, a);
}

}  // namespace mh::issue

// wgmma (sm_90a alone: CMakeLists.txt compiles *_sm90a.cu for it; the plans skip these on other GPUs).
// One warpgroup per block runs wgmma.mma_async m64nNkK (K = 16 bf16, 32 fp8 e4m3) with f32 accumulators and B
// in shared memory (K-major, no swizzle: model::wgmma_tile_offset), A there too (SS) or in registers (RS, bf16),
// chained on the same accumulators: the PTX ISA orders wgmma of one shape on the same accumulator registers
// without a fence, so the loop needs only commit_group and wait_group 1 (the next group is issued while the
// previous one runs).
#include <stdexcept>
#include <string>

#include "micro/tensor.cuh"

#include "harness/wgmma_operands.cuh"
#include "harness/cuda_check.cuh"

namespace mh::tensor {
namespace {

// The wgmma instruction per N: N/2 f32 accumulators per thread. (The operand lists are spelled out, since
// an asm string must be a literal; scale-d is the predicate p = 1: d += a * b.)
template <int N>
__device__ __forceinline__ void wgmma_bf16(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b);

template <>
__device__ __forceinline__ void wgmma_bf16<64>(float (&d)[32], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
      MH_WG_REGS32
      "}, %32, %33, p, 1, 1, 0, 0;\n}\n"
      : MH_WG_ACC32(d)
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

template <>
__device__ __forceinline__ void wgmma_bf16<128>(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      MH_WG_REGS64
      "}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : MH_WG_ACC64(d)
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

template <>
__device__ __forceinline__ void wgmma_bf16<256>(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      MH_WG_REGS128
      "}, %128, %129, p, 1, 1, 0, 0;\n}\n"
      : MH_WG_ACC128(d)
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

// The RS form: A from registers (4 x bf16x2 per thread, wgmma's A fragment), B from shared memory.
template <int N>
__device__ __forceinline__ void wgmma_bf16_rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b);

template <>
__device__ __forceinline__ void wgmma_bf16_rs<64>(float (&d)[32], const uint32_t (&a)[4], uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
      MH_WG_REGS32
      "}, {%32, %33, %34, %35}, %36, p, 1, 1, 0;\n}\n"
      : MH_WG_ACC32(d)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}

template <>
__device__ __forceinline__ void wgmma_bf16_rs<128>(float (&d)[64], const uint32_t (&a)[4], uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
      MH_WG_REGS64
      "}, {%64, %65, %66, %67}, %68, p, 1, 1, 0;\n}\n"
      : MH_WG_ACC64(d)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}

template <>
__device__ __forceinline__ void wgmma_bf16_rs<256>(float (&d)[128], const uint32_t (&a)[4], uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
      MH_WG_REGS128
      "}, {%128, %129, %130, %131}, %132, p, 1, 1, 0;\n}\n"
      : MH_WG_ACC128(d)
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(1));
}

// fp8 e4m3 (k32; K-major is the only layout fp8 has, so no transpose immediates).
template <int N>
__device__ __forceinline__ void wgmma_e4m3(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b);

template <>
__device__ __forceinline__ void wgmma_e4m3<64>(float (&d)[32], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {"
      MH_WG_REGS32
      "}, %32, %33, p, 1, 1;\n}\n"
      : MH_WG_ACC32(d)
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

template <>
__device__ __forceinline__ void wgmma_e4m3<128>(float (&d)[64], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e4m3 {"
      MH_WG_REGS64
      "}, %64, %65, p, 1, 1;\n}\n"
      : MH_WG_ACC64(d)
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

template <>
__device__ __forceinline__ void wgmma_e4m3<256>(float (&d)[128], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3 {"
      MH_WG_REGS128
      "}, %128, %129, p, 1, 1;\n}\n"
      : MH_WG_ACC128(d)
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

// Shared-memory matrix descriptor (PTX ISA, "Matrix Descriptor Format"): start address >> 4 in bits 0-13,
// leading byte offset >> 4 in 16-29, stride byte offset >> 4 in 32-45, base offset 0, swizzle mode 0 (none)
// in bits 62-63.
__device__ __forceinline__ uint64_t smem_descriptor(const void* p) {
  const auto addr = static_cast<uint32_t>(__cvta_generic_to_shared(p));
  return static_cast<uint64_t>((addr & 0x3ffff) >> 4) | static_cast<uint64_t>(model::kWgmmaLbo >> 4) << 16 |
         static_cast<uint64_t>(model::kWgmmaSbo >> 4) << 32;
}

// Keeps the compiler from moving accumulator reads or writes across the asynchronous wgmma (as CUTLASS's
// warpgroup_fence_operand does): an empty asm that "changes" each register.
template <int R>
__device__ __forceinline__ void fence_accumulators(float (&d)[R]) {
#pragma unroll
  for (int i = 0; i < R; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Thread t's A fragment for the RS form: warp t / 32 holds rows 16 (t / 32) .. +15 in mma.m16n8k16's A layout.
__device__ __forceinline__ void load_a_fragment(const uint16_t* a, int t, uint32_t (&ra)[4]) {
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    ra[r] = 0;
#pragma unroll
    for (int s = 0; s < 2; ++s) {
      const model::RowCol e = model::mma_a_element(16, 2, t % 32, r, s);
      ra[r] |= static_cast<uint32_t>(a[(16 * (t / 32) + e.row) * 16 + e.col]) << (16 * s);
    }
  }
}

// The forms (wgmma_supported): bf16 SS, bf16 RS, fp8 e4m3 SS.
enum class Form { bf16_ss, bf16_rs, e4m3_ss };

// Copies a rows x K row-major matrix of `eb`-byte elements (K x eb = 32 bytes a row) into the K-major tile.
__device__ __forceinline__ void stage_tile(const uint8_t* m, int rows, int eb, uint8_t* tile) {
  const int k_dim = 32 / eb;
  for (int i = threadIdx.x; i < rows * 32; i += blockDim.x) {
    const int e = i / eb;  // element index, byte i % eb of it
    tile[model::wgmma_tile_offset(e / k_dim, e % k_dim, eb) + i % eb] = m[i];
  }
}

// a: 64 x K row-major; b: K x N row-major (k, n), staged as N rows of K (K-major). Block 0 writes its
// 64 x N accumulators to d.
template <int N, Form F>
__global__ void __launch_bounds__(kWgmmaThreads) wgmma_kernel(const uint8_t* a, const uint8_t* b, int iters, uint32_t* d,
                                                              ClockSpan* spans) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int eb = F == Form::e4m3_ss ? 1 : 2, k_dim = 32 / eb;
  __shared__ alignas(128) uint8_t sa[64 * 32];
  __shared__ alignas(128) uint8_t sb[N * 32];
  stage_tile(a, 64, eb, sa);
  for (int i = threadIdx.x; i < k_dim * N * eb; i += blockDim.x) {  // B transposed into N rows of K
    const int e = i / eb, k = e / N, n = e % N;
    sb[model::wgmma_tile_offset(n, k, eb) + i % eb] = b[i];
  }
  uint32_t ra[4] = {};
  if constexpr (F == Form::bf16_rs) load_a_fragment(reinterpret_cast<const uint16_t*>(a), threadIdx.x, ra);
  // The tiles were written through the generic proxy; wgmma reads them through the async proxy.
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  const uint64_t desc_a = smem_descriptor(sa), desc_b = smem_descriptor(sb);
  float acc[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) acc[i] = 0.f;
  const long long c0 = clock64(), n0 = global_ns();
  fence_accumulators(acc);
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");  // the zeroed registers (and A's) before the first wgmma
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int u = 0; u < kWgmmaUnroll; ++u) {
      if constexpr (F == Form::bf16_rs)
        wgmma_bf16_rs<N>(acc, ra, desc_b);
      else if constexpr (F == Form::bf16_ss)
        wgmma_bf16<N>(acc, desc_a, desc_b);
      else
        wgmma_e4m3<N>(acc, desc_a, desc_b);
    }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  fence_accumulators(acc);
  const long long c1 = clock64(), n1 = global_ns();
  if (threadIdx.x == 0) spans[blockIdx.x] = {c1 - c0, n1 - n0};
  if (blockIdx.x == 0)
#pragma unroll
    for (int i = 0; i < N / 2; ++i) {
      const model::RowCol e = model::wgmma_d_element(threadIdx.x, i);
      d[e.row * N + e.col] = __float_as_uint(acc[i]);
    }
#endif  // else no sm_90a here (this file is built for sm_90a alone): compiled_out and the plans keep it from running
}

template <Form F>
const void* wgmma_kernel_of(int n) {
  switch (n) {
    case 64: return reinterpret_cast<const void*>(wgmma_kernel<64, F>);
    case 128: return reinterpret_cast<const void*>(wgmma_kernel<128, F>);
    case 256: return reinterpret_cast<const void*>(wgmma_kernel<256, F>);
  }
  throw std::invalid_argument("wgmma: N must be 64, 128 or 256");
}
const void* wgmma_kernel_of(Dtype t, int n, bool rs) {
  if (!wgmma_supported(t, n, rs))
    throw std::invalid_argument(std::string("wgmma: no ") + dtype_name(t) + (rs ? " RS" : " SS") + " form with N = " + std::to_string(n));
  if (t == Dtype::fp8_e4m3) return wgmma_kernel_of<Form::e4m3_ss>(n);
  return rs ? wgmma_kernel_of<Form::bf16_rs>(n) : wgmma_kernel_of<Form::bf16_ss>(n);
}

}  // namespace

bool wgmma_supported(Dtype t, int n, bool rs) {
  return (n == 64 || n == 128 || n == 256) && (t == Dtype::bf16 || (t == Dtype::fp8_e4m3 && !rs));
}

void launch_wgmma(Dtype t, int n, bool rs, const uint8_t* a, const uint8_t* b, int blocks, int iters, uint32_t* d,
                  ClockSpan* spans, cudaStream_t s) {
  const void* k = wgmma_kernel_of(t, n, rs);
  void* args[] = {&a, &b, &iters, &d, &spans};
  CUDA_CHECK(cudaLaunchKernel(k, dim3(blocks), dim3(kWgmmaThreads), args, 0, s));
  CUDA_CHECK_LAUNCH("wgmma_kernel");
}

Residency wgmma_residency(Dtype t, int n, bool rs) { return compiled_residency(wgmma_kernel_of(t, n, rs), kWgmmaThreads, 0); }

std::string compiled_out(Dtype t, int n, bool rs) {
  if (std::string why = wgmma_unsupported(current_device_facts().arch()); !why.empty()) return why;
  return compiled_out_reason(wgmma_kernel_of(t, n, rs), 900, "wgmma");
}

}  // namespace mh::tensor

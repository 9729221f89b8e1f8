#include <cmath>
#include <cstring>
#include <stdexcept>
#include <type_traits>

#include "micro/tensor.cuh"

#include "harness/arch.hpp"
#include "harness/cuda_check.cuh"

namespace mh::tensor {
namespace {

using model::RowCol;

// The one table of mma.sync shapes (host and device).
__host__ __device__ constexpr MmaShape shape_of(Dtype t) {
  return t == Dtype::tf32 ? MmaShape{16, 8, 8, 800}
         : t == Dtype::int8 ? MmaShape{16, 8, 32, 800}
         : t == Dtype::fp8_e4m3 ? MmaShape{16, 8, 32, 890}
                                : MmaShape{16, 8, 16, 800};
}
__host__ __device__ constexpr int bytes_of(Dtype t) {
  return t == Dtype::tf32 ? 4 : (t == Dtype::int8 || t == Dtype::fp8_e4m3) ? 1 : 2;
}

// ---- mma.sync instructions, one per type: d += a * b on one m16n8kK fragment --------------------------------
template <Dtype T>
struct Mma {
  using Acc = float;
};
template <>
struct Mma<Dtype::int8> {
  using Acc = int;
};

template <Dtype T>
__device__ __forceinline__ void mma(float (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#define MH_MMA_F32(INSTR)                                                                          \
  asm volatile(INSTR " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"                     \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                   \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
#if MH_CUDA_ARCH >= 800
  if constexpr (T == Dtype::fp16) MH_MMA_F32("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
  if constexpr (T == Dtype::bf16) MH_MMA_F32("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32");
  if constexpr (T == Dtype::tf32) MH_MMA_F32("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32");
#endif
#if MH_CUDA_ARCH >= 890
  if constexpr (T == Dtype::fp8_e4m3) MH_MMA_F32("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32");
#endif
#undef MH_MMA_F32
}
template <Dtype T>
__device__ __forceinline__ void mma(int (&d)[4], const uint32_t (&a)[4], const uint32_t (&b)[2]) {
#if MH_CUDA_ARCH >= 800
  asm volatile("mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
               : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// Element i's bits of a row-major matrix of `eb`-byte elements (little-endian).
__device__ __forceinline__ uint32_t element_bits(const uint8_t* m, int i, int eb) {
  uint32_t v = 0;
  for (int j = 0; j < eb; ++j) v |= static_cast<uint32_t>(m[i * eb + j]) << (8 * j);
  return v;
}

// A lane's A and B fragments, packed through the model's maps.
template <Dtype T>
__device__ void load_fragments(const uint8_t* a, const uint8_t* b, int lane, uint32_t (&ra)[4], uint32_t (&rb)[2]) {
  constexpr MmaShape sh = shape_of(T);
  constexpr int eb = bytes_of(T), per = 4 / eb;
#pragma unroll
  for (int r = 0; r < 4; ++r) {
    ra[r] = 0;
#pragma unroll
    for (int s = 0; s < per; ++s) {
      const RowCol e = model::mma_a_element(sh.k, per, lane, r, s);
      ra[r] |= element_bits(a, e.row * sh.k + e.col, eb) << (8 * eb * s);
    }
  }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    rb[r] = 0;
#pragma unroll
    for (int s = 0; s < per; ++s) {
      const RowCol e = model::mma_b_element(sh.k, per, lane, r, s);
      rb[r] |= element_bits(b, e.row * sh.n + e.col, eb) << (8 * eb * s);
    }
  }
}

// kChains independent accumulators per warp, `iters` mma on each. Chain c starts at c (distinct chains, so
// that ptxas cannot merge them) and every chain is summed into the result (so that none is dead code: ptxas
// deletes unused mma even from asm volatile). Block 0's warp 0 writes sum over c of (chain c - c), which is
// kChains x iters x A.B. (The clock is read after the last mma is issued, not completed: one latency in
// `iters`, under 0.1 %.)
template <Dtype T, int kChains>
__global__ void __launch_bounds__(kMmaThreads) mma_kernel(const uint8_t* a, const uint8_t* b, int iters, uint32_t* d,
                                                          ClockSpan* spans) {
  using Acc = typename Mma<T>::Acc;
  // Below shape_of(T).min_arch mma<T> is empty and block 0 writes zeros; compiled_out(t) keeps it from running.
  const int lane = threadIdx.x % 32;
  uint32_t ra[4], rb[2];
  load_fragments<T>(a, b, lane, ra, rb);
  Acc acc[kChains][4];
#pragma unroll
  for (int c = 0; c < kChains; ++c)
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[c][i] = static_cast<Acc>(c);
  __syncthreads();
  const long long c0 = clock64(), n0 = global_ns();
#pragma unroll 2
  for (int i = 0; i < iters; ++i) {
    // Opaque to the compiler, free at run time: on sm_90 an fp8 mma.sync becomes F2FP unpacks, HMMAs into
    // zero and FADDs into the accumulator, and ptxas would hoist the loop-invariant HMMAs out of the loop.
    asm volatile("" : "+r"(ra[0]), "+r"(ra[1]), "+r"(ra[2]), "+r"(ra[3]), "+r"(rb[0]), "+r"(rb[1]));
#pragma unroll
    for (int c = 0; c < kChains; ++c) mma<T>(acc[c], ra, rb);
  }
  const long long c1 = clock64(), n1 = global_ns();
  if (threadIdx.x == 0) spans[blockIdx.x] = {c1 - c0, n1 - n0};
  if (blockIdx.x == 0 && threadIdx.x < 32)
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      uint32_t bits = 0;
      if constexpr (std::is_same_v<Acc, int>) {
#pragma unroll
        for (int c = 0; c < kChains; ++c) bits += static_cast<uint32_t>(acc[c][i]) - c;  // wraps like the host's
      } else {
        float sum = 0.f;
#pragma unroll
        for (int c = 0; c < kChains; ++c) sum += acc[c][i] - static_cast<float>(c);
        memcpy(&bits, &sum, 4);
      }
      const RowCol e = model::mma_c_element(lane, i);
      d[e.row * shape_of(T).n + e.col] = bits;
    }
}

template <int kChains>
const void* mma_kernel_of(Dtype t) {
  switch (t) {
    case Dtype::fp16: return reinterpret_cast<const void*>(mma_kernel<Dtype::fp16, kChains>);
    case Dtype::bf16: return reinterpret_cast<const void*>(mma_kernel<Dtype::bf16, kChains>);
    case Dtype::tf32: return reinterpret_cast<const void*>(mma_kernel<Dtype::tf32, kChains>);
    case Dtype::int8: return reinterpret_cast<const void*>(mma_kernel<Dtype::int8, kChains>);
    case Dtype::fp8_e4m3: return reinterpret_cast<const void*>(mma_kernel<Dtype::fp8_e4m3, kChains>);
  }
  throw std::invalid_argument("unknown tensor dtype");
}

// ---- ldmatrix ---------------------------------------------------------------------------------------------
template <int kMatrices, bool kTrans>
__device__ __forceinline__ void ldsm(uint32_t (&r)[kMatrices], uint32_t addr) {
  if constexpr (kMatrices == 1 && !kTrans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(addr) : "memory");
  if constexpr (kMatrices == 1 && kTrans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];" : "=r"(r[0]) : "r"(addr) : "memory");
  if constexpr (kMatrices == 2 && !kTrans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];" : "=r"(r[0]), "=r"(r[1]) : "r"(addr) : "memory");
  if constexpr (kMatrices == 2 && kTrans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0,%1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1]) : "r"(addr) : "memory");
  if constexpr (kMatrices == 4 && !kTrans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
  if constexpr (kMatrices == 4 && kTrans)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(addr) : "memory");
}

constexpr uint32_t kLdTileBytesMax = model::kLdRows * 144;  // the padded layout's

template <int kMatrices, bool kTrans>
__global__ void __launch_bounds__(kLdThreads) ldmatrix_kernel(model::LdLayout layout, int iters, uint32_t* sums,
                                                                ClockSpan* spans) {
  __shared__ alignas(128) uint16_t tile[kLdTileBytesMax / 2];
  for (uint32_t h = threadIdx.x; h < model::ld_tile_bytes(layout) / 2; h += blockDim.x) tile[h] = ld_tile_value(h);
  __syncthreads();
  const int lane = threadIdx.x % 32;
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(tile));
  uint32_t addr[model::kLdShifts];  // lanes past 8 x kMatrices give a valid address that ldmatrix ignores
#pragma unroll
  for (int s = 0; s < model::kLdShifts; ++s) addr[s] = base + model::ld_row_address(layout, s, (lane / 8) % kMatrices, lane % 8);
  uint32_t sum = 0;
  const long long c0 = clock64(), n0 = global_ns();
  // Not unrolled: ptxas merges ldmatrix of one address with no store between them (asm volatile or not;
  // there is no ld.volatile form of ldmatrix), so an iteration's 8 ldmatrix read 8 distinct row blocks and
  // the loop is never copied (nvcc 13.0's SASS: 8 LDSM per trip, 8 IADD3 or fewer, 3 loop instructions).
#pragma unroll 1
  for (int i = 0; i < iters; ++i)
#pragma unroll
    for (int s = 0; s < model::kLdShifts; ++s) {
      uint32_t r[kMatrices];
      ldsm<kMatrices, kTrans>(r, addr[s]);
#pragma unroll
      for (int m = 0; m < kMatrices; ++m) sum += r[m];
    }
  const long long c1 = clock64(), n1 = global_ns();
  if (threadIdx.x == 0) spans[blockIdx.x] = {c1 - c0, n1 - n0};
  sums[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

template <int kMatrices>
const void* ldmatrix_kernel_of(bool trans) {
  return trans ? reinterpret_cast<const void*>(ldmatrix_kernel<kMatrices, true>)
               : reinterpret_cast<const void*>(ldmatrix_kernel<kMatrices, false>);
}
const void* ldmatrix_kernel_of(const LdPlan& p) {
  switch (p.matrices) {
    case 1: return ldmatrix_kernel_of<1>(p.trans);
    case 2: return ldmatrix_kernel_of<2>(p.trans);
    case 4: return ldmatrix_kernel_of<4>(p.trans);
  }
  throw std::invalid_argument("ldmatrix reads 1, 2 or 4 matrices");
}

// ---- host side: operands and the reference ------------------------------------------------------------------
uint32_t next_random(uint64_t& state) {  // splitmix64's output, high half
  state += 0x9e3779b97f4a7c15ull;
  uint64_t z = state;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return static_cast<uint32_t>((z ^ (z >> 31)) >> 32);
}

// Random bits of one element: sign, exponent from the 3 values giving [0.25, 2), random mantissa.
uint32_t random_element(Dtype t, uint32_t r) {
  const uint32_t sign = r >> 31, e = (r >> 20) % 3;
  switch (t) {
    case Dtype::fp16: return sign << 15 | (13 + e) << 10 | (r & 0x3ff);
    case Dtype::bf16: return sign << 15 | (125 + e) << 7 | (r & 0x7f);
    case Dtype::tf32: return sign << 31 | (125 + e) << 23 | (r & 0x3ff) << 13;
    case Dtype::fp8_e4m3: return sign << 7 | (5 + e) << 3 | (r & 0x7);
    case Dtype::int8: return static_cast<uint8_t>(static_cast<int>(r % 64) - 32);
  }
  return 0;
}

// fp16 or e4m3 bits: (1 + m / 2^mbits) 2^(e - bias), subnormal when e == 0.
double small_float(uint32_t bits, int ebits, int mbits, int bias) {
  const uint32_t m = bits & ((1u << mbits) - 1), e = bits >> mbits & ((1u << ebits) - 1);
  const double v = e ? std::ldexp(1.0 + std::ldexp(m, -mbits), static_cast<int>(e) - bias) : std::ldexp(m, 1 - bias - mbits);
  return bits >> (ebits + mbits) & 1 ? -v : v;
}

double float_bits(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace

const char* dtype_name(Dtype t) {
  switch (t) {
    case Dtype::fp16: return "fp16";
    case Dtype::bf16: return "bf16";
    case Dtype::tf32: return "tf32";
    case Dtype::int8: return "int8";
    case Dtype::fp8_e4m3: return "fp8_e4m3";
  }
  return "?";
}
const char* data_name(Data d) { return d == Data::zero ? "zero" : "random"; }
int elem_bytes(Dtype t) { return bytes_of(t); }
MmaShape mma_shape(Dtype t) { return shape_of(t); }

std::vector<uint8_t> make_matrix(Dtype t, Data d, int rows, int cols, uint32_t seed) {
  const int eb = bytes_of(t);
  std::vector<uint8_t> m(static_cast<size_t>(rows) * cols * eb, 0);
  if (d == Data::zero) return m;
  uint64_t state = seed;
  for (size_t i = 0; i < static_cast<size_t>(rows) * cols; ++i) {
    const uint32_t bits = random_element(t, next_random(state));
    for (int j = 0; j < eb; ++j) m[i * eb + j] = static_cast<uint8_t>(bits >> (8 * j));
  }
  return m;
}

double element_value(Dtype t, const std::vector<uint8_t>& m, size_t i) {
  const int eb = bytes_of(t);
  uint32_t bits = 0;
  for (int j = 0; j < eb; ++j) bits |= static_cast<uint32_t>(m.at(i * eb + j)) << (8 * j);
  switch (t) {
    case Dtype::fp16: return small_float(bits, 5, 10, 15);
    case Dtype::bf16: return float_bits(bits << 16);
    case Dtype::tf32: return float_bits(bits);
    case Dtype::fp8_e4m3: return small_float(bits, 4, 3, 7);
    case Dtype::int8: return static_cast<int8_t>(bits);
  }
  return 0;
}

std::string check_product(Dtype t, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int rows, int cols,
                          int k, double steps, const std::vector<uint32_t>& got) {
  if (got.size() != static_cast<size_t>(rows) * cols) return "result has the wrong size";
  // Accumulation inside the tensor core keeps fewer bits than fp32 where it rounds each step's sum into a
  // growing accumulator: about 13 for fp8 on Hopper (DeepSeek-V3's report), taken as 22 for the others.
  const double acc_bits = t == Dtype::fp8_e4m3 ? 13 : 22;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      double ref = 0, abs_sum = 0;
      for (int j = 0; j < k; ++j) {
        const double p = element_value(t, a, static_cast<size_t>(r) * k + j) * element_value(t, b, static_cast<size_t>(j) * cols + c);
        ref += p;
        abs_sum += std::fabs(p);
      }
      const uint32_t bits = got[static_cast<size_t>(r) * cols + c];
      bool ok;
      double value;
      if (t == Dtype::int8) {
        const auto want = static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(ref * steps)));
        value = static_cast<int32_t>(bits);
        ok = static_cast<int32_t>(bits) == want;
      } else {
        value = float_bits(bits);
        const double tol = (1e-3 + steps * std::ldexp(1.0, -static_cast<int>(acc_bits))) * steps * abs_sum + 1e-6;
        ok = std::fabs(value - steps * ref) <= tol;  // false for NaN too
      }
      if (!ok)
        return std::string(dtype_name(t)) + " element (" + std::to_string(r) + ", " + std::to_string(c) + ") is " +
               std::to_string(value) + ", the host's " + std::to_string(steps * ref);
    }
  return "";
}

void launch_mma(Dtype t, bool latency, const uint8_t* a, const uint8_t* b, int blocks, int threads, int iters,
                uint32_t* d, ClockSpan* spans, cudaStream_t s) {
  if (threads < 32 || threads > kMmaThreads || threads % 32) throw std::invalid_argument("launch_mma: threads must be whole warps, at most 256");
  const void* k = latency ? mma_kernel_of<1>(t) : mma_kernel_of<kMmaChains>(t);
  void* args[] = {&a, &b, &iters, &d, &spans};
  CUDA_CHECK(cudaLaunchKernel(k, dim3(blocks), dim3(threads), args, 0, s));
  CUDA_CHECK_LAUNCH("mma_kernel");
}

Residency mma_residency(Dtype t) { return compiled_residency(mma_kernel_of<kMmaChains>(t), kMmaThreads, 0); }

std::string mma_unsupported(int arch, Dtype t) {
  const MmaShape sh = shape_of(t);
  if (arch < sh.min_arch)
    return std::string("mma.sync m16n8k") + std::to_string(sh.k) + " " + dtype_name(t) + " needs sm_" +
           std::to_string(sh.min_arch / 10) + "; this GPU is sm_" + std::to_string(arch / 10);
  if (t == Dtype::fp8_e4m3 && arch == 900)
    return "sm_90 has no fp8 mma.sync: ptxas emulates it (F2FP unpack to fp16, HMMA into zero, FADD into the "
           "accumulator) and merges the chains' identical products, so it is no tensor-core rate (wgmma is sm_90's fp8 path)";
  return "";
}

std::string wgmma_unsupported(int arch) {
  return arch == 900 ? "" : "wgmma needs sm_90a code on an sm_90 GPU (H100/H200); this GPU is sm_" + std::to_string(arch / 10);
}

std::string compiled_out(Dtype t) {
  const MmaShape sh = shape_of(t);
  const std::string what = std::string("mma.sync m16n8k") + std::to_string(sh.k) + " " + dtype_name(t);
  const std::string why = compiled_out_reason(mma_kernel_of<kMmaChains>(t), sh.min_arch, what);
  return why.empty() ? compiled_out_reason(mma_kernel_of<1>(t), sh.min_arch, what) : why;
}

void launch_ldmatrix(const LdPlan& p, uint32_t* sums, ClockSpan* spans, cudaStream_t s) {
  model::LdLayout layout = p.layout;
  int iters = p.iters;
  void* args[] = {&layout, &iters, &sums, &spans};
  CUDA_CHECK(cudaLaunchKernel(ldmatrix_kernel_of(p), dim3(p.blocks), dim3(kLdThreads), args, 0, s));
  CUDA_CHECK_LAUNCH("ldmatrix_kernel");
}

uint32_t expected_ldmatrix_sum(const LdPlan& p, int lane) {
  uint32_t per_iter = 0;
  for (int s = 0; s < model::kLdShifts; ++s)
    for (int m = 0; m < p.matrices; ++m)
      for (int half = 0; half < 2; ++half) {
        const RowCol e = model::ldmatrix_element(p.trans, lane, half);
        const uint32_t byte = model::ld_row_address(p.layout, s, m, e.row) + 2 * e.col;
        per_iter += static_cast<uint32_t>(ld_tile_value(byte / 2)) << (16 * half);
      }
  return per_iter * static_cast<uint32_t>(p.iters);
}

std::vector<LdPlan> ldmatrix_configs() {
  std::vector<LdPlan> v;
  for (model::LdLayout layout : {model::LdLayout::padded, model::LdLayout::swizzled, model::LdLayout::conflicted})
    for (int x : {1, 2, 4})
      for (bool trans : {false, true}) {
        LdPlan p;
        p.layout = layout;
        p.matrices = x;
        p.trans = trans;
        v.push_back(p);
      }
  return v;
}

Residency ldmatrix_residency(const LdPlan& p) { return compiled_residency(ldmatrix_kernel_of(p), kLdThreads, 0); }

std::string compiled_out(const LdPlan& p) { return compiled_out_reason(ldmatrix_kernel_of(p), 750, "ldmatrix"); }

}  // namespace mh::tensor

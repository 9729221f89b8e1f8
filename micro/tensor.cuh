// Tensor cores and the shared-memory path into them: ldmatrix throughput, mma.sync throughput and latency
// per data type, and sm_90a wgmma throughput (micro/tensor_sm90a.cu). Fragment maps, shared layouts and
// the ldmatrix wavefront model are model/tensor_model.hpp.
//
// Every kernel's result is checked against the host: ldmatrix's per-thread sums of what it loaded; the
// accumulators of one mma fragment / wgmma tile against the host's product of the same operands.
#pragma once
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/device_info.cuh"
#include "model/tensor_model.hpp"

namespace mh::tensor {

// ---- operands ---------------------------------------------------------------------------------------------
enum class Dtype { fp16, bf16, tf32, int8, fp8_e4m3 };
enum class Data { zero, random };
const char* dtype_name(Dtype t);  // "fp16" "bf16" "tf32" "int8" "fp8_e4m3"
const char* data_name(Data d);    // "zero" "random"
int elem_bytes(Dtype t);          // 2 2 4 1 1

// A matrix of `rows` x `cols` elements, row-major, each element's bits in elem_bytes(t) bytes. Random data:
// a random sign and mantissa with exponents giving magnitudes in [0.25, 2) (tf32 rounded to its 10-bit
// mantissa, so the hardware sees exact tf32 values); int8 uniform in [-32, 31] (a chain of 2^14 steps of
// 32 products stays inside int32). Deterministic in `seed`.
std::vector<uint8_t> make_matrix(Dtype t, Data d, int rows, int cols, uint32_t seed);
// The value of element i of such a matrix.
double element_value(Dtype t, const std::vector<uint8_t>& m, size_t i);

// The operands' seeds (A, B) of the tensor family's launches and the energy family's.
constexpr uint32_t kSeedA = 0xa11ce, kSeedB = 0xb0b;

// Empty when `got` (rows x cols, row-major; int32 bits for int8, else float bits) equals `steps` times the
// host product a (rows x k) times b (k x cols, row-major): exactly for int8 (mod 2^32), for floats within
// 1e-3 x steps x sum over k of |a||b| per element (fp32 accumulation over `steps` steps, rounded products
// inside the tensor core). Else one line naming the first element that differs.
std::string check_product(Dtype t, const std::vector<uint8_t>& a, const std::vector<uint8_t>& b, int rows, int cols,
                          int k, double steps, const std::vector<uint32_t>& got);

// ---- mma.sync ---------------------------------------------------------------------------------------------
struct MmaShape {
  int m, n, k;
  int min_arch;  // as __CUDA_ARCH__: 800 (m16n8k16 fp16/bf16, tf32, int8), 890 (fp8)
  double flops() const { return 2.0 * m * n * k; }
};
MmaShape mma_shape(Dtype t);

constexpr int kMmaThreads = 256;  // throughput block: 8 warps
constexpr int kMmaChains = 8;     // independent accumulators per warp in the throughput kernel

// Throughput: every warp runs kMmaChains chains of `iters` mma each on the same A and B fragments (loaded
// from a (m x k) and b (k x n) in global memory); latency (`latency` true): one chain, launch with 1 block
// of 32 threads. Block 0's warp 0 writes the sum of its chains' accumulators (m x n, row-major) to d:
// mma_steps(latency, iters) times A.B. spans[b] is block b's loop (thread 0's clock64 and %globaltimer).
inline double mma_steps(bool latency, int iters) { return (latency ? 1.0 : kMmaChains) * iters; }
void launch_mma(Dtype t, bool latency, const uint8_t* a, const uint8_t* b, int blocks, int threads, int iters,
                uint32_t* d, ClockSpan* spans, cudaStream_t s = nullptr);
// Registers and resident blocks of kMmaThreads per SM of the throughput kernel, compiled.
Residency mma_residency(Dtype t);
// Its registers per thread for a plan without a GPU (--plan-for): nvcc 13.0, sm_90: 48 to 56.
constexpr int kMmaPlannedRegs = 56;
// Iterations of a throughput launch with blocks_per_sm blocks on every SM: 2^20 mma.sync per SM, ~1 ms for
// bf16 on an H200 (tensor/mma/... and energy/mma/... run the same launch).
inline int mma_iters(int blocks_per_sm) {
  return std::max(1, static_cast<int>(double(1 << 20) / (blocks_per_sm * kMmaThreads / 32 * kMmaChains)));
}
// Device memory of a throughput launch of `blocks` blocks (the planner's device_bytes): each block's clock span,
// the operands and one output tile.
inline size_t mma_device_bytes(int blocks) { return static_cast<size_t>(blocks) * sizeof(ClockSpan) + 4096; }
// Why mma.sync of type t is not measured on a GPU of `arch` (as __CUDA_ARCH__), "" when it is.
std::string mma_unsupported(int arch, Dtype t);
// Empty when this build's loaded code of the throughput and latency kernels of type t has mma.sync of t
// (mma_shape(t).min_arch or later); else why not (a build for an older architecture than the GPU's runs
// JIT-compiled PTX with the instruction compiled out). Tests and benchmarks ask before every launch.
std::string compiled_out(Dtype t);

// ---- ldmatrix ---------------------------------------------------------------------------------------------
constexpr int kLdThreads = 512;  // 16 warps per block

struct LdPlan {
  model::LdLayout layout = model::LdLayout::padded;
  int matrices = 4;  // .x1 .x2 .x4
  bool trans = false;
  int blocks = 1;
  int iters = 1;  // loop iterations; each issues kLdShifts ldmatrix per warp
  double instructions() const { return static_cast<double>(blocks) * kLdThreads / 32 * iters * model::kLdShifts; }
};

// The tile's 16-bit element at halfword index h holds ld_tile_value(h).
MH_TENSOR_HD inline uint16_t ld_tile_value(uint32_t h) { return static_cast<uint16_t>(h * 40503u + 17u); }
// sums[thread] = the sum (mod 2^32) of every register that thread's ldmatrix loaded.
void launch_ldmatrix(const LdPlan& p, uint32_t* sums, ClockSpan* spans, cudaStream_t s = nullptr);
// What thread `lane` of any warp sums.
uint32_t expected_ldmatrix_sum(const LdPlan& p, int lane);
Residency ldmatrix_residency(const LdPlan& p);
// Every ldmatrix configuration the suite runs (layout x .x1/.x2/.x4 x .trans), one block and iteration each:
// the benchmarks' plan and the GPU test walk the same list.
std::vector<LdPlan> ldmatrix_configs();
// The same question for the ldmatrix kernel of p (ldmatrix: sm_75 or later).
std::string compiled_out(const LdPlan& p);

// ---- wgmma (sm_90a; micro/tensor_sm90a.cu) ----------------------------------------------------------------
constexpr int kWgmmaThreads = 128;  // one warpgroup per block
constexpr int kWgmmaUnroll = 4;     // wgmma per loop iteration (one commit group)
// The forms measured: bf16 with A from shared memory (SS) or registers (RS), fp8 e4m3 SS.
bool wgmma_supported(Dtype t, int n, bool rs);  // n 64, 128, 256; t bf16 (SS, RS) or fp8_e4m3 (SS)
inline int wgmma_k(Dtype t) { return t == Dtype::bf16 ? 16 : 32; }  // one k-step: 32 bytes of K
inline double wgmma_flops(Dtype t, int n) { return 2.0 * 64 * n * wgmma_k(t); }
// Every warpgroup runs iters x kWgmmaUnroll wgmma.mma_async m64nNkK f32 += t x t on A (64 x K, row-major)
// and B (K x n, row-major) copied into shared memory (no swizzle, K-major); rs: A from registers instead.
// Block 0 writes its 64 x n accumulators to d. Throws std::invalid_argument for a form not supported.
void launch_wgmma(Dtype t, int n, bool rs, const uint8_t* a, const uint8_t* b, int blocks, int iters, uint32_t* d,
                  ClockSpan* spans, cudaStream_t s = nullptr);
Residency wgmma_residency(Dtype t, int n, bool rs);
// For a plan without a GPU: registers per thread (nvcc 13.0: SS 154, 90, 58; RS 158, 94, 62 for N 256, 128,
// 64) and the kernel's static shared tiles (A if SS, and B: 32 bytes of K a row).
inline int wgmma_planned_regs(int n) { return n == 256 ? 160 : n == 128 ? 96 : 64; }
inline int wgmma_smem_bytes(int n, bool rs) { return (rs ? n : 64 + n) * 32; }
// Iterations of a throughput launch with blocks_per_sm blocks on every SM: 8 GFLOP per SM, ~1 ms at 4096
// FLOP/clk at ~2 GHz (bf16; fp8 half that). tensor/wgmma/... and energy/wgmma/... run the same launch.
inline int wgmma_iters(Dtype t, int n, int blocks_per_sm) {
  return std::max(1, static_cast<int>(8.0 * (1 << 30) / (wgmma_flops(t, n) * kWgmmaUnroll * blocks_per_sm)));
}
// Device memory of a wgmma throughput launch of `blocks` blocks at N = n: the clock spans, the 64 x n FP32 output
// tile and the operands (as mma_device_bytes).
inline size_t wgmma_device_bytes(int blocks, int n) {
  return static_cast<size_t>(blocks) * sizeof(ClockSpan) + 4 * 64 * n + 32 * (64 + n);
}
// Why wgmma is not measured on a GPU of `arch`, "" when it is (sm_90 alone: the sm_90a build).
std::string wgmma_unsupported(int arch);
// The same question for a wgmma form (a supported one): empty on an sm_90 GPU, whose code is micro/tensor_sm90a.cu's
// sm_90a build; elsewhere the reason (also without a GPU query that would fail: no image for that GPU).
std::string compiled_out(Dtype t, int n, bool rs);

}  // namespace mh::tensor

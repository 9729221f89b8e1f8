// Experiment, not part of the suite (docs/families/async-copy.md, "From L2: the 0.85 target"): a 16 KiB-tile stream
// over an L2-resident working set as micro/async_copy.cu's (cp.async with a consumer, and ld.global.cg into
// registers alone), by tile order (0: the suite's front, tile (b + k * grid) % n; 1: each block its own run of
// tiles from b * n / grid), bytes per launch (4 or 32 x L2) and launches between events (1 or 8).
// Build and run on the GPU: nvcc -O3 -arch=sm_90 -std=c++17 tools/experiments/async_l2_order.cu -o /tmp/a && /tmp/a [ramp]
#include <cstdio>
#include <cstdint>
#include <vector>
#include <algorithm>
#include <string>
#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)
constexpr int T = 256;
template <int V>  // V 16-byte vectors per thread per tile: tile = V*T*16 bytes
__device__ __forceinline__ void issue(uint32_t dst, const uint4* src) {
#pragma unroll
  for (int j = 0; j < V; ++j)
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst + (j * T + threadIdx.x) * 16), "l"(src + j * T + threadIdx.x) : "memory");
  asm volatile("cp.async.commit_group;" ::: "memory");
}
template <int V, int S, int MODE>  // MODE 0: consume all (LDS.128) + 2 syncs; 1: no consume, 1 sync; 2: consume own vectors only, 1 sync
__global__ void __launch_bounds__(T) cpa(const uint4* src, uint64_t ntiles, int tpb, uint32_t* out, int order) {
  extern __shared__ uint4 sm[];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(sm));
  constexpr uint32_t tile = V * T * 16;
  auto at = [&](int k) { const uint64_t t = order ? (uint64_t(blockIdx.x) * ntiles / gridDim.x + k) : (blockIdx.x + uint64_t(k) * gridDim.x); return src + (t % ntiles) * (tile / 16); };
  for (int k = 0; k < S - 1; ++k) { if (k < tpb) issue<V>(base + (k % S) * tile, at(k)); else asm volatile("cp.async.commit_group;" ::: "memory"); }
  uint32_t s = 0;
  for (int k = 0; k < tpb; ++k) {
    const int n = k + S - 1;
    if (n < tpb) issue<V>(base + (n % S) * tile, at(n)); else asm volatile("cp.async.commit_group;" ::: "memory");
    asm volatile("cp.async.wait_group %0;" ::"n"(S - 1) : "memory");
    const uint4* st = sm + (k % S) * (tile / 16);
    if (MODE == 0) {
      __syncthreads();
      for (int i = threadIdx.x; i < tile / 16; i += T) { uint4 x = st[i]; s += x.x + x.y + x.z + x.w; }
      __syncthreads();
    } else if (MODE == 1) {
      __syncthreads();
    } else {
#pragma unroll
      for (int j = 0; j < V; ++j) { uint4 x = st[j * T + threadIdx.x]; s += x.x + x.y + x.z + x.w; }
    }
  }
  if (s == 0x12345678) out[blockIdx.x] = s;
}
template <int U>  // register-only reference: ld.global.cg, U vectors per thread in flight per step
__global__ void __launch_bounds__(T) ldr(const uint4* src, uint64_t ntiles, int tpb, uint32_t* out, int order) {
  constexpr uint32_t tile = U * T * 16;
  uint32_t s = 0;
  for (int k = 0; k < tpb; ++k) {
    const uint64_t t = order ? (uint64_t(blockIdx.x) * ntiles / gridDim.x + k) : (blockIdx.x + uint64_t(k) * gridDim.x); const uint4* p = src + (t % ntiles) * (tile / 16);
    uint4 v[U];
#pragma unroll
    for (int j = 0; j < U; ++j) v[j] = __ldcg(p + j * T + threadIdx.x);
#pragma unroll
    for (int j = 0; j < U; ++j) s += v[j].x + v[j].y + v[j].z + v[j].w;
  }
  if (s == 0x12345678) out[blockIdx.x] = s;
}
int g_order = 0, g_mult = 4, g_batch = 1;
template <class K>
void run1(const char* name, K kern, uint32_t tile, int stages, const uint4* src, uint64_t ws, uint32_t* out, int sms, int bps_cap) {
  size_t smem = size_t(tile) * stages;
  if (smem > 48 * 1024) CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
  int bps = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&bps, kern, T, smem));
  if (bps_cap > 0) bps = std::min(bps, bps_cap);
  const int grid = sms * bps;
  const uint64_t ntiles = ws / tile;
  const int tpb = int((g_mult * 62914560ull) / (uint64_t(grid) * tile)) + 1;
  cudaEvent_t a, b; CK(cudaEventCreate(&a)); CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int r = 0; r < 12; ++r) {
    CK(cudaEventRecord(a)); for (int i = 0; i < g_batch; ++i) kern<<<grid, T, smem>>>(src, ntiles, tpb, out, g_order); CK(cudaGetLastError()); CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b)); float m; CK(cudaEventElapsedTime(&m, a, b)); if (r >= 2) ms.push_back(m);
  }
  std::sort(ms.begin(), ms.end());
  const double bytes = double(grid) * tpb * tile * g_batch;
  printf("order=%d mult=%3d batch=%d %-34s ws=%6.2f MB blocks/SM=%d tile=%6u stages=%d  %6.2f TB/s\n", g_order, g_mult, g_batch, name, ws / 1e6, bps, tile, stages, bytes / (ms[ms.size() / 2] * 1e-3) / 1e12);
}

#define RUN(name, k, tile, st, cap) run1(name, k, tile, st, src, ws, out, sms, cap)
// `ramp`: only the suite's order, one launch between events, 4 .. 128 x L2 per launch: a launch's fixed cost
// (ramp and tail) is t0 = 2 t(64) - t(128), its share of a 64 x L2 launch t0 / t(64) (roofs::l2_launch_bytes).
int main(int argc, char** argv) {
  const bool ramp = argc > 1 && std::string(argv[1]) == "ramp";
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  const int sms = p.multiProcessorCount; const uint64_t l2 = p.l2CacheSize;
  uint4* src; uint32_t* out; CK(cudaMalloc(&src, 4 * l2)); CK(cudaMalloc(&out, 1 << 20)); CK(cudaMemset(src, 1, 4 * l2));
  printf("SMs %d L2 %llu\n", sms, (unsigned long long)l2);
  struct Cfg { int order, mult, batch; };
  const std::vector<Cfg> all{{0, 4, 1}, {0, 4, 8}, {0, 32, 1}, {1, 4, 1}, {1, 32, 1}}, ramps{{0, 4, 1}, {0, 16, 1}, {0, 64, 1}, {0, 128, 1}};
  for (Cfg c : ramp ? ramps : all) {
    g_order = c.order; g_mult = c.mult; g_batch = c.batch;
    uint64_t ws = l2 / 8;
    RUN("ldcg regs U8", ldr<8>, 8 * T * 16, 0, 0);
    RUN("cp.async 16KB S2 consume(suite)", (cpa<4, 2, 0>), 4 * T * 16, 2, 0);
    RUN("cp.async 16KB S4 consume(suite)", (cpa<4, 4, 0>), 4 * T * 16, 4, 0);
    RUN("cp.async 32KB S2 consume", (cpa<8, 2, 0>), 8 * T * 16, 2, 0);
    ws = 4 * l2;  // HBM-resident, each tile about once per launch at mult 4
    if (c.mult == 4 && !ramp) { RUN("HBM cp.async 16KB S2 consume(suite)", (cpa<4, 2, 0>), 4 * T * 16, 2, 0); RUN("HBM ldcg regs U8", ldr<8>, 8 * T * 16, 0, 0); }
  }
  CK(cudaDeviceSynchronize());
  return 0;
}

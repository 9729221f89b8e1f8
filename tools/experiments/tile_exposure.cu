// Experiment, not part of the suite (docs/families/issue.md, "exposed load latency"). Build and run on the GPU:
// nvcc -O3 -std=c++17 -arch=sm_90 -o /tmp/t tools/experiments/tile_exposure.cu && /tmp/t
// Issue 28: is the global-load latency of a kernel-5-shaped tile loop (gemm/5_blocktile_2d.cuh) exposed once
// per tile round, and do the waits of 2 co-resident blocks coincide?
// 1. one-thread .cg pointer chases: L2 hit (4 MiB ring, warmed) and DRAM (8 x L2 ring, L2 flushed first).
// 2. the kernel-5 tile loop (256 threads, 128x128x8 tiles, 8x8 per thread) with grid = SMs x B, B = 1, 2
//    blocks/SM (forced by dynamic shared memory), sources L2-resident or DRAM, with and without global loads.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>
#include <random>
#include <vector>

static void ck(cudaError_t e, const char* what, int line) {
  if (e != cudaSuccess) fprintf(stderr, "line %d: %s: %s\n", line, what, cudaGetErrorString(e)), exit(1);
}
#define CK(x) ck((x), #x, __LINE__)
#define CKL() (CK(cudaGetLastError()), CK(cudaDeviceSynchronize()))

// ---- 1. pointer chase
__global__ void fill_ring(uint64_t* buf, const uint32_t* next, uint64_t n, uint64_t sw) {  // sw: stride in words
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < n; k += uint64_t(gridDim.x) * blockDim.x)
    buf[k * sw] = reinterpret_cast<uint64_t>(buf + next[k] * sw);
}
// Reads n words sw apart with .cg: warms the L2 with a ring, or flushes it with a big scratch buffer.
__global__ void touch(const uint64_t* p, uint64_t n, uint64_t sw, uint64_t* sink) {
  uint64_t acc = 0;
  for (uint64_t k = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; k < n; k += uint64_t(gridDim.x) * blockDim.x)
    acc ^= __ldcg(p + k * sw);
  if (acc == ~0ull) *sink = acc;  // never, but keeps the loads
}
__global__ void chase(const uint64_t* start, int n, long long* out) {
  uint64_t p = reinterpret_cast<uint64_t>(start);
  const long long c0 = clock64();
  for (int i = 0; i < n; ++i) asm volatile("ld.global.cg.u64 %0, [%0];" : "+l"(p));
  const long long c1 = clock64();
  out[0] = c1 - c0;
  out[1] = static_cast<long long>(p);
}

// ---- 2. kernel-5-shaped tile loop
constexpr int BM = 128, BN = 128, BK = 8, TM = 8, TN = 8, NT = 256, T = 512;  // T tile rounds per block
// Block b reads region b % nreg: A (BM x Kmat) and B (Kmat x BN), row-major, tile t at k = 8 t mod Kmat.
// kLoad = false: the same STS / bar / LDS / FFMA / bar loop, the stored values from registers instead.
template <bool kLoad>
__global__ void __launch_bounds__(NT, 2)
tiles(const float* __restrict__ A, const float* __restrict__ B, int Kmat, int nreg, float* __restrict__ C,
      long long* info) {
  __shared__ float As[BM][BK];
  __shared__ float Bs[BK][BN];  // plus the dynamic padding, never touched: it only limits residency
  const int tid = threadIdx.x, tr = tid / (BN / TN), tc = tid % (BN / TN);
  const int ar0 = tid / BK, ak = tid % BK, bk0 = tid / BN, bc = tid % BN;
  const size_t reg = blockIdx.x % nreg;
  const float* pa = A + reg * BM * Kmat + size_t(ar0) * Kmat + ak;  // this thread's A and B elements at k = 0
  const float* pb = B + reg * Kmat * BN + bk0 * BN + bc;
  float acc[TM][TN] = {};
  __syncthreads();
  if (tid == 0) info[3 * blockIdx.x] = clock64();  // stored now: keeps a register free in the loop
#pragma unroll 1
  for (int t = 0; t < T; ++t) {
    const int k0 = (t * BK) & (Kmat - 1);  // Kmat: a power of 2
    float va[4], vb[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {  // element tid + 256 i of each tile, as kernel 5 (through L2 only: .cg)
      const float v = float(t & 15) * (1.f / 1024);
      va[i] = kLoad ? __ldcg(pa + size_t(i * (NT / BK)) * Kmat + k0) : v + i * (1.f / 64);
      vb[i] = kLoad ? __ldcg(pb + size_t(k0 + i * (NT / BN)) * BN) : v - i * (1.f / 64);
    }
#pragma unroll
    for (int i = 0; i < 4; ++i) As[ar0 + i * (NT / BK)][ak] = va[i], Bs[bk0 + i * (NT / BN)][bc] = vb[i];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int m = 0; m < TM; ++m) a[m] = As[tr * TM + m][k];
#pragma unroll
      for (int n = 0; n < TN; ++n) b[n] = Bs[k][tc * TN + n];
#pragma unroll
      for (int m = 0; m < TM; ++m)
#pragma unroll
        for (int n = 0; n < TN; ++n) acc[m][n] += a[m] * b[n];
    }
    __syncthreads();
  }
  const long long c1 = clock64();
  if (tid == 0) {
    int sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    info[3 * blockIdx.x + 1] = c1, info[3 * blockIdx.x + 2] = sm;
  }
  float* Cb = C + size_t(blockIdx.x) * BM * BN;
#pragma unroll
  for (int m = 0; m < TM; ++m)
#pragma unroll
    for (int n = 0; n < TN; ++n) Cb[(tr * TM + m) * BN + tc * TN + n] = acc[m][n];
}

__global__ void init(float* x, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    x[i] = float((uint32_t(i) * 2654435761u >> 20) & 15) * (1.f / 256) - 0.03f;
}

static uint64_t* g_scratch;  // 4 x L2, read to flush the L2
static uint64_t g_scratch_words;
static uint64_t* g_sink;
static void flush_l2() {
  touch<<<1024, 256>>>(g_scratch, g_scratch_words / 4, 4, g_sink);  // one word per 32-byte sector
  CKL();
}
static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Chase `loads` links of the ring that visits slots (stride bytes apart) in `order`; median of 3, cycles/load.
static double chase_ring(const std::vector<uint32_t>& order, uint64_t stride, int loads, bool warm) {
  const uint64_t n = order.size(), sw = stride / 8;
  std::vector<uint32_t> next(n);
  for (uint64_t i = 0; i < n; ++i) next[order[i]] = order[(i + 1) % n];
  uint64_t* buf;
  uint32_t* dnext;
  long long* dout;
  CK(cudaMalloc(&buf, n * stride));
  CK(cudaMalloc(&dnext, n * 4));
  CK(cudaMalloc(&dout, 16));
  CK(cudaMemcpy(dnext, next.data(), n * 4, cudaMemcpyHostToDevice));
  fill_ring<<<1024, 256>>>(buf, dnext, n, sw);
  CKL();
  std::vector<double> r;
  for (int rep = 0; rep < 3; ++rep) {
    if (warm) touch<<<1024, 256>>>(buf, n, sw, g_sink), CKL();
    else flush_l2();
    chase<<<1, 1>>>(buf + order[0] * sw, loads, dout);
    CKL();
    long long h[2];
    CK(cudaMemcpy(h, dout, 16, cudaMemcpyDeviceToHost));
    r.push_back(double(h[0]) / loads);
  }
  CK(cudaFree(buf)), CK(cudaFree(dnext)), CK(cudaFree(dout));
  return median(r);
}

struct TileRun {
  double cyc_per_tile, overlap, sum;
  bool placed;
};
// One configuration, median over 3 runs of the median over blocks of (c1 - c0) / T.
template <bool kLoad>
static TileRun run_tiles(int nsm, int B, size_t dyn, const float* A, const float* Bm, int Kmat, int nreg, bool dram,
                         float* C, long long* dinfo) {
  const int grid = nsm * B;
  std::vector<long long> info(3 * grid);
  std::vector<double> meds;
  TileRun res{0, 1.0, 0, true};
  for (int rep = 0; rep < 4; ++rep) {  // rep 0 warms (L2 source) and is not counted
    if (dram) flush_l2();
    tiles<kLoad><<<grid, NT, dyn>>>(A, Bm, Kmat, nreg, C, dinfo);
    CKL();
    if (rep == 0) continue;
    CK(cudaMemcpy(info.data(), dinfo, info.size() * 8, cudaMemcpyDeviceToHost));
    std::vector<double> per;
    std::map<long long, std::vector<int>> on;  // smid -> blocks
    for (int b = 0; b < grid; ++b) {
      per.push_back(double(info[3 * b + 1] - info[3 * b]) / T);
      on[info[3 * b + 2]].push_back(b);
    }
    meds.push_back(median(per));
    if (int(on.size()) != nsm) res.placed = false;
    for (auto& [sm, v] : on) {  // B blocks on every SM; overlap = shared time / span of the SM's blocks
      if (int(v.size()) != B) { res.placed = false; continue; }
      long long lo = 0, hi = 1LL << 62, s = hi, e = 0;
      for (int b : v) lo = std::max(lo, info[3 * b]), hi = std::min(hi, info[3 * b + 1]),
                      s = std::min(s, info[3 * b]), e = std::max(e, info[3 * b + 1]);
      res.overlap = std::min(res.overlap, std::max(0.0, double(hi - lo) / double(e - s)));
    }
  }
  std::vector<float> hc(size_t(grid) * BM * BN);
  CK(cudaMemcpy(hc.data(), C, hc.size() * 4, cudaMemcpyDeviceToHost));
  for (float x : hc) res.sum += x;
  res.cyc_per_tile = median(meds);
  return res;
}

int main() {
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  int khz = 0;
  CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  const int nsm = p.multiProcessorCount;
  const uint64_t l2 = p.l2CacheSize;
  printf("device %s: %d SMs, L2 %.1f MiB, max SM clock %d MHz, smem/SM %zu B\n", p.name, nsm, l2 / 1048576.0,
         khz / 1000, p.sharedMemPerMultiprocessor);
  g_scratch_words = 4 * l2 / 8;
  CK(cudaMalloc(&g_scratch, g_scratch_words * 8));
  CK(cudaMemset(g_scratch, 0, g_scratch_words * 8));
  CK(cudaMalloc(&g_sink, 8));
  std::mt19937 rng(28);

  // 1. chases. L2: 4 MiB of 128-byte lines in random order. DRAM: 8 x L2 of 4 KiB-spaced lines, one pass.
  std::vector<uint32_t> o(4u << 20 >> 7);
  std::iota(o.begin(), o.end(), 0u), std::shuffle(o.begin(), o.end(), rng);
  const double lat_l2 = chase_ring(o, 128, 8192, true);
  o.resize(8 * l2 / 4096), std::iota(o.begin(), o.end(), 0u);
  for (size_t pg = 0; pg < o.size(); pg += 512)  // random within each 2 MiB page, pages in order (TLB hits)
    std::shuffle(o.begin() + pg, o.begin() + std::min(o.size(), pg + 512), rng);
  const double lat_dram = chase_ring(o, 4096, 4096, false);
  std::shuffle(o.begin(), o.end(), rng);  // random over the whole ring: adds TLB misses
  const double lat_dram_tlb = chase_ring(o, 4096, 4096, false);
  printf("chase L2   hit (4 MiB ring, 128 B lines, random):               %7.1f cycles/load\n", lat_l2);
  printf("chase DRAM (%.0f MiB ring, 4 KiB lines, random within 2 MiB pages): %7.1f cycles/load\n", 8 * l2 / 1048576.0,
         lat_dram);
  printf("chase DRAM (same ring, random over all of it, with TLB misses):  %7.1f cycles/load\n", lat_dram_tlb);

  // 2. tile loop. DRAM: every block its own region, Kmat = 8 T (one pass); L2: 8 regions, Kmat = 512 (4 MiB).
  const int KD = BK * T, KL = 512, nregL = 8, grid_max = 2 * nsm;
  const size_t nA = size_t(grid_max) * BM * KD;
  printf("DRAM source: %.0f MiB per block, %.0f / %.0f MiB for B = 1 / 2; L2 source: %d MiB in all\n",
         2.0 * BM * KD * 4 / 1048576, 2.0 * nA * 4 / 2 / 1048576, 2.0 * nA * 4 / 1048576, nregL * 2 * BM * KL * 4 >> 20);
  float *A, *Bm, *C;
  long long* dinfo;
  CK(cudaMalloc(&A, nA * 4)), CK(cudaMalloc(&Bm, nA * 4));
  CK(cudaMalloc(&C, size_t(grid_max) * BM * BN * 4)), CK(cudaMalloc(&dinfo, 3 * 8 * grid_max));
  init<<<1024, 256>>>(A, nA), init<<<1024, 256>>>(Bm, nA);
  CKL();
  CK(cudaFuncSetAttribute(tiles<true>, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
  CK(cudaFuncSetAttribute(tiles<false>, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
  cudaFuncAttributes fa;
  CK(cudaFuncGetAttributes(&fa, tiles<true>));
  printf("tiles kernel: %d regs, %zu B static smem; T = %d tile rounds per block\n", fa.numRegs, fa.sharedSizeBytes, T);
  printf("B src  | cyc/tile loads  noloads  exposed | exposed/chase | blocks/SM ok, min overlap | checksum loads, noloads\n");
  for (int B = 1; B <= 2; ++B) {
    // padding so that B blocks fit in the SM's shared memory and B + 1 do not
    const size_t per = p.sharedMemPerMultiprocessor / B - 2048, dyn = (per - fa.sharedSizeBytes - p.reservedSharedMemPerBlock) & ~size_t(1023);
    CK(cudaFuncSetAttribute(tiles<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(dyn)));
    CK(cudaFuncSetAttribute(tiles<false>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(dyn)));
    int occ1 = 0, occ0 = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ1, tiles<true>, NT, dyn));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&occ0, tiles<false>, NT, dyn));
    if (occ1 != B || occ0 != B) {
      printf("ERROR B=%d: occupancy %d (loads) / %d (no loads) blocks/SM with %zu B dynamic smem\n", B, occ1, occ0, dyn);
      return 1;
    }
    for (int dram = 0; dram <= 1; ++dram) {
      const int K = dram ? KD : KL, nreg = dram ? grid_max : nregL;
      const TileRun w = run_tiles<true>(nsm, B, dyn, A, Bm, K, nreg, dram, C, dinfo);
      const TileRun n = run_tiles<false>(nsm, B, dyn, A, Bm, K, nreg, dram, C, dinfo);
      const double ex = w.cyc_per_tile - n.cyc_per_tile, lat = dram ? lat_dram : lat_l2;
      printf("%d %-4s | %8.1f %8.1f %8.1f | %13.2f | %s %.3f %.3f | %.6e %.6e\n", B, dram ? "DRAM" : "L2", w.cyc_per_tile,
             n.cyc_per_tile, ex, ex / lat, w.placed && n.placed ? "yes" : "NO", w.overlap, n.overlap, w.sum, n.sum);
    }
  }
  CK(cudaFree(A)), CK(cudaFree(Bm)), CK(cudaFree(C)), CK(cudaFree(dinfo)), CK(cudaFree(g_scratch)), CK(cudaFree(g_sink));
  return 0;
}

#include "micro/cluster.cuh"

#include <algorithm>
#include <mutex>
#include <set>
#include <stdexcept>

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#include <cooperative_groups.h>
#define MH_CLUSTER_DEVICE 1  // device pass with clusters: the kernels' bodies
#endif

namespace mh::cluster {

std::string unsupported_reason(const DeviceFacts& f) {
  if (f.arch() < kMinArch)
    return "thread-block clusters (DSM, barrier.cluster, cp.async.bulk) need compute capability 9.0; this device is " +
           f.compute_capability;
  return "";
}

size_t one_block_smem(const DeviceFacts& f, size_t need) {
  // Over half the SM's shared memory (with the 1 KiB the system reserves per block) leaves room for one.
  const size_t half = f.smem_per_sm_bytes / 2 + 8192;
  const size_t smem = (std::max(half, need) + 1023) / 1024 * 1024;
  return smem + 1024 <= f.smem_per_block_optin_bytes ? smem : 0;  // 1 KiB for the kernels' static smem
}

const char* target_name(Target t) {
  return t == Target::own_shared ? "own_shared" : t == Target::own_cluster ? "own_cluster" : "remote";
}
const char* op_name(Op o) { return o == Op::read ? "read" : "write"; }
const char* barrier_name(Barrier b) {
  return b == Barrier::none ? "none" : b == Barrier::syncthreads ? "syncthreads" : "cluster_sync";
}

int sms_used(const std::vector<BlockRecord>& r) {
  std::set<uint32_t> ids;
  for (const BlockRecord& b : r) ids.insert(b.smid);
  return static_cast<int>(ids.size());
}

double records_mhz(const std::vector<BlockRecord>& r) {
  std::vector<ClockSpan> spans;
  for (const BlockRecord& b : r) spans.push_back(b.span);
  return median_mhz(spans.data(), static_cast<int>(spans.size()));
}

namespace detail {

void allow_clusters(const void* kernel) {
  static std::mutex m;
  static std::set<const void*> done;
  const std::lock_guard<std::mutex> lock(m);
  if (done.count(kernel)) return;
  // Static plus dynamic shared memory may not pass the opt-in limit: allow what the static part leaves.
  cudaFuncAttributes a{};
  CUDA_CHECK(cudaFuncGetAttributes(&a, kernel));
  const int optin = static_cast<int>(current_device_facts().smem_per_block_optin_bytes - a.sharedSizeBytes);
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  done.insert(kernel);
}

ClusterConfig::ClusterConfig(const Grid& g, cudaStream_t s, int grid_blocks) {
  // An occupancy question (grid_blocks given) has no cluster count yet; a launch needs one.
  if (g.cluster < 1 || g.cluster > kMaxCluster || g.threads < 1 || (grid_blocks == 0 && g.clusters < 1))
    throw std::invalid_argument("cluster launch: cluster size must be in [1, 16], threads and clusters >= 1");
  config.gridDim = dim3(grid_blocks > 0 ? grid_blocks : g.blocks());
  config.blockDim = dim3(g.threads);
  config.dynamicSmemBytes = g.smem;
  config.stream = s;
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = g.cluster;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  config.attrs = &attr;
  config.numAttrs = 1;
}

int max_active_clusters(const void* kernel, const Grid& g) {
  allow_clusters(kernel);
  ClusterConfig c(g, nullptr, g.cluster);  // one cluster's grid: the question is per cluster
  int n = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveClusters(&n, kernel, &c.config));
  return n;
}

}  // namespace detail

namespace {
using namespace detail;

#ifdef MH_CLUSTER_DEVICE
__device__ __forceinline__ uint32_t ld_shared(uint32_t a) {
  uint32_t v;
  asm volatile("ld.shared.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");
  return v;
}
__device__ __forceinline__ uint32_t ld_cluster(uint32_t a) {
  uint32_t v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(a) : "memory");
  return v;
}
template <bool kRemote>
__device__ __forceinline__ uint4 ld16(uint32_t a) {
  uint4 v;
  if constexpr (kRemote)
    asm volatile("ld.shared::cluster.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(a) : "memory");
  else
    asm volatile("ld.shared.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(a) : "memory");
  return v;
}
template <bool kRemote>
__device__ __forceinline__ void st16(uint32_t a, uint4 v) {
  if constexpr (kRemote)
    asm volatile("st.shared::cluster.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
  else
    asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};" ::"r"(a), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}
#endif

// ---- DSM latency -----------------------------------------------------------------------------------
template <Target kT>
__global__ void __launch_bounds__(32) chase_kernel(int loads, ChaseResult* out) {
#ifdef MH_CLUSTER_DEVICE
  extern __shared__ uint32_t ring[];
  const uint32_t rank = cluster_rank();
  // Entries hold the address the chase's load takes: a shared::cta one for ld.shared, a shared::cluster
  // one (mapa to the owner) for ld.shared::cluster, valid in every block of the cluster.
  for (uint32_t i = threadIdx.x; i < kRingEntries; i += blockDim.x) {
    const uint32_t next = smem_addr(&ring[ring_next(i)]);
    ring[i] = kT == Target::own_shared ? next : map_rank(next, rank);
  }
  const uint32_t owner = kT == Target::remote ? 1 : 0;
  cluster_sync();  // every ring written before any block reads one
  if (rank == 0 && threadIdx.x == 0) {
    const uint32_t base = kT == Target::own_shared ? smem_addr(ring) : map_rank(smem_addr(ring), owner);
    uint32_t p = base;
    const long long c0 = clock64();
#pragma unroll 8
    for (int i = 0; i < loads; ++i) p = kT == Target::own_shared ? ld_shared(p) : ld_cluster(p);
    const long long c1 = clock64();
    out->cycles = c1 - c0;
    out->final_index = (p - base) / 4;
    out->reader_sm = sm_id();
  }
  if (rank == owner && threadIdx.x == 0) out->owner_sm = sm_id();
  cluster_sync();  // the owner's shared memory stays until the reader is done
#endif
}

// ---- DSM bandwidth -----------------------------------------------------------------------------------
#ifdef MH_CLUSTER_DEVICE
// Thread `t`'s k-th slot of a pass: consecutive threads on consecutive 16-byte slots (conflict-free).
__device__ __forceinline__ uint32_t dsm_slot(uint32_t t, int k) { return k * kDsmThreads + t; }

// Sums this thread's slots of the block's own buffer into *sum (the block's checksum).
__device__ void sum_own_slots(const uint4* buf, uint32_t* sum) {
  uint32_t acc = 0;
  for (int k = 0; k < kDsmSlotsPerThread; ++k) {
    const uint4 v = buf[dsm_slot(threadIdx.x, k)];
    acc += v.x + v.y + v.z + v.w;
  }
  atomicAdd(sum, acc);
}

// Per pass and thread: kDsmSlotsPerThread (4) 16-byte loads or stores, 64 B; a block's 1024 threads move
// kDsmBytesPerPass (64 KiB) per pass. Every read pass loads unchanged words: with addresses that repeat from
// pass to pass, ptxas kept one pass's loads for 16 unrolled passes (own) or hoisted them out of the loop
// (remote), since `asm volatile` binds nvcc, not ptxas. So read pass p takes slot (s + 32 p) mod kDsmSlots
// instead of s: a warp still reads 512 contiguous bytes, the block still reads every slot once per pass (the
// map is a bijection, so the block's sum and the checksum are unchanged), and no two passes of an unrolled
// body share an address. (An earlier fix added pass x blockIdx.y, always 0, and faulted on the H200 for
// remote reads.) Stores need no rotation. Check the SASS (cuobjdump -sass) after a compiler upgrade: read
// 4 LDS.128 (own) or 4 LD.E.128 (remote) per pass, write 4 STS.128 or 4 ST.E.128.
__device__ __forceinline__ uint32_t read_slot(uint32_t slot, int pass) {
  static_assert((kDsmSlots & (kDsmSlots - 1)) == 0, "the rotation wraps with a mask");
  return (slot + 32u * static_cast<uint32_t>(pass)) & (kDsmSlots - 1);
}

template <Op kOp, bool kRemote>
__device__ uint32_t dsm_passes(uint32_t peer, int passes) {
  uint4 acc = make_uint4(0, 0, 0, 0);
  for (int pass = 0; pass < passes; ++pass) {
#pragma unroll
    for (int k = 0; k < kDsmSlotsPerThread; ++k) {
      const uint32_t slot = dsm_slot(threadIdx.x, k), a = peer + (kOp == Op::read ? read_slot(slot, pass) : slot) * 16;
      if constexpr (kOp == Op::read) {
        const uint4 v = ld16<kRemote>(a);
        acc.x += v.x, acc.y += v.y, acc.z += v.z, acc.w += v.w;
      } else {
        const uint32_t w = 4 * slot;
        st16<kRemote>(a, make_uint4(fill_word(blockIdx.x, w, pass), fill_word(blockIdx.x, w + 1, pass),
                                    fill_word(blockIdx.x, w + 2, pass), fill_word(blockIdx.x, w + 3, pass)));
      }
    }
  }
  return acc.x + acc.y + acc.z + acc.w;
}
#endif

template <Op kOp, bool kRemote>
__global__ void __launch_bounds__(kDsmThreads, 1) dsm_kernel(int passes, BlockRecord* out) {
#ifdef MH_CLUSTER_DEVICE
  extern __shared__ uint4 buf[];
  __shared__ uint32_t sum;
  for (int k = 0; k < kDsmSlotsPerThread; ++k) {
    const uint32_t w = 4 * dsm_slot(threadIdx.x, k);
    buf[w / 4] = make_uint4(fill_word(blockIdx.x, w, kInitialFill), fill_word(blockIdx.x, w + 1, kInitialFill),
                            fill_word(blockIdx.x, w + 2, kInitialFill), fill_word(blockIdx.x, w + 3, kInitialFill));
  }
  if (threadIdx.x == 0) sum = 0;
  const uint32_t own = smem_addr(buf);
  const uint32_t peer = kRemote ? map_rank(own, (cluster_rank() + 1) % cluster_size()) : own;
  cluster_sync();  // every buffer filled before a neighbour touches it
  const long long c0 = clock64(), t0 = global_ns();
  const uint32_t read_sum = dsm_passes<kOp, kRemote>(peer, passes);
  __syncthreads();
  const long long c1 = clock64(), t1 = global_ns();
  cluster_sync();  // the neighbours' writes have landed, and nobody reads this buffer any more
  if constexpr (kOp == Op::read)
    atomicAdd(&sum, read_sum);
  else
    sum_own_slots(buf, &sum);
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = {{c1 - c0, t1 - t0}, sum, sm_id(), 0, 0};
#endif
}

// ---- barrier ------------------------------------------------------------------------------------------
template <Barrier kB>
__global__ void __launch_bounds__(kBarrierThreads, 1) barrier_kernel(int steps, BlockRecord* out) {
#ifdef MH_CLUSTER_DEVICE
  namespace cg = cooperative_groups;
  uint32_t x = chain_start(blockIdx.x * blockDim.x + threadIdx.x);
  cluster_sync();  // the span starts with every block of the cluster present
  const long long c0 = clock64(), t0 = global_ns();
#pragma unroll 1
  for (int s = 0; s < steps; ++s) {
#pragma unroll
    for (int j = 0; j < kBarriersPerStep; ++j) {
      x = chain_link(chain_link(x));
      if constexpr (kB == Barrier::syncthreads) __syncthreads();
      if constexpr (kB == Barrier::cluster) cg::this_cluster().sync();
    }
  }
  __syncthreads();
  if (threadIdx.x == 0) out[blockIdx.x] = {{clock64() - c0, global_ns() - t0}, x, sm_id(), 0, 0};
  cluster_sync();
#endif
}

template <Op kOp>
auto dsm_kernel_of(const Grid& g) {
  return g.cluster > 1 ? dsm_kernel<kOp, true> : dsm_kernel<kOp, false>;
}
auto dsm_kernel_of(Op op, const Grid& g) { return op == Op::read ? dsm_kernel_of<Op::read>(g) : dsm_kernel_of<Op::write>(g); }
auto barrier_kernel_of(Barrier b) {
  return b == Barrier::none ? barrier_kernel<Barrier::none>
         : b == Barrier::syncthreads ? barrier_kernel<Barrier::syncthreads>
                                     : barrier_kernel<Barrier::cluster>;
}

}  // namespace

void launch_chase(Target t, int loads, size_t smem, ChaseResult* out, cudaStream_t s) {
  if (loads < 1 || smem < kRingEntries * sizeof(uint32_t)) throw std::invalid_argument("launch_chase: loads >= 1, smem >= 16 KiB");
  const Grid g{1, 2, 32, smem};
  if (t == Target::own_shared) launch(chase_kernel<Target::own_shared>, "chase_kernel", g, s, loads, out);
  if (t == Target::own_cluster) launch(chase_kernel<Target::own_cluster>, "chase_kernel", g, s, loads, out);
  if (t == Target::remote) launch(chase_kernel<Target::remote>, "chase_kernel", g, s, loads, out);
}

uint32_t chase_expected(int loads) {
  uint32_t i = 0;
  for (int n = 0; n < loads; ++n) i = ring_next(i);
  return i;
}

void launch_dsm(Op op, const Grid& g, int passes, BlockRecord* out, cudaStream_t s) {
  if (g.threads != kDsmThreads || g.smem < kDsmBufferBytes || passes < 1)
    throw std::invalid_argument("launch_dsm: 1024 threads, >= 64 KiB of shared memory, passes >= 1");
  launch(dsm_kernel_of(op, g), "dsm_kernel", g, s, passes, out);
}

std::vector<uint32_t> dsm_expected(Op op, const Grid& g, int passes) {
  constexpr uint32_t kWords = kDsmBufferBytes / 4;
  std::vector<uint32_t> sums(g.blocks());
  for (uint32_t b = 0; b < sums.size(); ++b) {
    const uint32_t partner = dsm_partner(b, g.cluster, op == Op::read);
    // read: every pass reads the partner's initial fill; write: the partner's last pass stays.
    const uint32_t pass = op == Op::read ? kInitialFill : static_cast<uint32_t>(passes - 1);
    uint32_t sum = 0;
    for (uint32_t w = 0; w < kWords; ++w) sum += fill_word(partner, w, pass);
    sums[b] = op == Op::read ? sum * static_cast<uint32_t>(passes) : sum;
  }
  return sums;
}

std::string dsm_compiled_out() {
  // One translation unit, one guard: every kernel here has the same image; ask about each all the same.
  const void* kernels[] = {reinterpret_cast<const void*>(chase_kernel<Target::own_shared>),
                           reinterpret_cast<const void*>(chase_kernel<Target::remote>),
                           reinterpret_cast<const void*>(dsm_kernel<Op::read, true>),
                           reinterpret_cast<const void*>(dsm_kernel<Op::write, false>),
                           reinterpret_cast<const void*>(barrier_kernel<Barrier::cluster>)};
  for (const void* k : kernels) {
    std::string why = compiled_out_reason(k, kMinArch, "the cluster family's kernels (DSM, barrier.cluster)");
    if (!why.empty()) return why;
  }
  return "";
}

int dsm_max_active_clusters(Op op, const Grid& g) {
  return max_active_clusters(reinterpret_cast<const void*>(dsm_kernel_of(op, g)), g);
}

void launch_barrier(Barrier b, const Grid& g, int steps, BlockRecord* out, cudaStream_t s) {
  if (g.threads != kBarrierThreads || steps < 1) throw std::invalid_argument("launch_barrier: 256 threads, steps >= 1");
  launch(barrier_kernel_of(b), "barrier_kernel", g, s, steps, out);
}

std::vector<uint32_t> barrier_expected(const Grid& g, int steps) {
  std::vector<uint32_t> x(g.blocks());
  for (uint32_t b = 0; b < x.size(); ++b) {
    x[b] = chain_start(b * kBarrierThreads);
    for (long long n = 0; n < 2LL * kBarriersPerStep * steps; ++n) x[b] = chain_link(x[b]);
  }
  return x;
}

int barrier_max_active_clusters(Barrier b, const Grid& g) {
  return max_active_clusters(reinterpret_cast<const void*>(barrier_kernel_of(b)), g);
}

// ---- TMA host side (the kernels are in cluster_sm90a.cu) ---------------------------------------------
std::vector<uint32_t> tma_source() {
  std::vector<uint32_t> src(static_cast<size_t>(kTmaSourceTiles) * kTmaTile / 4);
  for (uint32_t w = 0; w < src.size(); ++w) src[w] = fill_word(0xABCDu, w, 7);
  return src;
}

std::vector<uint32_t> tma_expected(const Grid& g, int iterations, const std::vector<uint32_t>& src) {
  constexpr uint32_t kTileWords = kTmaTile / 4;
  std::vector<uint32_t> sums(g.blocks());
  for (uint32_t b = 0; b < sums.size(); ++b) {
    uint32_t sum = 0;
    // Stage s ends with the tile of the last iteration i = s (mod kTmaStages).
    for (int i = std::max(0, iterations - kTmaStages); i < iterations; ++i) {
      const uint32_t tile = tma_tile(b / g.cluster, i);
      for (uint32_t w = 0; w < kTileWords; ++w) sum += src[tile * kTileWords + w];
    }
    sums[b] = sum;
  }
  return sums;
}

}  // namespace mh::cluster

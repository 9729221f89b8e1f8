// Thread-block clusters (sm_90): distributed shared memory (DSM) latency and bandwidth, the cluster barrier,
// and TMA multicast of 1-D bulk copies into the shared memory of every block of a cluster.
//
// Every kernel here runs ONE block per SM: its dynamic shared memory (one_block_smem()) is more than half
// of an SM's, so two blocks of a cluster are never on the same SM and "another block" means "another SM".
// Grids are 1-D with cluster dimension (C, 1, 1), so a block's rank in its cluster is blockIdx.x % C.
// Each kernel leaves a per-block record (clock span, SM id, checksum) that the host compares with the
// replays below (tests/gpu/test_cluster.cu, and the benchmark bodies after their timed launches).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "harness/device_info.cuh"

namespace mh::cluster {

constexpr int kMinArch = 900;         // clusters, DSM, barrier.cluster, cp.async.bulk: sm_90
constexpr int kPortableCluster = 8;   // the largest cluster every sm_90 part launches
constexpr int kMaxCluster = 16;       // with cudaFuncAttributeNonPortableClusterSizeAllowed (H100/H200)
constexpr uint32_t kTimeoutCycles = 1u << 31;  // a bounded mbarrier wait gives up after ~1 s at 2 GHz

// Empty on a device that runs thread-block clusters and the suite's sm_90 code; else why not (one line).
std::string unsupported_reason(const DeviceFacts& f);
// Empty when this build's kernels of micro/cluster.cu hold their sm_90 code on the current device; else the
// reason (a build whose CMAKE_CUDA_ARCHITECTURES lacks the GPU runs older PTX, where the kernels' bodies are
// compiled out and a launch computes nothing). Tests and benchmark bodies skip with it before any launch.
std::string dsm_compiled_out();
// Dynamic shared memory per block that lets exactly one block reside per SM (> half the SM's), at least
// `need` bytes; 0 when the device cannot give it (a plan then skips).
size_t one_block_smem(const DeviceFacts& f, size_t need);

// What every block of every kernel here records (thread 0), read back by the host.
struct BlockRecord {
  ClockSpan span;     // clock64 cycles and globaltimer ns of the timed part
  uint32_t checksum;  // kernel-specific, see the *_expected replays
  uint32_t smid;      // %smid of the block
  uint32_t timeouts;  // bounded waits that gave up (TMA only; 0 otherwise)
  uint32_t pad;
};

// A cluster launch: `clusters` clusters of `cluster` blocks, `threads` per block, `smem` dynamic bytes.
struct Grid {
  int clusters = 0, cluster = 1, threads = 0;
  size_t smem = 0;
  int blocks() const { return clusters * cluster; }
};

// Distinct SM ids among the records (the SMs a grid actually used).
int sms_used(const std::vector<BlockRecord>& r);
// Median MHz over the records' spans.
double records_mhz(const std::vector<BlockRecord>& r);

// ---------------------------------------------------------------------------------------------------
// DSM latency: one thread follows a ring of kRingEntries 4-byte entries in shared memory, each entry
// holding the shared-memory address of the next, so one load is the whole step (no address arithmetic).
enum class Target {
  own_shared,   // plain ld.shared on the block's own ring: the reference
  own_cluster,  // ld.shared::cluster on the own ring, its address mapped (mapa) to the own rank
  remote,       // ld.shared::cluster on the ring of rank 1 of a 2-block cluster: another SM
};
const char* target_name(Target t);
constexpr int kRingEntries = 4096;  // 16 KiB
// A full-period linear congruential step on 2^12 (Hull-Dobell: multiplier 1 mod 4, odd increment),
// stride ~5 entries, so consecutive loads hit different banks and rows; both sides compute it.
__host__ __device__ inline uint32_t ring_next(uint32_t i) { return (i * 5u + 1u) & (kRingEntries - 1); }

struct ChaseResult {
  long long cycles = 0;      // clock64 over the `loads` dependent loads
  uint32_t final_index = 0;  // the ring index the chase ended on: ring_next applied `loads` times to 0
  uint32_t reader_sm = 0, owner_sm = 0;
};
// One cluster of 2 blocks (1 for own_shared/own_cluster would do, 2 keeps the launch the same).
void launch_chase(Target t, int loads, size_t smem, ChaseResult* out, cudaStream_t s = nullptr);
uint32_t chase_expected(int loads);

// ---------------------------------------------------------------------------------------------------
// DSM bandwidth: every block reads (or writes) the 64 KiB buffer of rank (r + 1) % C of its cluster with
// 16-byte accesses, the whole buffer once per pass; C = 1 uses plain ld/st.shared on its own buffer.
enum class Op { read, write };
const char* op_name(Op o);
constexpr int kDsmThreads = 1024;
constexpr int kDsmBufferBytes = 64 << 10;
constexpr int kDsmSlots = kDsmBufferBytes / 16;          // 16-byte slots
constexpr int kDsmSlotsPerThread = kDsmSlots / kDsmThreads;  // 4 independent accesses per pass
static_assert(kDsmSlots % kDsmThreads == 0, "every thread covers the same number of slots");
// What one pass of one block moves: kDsmThreads threads x kDsmSlotsPerThread 16-byte accesses (the SASS of
// the pass loops has those 4 loads or stores per thread and pass; see dsm_passes in cluster.cu).
constexpr int kDsmBytesPerPass = kDsmThreads * kDsmSlotsPerThread * 16;
static_assert(kDsmBytesPerPass == kDsmBufferBytes, "a pass covers the buffer once");
// Bytes a launch of `g` with `passes` passes reads or writes (the bandwidth counters' numerator).
inline double dsm_bytes(const Grid& g, int passes) { return static_cast<double>(g.blocks()) * passes * kDsmBytesPerPass; }

// The words buffers are filled with: before the kernel's passes (pass kInitialFill, `block` the owner)
// and by the write kernel (`block` the writer, `pass` its pass). Distinct per word and pass, and no pass
// of the write kernel writes what the initial fill holds.
constexpr uint32_t kInitialFill = ~0u;
__host__ __device__ inline uint32_t fill_word(uint32_t block, uint32_t word, uint32_t pass) {
  return (block * 0x9E3779B1u) ^ (word * 0x85EBCA77u) ^ ((pass + 1u) * 0xC2B2AE3Du);
}
// Global block id of the block whose buffer block `b` reads (op read) or that writes into b's (op write).
__host__ __device__ inline uint32_t dsm_partner(uint32_t b, uint32_t cluster, bool reader) {
  const uint32_t base = b / cluster * cluster, r = b % cluster;
  return base + (reader ? (r + 1) % cluster : (r + cluster - 1) % cluster);
}
// checksum: read: the wrapping sum of every word the block read; write: the wrapping sum of the block's
// own buffer after its cluster's writes.
void launch_dsm(Op op, const Grid& g, int passes, BlockRecord* out, cudaStream_t s = nullptr);
std::vector<uint32_t> dsm_expected(Op op, const Grid& g, int passes);
int dsm_max_active_clusters(Op op, const Grid& g);  // the occupancy API's answer for this kernel and launch

// ---------------------------------------------------------------------------------------------------
// Barrier cost: each thread runs a dependent chain (2 links) before every barrier; the cost of one is
// (span with barriers - span without) / barriers.
// The chain is a bijection of 32-bit words (xorshift, odd multiply, add), so its value after n links tells
// n apart; micro/sync.cuh's x*x + c falls into a short cycle mod 2^32 within ~40 links, the same for every
// start, and would let a wrong barrier count pass the checksum.
__host__ __device__ inline uint32_t chain_link(uint32_t x) { return (x ^ (x >> 13)) * 0x5BD1E995u + 1u; }
__host__ __device__ inline uint32_t chain_start(uint32_t global_tid) { return global_tid * 2654435761u + 1u; }
enum class Barrier { none, syncthreads, cluster };
const char* barrier_name(Barrier b);
constexpr int kBarrierThreads = 256;
constexpr int kBarriersPerStep = 4;
// checksum: thread 0's chain value at the end.
void launch_barrier(Barrier b, const Grid& g, int steps, BlockRecord* out, cudaStream_t s = nullptr);
std::vector<uint32_t> barrier_expected(const Grid& g, int steps);
int barrier_max_active_clusters(Barrier b, const Grid& g);

// ---------------------------------------------------------------------------------------------------
// TMA multicast (micro/cluster_sm90a.cu, built for sm_90a alone: the PTX ISA says .multicast::cluster is
// optimized for sm_90a and may be much slower in code for plain sm_90). One warp per block; lane 0 issues.
// Per iteration every block of a cluster receives one kTmaTile-byte tile of a global source into one of
// kTmaStages stage buffers:
//   multicast: rank r copies slice r (kTmaTile / C bytes) into the same offset of every block's stage
//              (ctaMask all ones), so L2 serves each tile once per cluster;
//   unicast:   every block copies the whole tile into its own stage, L2 serves it C times.
// A stage is refilled only after every block of the cluster has waited for its previous fill (a split
// barrier.cluster arrive/wait one iteration behind), so the two differ only in who reads L2.
constexpr int kTmaThreads = 32;
constexpr int kTmaTile = 16 << 10;
constexpr int kTmaStages = 4;
constexpr int kTmaSourceTiles = 256;  // 4 MiB of source: L2-resident after the warm-up launch
__host__ __device__ inline uint32_t tma_tile(uint32_t cluster_id, uint32_t iteration) {
  return (cluster_id * 7u + iteration) % kTmaSourceTiles;
}
// Empty when this build has the sm_90a image of the TMA kernels and the device runs it; else why not.
std::string tma_unavailable_reason();
// src: kTmaSourceTiles * kTmaTile bytes. checksum: the wrapping sum of the block's stage buffers after
// the last iteration (each holds the tile of the last iteration that used it). iterations >= kTmaStages.
void launch_tma(bool multicast, const Grid& g, int iterations, const uint32_t* src, BlockRecord* out,
                cudaStream_t s = nullptr);
std::vector<uint32_t> tma_expected(const Grid& g, int iterations, const std::vector<uint32_t>& src);
std::vector<uint32_t> tma_source();  // the source's words, host side
int tma_max_active_clusters(bool multicast, const Grid& g);

// ---------------------------------------------------------------------------------------------------
// Shared by cluster.cu and cluster_sm90a.cu.
namespace detail {

// Once per kernel: allow the opt-in shared memory and clusters of 16 (the occupancy API and the launch
// then agree on what fits).
void allow_clusters(const void* kernel);
// A launch configuration with the cluster dimension attribute; `grid_blocks` 0 means g.blocks().
struct ClusterConfig {
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute attr{};
  ClusterConfig(const Grid& g, cudaStream_t s, int grid_blocks = 0);
  ClusterConfig(const ClusterConfig&) = delete;  // config.attrs points at attr
  ClusterConfig& operator=(const ClusterConfig&) = delete;
};
int max_active_clusters(const void* kernel, const Grid& g);

template <class... Params, class... Args>
void launch(void (*kernel)(Params...), const char* name, const Grid& g, cudaStream_t s, Args... args) {
  allow_clusters(reinterpret_cast<const void*>(kernel));
  ClusterConfig c(g, s);
  CUDA_CHECK(cudaLaunchKernelEx(&c.config, kernel, static_cast<Params>(args)...));
  CUDA_CHECK_LAUNCH(name);
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
__device__ __forceinline__ uint32_t smem_addr(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
// The shared::cluster address of the same offset in the block of rank `rank`.
__device__ __forceinline__ uint32_t map_rank(uint32_t addr, uint32_t rank) {
  uint32_t out;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(out) : "r"(addr), "r"(rank));
  return out;
}
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ uint32_t cluster_size() {
  uint32_t n;
  asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(n));
  return n;
}
__device__ __forceinline__ uint32_t sm_id() {
  uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}
// Every thread of the cluster: arrive (release) and wait (acquire), as cg::this_cluster().sync() does.
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire;" ::: "memory"); }
__device__ __forceinline__ void cluster_sync() {
  cluster_arrive();
  cluster_wait();
}
#endif

}  // namespace detail

}  // namespace mh::cluster

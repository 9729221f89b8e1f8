// Links past the GPU's own memory: host memory over PCIe and a peer GPU's memory over NVLink.
//
// A transfer is one or two legs (bidirectional: both directions at once). A leg copies `bytes` from
// src to dst and runs on `device`: its copy engine (Method::ce, one cudaMemcpyAsync), the same split
// into kCeSplits copies on as many streams (Method::ce_split: the driver may give concurrent copies
// separate copy engines), or its SMs (Method::sm, a kernel that loads and stores the remote memory
// directly, 16 bytes per access). Sources hold a
// pattern written before the timed loop; destinations are checked against it afterwards.
// Also here: a one-thread pointer chase through mapped pinned host memory or a peer's memory, and the
// link peaks that NVML reports (through harness/nvml.cuh's loader).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "harness/device_facts.hpp"
#include "harness/device_info.cuh"
#include "model/link_model.hpp"

namespace mh::link {

enum class Method { ce, ce_split, sm };
const char* method_name(Method m);  // "ce", "ce_split", "sm": the name segment
constexpr int kCeSplits = 4;        // Method::ce_split: contiguous chunks, one stream each
enum class Memory { device, pinned, pageable };  // where a buffer lives (pinned: cudaHostAllocMapped)

constexpr int kThreads = 256;  // copy kernel block size
constexpr int kUnroll = 4;     // 16-byte loads in flight per thread before its stores

// Word i of a buffer filled with `seed`. Varies with the seed in every word, so that a destination
// left from an earlier fill (another seed) never passes the check.
__host__ __device__ inline uint32_t pattern(size_t i, uint32_t seed) {
  return (static_cast<uint32_t>(i) * 2654435761u) ^ static_cast<uint32_t>(i >> 32) ^ (seed * 0x9E3779B9u + 0x7F4A7C15u);
}

// Sets the current device for a scope and puts the old one back.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int old_ = 0;
};

struct Leg {
  const void* src = nullptr;
  void* dst = nullptr;
  size_t bytes = 0;  // a multiple of 16
  int device = 0;    // whose copy engine or SMs move it; must reach src and dst
  Memory src_mem = Memory::device, dst_mem = Memory::device;
  std::string name;  // "h2d", "peer->local": for messages
};

// The benchmarks' paths. peer/uni: this GPU's memory -> the peer's, moved by this GPU; peer/bidir adds
// the peer moving its memory -> this GPU's at the same time with its own engine or SMs (each side
// pushes: NVLink writes are posted, reads wait a round trip).
enum class Path { h2d, d2h, bidir, peer_uni, peer_bidir };
const char* path_name(Path p);  // "h2d", ..., "peer/uni", "peer/bidir"
inline bool is_peer(Path p) { return p == Path::peer_uni || p == Path::peer_bidir; }

// Copy-kernel blocks for `bytes` when `legs` legs share one kernel: enough for every thread to have
// kUnroll loads in flight, at most one full wave (max threads per SM / kThreads per SM) split between legs.
long long copy_blocks(const DeviceFacts& f, size_t bytes, int legs = 1);

// Runs a transfer as one timed "launch" on the current device's legacy default stream (what run_timed
// times): one leg directly; two legs fork onto their own streams (one per leg and device for ce, one
// per device for sm, where legs on the same device share one kernel) and join back.
class Transfer {
 public:
  Transfer(Method m, std::vector<Leg> legs);
  ~Transfer();
  Transfer(const Transfer&) = delete;
  Transfer& operator=(const Transfer&) = delete;
  void operator()();
  const std::vector<Leg>& legs() const { return legs_; }
  size_t bytes_moved() const;  // summed over legs

 private:
  struct Op {  // what one stream does: one cudaMemcpyAsync (of a leg or a chunk), or one kernel over up to two legs
    int device;
    std::vector<int> legs;
    size_t offset = 0, bytes = 0;  // the chunk of legs[0] a copy moves (ce, ce_split)
    cudaStream_t stream = nullptr;
    cudaEvent_t done = nullptr;
  };
  void enqueue(const Op& op, cudaStream_t s) const;
  Method method_;
  std::vector<Leg> legs_;
  std::vector<Op> ops_;
  int home_ = 0;  // the current device at construction: its legacy stream is the one timed
  cudaEvent_t fork_ = nullptr;
};

// The legs of `path` over the kept buffers (below): host buffers of `host` memory (pinned: `pool` bytes,
// pageable: `pageable_pool`), device buffers of `pool` bytes on `device` and on `peer` (peer paths).
std::vector<Leg> make_legs(Path path, Memory host, int device, int peer, size_t bytes, size_t pool, size_t pageable_pool);

// Writes pattern(i, seed) into `words` words (a kernel on `device` for device/pinned memory, the CPU
// for pageable), and waits for it.
void fill(void* p, size_t words, uint32_t seed, Memory where, int device);

struct Mismatch {
  long long count = 0;  // words that differ
  long long first = -1;
  uint32_t got = 0, want = 0;  // at `first`
};
// Compares `words` words with the pattern (a kernel on `device`, or the CPU for pageable memory).
Mismatch check(const void* p, size_t words, uint32_t seed, Memory where, int device);
// Fills every leg's source with its own seed (seed + leg index) ...
void fill_sources(const std::vector<Leg>& legs, uint32_t seed);
// ... and afterwards returns "" when every destination holds it, else one line on what differed.
std::string check_destinations(const std::vector<Leg>& legs, uint32_t seed);

// Buffers kept for the whole process (pinning a GiB of host memory costs ~0.3 s; every repetition
// would pay it): two of `bytes` each, grown on demand, per device and for the host.
void* device_buffer(int device, int which, size_t bytes);
void* pinned_buffer(int which, size_t bytes);    // cudaHostAllocMapped | Portable; usable in kernels under UVA
void* pageable_buffer(int which, size_t bytes);  // plain host memory, touched once so no page faults are timed

// The peer used with `device`: MH_PEER_DEVICE when set (validated), else the first other GPU that can
// access `device` and that `device` can access. -1 with the reason in *why when there is none. Enables
// peer access both ways.
int peer_device(int device, std::string* why);

// ---- Pointer chase ------------------------------------------------------------------------------
constexpr size_t kChaseStrideBytes = 128;  // one chain element per 128-byte line: every load a new line

// The ring itself (a random cyclic permutation, and the host's walk of it) is model/chase.hpp's, the
// latency family's.


// One thread: pos = *state; `steps` dependent loads pos = chain[pos * stride_words]; *state = pos; the
// clock64/globaltimer span of the loads in *span. Launched on the current device.
void launch_chase(const uint32_t* chain, int steps, uint32_t* state, ClockSpan* span, cudaStream_t s = nullptr);

// ---- NVLink traffic -------------------------------------------------------------------------------
// NVML's cumulative NVLink transmit counters of `device`, all links summed (NVML_FI_DEV_NVLINK_THROUGHPUT_
// DATA_TX / RAW_TX, in bytes): data is the payload, raw adds the protocol (headers, flow control). False
// when NVML cannot give them (no NVML, no NVLink, or the field refused, as on some VMs).
struct NvlinkTx {
  double data_bytes = 0, raw_bytes = 0;
};
bool nvlink_tx(int device, NvlinkTx* out);

// ---- Link peaks ---------------------------------------------------------------------------------
// NVML's view of `device`'s PCIe link and NVLinks; source says why not when NVML cannot tell.
model::LinkInfo link_info(int device);
// JSON context entries for gpubench's add_context(): pcie_gen, pcie_width, pcie_peak_bytes_per_second,
// nvlink_count, nvlink_peak_bytes_per_second (per direction) and where they came from.
std::vector<std::pair<std::string, std::string>> link_context(int device);

}  // namespace mh::link

#include "micro/link.cuh"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>

#include "harness/device_buffer.cuh"
#include "harness/env.hpp"
#include "harness/nvml.cuh"

namespace mh::link {
namespace {

// SASS on sm_90 (nvcc 13.0, cuobjdump -sass of link.cu.o):
//   copy_kernel: the unrolled body is 4 LDG.E.128 then 4 STG.E.128 (16-byte accesses, 4 loads in flight
//     per thread), the tail one LDG.E.128 / STG.E.128;
//   chase_kernel: LDG (state), STG, CS2R SR_CLOCKLO, CS2R SR_GLOBALTIMERLO, the loop of dependent LDG.E
//     (unrolled by 4), STG, CS2R, CS2R: each STG waits for its operand, so the span is the loads alone.
struct KLeg {
  const uint4* src;
  uint4* dst;
  size_t n;  // 16-byte words
};

// Blocks [0, blocks_a) copy leg a, the rest leg b (bidirectional copies from one device's SMs).
// kUnroll independent 16-byte loads per thread before its stores: a load from host memory takes
// ~1-2 us, one from a peer ~1 us, so the bytes in flight, not the SMs, bound the rate.
__global__ void __launch_bounds__(kThreads) copy_kernel(KLeg a, KLeg b, unsigned blocks_a) {
  const bool second = blockIdx.x >= blocks_a;
  const KLeg l = second ? b : a;
  const size_t block = second ? blockIdx.x - blocks_a : blockIdx.x;
  const size_t stride = static_cast<size_t>(second ? gridDim.x - blocks_a : blocks_a) * kThreads;
  size_t i = block * kThreads + threadIdx.x;
  for (; i + (kUnroll - 1) * stride < l.n; i += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = l.src[i + u * stride];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) l.dst[i + u * stride] = v[u];
  }
  for (; i < l.n; i += stride) l.dst[i] = l.src[i];
}

__global__ void fill_kernel(uint32_t* p, size_t words, uint32_t seed) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    p[i] = pattern(i, seed);
}

// out[0]: mismatching words; out[1]: the lowest mismatching index (~0 when none).
__global__ void check_kernel(const uint32_t* p, size_t words, uint32_t seed, unsigned long long* out) {
  unsigned long long bad = 0, first = ~0ull;
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < words;
       i += static_cast<size_t>(gridDim.x) * blockDim.x)
    if (p[i] != pattern(i, seed)) {
      ++bad;
      first = min(first, static_cast<unsigned long long>(i));
    }
  if (bad) {
    atomicAdd(&out[0], bad);
    atomicMin(&out[1], first);
  }
}

// The stores are volatile asm with a memory clobber, so they stay in place around the clock reads, and
// a store issues only once its value (the last load's) has arrived: the span covers exactly the loads.
__global__ void chase_kernel(const uint32_t* chain, uint32_t stride_words, int steps, uint32_t* state,
                             ClockSpan* span) {
  const size_t gstate = __cvta_generic_to_global(state);
  uint32_t pos = *state;
  asm volatile("st.global.u32 [%0], %1;" ::"l"(gstate), "r"(pos) : "memory");  // waits for *state
  const long long c0 = clock64(), t0 = global_ns();
  for (int s = 0; s < steps; ++s) pos = chain[static_cast<size_t>(pos) * stride_words];
  asm volatile("st.global.u32 [%0], %1;" ::"l"(gstate), "r"(pos) : "memory");  // waits for the last load
  const long long c1 = clock64(), t1 = global_ns();
  *span = {c1 - c0, t1 - t0};
}

int grid_for(size_t words) {
  const DeviceFacts& f = current_device_facts();
  const size_t per_wave = static_cast<size_t>(f.sm_count) * (f.max_threads_per_sm / kThreads);
  return static_cast<int>(std::clamp<size_t>((words + kThreads - 1) / kThreads, 1, per_wave));
}

int current_device() {
  int d = 0;
  CUDA_CHECK(cudaGetDevice(&d));
  return d;
}

}  // namespace

DeviceGuard::DeviceGuard(int device) : old_(current_device()) {
  if (device != old_) CUDA_CHECK(cudaSetDevice(device));
}
DeviceGuard::~DeviceGuard() {
  int now = 0;
  if (cudaGetDevice(&now) == cudaSuccess && now != old_) cudaSetDevice(old_);  // no throw from a destructor
}

long long copy_blocks(const DeviceFacts& f, size_t bytes, int legs) {
  const long long wave = static_cast<long long>(f.sm_count) * (f.max_threads_per_sm / kThreads) / std::max(legs, 1);
  const long long per_block = static_cast<long long>(kThreads) * kUnroll * 16;
  return std::clamp<long long>((static_cast<long long>(bytes) + per_block - 1) / per_block, 1, std::max(wave, 1LL));
}

Transfer::Transfer(Method m, std::vector<Leg> legs) : method_(m), legs_(std::move(legs)), home_(current_device()) {
  if (legs_.empty() || legs_.size() > 2) throw std::invalid_argument("a transfer has one or two legs");
  for (const Leg& l : legs_)
    if (l.bytes % 16) throw std::invalid_argument("transfer sizes must be multiples of 16 bytes");
  for (int i = 0; i < static_cast<int>(legs_.size()); ++i) {
    const Leg& l = legs_[i];
    auto same = std::find_if(ops_.begin(), ops_.end(), [&](const Op& o) { return o.device == l.device; });
    if (m == Method::sm && same != ops_.end()) {
      same->legs.push_back(i);  // one kernel per device, its blocks split between the legs
    } else if (m == Method::ce_split) {  // kCeSplits chunks, 16-byte aligned, the last takes the rest
      const size_t chunk = (l.bytes / 16 + kCeSplits - 1) / kCeSplits * 16;
      for (size_t off = 0; off < l.bytes; off += chunk) ops_.push_back({l.device, {i}, off, std::min(chunk, l.bytes - off)});
    } else {
      ops_.push_back({l.device, {i}, 0, l.bytes});
    }
  }
  if (ops_.size() == 1 && ops_[0].device == home_) return;  // runs on the timed stream itself
  CUDA_CHECK(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming));
  for (Op& o : ops_) {
    DeviceGuard g(o.device);
    CUDA_CHECK(cudaStreamCreateWithFlags(&o.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&o.done, cudaEventDisableTiming));
  }
}

Transfer::~Transfer() {
  for (Op& o : ops_) {
    if (o.stream) cudaStreamDestroy(o.stream);
    if (o.done) cudaEventDestroy(o.done);
  }
  if (fork_) cudaEventDestroy(fork_);
}

size_t Transfer::bytes_moved() const {
  size_t n = 0;
  for (const Leg& l : legs_) n += l.bytes;
  return n;
}

void Transfer::enqueue(const Op& op, cudaStream_t s) const {
  if (method_ != Method::sm) {
    const Leg& l = legs_[op.legs[0]];
    CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(l.dst) + op.offset, static_cast<const char*>(l.src) + op.offset, op.bytes,
                               cudaMemcpyDefault, s));  // UVA tells the kind
    return;
  }
  const DeviceFacts& f = current_device_facts();
  const int n = static_cast<int>(op.legs.size());
  KLeg k[2] = {};
  long long blocks[2] = {0, 0};
  for (int i = 0; i < n; ++i) {
    const Leg& l = legs_[op.legs[i]];
    k[i] = {static_cast<const uint4*>(l.src), static_cast<uint4*>(l.dst), l.bytes / 16};
    blocks[i] = copy_blocks(f, l.bytes, n);
  }
  copy_kernel<<<static_cast<unsigned>(blocks[0] + blocks[1]), kThreads, 0, s>>>(k[0], k[1], static_cast<unsigned>(blocks[0]));
  CUDA_CHECK_LAUNCH("copy_kernel");
}

void Transfer::operator()() {
  if (!fork_) {
    enqueue(ops_[0], nullptr);
    return;
  }
  CUDA_CHECK(cudaEventRecord(fork_, nullptr));
  for (const Op& o : ops_) {
    DeviceGuard g(o.device);
    CUDA_CHECK(cudaStreamWaitEvent(o.stream, fork_, 0));
    enqueue(o, o.stream);
    CUDA_CHECK(cudaEventRecord(o.done, o.stream));
  }
  for (const Op& o : ops_) CUDA_CHECK(cudaStreamWaitEvent(nullptr, o.done, 0));
}

const char* method_name(Method m) {
  switch (m) {
    case Method::ce: return "ce";
    case Method::ce_split: return "ce_split";
    default: return "sm";
  }
}

const char* path_name(Path p) {
  switch (p) {
    case Path::h2d: return "h2d";
    case Path::d2h: return "d2h";
    case Path::bidir: return "bidir";
    case Path::peer_uni: return "peer/uni";
    default: return "peer/bidir";
  }
}

std::vector<Leg> make_legs(Path path, Memory host, int dev, int peer, size_t bytes, size_t pool, size_t pageable_pool) {
  if (is_peer(path) && (peer < 0 || peer == dev)) throw std::invalid_argument("a peer path needs another device");
  if (!is_peer(path) && host == Memory::device) throw std::invalid_argument("a host path needs pinned or pageable memory");
  if (bytes > (host == Memory::pageable ? pageable_pool : pool)) throw std::invalid_argument("transfer larger than its buffers");
  auto hbuf = [&](int which) { return host == Memory::pinned ? pinned_buffer(which, pool) : pageable_buffer(which, pageable_pool); };
  auto dbuf = [&](int device, int which) { return device_buffer(device, which, pool); };
  const Memory d = Memory::device;
  switch (path) {
    case Path::h2d: return {{hbuf(0), dbuf(dev, 0), bytes, dev, host, d, "host->device"}};
    case Path::d2h: return {{dbuf(dev, 0), hbuf(0), bytes, dev, d, host, "device->host"}};
    case Path::bidir:
      return {{hbuf(0), dbuf(dev, 0), bytes, dev, host, d, "host->device"},
              {dbuf(dev, 1), hbuf(1), bytes, dev, d, host, "device->host"}};
    case Path::peer_uni: return {{dbuf(dev, 0), dbuf(peer, 0), bytes, dev, d, d, "local->peer"}};
    default:
      return {{dbuf(dev, 0), dbuf(peer, 0), bytes, dev, d, d, "local->peer"},
              {dbuf(peer, 1), dbuf(dev, 1), bytes, peer, d, d, "peer->local"}};
  }
}

void fill(void* p, size_t words, uint32_t seed, Memory where, int device) {
  if (where == Memory::pageable) {
    auto* w = static_cast<uint32_t*>(p);
    for (size_t i = 0; i < words; ++i) w[i] = pattern(i, seed);
    return;
  }
  DeviceGuard g(device);  // pinned memory is mapped: under UVA its host pointer works in kernels
  fill_kernel<<<grid_for(words), kThreads>>>(static_cast<uint32_t*>(p), words, seed);
  CUDA_CHECK_LAUNCH("fill_kernel");
  CUDA_CHECK(cudaDeviceSynchronize());
}

Mismatch check(const void* p, size_t words, uint32_t seed, Memory where, int device) {
  Mismatch m;
  if (where == Memory::pageable) {
    const auto* w = static_cast<const uint32_t*>(p);
    for (size_t i = 0; i < words; ++i)
      if (w[i] != pattern(i, seed) && m.count++ == 0) m.first = static_cast<long long>(i);
  } else {
    DeviceGuard g(device);
    DeviceBuffer<unsigned long long> out(std::vector<unsigned long long>{0, ~0ull});
    check_kernel<<<grid_for(words), kThreads>>>(static_cast<const uint32_t*>(p), words, seed, out.data());
    CUDA_CHECK_LAUNCH("check_kernel");
    const std::vector<unsigned long long> r = out.download();
    m.count = static_cast<long long>(r[0]);
    if (m.count) m.first = static_cast<long long>(r[1]);
  }
  if (m.count) {
    CUDA_CHECK(cudaMemcpy(&m.got, static_cast<const uint32_t*>(p) + m.first, sizeof m.got, cudaMemcpyDefault));
    m.want = pattern(static_cast<size_t>(m.first), seed);
  }
  return m;
}

void fill_sources(const std::vector<Leg>& legs, uint32_t seed) {
  for (size_t i = 0; i < legs.size(); ++i)
    fill(const_cast<void*>(legs[i].src), legs[i].bytes / 4, seed + static_cast<uint32_t>(i), legs[i].src_mem, legs[i].device);
}

std::string check_destinations(const std::vector<Leg>& legs, uint32_t seed) {
  for (size_t i = 0; i < legs.size(); ++i) {
    const Leg& l = legs[i];
    const Mismatch m = check(l.dst, l.bytes / 4, seed + static_cast<uint32_t>(i), l.dst_mem, l.device);
    if (m.count) {
      char buf[256];
      std::snprintf(buf, sizeof buf, "data check failed (%s): %lld of %zu words differ, the first at word %lld: got 0x%08x, want 0x%08x",
                    l.name.c_str(), m.count, l.bytes / 4, m.first, m.got, m.want);
      return buf;
    }
  }
  return {};
}

// ---- Buffers kept for the process ----------------------------------------------------------------
namespace {
struct PinnedFree {
  void operator()(void* p) const { cudaFreeHost(p); }
};
struct HostSlot {
  std::unique_ptr<void, PinnedFree> pinned;
  size_t pinned_bytes = 0;
  std::unique_ptr<unsigned char[]> pageable;
  size_t pageable_bytes = 0;
};
std::array<HostSlot, 2>& host_slots() {
  static std::array<HostSlot, 2> s;
  return s;
}
std::map<int, std::array<DeviceBuffer<unsigned char>, 2>>& device_slots() {
  static std::map<int, std::array<DeviceBuffer<unsigned char>, 2>> s;
  return s;
}
void check_which(int which) {
  if (which < 0 || which > 1) throw std::invalid_argument("buffer index must be 0 or 1");
}
}  // namespace

void* device_buffer(int device, int which, size_t bytes) {
  check_which(which);
  DeviceBuffer<unsigned char>& b = device_slots()[device][which];
  if (b.bytes() < bytes) {
    DeviceGuard g(device);
    b = DeviceBuffer<unsigned char>();  // free the old one on its own device first
    b = DeviceBuffer<unsigned char>(bytes);
  }
  return b.data();
}

void* pinned_buffer(int which, size_t bytes) {
  check_which(which);
  HostSlot& s = host_slots()[which];
  if (s.pinned_bytes < bytes) {
    s.pinned.reset();
    void* p = nullptr;
    CUDA_CHECK(cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable));
    s.pinned.reset(p);
    s.pinned_bytes = bytes;
  }
  return s.pinned.get();
}

void* pageable_buffer(int which, size_t bytes) {
  check_which(which);
  HostSlot& s = host_slots()[which];
  if (s.pageable_bytes < bytes) {
    s.pageable.reset(new unsigned char[bytes]);
    std::memset(s.pageable.get(), 0, bytes);  // fault every page in now, not in a timed copy
    s.pageable_bytes = bytes;
  }
  return s.pageable.get();
}

int peer_device(int device, std::string* why) {
  int n = 0;
  CUDA_CHECK(cudaGetDeviceCount(&n));
  auto mutual = [&](int j) {
    int a = 0, b = 0;
    CUDA_CHECK(cudaDeviceCanAccessPeer(&a, device, j));
    CUDA_CHECK(cudaDeviceCanAccessPeer(&b, j, device));
    return a && b;
  };
  int peer = -1;
  if (const int j = env::peer_device(); j >= 0) {
    const std::string v = std::to_string(j);
    if (j == device || j >= n)
      throw std::invalid_argument("MH_PEER_DEVICE=" + v + ": not another of the " + std::to_string(n) + " CUDA device(s)");
    if (!mutual(j)) {
      *why = "no peer access between devices " + std::to_string(device) + " and " + v + " (MH_PEER_DEVICE; cudaDeviceCanAccessPeer)";
      return -1;
    }
    peer = j;
  } else {
    for (int j = 0; j < n && peer < 0; ++j)
      if (j != device && mutual(j)) peer = j;
    if (peer < 0) {
      *why = n == 1 ? "no peer GPU: one CUDA device visible"
                    : "no peer GPU with access: device " + std::to_string(device) + " and the other " +
                          std::to_string(n - 1) + " device(s) cannot access each other's memory (cudaDeviceCanAccessPeer)";
      return -1;
    }
  }
  static std::set<std::pair<int, int>> enabled;
  for (auto [from, to] : {std::pair{device, peer}, std::pair{peer, device}}) {
    if (enabled.count({from, to})) continue;
    DeviceGuard g(from);
    const cudaError_t err = cudaDeviceEnablePeerAccess(to, 0);
    if (err == cudaErrorPeerAccessAlreadyEnabled)
      cudaGetLastError();  // enabled elsewhere in this process: fine
    else
      CUDA_CHECK(err);
    enabled.insert({from, to});
  }
  return peer;
}

// ---- Pointer chase ------------------------------------------------------------------------------
void launch_chase(const uint32_t* chain, int steps, uint32_t* state, ClockSpan* span, cudaStream_t s) {
  chase_kernel<<<1, 1, 0, s>>>(chain, kChaseStrideBytes / 4, steps, state, span);
  CUDA_CHECK_LAUNCH("chase_kernel");
}

// ---- Link peaks from NVML -------------------------------------------------------------------------
namespace {
// The few NVML types used here beyond harness/nvml.cuh's, as nvml.h lays them out.
using NvmlDevice = nvml::Device;
struct NvmlFieldValue {
  unsigned int fieldId, scopeId;
  long long timestamp, latencyUsec;
  int valueType, nvmlReturn;
  union {
    double d;
    unsigned int ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
    int si;
  } value;
};
constexpr unsigned kFieldNvlinkSpeedMbpsCommon = 90;  // NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON
constexpr unsigned kFieldNvlinkDataTx = 138;           // NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX (KiB)
constexpr unsigned kFieldNvlinkRawTx = 140;            // NVML_FI_DEV_NVLINK_THROUGHPUT_RAW_TX (KiB)
constexpr unsigned kScopeAllLinks = 0xFFFFFFFFu;       // scopeId UINT_MAX: every link summed
using FieldsFn = int (*)(nvml::Device, int, NvmlFieldValue*);
constexpr int kNvmlErrorInvalidArgument = 2;           // past the last link

double field_number(const NvmlFieldValue& v) {
  switch (v.valueType) {
    case 0: return v.value.d;
    case 1: return v.value.ui;
    case 2: return static_cast<double>(v.value.ul);
    case 3: return static_cast<double>(v.value.ull);
    case 4: return static_cast<double>(v.value.sll);
    case 5: return v.value.si;
    default: return 0.0;
  }
}

}  // namespace

model::LinkInfo link_info(int device) {
  model::LinkInfo li;
  NvmlDevice dev = nvml::device_handle(device, &li.source);
  if (!dev) return li;  // li.source says why
  li.source = "nvml";
  using UintFn = int (*)(NvmlDevice, unsigned*);
  using LinkStateFn = int (*)(NvmlDevice, unsigned, int*);
  using LinkUintFn = int (*)(NvmlDevice, unsigned, unsigned*);
  auto get = [&](const char* name, int* out) {
    unsigned v = 0;
    if (auto fn = nvml::function<UintFn>(name); fn && fn(dev, &v) == nvml::kSuccess) *out = static_cast<int>(v);
  };
  get("nvmlDeviceGetMaxPcieLinkGeneration", &li.pcie_gen_max);
  get("nvmlDeviceGetCurrPcieLinkGeneration", &li.pcie_gen_current);
  get("nvmlDeviceGetMaxPcieLinkWidth", &li.pcie_width_max);
  get("nvmlDeviceGetCurrPcieLinkWidth", &li.pcie_width_current);
  auto state = nvml::function<LinkStateFn>("nvmlDeviceGetNvLinkState");
  auto version = nvml::function<LinkUintFn>("nvmlDeviceGetNvLinkVersion");
  for (unsigned link = 0; state && link < 64; ++link) {
    int active = 0;
    const int r = state(dev, link, &active);
    if (r == kNvmlErrorInvalidArgument) break;        // no such link: past the last one
    if (r != nvml::kSuccess || active != 1) continue;  // NVML_FEATURE_ENABLED == 1
    ++li.nvlink_count;
    unsigned v = 0;
    if (li.nvlink_version == 0 && version && version(dev, link, &v) == nvml::kSuccess) li.nvlink_version = static_cast<int>(v);
  }
  if (li.nvlink_count > 0) {
    NvmlFieldValue fv{};
    fv.fieldId = kFieldNvlinkSpeedMbpsCommon;
    auto fields = nvml::function<FieldsFn>("nvmlDeviceGetFieldValues");
    if (fields && fields(dev, 1, &fv) == nvml::kSuccess && fv.nvmlReturn == nvml::kSuccess && field_number(fv) > 0) {
      li.nvlink_link_bytes_per_second = field_number(fv) * 1e6;  // MB/s
      li.nvlink_rate_source = "nvml speed field";
    } else if (model::nvlink_version_bytes_per_second(li.nvlink_version) > 0) {
      li.nvlink_link_bytes_per_second = model::nvlink_version_bytes_per_second(li.nvlink_version);
      li.nvlink_rate_source = "nvlink version table";
    }
  }
  return li;
}

bool nvlink_tx(int device, NvlinkTx* out) {
  NvmlDevice dev = nvml::device_handle(device);
  auto fields = nvml::function<FieldsFn>("nvmlDeviceGetFieldValues");
  if (!dev || !fields) return false;
  // One field per call, into a zeroed heap block far larger than the one entry asked for: the first version,
  // both fields at once into a two-entry array on the stack, died with "stack smashing detected" at the first
  // peer benchmark on the H200 node (driver 580.159); this one ran there and its data count equals the bytes
  // copied.
  auto read = [&](unsigned field, double* kib) {
    std::vector<NvmlFieldValue> fv(64);
    fv[0].fieldId = field;
    fv[0].scopeId = kScopeAllLinks;
    if (fields(dev, 1, fv.data()) != nvml::kSuccess || fv[0].nvmlReturn != nvml::kSuccess) return false;
    *kib = field_number(fv[0]);
    return true;
  };
  double data = 0, raw = 0;
  if (!read(kFieldNvlinkDataTx, &data) || !read(kFieldNvlinkRawTx, &raw)) return false;
  out->data_bytes = data * 1024;
  out->raw_bytes = raw * 1024;
  return true;
}

std::vector<std::pair<std::string, std::string>> link_context(int device) {
  return model::link_context_entries(link_info(device));
}

}  // namespace mh::link

// ---- Benchmarks: host and peer links --------------------------------------------------------------
// link/<h2d|d2h|bidir>/<pinned|pageable>/<ce|sm>/bytes:N  host memory over PCIe;
// link/peer/<uni|bidir>/<ce|ce_split|sm>/bytes:N          a peer GPU's memory (NVLink where present);
// latency/link/<host|peer>                                 one thread's dependent loads through either.
// bytes_per_second: bytes moved per launch, both directions summed for bidir. Every benchmark checks
// the data after its timed loop and fails with what differed.
//
// Directions. h2d: pinned/pageable host -> device; d2h the reverse; bidir both at once (ce: two
// streams; sm: one kernel, half its blocks each way). peer/uni: this GPU's memory -> the peer's, moved
// by this GPU (ce: its copy engine; ce_split: kCeSplits copies on as many streams at once, in case one
// copy engine is not the limit; sm: its SMs storing to the peer). peer/bidir adds the peer moving
// its memory -> this GPU's at the same time, by the peer's own copy engine or SMs: each side pushes,
// since NVLink writes are posted and need no round trip.
//
// Peers. Plans cannot ask CUDA, so the peer benchmarks are always planned; the body picks the peer
// (MH_PEER_DEVICE, else the first GPU with access both ways) or skips with the reason. A peer
// benchmark records both ends in the counters device and peer_device, which plots/peer_matrix.py reads,
// and, where NVML gives them, this GPU's NVLink transmit rates over the timed launches:
// nvlink_tx_bytes_per_second (payload) and nvlink_raw_tx_bytes_per_second (payload + protocol), the
// evidence of how close to the links' signalling rate a copy runs.
#include <cstring>
#include <map>

#include "harness/bench.cuh"
#include "harness/registry.cuh"
#include "micro/bench_link.cuh"
#include "micro/link.cuh"
#include "model/chase.hpp"

namespace {
using namespace mh;
using namespace mh::link;

constexpr int kSizeExponents[] = {10, 13, 16, 19, 22, 25, 28, 30};  // 1 KiB .. 1 GiB: x8, and a last x4
constexpr size_t kPageableMaxBytes = size_t{32} << 20;
constexpr int kChaseSteps = 1024;  // ~1-2 ms a launch through PCIe, well above the launch overhead


// Largest transfer: 1 GiB, or a sixteenth of device memory on a small GPU (two buffers of it are kept).
size_t max_transfer_bytes(const DeviceFacts& f) {
  size_t b = size_t{1} << 30;
  while (b > 1024 && b > f.global_mem_bytes / 16) b /= 2;
  return b;
}

void transfer_body(benchmark::State& st, Path path, Memory host, Method method, size_t bytes) {
  const DeviceFacts& f = current_device_facts();
  const int dev = f.device;
  const size_t pool = max_transfer_bytes(f);
  int peer = -1;
  if (is_peer(path)) {
    std::string why;
    peer = peer_device(dev, &why);
    if (peer < 0) return skip_benchmark(st, why);
  }
  const std::vector<Leg> legs = make_legs(path, host, dev, peer, bytes, pool, kPageableMaxBytes);
  static uint32_t calls = 0;
  const uint32_t seed = 2 * ++calls;  // new data every call: nothing left from an earlier one can pass
  fill_sources(legs, seed);
  Transfer transfer(method, legs);
  NvlinkTx tx0, tx1;
  const bool counted = peer >= 0 && nvlink_tx(dev, &tx0);
  long long launches = 0;  // the warm-up launches too: NVML counts every byte between the two reads
  Timing timing;
  timing.gate = host != Memory::pageable;  // a pageable copy waits on the host for its stream (staging)
  run_timed(
      st,
      [&] {
        transfer();
        ++launches;
      },
      timing);
  CUDA_CHECK(cudaDeviceSynchronize());  // every launch done (peer/bidir: both devices' legs joined to this one)
  const bool tx_read = counted && nvlink_tx(dev, &tx1);
  const std::string bad = check_destinations(legs, seed);
  if (!bad.empty()) {
    st.SkipWithError(bad.c_str());
    return;
  }
  st.counters["bytes_per_second"] = rate(static_cast<double>(transfer.bytes_moved()));
  if (peer >= 0) {
    st.counters["device"] = value(f.device);
    st.counters["peer_device"] = value(peer);
  }
  if (tx_read && launches > 0 && tx1.data_bytes > tx0.data_bytes) {
    st.counters["nvlink_tx_bytes_per_second"] = rate((tx1.data_bytes - tx0.data_bytes) / launches);
    st.counters["nvlink_raw_tx_bytes_per_second"] = rate((tx1.raw_bytes - tx0.raw_bytes) / launches);
  }
}

// The chain: 2 x L2 of 128-byte lines (every load misses this GPU's L2 even where it caches remote
// lines), built once per process and place; the walk goes on where the previous launch stopped, so no
// line is visited twice within ~the first million loads.
struct Chase {
  std::vector<uint32_t> next;
  uint32_t* chain = nullptr;  // in pinned host memory, or on the peer
  uint32_t pos = 0;
};

Chase& chase_for(bool host, int peer, const DeviceFacts& f) {
  static std::map<int, Chase> cache;  // key: -1 host, else the peer device
  Chase& c = cache[host ? -1 : peer];
  if (c.chain) return c;
  const uint32_t n = static_cast<uint32_t>(2 * f.l2_bytes / kChaseStrideBytes);
  c.next = model::random_ring(n);
  const size_t words = static_cast<size_t>(n) * kChaseStrideBytes / 4;
  std::vector<uint32_t> image(words, 0);
  for (uint32_t i = 0; i < n; ++i) image[static_cast<size_t>(i) * kChaseStrideBytes / 4] = c.next[i];
  if (host) {
    void* p = nullptr;
    CUDA_CHECK(cudaHostAlloc(&p, words * 4, cudaHostAllocMapped | cudaHostAllocPortable));
    std::memcpy(p, image.data(), words * 4);
    c.chain = static_cast<uint32_t*>(p);
  } else {
    DeviceGuard g(peer);
    CUDA_CHECK(cudaMalloc(&c.chain, words * 4));
    CUDA_CHECK(cudaMemcpy(c.chain, image.data(), words * 4, cudaMemcpyHostToDevice));
  }
  return c;  // kept until exit, like the copy buffers
}

void chase_body(benchmark::State& st, bool host) {
  const DeviceFacts& f = current_device_facts();
  int peer = -1;
  if (!host) {
    std::string why;
    peer = peer_device(f.device, &why);
    if (peer < 0) return skip_benchmark(st, why);
  }
  Chase& c = chase_for(host, peer, f);
  DeviceBuffer<uint32_t> state(std::vector<uint32_t>{c.pos});
  DeviceBuffer<ClockSpan> span(1);
  long long launches = 0;
  run_timed(st, [&] {
    launch_chase(c.chain, kChaseSteps, state.data(), span.data());
    ++launches;
  });
  const uint32_t got = state.download()[0], want = model::walk(c.next, c.pos, static_cast<uint64_t>(launches) * kChaseSteps);
  c.pos = got;
  if (got != want) {
    st.SkipWithError(("chase ended at element " + std::to_string(got) + ", the host walk at " + std::to_string(want)).c_str());
    return;
  }
  const ClockSpan s = span.download()[0];
  st.counters["cycles_per_load"] = value(static_cast<double>(s.cycles) / kChaseSteps);
  st.counters["ns_per_load"] = value(static_cast<double>(s.ns) / kChaseSteps);
  st.counters["working_set_bytes"] = value(static_cast<double>(c.next.size()) * kChaseStrideBytes);
  if (peer >= 0) {
    st.counters["device"] = value(f.device);
    st.counters["peer_device"] = value(peer);
  }
}

// What a transfer asks of this device: its two pooled buffers, and the copy kernel's grid for sm.
Launch transfer_launch(const DeviceFacts& f, Path path, Memory host, Method method, size_t bytes) {
  Launch l;
  l.device_bytes = 2 * max_transfer_bytes(f);
  if (method == Method::sm) {
    const int legs_here = path == Path::bidir ? 2 : 1;  // peer/bidir: the peer runs the other leg
    l.threads = kThreads;
    l.blocks = legs_here * copy_blocks(f, bytes, legs_here);
  }
  l.note = std::string(is_peer(path) ? "peer device memory" : host == Memory::pinned ? "pinned host" : "pageable host") +
           (method == Method::ce         ? ", copy engine"
            : method == Method::ce_split ? ", " + std::to_string(kCeSplits) + " copies on as many streams"
                                         : ", SM copy 16 B/access");
  return l;
}

void plan(Planner& p) {
  const DeviceFacts& f = p.facts();
  const size_t max_bytes = max_transfer_bytes(f);
  auto add = [&](Path path, Memory host, Method method, const std::string& prefix) {
    for (int e : kSizeExponents) {
      const size_t bytes = size_t{1} << e;
      if (bytes > max_bytes) break;
      const std::string name = prefix + "/bytes:" + std::to_string(bytes);
      if (host == Memory::pageable && bytes > kPageableMaxBytes) {
        p.skip(name, "pageable copies stop at 32 MiB: the driver stages them through pinned buffers at a rate flat "
                     "from a few MiB, and filling and checking larger ones on the CPU would outlast the family's budget");
        continue;
      }
      p.add(name, transfer_launch(f, path, host, method, bytes),
            [=](benchmark::State& st) { transfer_body(st, path, host, method, bytes); });
    }
  };
  for (Path path : {Path::h2d, Path::d2h, Path::bidir})
    for (Memory host : {Memory::pinned, Memory::pageable})
      for (Method method : {Method::ce, Method::sm}) {
        const std::string prefix = std::string("link/") + path_name(path) + (host == Memory::pinned ? "/pinned" : "/pageable") +
                                   "/" + method_name(method);
        if (host == Memory::pageable && method == Method::sm)
          p.skip(prefix, "not measured: a kernel reaches pageable host memory only through HMM or ATS, which the suite "
                         "does not assume; the copy engine moves it through the driver's staging buffers");
        else
          add(path, host, method, prefix);
      }
  for (Path path : {Path::peer_uni, Path::peer_bidir})
    for (Method method : {Method::ce, Method::ce_split, Method::sm})
      add(path, Memory::device, method, std::string("link/") + path_name(path) + "/" + method_name(method));
}

}  // namespace

// latency/link/<host|peer>: the remote levels on the latency curve, planned by the latency family.
void mh::link::plan_chases(Planner& p) {
  const DeviceFacts& f = p.facts();
  for (bool host : {true, false}) {
    Launch l;
    l.threads = 1;
    l.blocks = 1;
    l.note = std::string("pointer chase, ") + std::to_string(2 * f.l2_bytes >> 20) + " MiB of 128-byte lines in " +
             (host ? "mapped pinned host memory" : "a peer GPU's memory");
    p.add(host ? "latency/link/host" : "latency/link/peer", l, [host](benchmark::State& st) { chase_body(st, host); });
  }
}

MH_FAMILY("link", plan);

// Load latency and capacity by pointer chase: one thread follows a ring of pointers through a working
// set, each load's address being the previous load's value, so loads never overlap and the time per
// load is the latency of the level that holds the ring. The ring (model/chase.hpp) is built on the host
// and written to the device as absolute pointers: the chased load is one LDG with no address arithmetic.
#pragma once
#include <cstdint>
#include <vector>

#include "harness/device_buffer.cuh"
#include "harness/device_info.cuh"

namespace mh::latency {

// ca: ld.global.ca, cached in L1 and L2 (what a plain load does on sm_70+). cg: ld.global.cg, L2 only.
enum class Op { ca, cg };
// The shared-memory carve-out the chase kernel asks for: none (the driver's choice), min (0: the most
// L1) or max (100: the most shared memory, the least L1).
enum class Carveout { none, min, max };
inline const char* carveout_name(Carveout c) { return c == Carveout::min ? "min" : c == Carveout::max ? "max" : "none"; }

// A ring resident on the device: slot k at base + k * stride holds the address of the slot after it.
class Ring {
 public:
  // next: the host ring (random_ring or sequential_ring); bytes = next.size() * stride.
  Ring(const std::vector<uint32_t>& next, uint64_t stride);
  const unsigned char* base() const { return buf_.data(); }
  uint64_t slots() const { return slots_; }
  uint64_t stride() const { return stride_; }
  uint64_t bytes() const { return slots_ * stride_; }
  // The ring as the device holds it, read back slot by slot: next[k] = (pointer - base) / stride
  // (UINT32_MAX where a slot does not point at a slot). For the GPU test; rings up to a few MiB.
  std::vector<uint32_t> download() const;

 private:
  DeviceBuffer<unsigned char> buf_;
  uint64_t slots_, stride_;
};

// What one chase records (thread 0 of its block).
struct ChaseResult {
  uint64_t end_slot;  // slot reached after warm-up + timed loads: the checksum the compiler cannot drop
  long long cycles;   // clock64 span of the timed loads
  long long ns;       // %globaltimer span of the same loads
  long long start_ns; // %globaltimer when the timed loads began
  int smid;
};

struct ChaseConfig {
  Op op = Op::ca;
  Carveout carveout = Carveout::none;
  uint64_t loads = 0;          // timed dependent loads
  uint64_t warm_loads = 0;     // untimed dependent loads before them (from slot 0)
  bool warm_l1 = false;        // before the chain, the warp reads every slot once (with `op`)
};

// Every slot's line read once by a grid (with ld.global.cg): the ring is then L2-resident when it fits
// and its pages are in the TLBs that the L2 side keeps.
void warm_l2(const Ring& r, cudaStream_t s = nullptr);
// One block of one warp on one SM: the warm-up, then `loads` timed loads from where it left off
// (slot 0 when warm_loads is 0). out: one ChaseResult.
void chase(const Ring& r, const ChaseConfig& c, ChaseResult* out, cudaStream_t s = nullptr);

// Per-SM chase: one block on every SM (shared memory forces one per SM), each chasing the same ring
// in its own time slot (block b starts slot_ns * b after a common start that a kernel launched just
// before records), so no two chases share the L2 at once. out: sm_count ChaseResults, by block; their
// start_ns and ns let the caller check that no two timed chains overlapped (overlapping_chases()).
struct SpreadConfig {
  Op op = Op::cg;
  uint64_t loads = 0, warm_loads = 0;
  long long slot_ns = 0;
};
void chase_every_sm(const Ring& r, const SpreadConfig& c, ChaseResult* out, cudaStream_t s = nullptr);
// A time slot long enough for `loads` loads of 1500 cycles each at the rated clock (L2 far is ~500) plus
// 5 us; overlapping_chases() checks that it was.
inline long long spread_slot_ns(const DeviceFacts& f, uint64_t loads) {
  return static_cast<long long>(loads * 1500 * 1000 / static_cast<uint64_t>(f.sm_clock_mhz > 100 ? f.sm_clock_mhz : 100)) + 5000;
}
// Pairs of timed chains whose %globaltimer spans overlap (0 when the time slots kept them apart).
int overlapping_chases(std::vector<ChaseResult> results);
// Dynamic shared memory per block that leaves room for one block per SM only: more than half of what
// one SM has, with the per-block reserve (host-only: the plan uses it too).
inline size_t one_block_per_sm_smem(const DeviceFacts& f) {
  return (f.smem_per_sm_bytes / 2 + f.reserved_smem_per_block_bytes + 127) / 128 * 128;
}

}  // namespace mh::latency

// Pointer-chase rings and the latency family's sampling plan, host-only.
//
// A ring of n slots is next[k]: the slot a load at slot k leads to. Slot k lives at byte offset
// k * stride in the working set, so a chase of a ring touches n distinct addresses, `stride` apart.
//   random_ring:     a uniformly random cyclic permutation (Sattolo's algorithm): one cycle through
//                    every slot, in an order no prefetcher or open DRAM page can follow; fixed seed,
//                    so every run and the GPU test walk the same ring.
//   sequential_ring: k -> k + 1 (mod n), for the stride sweep, where the order is the point.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace mh::model {

constexpr uint64_t kChaseSeed = 0x6C61746E63792121ull;  // "latncy!!"

// splitmix64: small, fast, and the same on every compiler (std:: distributions are not).
struct SplitMix64 {
  uint64_t s;
  uint64_t operator()() {
    uint64_t z = (s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, bound), bound < 2^32, by multiply-shift (Lemire); the bias is < bound / 2^32.
  uint32_t below(uint32_t bound) { return static_cast<uint32_t>(((*this)() >> 32) * bound >> 32); }
};

inline void check_slots(size_t n) {
  if (n < 1 || n > 0xFFFFFFFFull) throw std::invalid_argument("a ring needs 1 to 2^32 - 1 slots");
}

// Sattolo: like Fisher-Yates, but slot i swaps only with a slot below it, which yields exactly the
// cyclic permutations (each equally likely): one cycle of length n.
inline std::vector<uint32_t> random_ring(size_t n, uint64_t seed = kChaseSeed) {
  check_slots(n);
  std::vector<uint32_t> next(n);
  for (size_t i = 0; i < n; ++i) next[i] = static_cast<uint32_t>(i);
  SplitMix64 rng{seed};
  for (size_t i = n - 1; i > 0; --i) std::swap(next[i], next[rng.below(static_cast<uint32_t>(i))]);
  return next;
}

inline std::vector<uint32_t> sequential_ring(size_t n) {
  check_slots(n);
  std::vector<uint32_t> next(n);
  for (size_t i = 0; i < n; ++i) next[i] = static_cast<uint32_t>((i + 1) % n);
  return next;
}

// The slot a chase reaches after `steps` loads from `from`.
inline uint32_t walk(const std::vector<uint32_t>& next, uint32_t from, uint64_t steps) {
  for (uint64_t i = 0; i < steps; ++i) from = next[from];
  return from;
}

// True when next is a permutation made of one cycle through every slot.
inline bool is_one_cycle(const std::vector<uint32_t>& next) {
  if (next.empty()) return false;
  std::vector<bool> seen(next.size(), false);
  uint32_t k = 0;
  for (size_t i = 0; i < next.size(); ++i) {
    if (next[k] >= next.size() || seen[k]) return false;
    seen[k] = true;
    k = next[k];
  }
  return k == 0;  // n steps from slot 0, every slot seen once, and back at the start
}

// Working sets from lo to hi bytes (both included), `per_octave` log-spaced points per doubling,
// each rounded to a multiple of `stride` (at least one stride), without duplicates.
inline std::vector<uint64_t> log_spaced_sizes(uint64_t lo, uint64_t hi, int per_octave, uint64_t stride) {
  if (lo < 1 || hi < lo || per_octave < 1 || stride < 1) throw std::invalid_argument("log_spaced_sizes: bad range");
  std::vector<uint64_t> out;
  const int points = static_cast<int>(std::floor(std::log2(static_cast<double>(hi) / lo) * per_octave + 1e-9));
  for (int i = 0; i <= points; ++i) {
    const double v = lo * std::exp2(static_cast<double>(i) / per_octave);
    const uint64_t ws = std::max<uint64_t>(stride, static_cast<uint64_t>(std::llround(v / stride)) * stride);
    if (ws <= hi && (out.empty() || ws > out.back())) out.push_back(ws);
  }
  return out;
}

// Largest power of two <= v (v >= 1).
inline uint64_t floor_pow2(uint64_t v) {
  uint64_t p = 1;
  while (p <= v / 2) p *= 2;
  return p;
}

// Timed loads per chase: two laps of a ring that a cache may hold (the steady state, not the first
// touch), between kMinLoads (clock64 and %globaltimer resolution) and kMaxLoads; rings larger than
// any cache miss on nearly every load whatever the count, so they get kMinLoads and keep the family fast.
// kMaxLoads: near the L2's capacity a launch's hit rate depends on the part of the ring it walks; with
// 2^16 loads (a fifth of a 42 MiB ring) and one launch per repetition (10 ms each, at
// --benchmark_min_time=0.01s) the H200 runs' CV reached 2.0-2.8 % there; 2^18 loads cover most of it.
constexpr uint64_t kMinLoads = 1 << 14, kMaxLoads = 1 << 18;
inline uint64_t chase_loads(uint64_t slots, bool cache_sized) {
  return cache_sized ? std::clamp<uint64_t>(2 * slots, kMinLoads, kMaxLoads) : kMinLoads;
}

}  // namespace mh::model

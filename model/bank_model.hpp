// Shared-memory bank model: how many wavefronts one warp-wide shared-memory access needs.
//
// The model (checked on the GPU against ncu's l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum
// divided by smsp__sass_inst_executed_op_shared_{ld,st}.sum):
//   - 32 banks of 4 bytes: byte address a lies in word a / 4, bank (a / 4) mod 32.
//   - An access of width W bytes (4, 8 or 16, W-aligned) is processed in W / 4 phases of 32 * 4 / W
//     consecutive lanes (W=4: the warp; W=8: half-warps 0-15, 16-31; W=16: quarter-warps).
//   - In a phase, one wavefront serves at most one distinct word per bank; lanes asking for the same
//     word share it (broadcast, multicast). So a phase needs max over banks of (distinct words asked
//     in that bank) wavefronts, at least one when any of its lanes is active.
//   - wavefronts = the sum over phases, with one refinement measured on the H200 (ncu, 210 patterns):
//     for LOADS, the phases pair up (phases 0-1 and 2-3) and a pair of phases that ask for exactly the
//     same words is served as one. So an 8-byte broadcast load takes 1 wavefront, a 16-byte broadcast
//     load 2; stores never pair (an 8-byte broadcast store takes 2, a 16-byte one 4).
// So a conflict-free access needs W / 4 wavefronts (128 bytes each); "conflict ways" in the suite
// means this wavefront count.
#pragma once
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "model/access_model.hpp"

namespace mh::model {

constexpr int kBanks = 32;
constexpr int kBankBytes = 4;
constexpr int kTileRowBytes = 128;  // one row of the padded / swizzled tile: a full sweep of the banks

enum class SmemOp { load, store };

inline void check_smem_width(int width) {
  if (width != 4 && width != 8 && width != 16) throw std::invalid_argument("shared access width must be 4, 8 or 16 bytes");
}

// addrs[i]: byte address lane i accesses (lanes past addrs.size() are inactive, as are lanes not in `active`).
inline int smem_wavefronts(const std::vector<uint64_t>& addrs, int width, uint32_t active = 0xffffffffu,
                           SmemOp op = SmemOp::load) {
  check_smem_width(width);
  if (addrs.size() > static_cast<size_t>(kWarpSize)) throw std::invalid_argument("more than 32 lane addresses");
  const int lanes_per_phase = kWarpSize * kBankBytes / width;
  int wavefronts = 0;
  uint64_t words[kWarpSize], previous[kWarpSize];  // a phase asks for at most 32 words; no allocation
  int n_previous = -1;
  for (int phase = 0, first = 0; first < kWarpSize; ++phase, first += lanes_per_phase) {
    int n = 0;
    for (int lane = first; lane < std::min<int>(first + lanes_per_phase, static_cast<int>(addrs.size())); ++lane) {
      if (!(active >> lane & 1u)) continue;
      if (addrs[lane] % width) throw std::invalid_argument("shared address not aligned to the access width");
      for (int k = 0; k < width / kBankBytes; ++k) words[n++] = addrs[lane] / kBankBytes + k;
    }
    std::sort(words, words + n);
    n = static_cast<int>(std::unique(words, words + n) - words);
    // The second phase of a load pair asking for the first one's words rides on its wavefronts.
    const bool paired = op == SmemOp::load && phase % 2 == 1 && n == n_previous && std::equal(words, words + n, previous);
    int per_bank[kBanks] = {}, worst = 0;
    for (int i = 0; i < n; ++i) worst = std::max(worst, ++per_bank[words[i] % kBanks]);
    if (!paired) wavefronts += worst;
    std::copy(words, words + n, previous);
    n_previous = n;
  }
  return wavefronts;
}

// The suite's access patterns. Lane i accesses logical element i * stride (elements of `width` bytes;
// stride 0 is a broadcast). The array is a tile of 128-byte rows, epr = 128 / width elements per row:
// element e sits at row e / epr, column e % epr. Its physical element index is
//   padding:  row * (epr + pad) + col            (pad elements of `width` bytes added per row)
//   swizzle:  row * epr + (col XOR (row mod epr))  (no padding)
struct SmemPattern {
  int width = 4;
  int stride = 1;
  int pad = 0;
  bool swizzle = false;
};

inline uint64_t smem_physical_element(const SmemPattern& p, uint64_t e) {
  const uint64_t epr = kTileRowBytes / p.width, row = e / epr, col = e % epr;
  return p.swizzle ? row * epr + (col ^ (row % epr)) : row * (epr + p.pad) + col;
}

// Byte offset (from the tile's start) each of the 32 lanes accesses.
inline std::vector<uint64_t> smem_pattern_addresses(const SmemPattern& p) {
  check_smem_width(p.width);
  if (p.stride < 0 || p.pad < 0 || (p.swizzle && p.pad)) throw std::invalid_argument("bad stride, pad or swizzle");
  std::vector<uint64_t> a(kWarpSize);
  for (int i = 0; i < kWarpSize; ++i) a[i] = smem_physical_element(p, static_cast<uint64_t>(i) * p.stride) * p.width;
  return a;
}

inline int smem_pattern_wavefronts(const SmemPattern& p, SmemOp op = SmemOp::load) {
  return smem_wavefronts(smem_pattern_addresses(p), p.width, 0xffffffffu, op);
}

}  // namespace mh::model

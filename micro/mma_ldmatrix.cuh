// How ldmatrix (shared memory -> fragments) and mma.sync m16n8k16 BF16 share an SM when the same warps issue
// both, in the mix of the mma.sync GEMM kernels 10, 10a, 11 and 11a: per warp and k16 step kLdsmA + kLdsmB
// ldmatrix.x4 (4 + 2) and kMTiles x kNTiles mma.sync (16), gemm/tc_shape.hpp's counts. The warps run the
// kernels' own routine (gemm/tc_tile.cuh, mma_block_tile: the same fragment code, the same ptxas schedule) on
// the kernels' swizzled 128 x 128 tiles of A and B, with the kernels' 256-thread blocks and warp tiles; nothing
// else (no global copies, no barriers). Three kinds, same warps, same trips:
//   mix:      the routine as the kernels run it: per trip BK / 16 k16 steps of 6 ldmatrix.x4 + 16 mma.sync;
//   ldmatrix: the same ldmatrix at the same addresses, their registers summed (one IADD each, so that none is
//             dead code) instead of multiplied;
//   mma:      the same 16 mma.sync per step on fragments loaded once before the timed loop.
// The resident blocks per SM are pinned by dynamic shared memory (only `blocks_per_sm` fit), so the warps per
// SM are the GEMM kernels' (16: two blocks) or one block's (8), and the occupancy API confirms it.
// gpubench/analysis/tc_predict.py turns the three times into the overlap of the two pipes (docs/families/tc-gemm.md).
//
// Two more kinds time the cp.async copy of the next tiles against that work, in kernels 11 and 11a's loop
// (gemm/tc_tile.cuh, cp_async_pipeline: the kernels' own loop, cp.async fill, waits and barriers), at
// their stages S and residency (S x kStageBytes of dynamic shared memory, pinned to kMinBlocks blocks):
//   copy:     the loop with nothing computed: per trip one block tile (A and B, 32 KiB) by cp.async 16 B,
//             commit, cp.async.wait_group S - 1, two barriers;
//   mix_copy: the loop as the kernels run it, mma_block_tile on each landed tile.
// The tiles come from an L2-resident working set on purpose (the GEMM's copies are L2 -> SM; the counting
// model charges them at L2 rates): A and B each kSetRowBlocks x 128 rows of kSetK BF16 (2 MiB each); block b
// copies A rows (b % kSetRowBlocks) x 128.., B rows (b / kSetRowBlocks % kSetRowBlocks) x 128.., trip t the
// k tile t % kSetTiles: blocks share panels as the GEMM's do, every tile change is visible in the checksum.
// Checked: mix_copy as mix (each warp's weighted C, the host's product of the tiles the trips copied); copy:
// each block's sum of the 32-bit words its ring holds at the end (the last tile copied into each buffer).
//
// Checked: each thread's accumulators are exact small integers (tile values in -3..3, so every sum is exact in
// FP32); the sum of a warp's 32 checksums must equal the host's: the warp's C tile weighted by element (mix,
// mma), or the words its ldmatrix loaded (ldmatrix, mod 2^32), times the trips.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gemm/tc_shape.hpp"
#include "harness/device_facts.hpp"
#include "harness/device_info.cuh"

namespace mh::tensor::mix {

enum class Kind { mix, ldmatrix, mma };
const char* kind_name(Kind k);  // "mix" "ldmatrix" "mma"

constexpr int kThreads = gemm::tc::kThreads;                        // the kernels' blocks: 8 warps
constexpr int kStepsPerTrip = gemm::tc::BK / 16;                   // k16 steps per trip (one block tile)
constexpr int kLdsmPerStep = gemm::tc::kLdsmA + gemm::tc::kLdsmB;  // ldmatrix.x4 per warp and step: 6
constexpr int kMmaPerStep = gemm::tc::kMTiles * gemm::tc::kNTiles;  // mma.sync per warp and step: 16
constexpr size_t kTilesBytes = 2 * size_t(gemm::tc::kTileBytes<gemm::tc::Layout::swizzled>);  // A, then B: 32 KiB

// The BF16 value (a small integer) of tile row `row`, element k, of the A tile or the B tile.
MH_TC_HD int tile_value(bool b_tile, int row, int k) {
  return b_tile ? (row * 5 + k * 13 + row * k % 5) % 7 - 3 : (row * 7 + k * 3 + row * k % 11) % 7 - 3;
}
// The weight of C element (row, col) of the block tile in a warp's checksum (a permuted row or column changes it).
MH_TC_HD long long c_weight(int row, int col) { return (row * 131 + col * 17) % 251 + 1; }

// Dynamic shared memory per block that lets only `blocks_per_sm` blocks reside on `f`'s SMs (the reserved
// bytes per block counted); 0 when that is less than the two tiles.
size_t pinning_smem(const DeviceFacts& f, int blocks_per_sm);
// Resident blocks per SM of the compiled kernel of `k` with `smem` dynamic bytes (occupancy API; needs a GPU).
Residency residency(Kind k, size_t smem);
// Empty when this build's loaded kernel of `k` has mma.sync / ldmatrix (sm_80 on), else why not.
std::string compiled_out(Kind k);
// Trips per thread for a launch of about `target_clocks` SM clocks at `warps_per_sm` resident warps, estimated
// at 24 SM clocks per warp k16 step (the slower of the two pipes alone, issue/tensor figures of the H200).
int trips_for(int warps_per_sm, double target_clocks);

// `blocks` blocks of kThreads threads, `smem` dynamic bytes (at least kTilesBytes); sums[thread] = its checksum,
// spans[block] its timed loop.
void launch(Kind k, int blocks, size_t smem, int trips, unsigned long long* sums, ClockSpan* spans, cudaStream_t s = nullptr);
// The host's sum of the 32 checksums of warp `warp` (0..7) of any block (mod 2^64; mod 2^32 for ldmatrix).
unsigned long long expected_warp_sum(Kind k, int warp, int trips);
// Empty when every warp's checksums in `sums` (blocks x kThreads) add up to the host's; else the first wrong warp.
std::string check_sums(Kind k, int trips, const std::vector<unsigned long long>& sums);

// The copy kinds (above): their own kernels, with the stages S and the L2-resident set as arguments.
enum class CopyKind { copy, mix_copy };
const char* kind_name(CopyKind k);  // "copy" "mix_copy"
constexpr int kSetRowBlocks = 16, kSetTiles = 8;  // the working set: 16 x 128 rows by 8 BK-deep tiles
constexpr int kSetRows = kSetRowBlocks * gemm::tc::BM, kSetK = kSetTiles * gemm::tc::BK;
constexpr size_t kSetBytes = 2 * size_t(kSetRows) * kSetK * 2;  // A and B, BF16: 4 MiB
// The BF16 value of element (row, k) of the set's A or B: the tile value of the row in its block tile (every
// row block alike) at the set's k (every k tile different).
MH_TC_HD int set_value(bool b_matrix, int row, int k) { return tile_value(b_matrix, row % gemm::tc::BM, k); }
// The kernels' dynamic shared memory of S stages.
constexpr size_t ring_bytes(int stages) { return size_t(stages) * gemm::tc::kStageBytes; }
// The stages this build has kernels for: kernel 11's and kernel 11a's (gemm/tc_shape.hpp).
bool has_stages(int stages);

// The set's A and B (each kSetRows x kSetK, row-major, BF16 bits) as the kernels read them.
std::vector<uint16_t> host_set(bool b_matrix);
Residency residency(CopyKind k, int stages, size_t smem);
std::string compiled_out(CopyKind k, int stages);
// `blocks` blocks, `smem` (at least ring_bytes(stages)) dynamic bytes, A and B: device copies of host_set.
// sums[thread] = its checksum (copy: the words of its chunks in the ring), spans[block] the timed loop.
void launch(CopyKind k, int stages, int blocks, size_t smem, int trips, const uint16_t* A, const uint16_t* B,
            unsigned long long* sums, ClockSpan* spans, cudaStream_t s = nullptr);
// copy: the host's sum (mod 2^32) of one block's checksums; mix_copy: of warp `warp`'s (0..7) 32 checksums.
unsigned long long expected_sum(CopyKind k, int stages, int warp, int trips);
// Empty when every block's (copy) or warp's (mix_copy) checksums add up to the host's; else the first wrong one.
std::string check_sums(CopyKind k, int stages, int trips, const std::vector<unsigned long long>& sums);

}  // namespace mh::tensor::mix

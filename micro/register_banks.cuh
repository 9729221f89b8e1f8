// Register assignment: one FFMA stream, two assignments of its source registers, to measure what the
// compiler's choice of registers alone costs in issue rate. 16-byte shared loads fix the registers (their
// four destinations are consecutive from a multiple of four):
//   acc[i][j] = fma(x[i], y[p(j)], acc[i][j]), x, y and every row acc[i] one 16-byte load each, so the b
//   operand y[p(j)] and the c operand acc[i][j] have register indices of equal parity when p(j) and j do;
//   pattern same: p(j) = j (b and c of every FFMA of equal parity, the reading of two register banks by
//   index mod 2 puts them in one bank);
//   pattern split: p(j) = j xor 1 (b and c of different parity).
// x[i] is the a operand of four FFMA in a row: ptxas marks it .reuse for the first three. Both patterns run
// the same instructions (cuobjdump -sass: 128 FFMA and 3 loop instructions per trip). On the H200, split
// runs 6 % slower than same, the opposite of what the two-bank reading predicts, and both below
// issue/ffma (docs/families/issue.md, "Register assignment"): the time model uses neither.
#pragma once
#include <cstddef>
#include <cstdint>

#include "harness/cuda_check.cuh"
#include "harness/device_facts.hpp"

namespace mh::register_banks {

constexpr int kThreads = 128;      // per block: 4 warps, one per sub-partition
constexpr int kRounds = 8;         // x times y outer products per loop trip
constexpr int kFfmaPerTrip = kRounds * 16;
constexpr int kOperandFloat4 = 512;  // the shared buffer the operands are read from (8 KiB)
constexpr size_t kOperandBytes = kOperandFloat4 * sizeof(float4);  // the least dynamic shared memory a launch takes

enum class Pattern { split, same };
const char* pattern_name(Pattern p);  // "split", "same"

// Loop trips per thread for a launch of about `target_clocks` SM clocks with `warps_per_sm` resident warps
// (one FFMA per clock per sub-partition).
int trips_for(int warps_per_sm, double target_clocks);

// Resident blocks per SM of the compiled kernel with `smem` dynamic bytes (occupancy API; needs a GPU).
int resident_blocks(Pattern p, size_t smem);
// blocks of kThreads threads; out[thread] = the sum of its 16 accumulators.
void launch(Pattern p, float* out, int blocks, size_t smem, int trips, cudaStream_t st = nullptr);
// The host replay of one thread's sum (the same fmaf sequence: bit-identical).
float expected(Pattern p, uint32_t thread, int trips);

}  // namespace mh::register_banks

// Instruction issue: how many FFMA and shared loads (LDS) an SM issues per clock alone and mixed, with
// every SM holding a chosen number of warps (the GEMM ladder runs 8 to 64 warps per SM).
//
// One kernel template, one loop: a thread runs `chunks` chunks of `unroll` trips; a trip is `lds` shared
// loads of `width` bytes (inline PTX ld.shared, so none is merged or hoisted) and then `ffma` FFMA that use
// the loaded floats two at a time, as the GEMM inner loops do (acc += x * y, 16 accumulators).
// Loads of one chunk read distinct rows of one half of the buffer, the next chunk the other half.
// Conflict-free: lane i reads bytes [i * width, (i + 1) * width) of a row (width / 4 wavefronts per load);
// broadcast: every lane the row's first `width` bytes (one wavefront). With `sync`, one __syncthreads per
// chunk. The GEMM time model (gpubench/analysis/predict.py) reads these rates from the same run.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "harness/cuda_check.cuh"
#include "harness/device_facts.hpp"

namespace mh::issue {

constexpr int kThreads = 128;  // per block: 4 warps, one per SM sub-partition
constexpr int kAccumulators = 16;

// ffma: FFMA alone (a loop of FFMA, no loads); lds: loads with one FFMA per two loaded floats (a load whose
// value is unused is dropped by ptxas); mix: a ladder kernel's FFMA per load.
enum class Kind { ffma, lds, mix };

struct Shape {
  Kind kind = Kind::mix;
  int ffma = 0;    // FFMA per trip per thread
  int lds = 0;     // shared loads per trip per thread
  int width = 4;   // bytes per load: 4, 8 or 16
  int unroll = 1;  // trips per chunk (loop iteration): loop overhead is 3 instructions per chunk
  bool broadcast = false;
  bool sync = false;  // one __syncthreads per chunk
  // Shared memory the loads read: two halves of unroll * lds rows of 32 * width bytes.
  size_t smem_bytes() const { return size_t(2) * unroll * lds * 32 * width; }
  // Wavefronts one load takes by the bank rule: width / 4 conflict-free, 1 broadcast.
  int wavefronts_per_lds() const { return broadcast ? 1 : width / 4; }
  // The benchmark name after "issue/", without warps: "mix/ffma:64/lds:3/width:16".
  std::string name() const;
};

// Every shape compiled into the library (the benchmarks' and the tests'); find() throws for another.
const std::vector<Shape>& shapes();
const Shape& find(Kind kind, int lds, int width, bool broadcast, bool sync);

// Chunks per thread for a launch of about `target_clocks` SM clocks with `warps_per_sm` resident warps,
// estimated from one warp instruction per clock per sub-partition and one wavefront per clock per SM.
int chunks_for(const Shape& s, int warps_per_sm, double target_clocks);

// Dynamic shared memory per block that lets only `blocks_per_sm` blocks be resident on `f`'s SMs (the system's
// reserved bytes per block counted); 0 when that leaves less than the shape's buffer.
size_t pinning_smem(const Shape& s, const DeviceFacts& f, int blocks_per_sm);

// Resident blocks per SM of the compiled kernel with `smem` dynamic bytes (occupancy API; needs a GPU).
int resident_blocks(const Shape& s, size_t smem);
// blocks of kThreads threads; out[thread] = the thread's checksum (its accumulators and last loaded floats).
// a: both FFMA operands of shapes without loads.
void launch(const Shape& s, float* out, int blocks, size_t smem, int chunks, float a, cudaStream_t st = nullptr);
// The host replay of one thread's checksum (the same fmaf sequence: bit-identical).
float expected(const Shape& s, uint32_t thread, int chunks, float a);

}  // namespace mh::issue

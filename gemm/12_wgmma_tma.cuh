// Kernel 12's host interface (gemm/12_wgmma_tma_sm90a.cu, compiled for sm_90a alone): what the table
// (gemm/tc_gemm.cu) needs to know of it, without its device code.
#pragma once
#include <cstddef>

#include "gemm/tc_gemm.cuh"
#include "gemm/tc_shape.hpp"

namespace mh::gemm::tc {

// kWgmmaStages (3 shared buffers of a 128 x 64 A and a 128 x 64 B tile, 32 KiB), kWgmmaThreads (two warpgroups,
// each 64 rows of the 128 x 128 tile of C) and kWgmmaMinBlocks: gemm/tc_shape.hpp.
// The tiles' base is rounded up to 1024 bytes (TMA's 128-byte swizzle repeats every 8 rows of 128 bytes),
// so the dynamic allocation has 1 KiB of slack; the stages' mbarriers are static.
constexpr size_t kWgmmaDynSmemBytes = size_t(kWgmmaStages) * 32768 + 1024;
constexpr size_t kWgmmaStaticSmemBytes = size_t(kWgmmaStages) * 8;

void prepare_wgmma_tma();          // opts the kernel into kWgmmaDynSmemBytes
void launch_wgmma_tma(const TcGemm& g);
const void* wgmma_tma_kernel_ptr();  // the __global__ function, for the occupancy API

}  // namespace mh::gemm::tc

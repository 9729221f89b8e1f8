// Kernel 12's host interface (gemm/12_wgmma_tma_sm90a.cu, compiled for sm_90a alone): what the table
// (gemm/tc_gemm.cu) needs to know of it, without its device code.
#pragma once
#include <cstddef>

#include "gemm/tc_gemm.cuh"

namespace mh::gemm::tc {

constexpr int kWgmmaStages = 3;     // shared buffers, each a 128 x 64 A tile and a 128 x 64 B tile (32 KiB)
constexpr int kWgmmaThreads = 256;  // two warpgroups, each 64 rows of the 128 x 128 tile of C
constexpr int kWgmmaMinBlocks = 2;
// The tiles' base is rounded up to 1024 bytes (TMA's 128-byte swizzle repeats every 8 rows of 128 bytes),
// so the dynamic allocation has 1 KiB of slack; the stages' mbarriers are static.
constexpr size_t kWgmmaDynSmemBytes = size_t(kWgmmaStages) * 32768 + 1024;
constexpr size_t kWgmmaStaticSmemBytes = size_t(kWgmmaStages) * 8;

void prepare_wgmma_tma();          // opts the kernel into kWgmmaDynSmemBytes
void launch_wgmma_tma(const TcGemm& g);
const void* wgmma_tma_kernel_ptr();  // the __global__ function, for the occupancy API

}  // namespace mh::gemm::tc

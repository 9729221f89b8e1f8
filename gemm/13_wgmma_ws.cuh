// Kernels 13-15's host interface (gemm/13_wgmma_ws_sm90a.cu, gemm/14_wgmma_persistent_sm90a.cu,
// gemm/15_wgmma_multicast_sm90a.cu, compiled for sm_90a alone): their block tile and pipeline geometry, and
// what the table (gemm/tc_gemm.cu) calls.
#pragma once
#include <cstddef>

#include "gemm/tc_gemm.cuh"
#include "gemm/tc_shape.hpp"

namespace mh::gemm::tc {

// Block tile 128 x 256 of C, K in steps of 64 (kWsBM, kWsBN, kWsBK), two consumer warpgroups, each 64 rows x
// 256 columns; a ring of kWsStages = 4 shared buffers, each a 128 x 64 A tile and a 256 x 64 B tile
// (kWsATileBytes, kWsBTileBytes, kWsStageBytes); kWsThreads = 384 (warpgroup 0: the producer, one thread issues
// TMA; 1 and 2: consumers); kWsMinBlocks = 1 (168 registers a thread at launch, moved by setmaxnreg);
// kPersistentGroupM (kernel 14's grouped walk) and kMulticastCluster (kernel 15): all in gemm/tc_shape.hpp.
// The ring's base is rounded up to 1024 bytes (the 128-byte swizzle's period of 8 rows), hence 1 KiB of
// slack; the full and empty mbarriers (8 bytes each per stage) are static.
constexpr size_t kWsDynSmemBytes = size_t(kWsStages) * kWsStageBytes + 1024;
constexpr size_t kWsStaticSmemBytes = 2 * size_t(kWsStages) * 8;

void prepare_wgmma_ws();  // opts the kernel into kWsDynSmemBytes
void launch_wgmma_ws(const TcGemm& g);
const void* wgmma_ws_kernel_ptr();

// Kernel 14: persistent, output tiles in groups of kPersistentGroupM tile rows, column by column inside a group.
void prepare_wgmma_persistent();
void launch_wgmma_persistent(const TcGemm& g);  // grid: SMs x resident blocks (occupancy API), at most the tiles
const void* wgmma_persistent_kernel_ptr();

// Kernel 15: kernel 14 in clusters of 2 blocks (vertically adjacent tiles), B multicast by halves.
void prepare_wgmma_multicast();
void launch_wgmma_multicast(const TcGemm& g);  // grid: 2 x min(tile pairs, active clusters (occupancy API))
const void* wgmma_multicast_kernel_ptr();

}  // namespace mh::gemm::tc

// Kernel 3b, padding ablation: kernel 3a with As rows padded to 33 words. The transposed reads
// As[ty][k], lanes 33 words apart, land in banks (ty + k) % 32: all 32 banks, conflict-free.
// Padding also breaks the 16-byte alignment of As rows, so As is read one word at a time: per 32-wide
// tile, 3b issues 64 LDS (64 wavefronts), where kernel 3 issues 8 LDS.128 broadcasts of As + 32 LDS of
// Bs (40 wavefronts, if a broadcast LDS.128 is one) and 3a the same 40 instructions but 8 x 32 + 32 =
// 288 wavefronts (ncu: l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum). So 3b recovers
// most, not all, of kernel 3: the transposed mapping gives up the As broadcast.
#pragma once
#include "gemm/3a_smem_conflicted.cuh"

namespace mh::gemm {

inline void launch_smem_padded(const Gemm& g, cudaStream_t s = nullptr) {
  launch_tiles(smem_transposed_kernel<kTile + 1>, dim3(kTile * kTile), g, s, "smem_transposed_kernel<33>");
}

}  // namespace mh::gemm

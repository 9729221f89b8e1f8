// Kernel 11a, pipeline-depth ablation of kernel 11: the same kernel with ONE stage. The copy of tile t is
// issued, then waited for at once (cp.async.wait_group 0) and computed: nothing overlaps within a block,
// as in kernel 10, but the copy still skips the registers. Against kernel 11 it shows what the two extra
// stages in flight buy; against kernel 10 what cp.async alone does. 32 KiB of shared memory.
// Included once, by gemm/tc_gemm.cu (the table); the tests reach it through tc_kernels().
#pragma once
#include "gemm/11_cp_async.cuh"

namespace mh::gemm::tc {

// kCpAsyncAblationStages (= 1): gemm/tc_shape.hpp.

}  // namespace mh::gemm::tc

// The names of the BF16 tensor-core ladder's kernels (gemm/tc_gemm.cu's table), for host code that cannot
// include the CUDA headers of gemm/tc_gemm.cuh (host tests compiled by the C++ compiler).
#pragma once
#include <string>
#include <vector>

namespace mh::gemm {
std::vector<std::string> tc_kernel_names();
}  // namespace mh::gemm

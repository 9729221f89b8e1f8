// Kernel 8's tile sweep, part a (gemm/sweep/sweep.cuh).
// WarptileConfig<BM, BN, BK, WM, WN, LN, stages[, lane map]> (gemm/7_warptile.cuh).
#include "gemm/sweep/sweep.cuh"

namespace {
using namespace mh::gemm;
void plan(mh::Planner& p) {
  sweep::add_all<WarptileConfig<128, 128, 16, 32, 64, 8, 1>,
                 WarptileConfig<128, 128, 16, 32, 64, 8, 2>,
                 WarptileConfig<128, 128, 8, 32, 64, 8, 2>,
                 WarptileConfig<128, 128, 16, 64, 32, 8, 2>>(p);
}
}  // namespace

MH_FAMILY("gemm_sweep", plan);

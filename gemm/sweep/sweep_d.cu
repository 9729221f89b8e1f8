// Kernel 8's tile sweep, part d (gemm/sweep/sweep.cuh).
// WarptileConfig<BM, BN, BK, WM, WN, LN, stages[, lane map]> (gemm/7_warptile.cuh).
#include "gemm/sweep/sweep.cuh"

namespace {
using namespace mh::gemm;
void plan(mh::Planner& p) {
  sweep::add_all<WarptileConfig<128, 128, 16, 64, 32, 4, 2, LaneMap::checkerboard>,
                 WarptileConfig<128, 128, 8, 64, 32, 4, 2, LaneMap::checkerboard>,
                 WarptileConfig<128, 256, 16, 64, 64, 4, 2, LaneMap::checkerboard>,
                 WarptileConfig<256, 128, 16, 128, 32, 4, 2, LaneMap::checkerboard>>(p);
}
}  // namespace

MH_FAMILY("gemm_sweep", plan);

// The copy-only run of kernel 12's TMA pipeline (gemm/12_tma_tiles.cuh): every block's checksum against the host's
// fold of the same words, at the benchmark's shape and at ragged edges (M, N not multiples of 128: TMA's zero
// rows; K not a multiple of 64: the zero-filled K tail); a planted change of one folded element must change the
// host's checksum of its block (the check can fail); and its blocks per SM are kernel 12's.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemm/12_tma_tiles.cuh"
#include "gemm/tc_gemm.cuh"
#include "gemm/tc_verify.cuh"
#include "gpu_test.hpp"

using namespace mh;
using namespace mh::gemm;
using namespace mh::gemm::tc;

namespace {

struct Shape {
  int M, N, K;
};

class TmaTiles : public ::testing::TestWithParam<Shape> {};

#define REQUIRE_TMA_TILES()                                                 \
  do {                                                                      \
    REQUIRE_GPU();                                                          \
    const std::string why_ = tc_compiled_out(tma_tiles_kernel());           \
    if (!why_.empty()) GTEST_SKIP() << why_;                                \
  } while (0)

TEST_P(TmaTiles, EveryBlockChecksumMatchesTheHost) {
  REQUIRE_TMA_TILES();
  const Shape s = GetParam();
  TcProblem p(s.M, s.N, s.K);
  const std::vector<uint32_t> want = tma_tiles_sums(p.A.download(), p.B.download(), s.M, s.N, s.K);
  ASSERT_EQ(want.size(), size_t(tma_tiles_blocks(s.M, s.N)));
  DeviceBuffer<uint32_t> sums(want.size());
  sums.fill_bytes(0);
  launch_tma_tiles({s.M, s.N, s.K, p.A.data(), p.B.data(), nullptr}, sums.data());
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<uint32_t> got = sums.download();
  int wrong = 0;
  for (size_t b = 0; b < got.size(); ++b) wrong += got[b] != want[b];
  EXPECT_EQ(wrong, 0) << "blocks whose checksum differs from the host's, of " << got.size();
}

INSTANTIATE_TEST_SUITE_P(Shapes, TmaTiles,
                         ::testing::Values(Shape{4096, 4096, 4096}, Shape{300, 200, 136}, Shape{128, 128, 64}),
                         [](const ::testing::TestParamInfo<Shape>& i) {
                           return std::to_string(i.param.M) + "x" + std::to_string(i.param.N) + "x" + std::to_string(i.param.K);
                         });

TEST(TmaTilesHost, AChangedFoldedElementChangesItsBlocksSum) {
  const int M = 256, N = 128, K = 128;  // 2 x 1 blocks, 2 k-tiles
  std::vector<bf16> A(size_t(M) * K, __float2bfloat16(1.f)), B(size_t(N) * K, __float2bfloat16(2.f));
  const std::vector<uint32_t> before = tma_tiles_sums(A, B, M, N, K);
  // Block 1's first k-tile folds row 128 + tile_word_row(0) of A, elements 0 and 1; its second row 128 + 1, k 64.
  A[size_t(BM + tile_word_row(1)) * K + BK + 1] = __float2bfloat16(3.f);
  const std::vector<uint32_t> after = tma_tiles_sums(A, B, M, N, K);
  EXPECT_EQ(before[0], after[0]);
  EXPECT_NE(before[1], after[1]);
  // An element no tile folds (row 2 of block 0 at k 2) changes nothing.
  A[size_t(2) * K + 2] = __float2bfloat16(5.f);
  EXPECT_EQ(tma_tiles_sums(A, B, M, N, K), after);
}

TEST(TmaTiles, SameBlocksPerSmAsKernel12) {
  REQUIRE_TMA_TILES();
  const int mine = tc_compiled_residency(tma_tiles_kernel()).blocks_per_sm;
  EXPECT_GE(mine, 1);
  EXPECT_EQ(mine, tc_compiled_residency(find_tc_kernel("wgmma_tma")).blocks_per_sm);
}

TEST(TmaTiles, RefusesKNotAPositiveMultipleOf8) {
  REQUIRE_TMA_TILES();
  TcProblem p(128, 128, 64);
  DeviceBuffer<uint32_t> sums(1);
  EXPECT_THROW(launch_tma_tiles({128, 128, 60, p.A.data(), p.B.data(), nullptr}, sums.data()), std::invalid_argument);
  EXPECT_THROW(launch_tma_tiles({128, 128, 0, p.A.data(), p.B.data(), nullptr}, sums.data()), std::invalid_argument);
}

}  // namespace

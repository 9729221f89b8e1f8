#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gemm/tc_names.hpp"
#include "model/tc_gemm_model.hpp"

using namespace mh::model;
namespace t = mh::gemm::tc;

namespace {
constexpr int kSms = 132;  // a test's GPU; the counts scale with it only through waves and persistent grids

TcCounts at4096(const char* name, int blocks_per_sm) {
  return count_tc_gemm(tc_plan(std::string(name)), 4096, 4096, 4096, kSms, blocks_per_sm);
}
}  // namespace

// The model knows every kernel of the ladder's table (gemm/tc_gemm.cu) but cuBLAS, and the enum's order.
TEST(TcGemmModel, PlansCoverTheLaddersTable) {
  std::vector<std::string> table = mh::gemm::tc_kernel_names(), planned;
  for (const TcPlan& p : tc_plans()) planned.emplace_back(p.name);
  table.erase(table.begin());  // cublas_bf16
  EXPECT_EQ(planned, table);
  EXPECT_STREQ(tc_plan(TcKernel::wgmma_multicast).name, "wgmma_multicast");
  EXPECT_STREQ(tc_plan(TcKernel::cp_async_1stage).name, "cp_async_1stage");
  EXPECT_THROW(tc_plan(std::string("cublas_bf16")), std::invalid_argument);
}

// ldmatrix .x4: 4 wavefronts conflict-free (swizzled, padded), 32 with the plain layout's 8-way conflict: the
// numbers the smem_banks/ldmatrix micro family measures (4.03 and 32.2 cycles an instruction on the H200).
TEST(TcGemmModel, LdmatrixWavefrontsPerLayout) {
  using L = t::Layout;
  for (int ks = 0; ks < t::BK / 16; ++ks)
    for (int f = 0; f < 2; ++f) {
      EXPECT_EQ(ldmatrix_wavefronts<L::swizzled>(false, 64, 32, f, ks), 4);
      EXPECT_EQ(ldmatrix_wavefronts<L::swizzled>(true, 0, 96, f, ks), 4);
      EXPECT_EQ(ldmatrix_wavefronts<L::padded>(false, 0, 0, f, ks), 4);
      EXPECT_EQ(ldmatrix_wavefronts<L::plain>(false, 0, 0, f, ks), 32);
      EXPECT_EQ(ldmatrix_wavefronts<L::plain>(true, 0, 0, f, ks), 32);
    }
}

// Kernel 10 at 4096^3: 32 x 32 blocks x 64 k-tiles; per block-tile 8 warps x 4 k16 steps x (4 + 2) ldmatrix
// and 16 mma.sync. ncu (results/h200/20261202T075839Z): 352.3 M bank conflicts for kernel 10a = (32 - 4)
// extra wavefronts x its ldmatrix; 21.25 M LSU warp instructions = ldmatrix + 16-byte loads and stores + C.
TEST(TcGemmModel, MmaKernelsAt4096) {
  const TcCounts s = at4096("mma_swizzled", 2), c = at4096("mma_conflicted", 2);
  const double block_tiles = 1024.0 * 64;
  EXPECT_EQ(s.tiles, 1024);
  EXPECT_EQ(s.mma_sync, block_tiles * 8 * 4 * 16);
  EXPECT_DOUBLE_EQ(s.mma_sync * 4096, 2.0 * 4096 * 4096 * 4096);
  EXPECT_EQ(s.flops, 2.0 * 4096 * 4096 * 4096);
  EXPECT_EQ(s.ldmatrix_inst, block_tiles * 8 * 4 * 6);
  EXPECT_EQ(s.ldmatrix_wavefronts, 4 * s.ldmatrix_inst);
  EXPECT_EQ(c.ldmatrix_wavefronts - c.ldmatrix_inst * 4, 352321536);
  EXPECT_EQ(s.sts_inst, block_tiles * 64);                // 2 tiles x 1024 chunks / 32 lanes
  EXPECT_EQ(s.smem_fill_wavefronts, 4 * s.sts_inst);      // a quarter-warp writes one whole 128-byte row
  EXPECT_EQ(c.smem_fill_wavefronts, s.smem_fill_wavefronts);
  EXPECT_EQ(s.ld_global_bytes, block_tiles * 32768);
  EXPECT_EQ(s.l2_read_bytes, s.ld_global_bytes);          // every chunk in bounds
  EXPECT_EQ(s.block_barriers, block_tiles * 2);
  EXPECT_DOUBLE_EQ(s.waves, 1024.0 / (kSms * 2));
  EXPECT_EQ(s.tile_quantization, 1.0);
}

TEST(TcGemmModel, CopyPathsAndBarriers) {
  const TcCounts w = at4096("wmma", 2), a = at4096("cp_async", 2), g = at4096("wgmma_tma", 2);
  EXPECT_EQ(w.wmma * 2, at4096("mma_swizzled", 2).mma_sync);  // m16n16k16 = two m16n8k16
  EXPECT_EQ(w.wmma_load_wavefronts, 1024.0 * 64 * 8 * 4 * 6 * 4);
  EXPECT_EQ(a.cp_async_bytes, a.smem_fill_bytes);
  EXPECT_EQ(a.ld_global_bytes, 0);
  EXPECT_EQ(a.stages, t::kCpAsyncStages);
  EXPECT_EQ(at4096("cp_async_1stage", 2).stages, 1);
  EXPECT_EQ(g.wgmma, 1024.0 * 64 * 4 * 2);  // two warpgroups, 4 k16 steps a k-tile
  EXPECT_EQ(g.wgmma_n, 128);
  EXPECT_EQ(g.tma_bytes, 1024.0 * 64 * 32768);
  EXPECT_EQ(g.ldmatrix_inst, 0);
  EXPECT_EQ(g.block_barriers, 1024 + 1024.0 * 64);
  EXPECT_EQ(g.mbarrier_waits, 1024.0 * 64 * 8);
}

// Kernels 13-15: 128 x 256 tiles, 512 at 4096^3; the persistent grid is one block per SM; kernel 15 reads
// each B tile from L2 once per pair and multicasts it.
TEST(TcGemmModel, WarpSpecializedKernels) {
  const TcCounts ws = at4096("wgmma_ws", 1), p = at4096("wgmma_persistent", 1), m = at4096("wgmma_multicast", 1);
  EXPECT_EQ(ws.tiles, 512);
  EXPECT_EQ(ws.blocks, 512);
  EXPECT_EQ(p.blocks, kSms);
  EXPECT_EQ(m.blocks, kSms);
  EXPECT_DOUBLE_EQ(ws.waves, 512.0 / kSms);
  EXPECT_DOUBLE_EQ(m.waves, 256.0 / (kSms / 2));
  EXPECT_EQ(ws.wgmma, 512.0 * 64 * 4 * 2);
  EXPECT_EQ(ws.wgmma_n, 256);
  EXPECT_EQ(ws.tma_bytes, 512.0 * 64 * 49152);
  EXPECT_EQ(m.tma_bytes + m.tma_multicast_bytes, ws.tma_bytes);
  EXPECT_EQ(m.tma_multicast_bytes, 512.0 * 64 * 32768);
  EXPECT_EQ(ws.l2_read_bytes, ws.tma_bytes);
  EXPECT_EQ(m.l2_read_bytes, 2.0 * 4096 * (16 * 4096 + 16 * 4096));  // A per column of tiles, B per pair
  EXPECT_EQ(ws.mbarrier_waits, 512.0 * 64 * 8 + 512 * (64 - t::kWsStages));
  EXPECT_EQ(ws.block_barriers, 512);
}

// Tile quantization: 16384 x 200 with 128 x 128 tiles computes 128 x 2 tiles of which the second column is
// 72 / 128 full; odd tile rows give kernel 15 a padded pair.
TEST(TcGemmModel, TileQuantization) {
  const TcCounts c = count_tc_gemm(tc_plan(TcKernel::cp_async), 16384, 200, 4096, kSms, 2);
  EXPECT_EQ(c.tiles, 256);
  EXPECT_DOUBLE_EQ(c.tile_quantization, 200.0 / 256);
  EXPECT_EQ(c.l2_read_bytes, 2.0 * 4096 * (2 * 16384 + 128 * 200));
  EXPECT_LT(c.waves, 1);
  const TcCounts m = count_tc_gemm(tc_plan(TcKernel::wgmma_multicast), 384, 256, 64, kSms, 1);  // 3 tile rows
  EXPECT_EQ(m.tiles, 3);
  EXPECT_EQ(m.computed_tiles, 4);
  EXPECT_DOUBLE_EQ(m.tile_quantization, 0.75);
}

TEST(TcGemmModel, RefusesWhatTheKernelsRefuse) {
  EXPECT_THROW(count_tc_gemm(tc_plan(TcKernel::wmma), 4092, 4092, 4092, kSms, 2), std::invalid_argument);
  EXPECT_THROW(count_tc_gemm(tc_plan(TcKernel::wmma), 0, 8, 8, kSms, 2), std::invalid_argument);
  EXPECT_THROW(count_tc_gemm(tc_plan(TcKernel::wmma), 8, 8, 8, kSms, 0), std::invalid_argument);
}

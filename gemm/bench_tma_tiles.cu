// Kernel 12's tile stream, copy only (gemm/12_tma_tiles.cuh; docs/families/async-copy.md, "GEMM tiles"):
//   async/tma/l2/bandwidth/kind:gemm_tiles/m:M/n:N/k:K   bytes TMA delivers into shared memory per second when
//   kernel 12's own pipeline loop (same tensor maps, boxes, stages, threads, shared memory, blocks per SM, grid
//   raster) streams a GEMM's tiles without the wgmma. The tensor-core time model's copy unit for kernel 12
//   (gpubench/analysis/tc_predict.py): neighbouring blocks' requests for the same tile merge before the L2, so
//   this rate passes ceiling/read/l2, which no other micro shows.
// Counters: bytes_per_second (blocks x k-tiles x 32 KiB per launch / time), bytes_per_launch, tile_m, tile_n,
// tile_k, stages, warp_specialized (0: kernel 12's loop, every thread waits, thread 0 refills), and the compiled
// copy kernel's regs_per_thread, blocks_per_sm (occupancy API), threads_per_block, smem_per_block; it fails
// when its blocks per SM differ from kernel 12's. Timing as the GEMM benchmarks (gemm/bench_tc_gemm.cu): the
// same shape and random BF16 data (TcProblem), run_timed. Every launch's per-block checksums are checked
// against the host's fold of the same words (tma_tiles_sums).
#include "gemm/12_tma_tiles.cuh"
#include "gemm/launch_counters.cuh"
#include "gemm/tc_verify.cuh"
#include "harness/bench.cuh"

namespace {
using namespace mh;
using namespace mh::gemm;
using namespace mh::gemm::tc;

struct Shape {
  int m, n, k;
};
// The shape of the ladder's predicted-vs-measured table (gemm/bench_tc_gemm.cu's first): 1024 blocks, 64 k-tiles.
constexpr Shape kShapes[] = {{4096, 4096, 4096}};

// TcProblem's A, B (BF16) and C (FP32, unused here).
size_t device_bytes(const Shape& s) {
  return size_t(2) * (size_t(s.m) + s.n) * s.k + size_t(4) * s.m * s.n;
}

// False (the benchmark failed with the reason) when the copy kernel's resident blocks differ from kernel 12's:
// then it no longer streams kernel 12's tiles as kernel 12 does.
bool same_residency(benchmark::State& st) {
  const int mine = tc_compiled_residency(tma_tiles_kernel()).blocks_per_sm;
  const int gemm12 = tc_compiled_residency(find_tc_kernel("wgmma_tma")).blocks_per_sm;
  if (mine == gemm12) return true;
  st.SkipWithError(("tma_tiles: " + std::to_string(mine) + " blocks per SM, kernel 12 (wgmma_tma) " +
                    std::to_string(gemm12) + ": not kernel 12's stream")
                       .c_str());
  return false;
}

void run(benchmark::State& st, Shape s) {
  const TcKernel& k = tma_tiles_kernel();
  if (const std::string why = tc_compiled_out(k); !why.empty()) {
    skip_benchmark(st, why);
    return;
  }
  if (!fits_device_memory(st, device_bytes(s)) || !same_residency(st)) return;
  TcProblem p(s.m, s.n, s.k);  // the GEMM benchmark's inputs (same seeds)
  const TcGemm g{s.m, s.n, s.k, p.A.data(), p.B.data(), nullptr};
  const std::vector<uint32_t> want = tma_tiles_sums(p.A.download(), p.B.download(), s.m, s.n, s.k);
  DeviceBuffer<uint32_t> sums(want.size());
  sums.fill_bytes(0);
  run_timed(st, [&] { launch_tma_tiles(g, sums.data()); });
  const std::vector<uint32_t> got = sums.download();
  for (size_t b = 0; b < got.size(); ++b)
    if (got[b] != want[b]) {
      st.SkipWithError(("tma_tiles: block " + std::to_string(b) + "'s checksum differs from the host's").c_str());
      return;
    }
  const double bytes = tma_tiles_bytes(s.m, s.n, s.k);
  st.counters["bytes_per_second"] = rate(bytes);
  st.counters["bytes_per_launch"] = value(bytes);
  st.counters["tile_m"] = value(BM);
  st.counters["tile_n"] = value(BN);
  st.counters["tile_k"] = value(BK);
  st.counters["stages"] = value(kWgmmaStages);
  st.counters["warp_specialized"] = value(0);
  add_launch_counters(st, tc_kernel_launch(k));
}

void plan(Planner& p) {
  const DeviceFacts& f = p.facts();
  const TcKernel& k = tma_tiles_kernel();
  for (const Shape& s : kShapes) {
    const std::string name = "async/tma/l2/bandwidth/kind:gemm_tiles/m:" + std::to_string(s.m) + "/n:" + std::to_string(s.n) +
                             "/k:" + std::to_string(s.k);
    if (const std::string why = tc_unsupported(k, f.arch(), s.k); !why.empty()) {
      p.skip(name, why);
      continue;
    }
    Launch l;
    l.device_bytes = device_bytes(s);
    l.threads = k.threads;
    l.blocks = tma_tiles_blocks(s.m, s.n);
    l.smem_per_block = k.smem_bytes;
    const Residency r = p.residency(tc_planned_residency(f, k), [&k] { return tc_compiled_residency(k); });
    l.regs_per_thread = r.regs_per_thread;
    l.blocks_per_sm = r.blocks_per_sm;
    l.note = "kernel 12's TMA loop without wgmma: " + std::to_string(tma_tiles_per_block(s.k)) + " k-tiles of 2 x 16 KiB per block, " +
             std::to_string(kWgmmaStages) + " stages, HBM-resident A and B";
    p.add_if_resident(name, l, [s](benchmark::State& st) { run(st, s); });
  }
}

}  // namespace

// A path of the async family (async/tma/...), planned beside the TMA micros of micro/bench_async_copy.cu.
MH_FAMILY("async", plan);

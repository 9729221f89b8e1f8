// Registers, occupancy and shared memory of the kernel a benchmark times, read off the compiled kernel
// (cudaFuncGetAttributes, the occupancy API), as counters; its tile parameters as the JSON label.
#pragma once
#include "gemm/gemm.cuh"
#include "harness/bench.cuh"

namespace mh::gemm {

inline void add_launch_counters(benchmark::State& st, const KernelLaunch& l) {
  cudaFuncAttributes a{};
  CUDA_CHECK(cudaFuncGetAttributes(&a, l.func));
  int blocks = 0;
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, l.func, l.threads, l.dyn_smem));
  st.counters["regs_per_thread"] = value(a.numRegs);
  st.counters["blocks_per_sm"] = value(blocks);
  st.counters["threads_per_block"] = value(l.threads);
  st.counters["smem_per_block"] = value(double(a.sharedSizeBytes + l.dyn_smem));
  st.counters["local_bytes_per_thread"] = value(double(a.localSizeBytes));  // nonzero: registers spilled
  if (!l.tiles.empty()) st.SetLabel(l.tiles);
}

}  // namespace mh::gemm

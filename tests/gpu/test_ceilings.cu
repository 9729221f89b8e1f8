#include <vector>

#include "gpu_test.hpp"
#include "harness/device_buffer.cuh"
#include "micro/ceilings.cuh"

TEST(Ceilings, FmaChainsMatchHostReplay) {
  REQUIRE_GPU();
  const int blocks = 3, threads = 128, iters = 333;
  mh::DeviceBuffer<float> out(blocks * threads);
  out.fill_bytes(0xff);
  mh::ceilings::launch_fma(out.data(), blocks, threads, iters, 0.999f, 0.01f);
  const std::vector<float> host = out.download();
  for (uint32_t t = 0; t < host.size(); ++t) ASSERT_EQ(host[t], mh::ceilings::fma_expected(t, iters, 0.999f, 0.01f)) << "thread " << t;
}

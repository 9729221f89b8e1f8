// The shared NVML loader on a real GPU: the handle it finds is this CUDA device's, and the clock it
// reads agrees with the clock the SMs count.
#include <string>

#include "gpu_test.hpp"
#include "harness/nvml.cuh"

using namespace mh;

// A macro: GTEST_SKIP returns from the function it is written in.
#define REQUIRE_NVML()                                                            \
  do {                                                                            \
    if (!::mh::nvml::available()) GTEST_SKIP() << ::mh::nvml::unavailable_reason(); \
  } while (0)

TEST(Nvml, HandleIsThisCudaDevice) {
  REQUIRE_GPU();
  REQUIRE_NVML();
  const DeviceFacts& f = current_device_facts();
  std::string why;
  nvml::Device dev = nvml::device_handle(f.device, &why);
  ASSERT_NE(dev, nullptr) << why;
  using UuidFn = int (*)(nvml::Device, char*, unsigned);
  auto uuid = nvml::function<UuidFn>("nvmlDeviceGetUUID");
  ASSERT_NE(uuid, nullptr);
  char buf[96] = {};
  ASSERT_EQ(uuid(dev, buf, sizeof buf), nvml::kSuccess);
  EXPECT_EQ(std::string(buf), f.gpu_uuid);  // matched by bus id, not by index
  EXPECT_EQ(nvml::driver_version(), f.driver_version);
}

TEST(Nvml, SmClockAgreesWithClock64AndReasonsRead) {
  REQUIRE_GPU();
  REQUIRE_NVML();
  const DeviceFacts& f = current_device_facts();
  nvml::Device dev = nvml::device_handle(f.device);
  ASSERT_NE(dev, nullptr);
  const double observed = observed_sm_clock_mhz();  // 220 ms of spinning: the clocks are up
  unsigned mhz = 0;
  ASSERT_TRUE(nvml::sm_clock_mhz(dev, &mhz));
  uint64_t reasons = 0;
  ASSERT_TRUE(nvml::clock_event_reasons(dev, &reasons));
  RecordProperty("clock_event_reasons", std::to_string(reasons));
  RecordProperty("throttling", nvml::throttle_names(reasons));
  // The clock NVML reads right after the spin, against the one the spin counted: timing.
  SKIP_TIMING_UNDER_SANITIZER();
  EXPECT_GT(mhz, 0.8 * observed) << "clock64 over %globaltimer saw " << observed << " MHz";
  EXPECT_LT(mhz, 1.2 * observed) << "clock64 over %globaltimer saw " << observed << " MHz";
  EXPECT_LE(mhz, f.sm_clock_mhz * 1.05) << "above the rated clock";
}

// settle_device on the real GPU: it returns within its limit, and when it returns early NVML really
// reports no throttling reason.
TEST(Nvml, SettleReturnsWithinItsLimitAndClear) {
  REQUIRE_GPU();
  REQUIRE_NVML();
  nvml::Device dev = nvml::device_handle(current_device_facts().device);
  ASSERT_NE(dev, nullptr);
  const double waited = nvml::settle_device(dev, 100.0);
  EXPECT_GE(waited, 0.0);
  EXPECT_LE(waited, 100.0);
  uint64_t reasons = 0;
  ASSERT_TRUE(nvml::clock_event_reasons(dev, &reasons));
  if (waited < 100.0) EXPECT_FALSE(nvml::is_throttling(reasons)) << nvml::throttle_names(reasons);
  RecordProperty("settle_ms", std::to_string(waited));
}

// The board strings the context carries: present and printable on a GPU NVML knows.
TEST(Nvml, BoardStringsRead) {
  REQUIRE_GPU();
  REQUIRE_NVML();
  nvml::Device dev = nvml::device_handle(current_device_facts().device);
  ASSERT_NE(dev, nullptr);
  for (const std::string& v : {nvml::vbios_version(dev), nvml::board_part_number(dev)}) {
    EXPECT_FALSE(v.empty());
    for (char c : v) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "unprintable byte in '" << v << "'";
  }
  RecordProperty("vbios_version", nvml::vbios_version(dev));
  RecordProperty("board_part_number", nvml::board_part_number(dev));
  unsigned slot = 0;  // PCIe boards have none; where NVML gives one it is a small position, not garbage
  if (nvml::module_id(dev, &slot)) {
    EXPECT_LT(slot, 64u);
    RecordProperty("module_id", std::to_string(slot));
  }
}

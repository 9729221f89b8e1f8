// NVML's clock-event reasons as the harness classifies them, the per-repetition log run_timed reports
// from, graceful degradation without NVML.
#include <gtest/gtest.h>

#include <vector>

#include "harness/nvml.cuh"
#include "harness/registry.cuh"

using namespace mh::nvml;

TEST(NvmlReasons, IdleAndApplicationsClocksAreNotThrottling) {
  EXPECT_FALSE(is_throttling(0));
  EXPECT_FALSE(is_throttling(kReasonGpuIdle));
  EXPECT_FALSE(is_throttling(kReasonApplicationsClocks));
  EXPECT_FALSE(is_throttling(kReasonGpuIdle | kReasonApplicationsClocks));
  EXPECT_FALSE(is_throttling(0x100));  // display clock setting: not a slowdown of the measured kernels
}

TEST(NvmlReasons, EveryPowerThermalAndSyncBoostBitIsThrottling) {
  // The values nvml.h gives the constants.
  const uint64_t bits[] = {0x4, 0x8, 0x10, 0x20, 0x40, 0x80};
  for (uint64_t b : bits) {
    EXPECT_TRUE(is_throttling(b)) << std::hex << b;
    EXPECT_TRUE(is_throttling(b | kReasonGpuIdle | kReasonApplicationsClocks)) << std::hex << b;
  }
  EXPECT_EQ(kThrottleMask, 0xFCu);
  EXPECT_EQ(kReasonSwPowerCap, 0x4u);
  EXPECT_EQ(kReasonHwThermal, 0x40u);
}

TEST(NvmlReasons, NamesListTheThrottlingBitsOnly) {
  EXPECT_EQ(throttle_names(0), "");
  EXPECT_EQ(throttle_names(kReasonGpuIdle | kReasonApplicationsClocks), "");
  EXPECT_EQ(throttle_names(kReasonSwPowerCap), "sw_power_cap");
  EXPECT_EQ(throttle_names(kReasonSwPowerCap | kReasonHwThermal | kReasonGpuIdle), "sw_power_cap,hw_thermal");
  EXPECT_EQ(throttle_names(kThrottleMask), "sw_power_cap,hw_slowdown,sync_boost,sw_thermal,hw_thermal,hw_power_brake");
}

TEST(ClockLog, EmptyReportsNothing) {
  ClockLog log;
  EXPECT_FALSE(log.has_reasons());
  EXPECT_FALSE(log.has_clock());
  EXPECT_FALSE(log.throttled());
  EXPECT_EQ(log.median_clock_mhz(), 0.0);
}

TEST(ClockLog, OneThrottledReadingMarksTheRepetition) {
  ClockLog log;
  log.add_reasons(kReasonApplicationsClocks);
  log.add_reasons(0);
  EXPECT_TRUE(log.has_reasons());
  EXPECT_FALSE(log.throttled());
  log.add_reasons(kReasonSwThermal);
  log.add_reasons(kReasonApplicationsClocks);  // a later clean reading does not clear it
  EXPECT_TRUE(log.throttled());
  EXPECT_EQ(log.reason_reads, 4);
}

TEST(ClockLog, MedianClockIgnoresOutliers) {
  ClockLog log;
  for (double mhz : {1980.0, 1200.0, 1980.0, 1965.0, 1980.0}) log.add_clock(mhz);
  EXPECT_EQ(log.median_clock_mhz(), 1980.0);
  log.add_clock(1200.0);  // even count: the middle two, 1965 and 1980
  EXPECT_EQ(log.median_clock_mhz(), 1972.5);
  ClockLog one;
  one.add_clock(1755.0);
  EXPECT_EQ(one.median_clock_mhz(), 1755.0);
}

TEST(ClockLog, MinClockSeesTheDipTheMedianHides) {
  ClockLog log;
  EXPECT_EQ(log.min_clock_mhz(), 0.0);
  for (double mhz : {1980.0, 1740.0, 1980.0, 1980.0, 1980.0}) log.add_clock(mhz);
  EXPECT_EQ(log.median_clock_mhz(), 1980.0);
  EXPECT_EQ(log.min_clock_mhz(), 1740.0);
}

// settle() with a scripted sequence of NVML readings and a fake clock.
struct Script {
  std::vector<uint64_t> reads;  // one per read; past the end: clear
  bool nvml = true;
  size_t next = 0;
  std::vector<double> sleeps;
  double wait(double max_ms, double step_ms = 5.0) {
    return settle([this](uint64_t* r) { *r = next < reads.size() ? reads[next] : 0; ++next; return nvml; },
                  [this](double ms) { sleeps.push_back(ms); }, max_ms, step_ms);
  }
};

TEST(Settle, ClearAtOnceWaitsNothing) {
  Script s{{kReasonGpuIdle}};
  EXPECT_EQ(s.wait(250), 0.0);
  EXPECT_TRUE(s.sleeps.empty());
}

TEST(Settle, WaitsWhileThrottledThenStops) {
  Script s{{kReasonSwPowerCap, kReasonSwPowerCap | kReasonGpuIdle, kReasonGpuIdle, kReasonSwPowerCap}};
  EXPECT_EQ(s.wait(250), 10.0);  // two throttled reads, 5 ms each; the third is clear; the fourth never read
  EXPECT_EQ(s.next, 3u);
}

TEST(Settle, StopsAtTheLimitWithAShortLastStep) {
  Script s{std::vector<uint64_t>(100, kReasonHwThermal)};
  EXPECT_EQ(s.wait(12), 12.0);
  EXPECT_EQ(s.sleeps, (std::vector<double>{5.0, 5.0, 2.0}));
  Script none{{kReasonSwPowerCap}};
  EXPECT_EQ(none.wait(0), 0.0);  // MH_SETTLE_MS=0: no wait, no read
  EXPECT_EQ(none.next, 0u);
}

TEST(Settle, WithoutNvmlNoWait) {
  Script s{{kReasonSwPowerCap}};
  s.nvml = false;
  EXPECT_EQ(s.wait(250), 0.0);
  EXPECT_EQ(settle_device(nullptr, 250), 0.0);
}

TEST(Nvml, NullDeviceReadsNothing) {
  uint64_t r = 123;
  unsigned mhz = 7, slot = 5;
  EXPECT_FALSE(clock_event_reasons(nullptr, &r));
  EXPECT_FALSE(module_id(nullptr, &slot));
  EXPECT_EQ(slot, 5u);
  EXPECT_FALSE(sm_clock_mhz(nullptr, &mhz));
  EXPECT_EQ(vbios_version(nullptr), "");
  EXPECT_EQ(board_part_number(nullptr), "");
  EXPECT_EQ(r, 123u);
  EXPECT_EQ(mhz, 7u);
}

TEST(Nvml, WithoutTheLibraryEverythingSaysUnavailable) {
  if (available()) GTEST_SKIP() << "NVML loads here; this test is for machines without it";
  EXPECT_NE(unavailable_reason().find("NVML"), std::string::npos) << unavailable_reason();
  EXPECT_EQ(symbol("nvmlInit_v2"), nullptr);
  EXPECT_EQ(driver_version(), "");
  std::string why;
  EXPECT_EQ(device_handle(0, &why), nullptr);  // no CUDA call: NVML is out before that
  EXPECT_EQ(why, unavailable_reason());
  ClockWatch watch(0, 0.0);
  watch.sample();
  watch.finish();
  EXPECT_FALSE(watch.log().has_reasons());  // run_timed then leaves throttled and sm_clock_mhz out
  EXPECT_FALSE(watch.log().has_clock());
}

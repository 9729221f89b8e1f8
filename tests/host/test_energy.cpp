// The energy family's arithmetic on recorded-style samples: counter wrap, edges and the counter's period,
// idle subtraction per byte, power integration, drift; and when its context keys are measured (the filter).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "harness/registry.cuh"
#include "micro/energy.cuh"

using namespace mh::energy;

TEST(EnergyCounter, DeltaReadsThroughA64BitWrap) {
  EXPECT_EQ(counter_delta(1000, 1500), 500u);
  EXPECT_EQ(counter_delta(UINT64_MAX - 5, 10), 16u);
  const Span s = between({1.0, UINT64_MAX - 999}, {3.0, 1000});  // 2000 mJ across the wrap, in 2 s
  EXPECT_DOUBLE_EQ(s.joules, 2.0);
  EXPECT_DOUBLE_EQ(s.seconds, 2.0);
  EXPECT_DOUBLE_EQ(s.watts(), 1.0);
}

TEST(EnergyCounter, EdgesAreTheReadingsThatMovedTimedBetweenTheTwo) {
  const std::vector<Reading> r = {{0.0, 100}, {1.0, 100}, {2.0, 150}, {3.0, 150}, {4.0, 150}, {5.0, 220}};
  const std::vector<Reading> e = edges(r);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_DOUBLE_EQ(e[0].t_s, 1.5);
  EXPECT_EQ(e[0].mj, 150u);
  EXPECT_DOUBLE_EQ(e[1].t_s, 4.5);
  EXPECT_EQ(e[1].mj, 220u);
  EXPECT_TRUE(edges({}).empty());
  EXPECT_TRUE(edges({{0.0, 5}, {1.0, 5}}).empty());
}

TEST(EnergyCounter, PeriodIsTheMedianGapBetweenEdges) {
  // A counter that moves every 100 ms, polled every 1 ms, with one late update (150 ms): median 100 ms.
  std::vector<Reading> r;
  uint64_t mj = 0;
  const double updates[] = {0.0, 0.1, 0.2, 0.35, 0.45, 0.55};
  for (int ms = 0; ms <= 600; ++ms) {
    const double t = ms * 1e-3;
    for (double u : updates)
      if (ms == static_cast<int>(u * 1e3 + 0.5)) mj += 12;  // 120 W x 100 ms in mJ
    r.push_back({t, mj});
  }
  const std::vector<Reading> e = edges(r);
  ASSERT_EQ(e.size(), 5u);  // the update at t = 0 is not an edge: nothing before it
  EXPECT_NEAR(counter_period_ms(e), 100.0, 1e-9);
  EXPECT_EQ(counter_period_ms({}), 0.0);
  EXPECT_EQ(counter_period_ms({{1.0, 3}}), 0.0);
}

TEST(EnergyPerUnit, IdleIsSubtractedOverTheSpansTime) {
  // HBM-like: 4.5 TB/s for 2 s at 125 W idle + 81 pJ/B: 489.5 W in total.
  const double idle = 125.0, rate = 4.5e12, seconds = 2.0, above = 81e-12;
  const Span s{(idle + above * rate) * seconds, seconds};
  const PerUnit e = per_unit(s, idle, rate * seconds);
  EXPECT_NEAR(e.above_idle, 81e-12, 1e-18);
  EXPECT_NEAR(e.total, 489.5 / 4.5e12, 1e-18);  // 108.8 pJ/B
  EXPECT_GT(e.total, e.above_idle);
  // No idle: the two are one; no units: nothing.
  const PerUnit none = per_unit(s, 0.0, 1e12);
  EXPECT_DOUBLE_EQ(none.total, none.above_idle);
  EXPECT_EQ(per_unit(s, idle, 0.0).total, 0.0);
}

TEST(EnergyPower, IntegratesTrapezoidsBetweenTheFirstAndLastSample) {
  std::vector<PowerSample> flat, ramp;
  for (int i = 0; i <= 100; ++i) flat.push_back({i * 0.01, 300.0});  // 1 s at 300 W
  const Span f = integrate(flat);
  EXPECT_NEAR(f.joules, 300.0, 1e-9);
  EXPECT_NEAR(f.seconds, 1.0, 1e-12);
  for (int i = 0; i <= 20; ++i) ramp.push_back({0.1 * i, 100.0 + 10.0 * i});  // 100 -> 300 W over 2 s
  EXPECT_NEAR(integrate(ramp).joules, 400.0, 1e-9);
  EXPECT_NEAR(integrate(ramp).watts(), 200.0, 1e-9);
  // Uneven spacing: each interval weighs by its length.
  EXPECT_NEAR(integrate({{0.0, 100.0}, {0.5, 100.0}, {2.0, 400.0}}).joules, 50.0 + 375.0, 1e-9);
  EXPECT_EQ(integrate({{0.0, 100.0}}).seconds, 0.0);
  EXPECT_EQ(integrate({}).watts(), 0.0);
}

TEST(EnergyPower, CounterAndIntegratedPowerAgreeOnTheSameDraw) {
  // 400 W for 1 s: a counter updated every 20 ms and power samples every 10 ms tell the same energy.
  std::vector<Reading> r;
  std::vector<PowerSample> p;
  for (int ms = 0; ms <= 1000; ++ms) {
    r.push_back({ms * 1e-3, static_cast<uint64_t>(ms / 20) * 8000u});  // 8 J per 20 ms
    if (ms % 10 == 0) p.push_back({ms * 1e-3, 400.0});
  }
  const std::vector<Reading> e = edges(r);
  EXPECT_NEAR(between(e.front(), e.back()).watts(), 400.0, 1.0);
  EXPECT_NEAR(integrate(p).watts(), 400.0, 1e-9);
  EXPECT_NEAR(counter_period_ms(e), 20.0, 1e-9);
}

TEST(EnergyPower, DriftComparesTheWindowsHalves) {
  std::vector<Reading> steady, rising;
  uint64_t a = 0, b = 0;
  for (int i = 0; i <= 11; ++i) {  // 11 edges, the sixth at the middle time
    steady.push_back({0.1 * i, a});
    rising.push_back({0.1 * i, b});
    a += 30000;                    // 300 W
    b += i < 6 ? 20000u : 40000u;  // 200 W, then 400 W
  }
  EXPECT_NEAR(drift(edges(steady)), 0.0, 1e-12);
  EXPECT_NEAR(drift(edges(rising)), 1.0, 1e-12);
  EXPECT_EQ(drift({{0.0, 1}, {1.0, 2}}), 0.0);
}

TEST(EnergyPower, NvmlAveragesPowerOnAmpereAndNewerButGa100) {
  EXPECT_EQ(power_average_s(900), 1.0);
  EXPECT_EQ(power_average_s(860), 1.0);
  EXPECT_EQ(power_average_s(800), 0.0);
  EXPECT_EQ(power_average_s(700), 0.0);
  EXPECT_STREQ(source_name(Source::counter), "counter");
  EXPECT_STREQ(source_name(Source::power), "power");
  EXPECT_STREQ(source_name(Source::none), "none");
}

// idle_watts and energy_source are measured for the context only when the filter selects an energy
// benchmark: the filter is read as Google Benchmark reads it (extended regex searched in the full name,
// which ends in /manual_time; "" and "all" select all; a leading '-' inverts).
TEST(EnergyContext, TheFilterSelectsAsGoogleBenchmarkDoes) {
  using mh::filter_selects;
  const std::string e = "energy/wgmma/bf16/data:zero";
  EXPECT_TRUE(filter_selects("", e));
  EXPECT_TRUE(filter_selects("all", e));
  EXPECT_TRUE(filter_selects("energy", e));
  EXPECT_TRUE(filter_selects("^(ceiling|energy)/", e));
  EXPECT_TRUE(filter_selects("data:zero/manual_time$", e));
  EXPECT_TRUE(filter_selects("-^ceiling/", e));
  EXPECT_FALSE(filter_selects("^ceiling/", e));
  EXPECT_FALSE(filter_selects("-energy", e));
  EXPECT_FALSE(filter_selects("data:zero$", e));  // the name Google Benchmark matches ends in /manual_time
  EXPECT_FALSE(filter_selects("energy/(", e));    // not a regular expression: Google Benchmark runs nothing
}

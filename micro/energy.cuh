// Energy per byte and per operation: a steady loop of existing kernels (the roofs' walks, the FFMA
// ceiling, a pinned host-to-device copy) with NVML's energy counter read while it runs.
//
// The counter (millijoules) moves only when the driver updates it, at intervals of its own (measured at
// idle: energy_counter_period_ms). A window is therefore taken between two observed updates ("edges"):
// from the first edge after the warm-up to the first edge after the window's length, both while the GPU
// is busy. Power = energy / time between the
// edges; energy per byte = power / bytes per second of the same launches (CUDA events). Where the board
// has no counter, power readings are integrated over a fixed window instead (energy_source "power").
// The idle power is measured once per process, the GPU idle, the same way.
//
// The first part is pure arithmetic (host-tested in tests/host/test_energy.cpp); the measurement below
// it needs a GPU and NVML. Plain C++ in the header: host tests include it.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "harness/nvml.cuh"

namespace mh::energy {

// ---- Arithmetic ---------------------------------------------------------------------------------

// The increase of a cumulative 64-bit counter from `before` to `after`, modulo 2^64: a wrap reads right.
inline uint64_t counter_delta(uint64_t before, uint64_t after) { return after - before; }

// One reading of the energy counter: host time (s) and the counter (mJ).
struct Reading {
  double t_s = 0;
  uint64_t mj = 0;
};

// The readings at which the counter had moved since the reading before, each timed at the midpoint
// between the two (the update happened between them).
std::vector<Reading> edges(const std::vector<Reading>& readings);

// The median interval between successive edges, in ms; 0 when there are fewer than two edges.
double counter_period_ms(const std::vector<Reading>& edge_list);

// Energy over a span of time.
struct Span {
  double joules = 0, seconds = 0;
  double watts() const { return seconds > 0 ? joules / seconds : 0.0; }
};

// Between two edges (counter wrap included).
Span between(const Reading& first, const Reading& last);

// Power over the second half of the edges against the first half, minus 1 (the edge nearest the middle
// time splits them): a warm-up too short for the power to settle shows as a drift. 0 with < 3 edges.
double drift(const std::vector<Reading>& edge_list);

// One power reading: host time (s), watts.
struct PowerSample {
  double t_s = 0, watts = 0;
};

// The trapezoid integral of the samples from the first to the last (sorted by time); an empty span with
// fewer than two samples.
Span integrate(const std::vector<PowerSample>& samples);

// Energy per unit (byte or FLOP) of a span in which `units` were moved or executed: in total, and above
// what the idle GPU draws in the same time.
struct PerUnit {
  double total = 0, above_idle = 0;
};
PerUnit per_unit(const Span& s, double idle_watts, double units);

// ---- Measurement (GPU and NVML) -----------------------------------------------------------------

enum class Source { counter, power, none };
const char* source_name(Source s);  // "counter", "power", "none"

// Which source `dev` gives: the counter when it answers, else power readings when they answer, else none
// with the reason in *why. Cached per device handle.
Source probe(nvml::Device dev, std::string* why);

// NVML's averaging of power readings (nvmlDeviceGetPowerUsage) on an architecture (900 for sm_90), in s.
inline double power_average_s(int arch) { return arch > 800 ? 1.0 : 0.0; }

// The idle GPU: its power, and how often the counter moved (0 for the power source).
struct Idle {
  double watts = 0;
  double period_ms = 0;
  Source source = Source::none;
};
// Leaves the GPU idle for `pause_s`, then measures for `measure_s` (counter: up to 4x that until two
// edges are seen; none seen: Source::none). Throws std::runtime_error when NVML stops answering.
Idle measure_idle(nvml::Device dev, Source source, double pause_s, double measure_s);

// What to run: one launch on the legacy default stream, moving or executing `units_per_launch`.
struct Loop {
  std::function<void()> launch;
  double units_per_launch = 0;
};

struct Plan {
  Source source = Source::counter;
  double warmup_s = 0.1;     // busy before the first edge counts
  double window_s = 0.25;    // at least this long between the edges (power: exactly, from its samples)
  double power_avg_s = 0;    // readings earlier than this into the busy span are not cross-checked
  double batch_s = 0.01;     // GPU time per batch of launches (one event each)
  double queue_s = 0.06;     // GPU time kept enqueued ahead of the host
  int cuda_device = 0;
};

struct Window {
  Span energy;            // from the plan's source, between edges (power: the window)
  Span power;             // power readings over the window, when the counter is the source and readings
                          // from at least power_avg_s into the busy span exist (else seconds == 0)
  double drift = 0;       // see drift()
  double gpu_seconds = 0;  // CUDA events over the counted launches
  long long launches = 0;  // counted: the batches after the warm-up
  long long all_launches = 0;  // every launch of the loop, warm-up included (checksums count them)
  bool gpu_idled = false;  // the host let the queue run dry after the warm-up (the window is biased)
  nvml::ClockLog clocks;
  double launches_per_second() const { return gpu_seconds > 0 ? launches / gpu_seconds : 0.0; }
};

// Runs `loop` in batches of launches, keeping queue_s of work enqueued, until the window is complete;
// reads the counter (or power) all along. Throws std::runtime_error when the counter stops moving
// (no edge within warmup + window + 2 s) or NVML stops answering.
Window run_window(const Loop& loop, nvml::Device dev, const Plan& plan);

}  // namespace mh::energy

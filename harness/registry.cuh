// Families plan their benchmarks from the device's facts, after the device is chosen.
//
// A family's kernels, launchers and host references live in micro/<family>.cu (a library the GPU tests
// link, no Google Benchmark); its plan and benchmark bodies in micro/bench_<family>.cu (gemm:
// gemm/bench_gemm.cu), which ends with MH_FAMILY("name", plan_fn). CMake globs both kinds of file.
// plan_fn(Planner&) reads planner.facts() (real, or loaded from a devices/*.json file by `gpubench
// --plan-for`), and for every configuration either add()s a benchmark with the Launch it needs, or
// skip()s it with a reason. Nothing in a plan
// function may touch the GPU: --plan-for and the DeviceFacts* host tests run them without one. The one
// exception is residency()'s `compiled` callback (cudaFuncGetAttributes, the occupancy API), which only
// the run on a GPU calls.
//
// A plan may also predict(name, {{"quantity", value}}): the host model's numbers for a benchmark, written
// once by `gpubench --model_out FILE` as {"<name>": {"quantity": value}} (name without Google
// Benchmark's "/manual_time"), instead of counters repeated in every repetition.
//
// The run planner registers each added benchmark with Google Benchmark under its full public name
// (manual time, microseconds); a skip becomes a benchmark that reports "skipped: <reason>". A
// CudaError or std::exception thrown inside a body fails that benchmark alone, with the error text.
#pragma once
#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "harness/device_facts.hpp"

namespace mh {

using Body = std::function<void(benchmark::State&)>;
using RunContext = std::function<std::vector<std::pair<std::string, std::string>>()>;
// A model's predictions for one benchmark ("sectors_per_request" -> 4), and for every benchmark by name.
using Prediction = std::map<std::string, double>;
using Predictions = std::map<std::string, Prediction>;

class Planner {
 public:
  virtual ~Planner() = default;
  virtual const DeviceFacts& facts() const = 0;
  // name: the full public name, e.g. "coalescing/read/hbm/stride:1" (Google Benchmark appends
  // "/manual_time"). launch: what it asks of the device; it must be resident (check_launch()).
  virtual void add(const std::string& name, const Launch& launch, Body body) = 0;
  virtual void skip(const std::string& name, const std::string& reason) = 0;
  // A JSON context entry the family wants to publish (e.g. the tile parameters a sweep chose).
  virtual void context(const std::string& key, const std::string& value) = 0;
  // JSON context entries computed only when the run is about to start and the filter selects a benchmark
  // whose name starts with `prefix`: `fn` may touch the GPU (the energy family's idle power), so a plan
  // (--plan-for), a listing or a run of other benchmarks never pays for it. Planners that do not run ignore it.
  virtual void context_when_run(const std::string& prefix, RunContext fn) {
    (void)prefix;
    (void)fn;
  }

  // A kernel's registers per thread and resident blocks per SM, for a plan whose grid or model depends on
  // them. The run on a GPU (gpubench) answers with the compiled kernel's, `compiled` (e.g.
  // compiled_residency(): code JIT-compiled from an older architecture's PTX gets other limits than the
  // facts predict, harness/arch.hpp); a plan for a facts file with `planned`, from the facts.
  virtual Residency residency(const Residency& planned, const std::function<Residency()>& compiled) const {
    (void)compiled;
    return planned;
  }

  // The host model's predictions for benchmark `name`: written once, to gpubench --model_out=FILE, not
  // repeated as counters in every repetition. A plan may call it for a benchmark it adds.
  void predict(const std::string& name, Prediction values) { predictions_[name] = std::move(values); }
  const Predictions& predictions() const { return predictions_; }

  // add() when check_launch() accepts the launch on this device, else skip() with its reason.
  void add_if_resident(const std::string& name, const Launch& launch, Body body) {
    const std::string why = check_launch(facts(), launch);
    if (why.empty())
      add(name, launch, std::move(body));
    else
      skip(name, why);
  }

 private:
  Predictions predictions_;
};

using PlanFn = void (*)(Planner&);

struct Family {
  const char* name;  // the first segment of its benchmarks' names
  PlanFn plan;
};

// Called at static-initialization time by MH_FAMILY; returns true.
bool add_family(const char* name, PlanFn plan);
// Every family, sorted by name (a stable order whatever the link order).
std::vector<Family> families();
// Runs every family's plan on `p` (family order, then the order each family adds).
void plan_all(Planner& p);

// Registers every family's benchmarks with Google Benchmark for the chosen device (gpubench's main);
// returns the models' predictions.
Predictions register_all(const DeviceFacts& f);
// Whether Google Benchmark's --benchmark_filter `filter` selects the benchmark registered as `name` (the
// name as planned: Google Benchmark matches it with "/manual_time" appended): an extended regular
// expression searched in the name, "" and "all" for every one, a leading '-' for those it does not match.
bool filter_selects(const std::string& filter, const std::string& name);
// The same test as a predicate on names, the expression compiled once.
std::function<bool(const std::string&)> filter_predicate(const std::string& filter);
// Adds the context entries of every context_when_run whose prefix starts a registered benchmark `filter`
// selects (Google Benchmark's AddCustomContext). Call once, just before the benchmarks run.
void add_run_context(const std::string& filter);
// Prints every family's plan for `f` ("run NAME CONFIG" / "skip NAME REASON"); returns the number planned
// and, when `predictions` is given, the models' predictions. Throws std::logic_error when a family adds
// a launch that check_launch() refuses.
int print_plan(const DeviceFacts& f, std::FILE* out, Predictions* predictions = nullptr);
// Writes {"<benchmark name>": {"<quantity>": value, ...}, ...} (non-finite values as null); throws
// std::runtime_error naming the file when it cannot be written.
void write_predictions(const Predictions& predictions, const std::string& path);

// Inside a body: end this benchmark as skipped (not an error) with a reason, e.g. when the occupancy
// API disagrees with the plan or the working set does not fit in free memory. Google Benchmark 1.8
// has SkipWithMessage; 1.7 has only SkipWithError, so there the message starts with "skipped: ".
void skip_benchmark(benchmark::State& st, const std::string& reason);
// Prefix that marks a skip in the JSON's error_message under Google Benchmark 1.7.
inline constexpr const char* kSkipPrefix = "skipped: ";

}  // namespace mh

#define MH_CONCAT_(a, b) a##b
#define MH_CONCAT(a, b) MH_CONCAT_(a, b)
#define MH_FAMILY(name, fn) \
  [[maybe_unused]] static const bool MH_CONCAT(mh_family_registered_, __LINE__) = ::mh::add_family(name, fn)

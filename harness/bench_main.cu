// The single benchmark runner: every family in micro/ and gemm/ registers itself here.
// Adds --device N to Google Benchmark's flags, puts the device facts in the JSON context,
// and exits 2 with one line when there is no usable GPU.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "bench.cuh"
#include "device_info.cuh"
#include "env.hpp"
#include "micro/link.cuh"
#include "nvml.cuh"
#include "registry.cuh"

namespace {

constexpr const char* kUsage =
    "usage: gpubench [--device N] [--model_out FILE] [--force] [--plan-for DEVICE.json] [Google Benchmark flags, see --help]";

// Removes `--flag V` / `--flag=V` from argv; returns whether it was there (value in *value).
bool take_flag(int& argc, char** argv, const std::string& flag, std::string* value) {
  bool found = false;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == flag) {
      if (i + 1 >= argc) throw std::invalid_argument(flag + " needs a value");
      *value = argv[++i];
      found = true;
    } else if (a.rfind(flag + "=", 0) == 0) {
      *value = a.substr(flag.size() + 1);
      found = true;
    } else {
      rest.push_back(argv[i]);
    }
  }
  argc = static_cast<int>(rest.size());
  for (size_t i = 0; i < rest.size(); ++i) argv[i] = rest[i];
  return found;
}

// --device N: -1 when absent. Digits only, at most 4 of them: no sign, no wrap-around.
int take_device_flag(int& argc, char** argv) {
  std::string v;
  if (!take_flag(argc, argv, "--device", &v)) return -1;
  if (v.empty() || v.size() > 4 || v.find_first_not_of("0123456789") != std::string::npos)
    throw std::invalid_argument("--device needs a GPU index (a small non-negative integer), got '" + v + "'");
  return std::stoi(v);
}

// Removes `flag` (a switch, no value) from argv; returns whether it was there.
bool take_switch(int& argc, char** argv, const std::string& flag) {
  int kept = 0;
  for (int i = 0; i < argc; ++i)
    if (flag != argv[i]) argv[kept++] = argv[i];
  const bool found = kept < argc;
  argc = kept;
  return found;
}

// Google Benchmark's --benchmark_out=FILE, left in argv for it (it takes only the '=' form); empty if absent.
std::string peek_benchmark_out(int argc, char** argv) {
  const std::string prefix = "--benchmark_out=";
  std::string out;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]).rfind(prefix, 0) == 0) out = argv[i] + prefix.size();  // the last one wins, as in GB
  return out;
}

// Refuses to let gpubench's output `out` (given by `flag`) replace a file: never the --plan-for facts
// file `input` (--force or not: it is the input), nor the other output `other`, nor an existing regular
// file without --force. A device such as /dev/null holds nothing to lose (run_all.sh probes
// --model_out=/dev/null); a fresh run folder (run_all.sh) has nothing to refuse.
void check_output(const std::string& flag, const std::string& out, const std::string& input, const std::string& other,
                  bool force) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(out, ec);
  if (fs::exists(st) && !fs::is_regular_file(st)) return;
  const auto same = [&](const std::string& p) {
    if (p.empty()) return false;
    if (fs::exists(st) && fs::exists(p, ec)) return fs::equivalent(out, p, ec);
    const fs::path a = fs::weakly_canonical(out, ec), b = fs::weakly_canonical(p, ec);
    return !a.empty() && a == b;  // empty: not resolvable, not known to be the same
  };
  if (same(input)) throw std::invalid_argument(flag + " " + out + " is the --plan-for facts file: refusing to overwrite it");
  if (same(other)) throw std::invalid_argument(flag + " " + out + ": --model_out and --benchmark_out name the same file");
  if (fs::exists(st) && !force) throw std::invalid_argument(flag + " " + out + " exists: refusing to overwrite it (--force does)");
}

void add_context() {
  const mh::DeviceFacts& f = mh::current_device_facts();
  char clock[32];
  std::snprintf(clock, sizeof clock, "%.0f", mh::observed_sm_clock_mhz());
  benchmark::AddCustomContext("suite", "gpu-memory-microbench");
  benchmark::AddCustomContext("gpu_name", f.gpu_name);
  benchmark::AddCustomContext("gpu_uuid", f.gpu_uuid);
  benchmark::AddCustomContext("compute_capability", f.compute_capability);
  benchmark::AddCustomContext("sm_count", std::to_string(f.sm_count));
  benchmark::AddCustomContext("sm_clock_mhz", std::to_string(f.sm_clock_mhz));
  benchmark::AddCustomContext("mem_clock_mhz", std::to_string(f.mem_clock_mhz));
  benchmark::AddCustomContext("mem_bus_bits", std::to_string(f.mem_bus_bits));  // the report's HBM peak: clock x 2 x bits / 8
  benchmark::AddCustomContext("l2_bytes", std::to_string(f.l2_bytes));
  benchmark::AddCustomContext("driver_version", f.driver_version);
  benchmark::AddCustomContext("runtime_version", f.runtime_version);
  benchmark::AddCustomContext("sm_clock_observed_mhz", clock);
  // Where the per-repetition counters throttled and sm_clock_mhz come from, or why they are absent.
  std::string why;
  const mh::nvml::Device dev = mh::nvml::device_handle(f.device, &why);
  benchmark::AddCustomContext("clock_events_source", why.empty() ? "nvml" : why);
  benchmark::AddCustomContext("settle_max_ms", std::to_string(static_cast<int>(mh::settle_max_ms())));
  double watts = 0;
  if (mh::nvml::power_limit_watts(dev, &watts)) benchmark::AddCustomContext("power_limit_watts", std::to_string(static_cast<int>(watts + 0.5)));
  if (const std::string v = mh::nvml::vbios_version(dev); !v.empty()) benchmark::AddCustomContext("vbios_version", v);
  if (const std::string v = mh::nvml::board_part_number(dev); !v.empty()) benchmark::AddCustomContext("board_part_number", v);
  if (unsigned slot = 0; mh::nvml::module_id(dev, &slot)) benchmark::AddCustomContext("module_id", std::to_string(slot));
  // Code JIT-compiled from an older architecture's PTX (a build without this GPU's architecture) runs
  // with that architecture's __launch_bounds__ limits: other occupancy, other times. Said in the context,
  // and once on stderr.
  const bool from_ptx = mh::kernels_from_ptx();
  benchmark::AddCustomContext("code_from_ptx", from_ptx ? "true" : "false");
  if (from_ptx)
    std::fprintf(stderr, "gpubench: the kernels were not compiled for this GPU (compute capability %s): code_from_ptx=true; "
                         "build with its architecture (CMAKE_CUDA_ARCHITECTURES) for comparable numbers\n",
                 f.compute_capability.c_str());
  for (const auto& [k, v] : mh::link::link_context(f.device)) benchmark::AddCustomContext(k, v);
}

// Google Benchmark's display reporter with the families' run-time context (add_run_context) added first:
// Google Benchmark hands the context to the display reporter, then to the --benchmark_out file's, just
// before the first benchmark runs, and never for a listing (--benchmark_list_tests).
class RunContextReporter final : public benchmark::BenchmarkReporter {
 public:
  explicit RunContextReporter(benchmark::BenchmarkReporter* display) : display_(display) {}
  bool ReportContext(const Context& context) override {
    mh::add_run_context(benchmark::GetBenchmarkFilter());
    char lone[32];
    std::snprintf(lone, sizeof lone, "%.2f", mh::lone_launch_us());
    benchmark::AddCustomContext("lone_launch_us", lone);
    return display_->ReportContext(context);
  }
  void ReportRuns(const std::vector<Run>& runs) override { display_->ReportRuns(runs); }
  void Finalize() override { display_->Finalize(); }

 private:
  benchmark::BenchmarkReporter* display_;  // Google Benchmark's own (CreateDefaultDisplayReporter: not ours to delete)
};

}  // namespace

int main(int argc, char** argv) {
  try {
    const int device = take_device_flag(argc, argv);
    // --model_out FILE: the host models' predictions for every planned benchmark, written once as JSON
    // (not repeated as counters in every repetition); with --plan-for, for that GPU without one.
    std::string model_out, facts_file;
    const bool want_model = take_flag(argc, argv, "--model_out", &model_out);
    if (want_model && model_out.empty()) throw std::invalid_argument("--model_out needs a file name");
    const bool plan_for = take_flag(argc, argv, "--plan-for", &facts_file);
    const bool force = take_switch(argc, argv, "--force");
    const std::string benchmark_out = peek_benchmark_out(argc, argv);
    if (want_model) check_output("--model_out", model_out, facts_file, benchmark_out, force);
    if (!benchmark_out.empty()) check_output("--benchmark_out", benchmark_out, facts_file, "", force);
    mh::env::check_environment();  // before anything is planned or printed
    if (plan_for) {  // no GPU needed: what would run on that GPU, and what would be skipped and why
      if (argc > 1)
        throw std::invalid_argument(std::string("--plan-for takes no flag but --model_out and --force, got '") + argv[1] + "'");
      mh::Predictions predictions;
      mh::print_plan(mh::load_device_facts(facts_file), stdout, &predictions);
      if (want_model) mh::write_predictions(predictions, model_out);
      return 0;
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
      std::fprintf(stderr, "%s\n", kUsage);
      return 1;
    }
    mh::settle_max_ms() = mh::env::settle_ms(mh::settle_max_ms());
    // Benchmarks are planned from the chosen device's facts, so even a listing needs the GPU.
    const std::string why = mh::gpu_unavailable_reason();
    if (!why.empty()) {
      std::fprintf(stderr, "gpubench: %s\n", why.c_str());
      return 2;
    }
    mh::select_device(device < 0 ? 0 : device);
    const mh::Predictions predictions = mh::register_all(mh::current_device_facts());
    if (want_model) mh::write_predictions(predictions, model_out);
    add_context();
    RunContextReporter display(benchmark::CreateDefaultDisplayReporter());
    benchmark::RunSpecifiedBenchmarks(&display);
    benchmark::Shutdown();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpubench: %s\n", e.what());
    return 1;
  }
}

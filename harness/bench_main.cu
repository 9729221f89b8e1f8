// The single benchmark runner: every family in micro/ and gemm/ registers itself here.
// Adds --device N to Google Benchmark's flags, puts the device facts in the JSON context,
// and exits 2 with one line when there is no usable GPU.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "device_info.cuh"

namespace {

constexpr const char* kUsage = "usage: gpubench [--device N] [Google Benchmark flags, see --help]";

// Removes --device N / --device=N from argv; returns -1 when absent.
int take_device_flag(int& argc, char** argv) {
  int device = -1;
  std::vector<char*> rest;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    std::string v;
    if (a == "--device") {
      if (i + 1 >= argc) throw std::invalid_argument("--device needs a number");
      v = argv[++i];
    } else if (a.rfind("--device=", 0) == 0) {
      v = a.substr(9);
    } else {
      rest.push_back(argv[i]);
      continue;
    }
    char* end = nullptr;
    long d = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end != '\0' || d < 0) throw std::invalid_argument("--device needs a non-negative integer, got '" + v + "'");
    device = static_cast<int>(d);
  }
  argc = static_cast<int>(rest.size());
  for (size_t i = 0; i < rest.size(); ++i) argv[i] = rest[i];
  return device;
}

bool only_listing(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--benchmark_list_tests", 22) == 0 && std::strstr(argv[i], "=false") == nullptr) return true;
  return false;
}

void add_context() {
  const mh::DeviceFacts& f = mh::current_device_facts();
  char clock[32];
  std::snprintf(clock, sizeof clock, "%.0f", mh::observed_sm_clock_mhz());
  benchmark::AddCustomContext("suite", "gpu-memory-microbench");
  benchmark::AddCustomContext("gpu_name", f.gpu_name);
  benchmark::AddCustomContext("compute_capability", f.compute_capability);
  benchmark::AddCustomContext("sm_count", std::to_string(f.sm_count));
  benchmark::AddCustomContext("sm_clock_mhz", std::to_string(f.sm_clock_mhz));
  benchmark::AddCustomContext("mem_clock_mhz", std::to_string(f.mem_clock_mhz));
  benchmark::AddCustomContext("l2_bytes", std::to_string(f.l2_bytes));
  benchmark::AddCustomContext("driver_version", f.driver_version);
  benchmark::AddCustomContext("runtime_version", f.runtime_version);
  benchmark::AddCustomContext("sm_clock_observed_mhz", clock);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const int device = take_device_flag(argc, argv);
    const bool listing = only_listing(argc, argv);  // before Initialize consumes the flag
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) {
      std::fprintf(stderr, "%s\n", kUsage);
      return 1;
    }
    if (!listing) {
      const std::string why = mh::gpu_unavailable_reason();
      if (!why.empty()) {
        std::fprintf(stderr, "gpubench: %s\n", why.c_str());
        return 2;
      }
      mh::select_device(device < 0 ? 0 : device);
      add_context();
    }
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpubench: %s\n", e.what());
    return 1;
  }
}

// GPU tests skip, with the reason, where no CUDA device is usable (CPU-only CI), and skip their timing
// checks, with the reason, under compute-sanitizer.
#pragma once
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "harness/device_info.cuh"

#define REQUIRE_GPU()                                              \
  do {                                                             \
    const std::string mh_why_ = ::mh::gpu_unavailable_reason();    \
    if (!mh_why_.empty()) GTEST_SKIP() << mh_why_;                 \
  } while (0)

namespace mh::test {
// The sanitize target (CMakeLists.txt) runs the GPU tests with MH_UNDER_SANITIZER=1: compute-sanitizer
// instruments every access and slows it by orders of magnitude, so what a test asserts about time
// (latency in cycles, a clock, chases in their own time slots) does not hold there; results still do.
inline bool under_sanitizer() {
  const char* v = std::getenv("MH_UNDER_SANITIZER");
  return v && *v && std::string(v) != "0";
}
}  // namespace mh::test

// Every test that asserts timing calls this after its launches and result checks, before its first
// timing check: under a sanitizer the test ends there as skipped, with the reason, the checks above it done.
#define SKIP_TIMING_UNDER_SANITIZER()                                                                      \
  do {                                                                                                     \
    if (::mh::test::under_sanitizer())                                                                     \
      GTEST_SKIP() << "timing checks skipped: MH_UNDER_SANITIZER=" << std::getenv("MH_UNDER_SANITIZER")    \
                   << " (compute-sanitizer slows every access; the result checks above ran)";              \
  } while (0)

// GPU tests skip, with the reason, where no CUDA device is usable (CPU-only CI).
#pragma once
#include <gtest/gtest.h>

#include "harness/device_info.cuh"

#define REQUIRE_GPU()                                              \
  do {                                                             \
    const std::string mh_why_ = ::mh::gpu_unavailable_reason();    \
    if (!mh_why_.empty()) GTEST_SKIP() << mh_why_;                 \
  } while (0)

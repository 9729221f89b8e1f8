// GPU test runner. Without a usable GPU every GPU test skips (GTEST_SKIP, with the reason) and the
// runner exits 77, which CTest reports as "Skipped"; any failure still exits 1.
#include <cstdio>

#include "gpu_test.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  const std::string why = mh::gpu_unavailable_reason();
  if (rc == 0 && !why.empty()) {
    std::printf("gpu_tests: GPU tests skipped: %s\n", why.c_str());
    return 77;
  }
  return rc;
}

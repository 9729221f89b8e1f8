// Picks the CUDA architectures a CPU-only test build compiles (cmake/cuda_archs.cmake, MH_ARCH_SET=classes):
// given every architecture nvcc can compile, in ascending order (75 80 86 ...), prints a ';'-separated
// subset that holds the lowest and the highest of them and at least one of each launch-bounds class of
// harness/arch.hpp (the lowest of the class). The CUDA sources differ between architectures only through
// those classes, so the subset compiles every variant of the code; the lowest architecture catches an
// instruction that needs newer hardware, the highest the newest ISA and ptxas target.
#include <cstdio>
#include <cstdlib>
#include <set>
#include <vector>

#include "harness/arch.hpp"

int main(int argc, char** argv) {
  std::vector<int> archs;  // as nvcc names them: 90 for sm_90
  for (int i = 1; i < argc; ++i) archs.push_back(std::atoi(argv[i]));
  if (archs.empty()) return 1;
  const auto threads = [](int a) { return mh::arch_max_threads_per_sm(a * 10); };  // arch.hpp counts 900
  std::set<int> picked{archs.front(), archs.back()};
  std::set<int> classes{threads(archs.front()), threads(archs.back())};
  for (int a : archs)
    if (classes.insert(threads(a)).second) picked.insert(a);
  const char* sep = "";
  for (int a : picked) {
    std::printf("%s%d", sep, a);
    sep = ";";
  }
  return 0;
}

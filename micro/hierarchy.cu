#include "micro/hierarchy.cuh"

#include <cmath>
#include <stdexcept>

namespace mh::hierarchy {

std::vector<uint64_t> working_sets(uint64_t lo, uint64_t hi, int n, uint64_t granule) {
  if (lo == 0 || lo > hi || n < 2 || granule == 0)
    throw std::invalid_argument("hierarchy::working_sets: needs 0 < lo <= hi, n >= 2, granule > 0");
  std::vector<uint64_t> out;
  const double step = std::log(static_cast<double>(hi) / static_cast<double>(lo)) / (n - 1);
  for (int i = 0; i < n; ++i) {
    const double ws = static_cast<double>(lo) * std::exp(step * i);
    const uint64_t g = std::max<uint64_t>(1, static_cast<uint64_t>(std::llround(ws / static_cast<double>(granule))));
    if (out.empty() || g * granule > out.back()) out.push_back(g * granule);
  }
  return out;
}

}  // namespace mh::hierarchy

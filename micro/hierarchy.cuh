// Read bandwidth by working set: the roofs family's walk (micro/roofs.cuh) with plain, L1-caching
// loads and every SM busy, over working sets from a few L1 lines' worth to many times the L2, so that
// the L1 plateau, the L2 plateau(s) and HBM show as one curve (plots/hierarchy.py finds the edges).
#pragma once
#include <cstdint>
#include <vector>

namespace mh::hierarchy {

// `n` working sets spaced evenly in log from lo to hi, each rounded to the nearest multiple of
// `granule` (at least one), duplicates dropped, ascending. Throws std::invalid_argument when
// lo > hi, n < 2 or granule == 0.
std::vector<uint64_t> working_sets(uint64_t lo, uint64_t hi, int n, uint64_t granule);

}  // namespace mh::hierarchy

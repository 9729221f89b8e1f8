// The link family's pointer chases (micro/bench_link.cu), planned by the latency family so that every
// latency/... benchmark belongs to one family.
#pragma once
#include "harness/registry.cuh"

namespace mh::link {

void plan_chases(Planner& p);

}  // namespace mh::link

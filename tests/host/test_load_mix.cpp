// The load-mix plans (micro/load_mix.cuh) for the H200's facts: each source's working set where its name says.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "harness/device_facts.hpp"
#include "harness/registry.cuh"
#include "micro/load_mix.cuh"

namespace {
using namespace mh::load_mix;

mh::DeviceFacts h200() { return mh::load_device_facts(std::string(MH_DEVICES_DIR) + "/h200.json"); }

TEST(LoadMixPlan, L1SetsFitTheSmsL1) {
  const mh::DeviceFacts f = h200();
  const Plan p = make_plan(Source::l1, f, 2);
  EXPECT_EQ(p.blocks, 2 * f.sm_count);
  EXPECT_EQ(p.tiles, p.sets);  // each block its own set
  EXPECT_LE(2 * p.set_elems() * 4, f.l1_smem_per_sm_bytes * 3 / 4);
  EXPECT_GT(4 * p.set_elems() * 4, f.l1_smem_per_sm_bytes * 3 / 4);  // the largest power of two that fits
  EXPECT_EQ(p.steps, 32 * p.len);
}

TEST(LoadMixPlan, L2SetsFitInL2AndAreShared) {
  const mh::DeviceFacts f = h200();
  const Plan p = make_plan(Source::l2, f, 2);
  EXPECT_LE(p.buffer_elems() * 4, f.l2_bytes / 4);
  EXPECT_GT((p.sets + 1) * p.set_elems() * 4, f.l2_bytes / 4);
  EXPECT_GT(p.tiles, p.sets);
}

TEST(LoadMixPlan, HbmSetsExceedFourL2AndAreNotReused) {
  const mh::DeviceFacts f = h200();
  const Plan p = make_plan(Source::hbm, f, 2);
  EXPECT_EQ(p.tiles, p.sets);
  EXPECT_GE(p.buffer_elems() * 4, 4 * f.l2_bytes);
  EXPECT_EQ(p.tiles % p.blocks, 0u);  // whole waves of the resident grid
  // Two warp requests (a broadcast and a row) per warp step.
  EXPECT_EQ(p.requests_per_launch(), 2ull * 32 * p.steps * p.tiles);
}

TEST(LoadMixPlan, SplitStreamsBroadcastsFromHbmAndSharesL2Rows) {
  const mh::DeviceFacts f = h200();
  const Plan p = make_plan(Source::split, f, 2), l2 = make_plan(Source::l2, f, 2);
  EXPECT_EQ(p.tiles, p.sets);  // every tile its own broadcast streams ...
  EXPECT_EQ(p.tiles % p.blocks, 0u);
  EXPECT_GE(uint64_t(p.sets) * bcast_elem(p.len, Plan::warps(), 0) * 4, 4 * f.l2_bytes);  // ... 4x L2 of them
  EXPECT_EQ(p.row_set_count(), l2.sets);  // the rows: l2's sets, read by many tiles
  EXPECT_LE(uint64_t(p.row_sets) * p.set_elems() * 4, f.l2_bytes / 4);
  EXPECT_GT(p.tiles, 8 * p.row_sets);
  EXPECT_EQ(make_plan(Source::hbm, f, 2).row_set_count(), make_plan(Source::hbm, f, 2).sets);  // others: rows and streams alike
  EXPECT_STREQ(source_name(Source::split), "split");
  EXPECT_TRUE(from_hbm(Source::split) && from_hbm(Source::hbm) && !from_hbm(Source::l2) && !from_hbm(Source::l1));
}

TEST(LoadMixPlan, NoBlockIsOneClearError) { EXPECT_THROW(make_plan(Source::l1, h200(), 0), std::invalid_argument); }

}  // namespace

TEST(LoadMixPlan, SectorsPerRequestIsTheMeanOfABroadcastAndARow) { EXPECT_EQ(Plan::sectors_per_request(), 2.5); }

// The coalescing family's plan for the H200's facts: the four mixes launch load_mix::kThreads-thread blocks, as
// many as are resident (2 per SM), and predict 2.5 sectors per request.
class Recorder final : public mh::Planner {
 public:
  explicit Recorder(const mh::DeviceFacts& f) : f_(f) {}
  const mh::DeviceFacts& facts() const override { return f_; }
  void add(const std::string& name, const mh::Launch& l, mh::Body) override { added[name] = l; }
  void skip(const std::string& name, const std::string&) override { skipped[name] = true; }
  void context(const std::string&, const std::string&) override {}
  std::map<std::string, mh::Launch> added;
  std::map<std::string, bool> skipped;

 private:
  mh::DeviceFacts f_;
};

TEST(LoadMixPlan, FamilyLaunchesResidentBlocksOfTheKernelsSize) {
  const mh::DeviceFacts f = h200();
  Recorder r(f);
  for (const mh::Family& fam : mh::families())
    if (std::string(fam.name) == "coalescing") fam.plan(r);
  for (const char* src : {"l1", "l2", "hbm", "split"}) {
    const std::string name = std::string("coalescing/mix/bcast_row/") + src;
    ASSERT_EQ(r.added.count(name), 1u) << name;
    const mh::Launch& l = r.added.at(name);
    EXPECT_EQ(l.threads, kThreads) << name;
    EXPECT_EQ(l.blocks_per_sm, 2) << name;
    EXPECT_EQ(l.blocks, 2 * f.sm_count) << name;
    EXPECT_EQ(r.predictions().at(name).at("sectors_per_request"), 2.5) << name;
  }
}


// The device-facts table (harness/devices/*.json), its loader, the occupancy rules every plan relies on,
// and every family's plan on every GPU of the table, all without a GPU.
//   DeviceFacts.PlansEveryFamily/<gpu>: one test per file of the table (issue 11's DeviceFacts*).
//   Occupancy.*: mh::blocks_per_sm and mh::check_launch against known answers and against CUDA's own
//     occupancy calculator (cuda_occupancy.h, header-only host code).
//   LoadDeviceFacts.*: bad files are refused with one line naming the file.
#include <cuda_occupancy.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "gemm/tc_names.hpp"
#include "harness/device_facts.hpp"
#include "harness/registry.cuh"

#ifndef MH_DEVICES_DIR
#error "MH_DEVICES_DIR (the harness/devices folder) must be defined by the build"
#endif

namespace {

namespace fs = std::filesystem;

std::vector<std::string> device_files() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(MH_DEVICES_DIR))
    if (e.is_regular_file() && e.path().extension() == ".json") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// ---------------------------------------------------------------------------------------------------
// DeviceFacts.PlansEveryFamily/<gpu>

// A Planner that checks what the families plan instead of running it. `family`: the family whose plan
// runs now (empty under plan_all); its benchmarks' names must start with "<family>/".
class CheckingPlanner final : public mh::Planner {
 public:
  explicit CheckingPlanner(const mh::DeviceFacts& f) : f_(f) {}
  const mh::DeviceFacts& facts() const override { return f_; }
  void add(const std::string& name, const mh::Launch& l, mh::Body body) override {
    record(name);
    ++added[family];
    EXPECT_TRUE(static_cast<bool>(body)) << name << ": no body";
    EXPECT_EQ(mh::check_launch(f_, l), "") << name << " planned as " << mh::describe(l);
    if (l.threads > 0) EXPECT_GE(l.blocks, 1) << name << ": a kernel launch with no blocks";
  }
  void skip(const std::string& name, const std::string& reason) override {
    record(name);
    ++skipped[family];
    EXPECT_NE(reason.find_first_not_of(" \t"), std::string::npos) << name << ": skipped without a reason";
    EXPECT_EQ(reason.find('\n'), std::string::npos) << name << ": the reason must be one line";
  }
  void context(const std::string& key, const std::string&) override { EXPECT_FALSE(key.empty()); }

  std::string family;
  std::map<std::string, int> added, skipped;
  std::set<std::string> names;

 private:
  void record(const std::string& name) {
    EXPECT_EQ(name.find_first_of(" \t\n"), std::string::npos) << "'" << name << "': whitespace in a name";
    EXPECT_TRUE(names.insert(name).second) << name << ": planned twice";
    if (!family.empty())
      EXPECT_EQ(name.rfind(family + "/", 0), 0u) << name << ": planned by family " << family << ", not under its name";
  }
  const mh::DeviceFacts& f_;
};

class DeviceFacts : public ::testing::TestWithParam<std::string> {};

TEST_P(DeviceFacts, PlansEveryFamily) {
  mh::DeviceFacts f;
  ASSERT_NO_THROW(f = mh::load_device_facts(GetParam()));
  // Family by family, so that each name is checked against the family that planned it ...
  CheckingPlanner each(f);
  // A family may have several plans (files): gemm's FP32 and BF16 ladders, async's copies and TMA multicast.
  std::set<std::string> family_names;
  for (const mh::Family& fam : mh::families()) {
    family_names.insert(fam.name);
    each.family = fam.name;
    fam.plan(each);
  }
  // Every family runs something on a Hopper-class GPU; on older ones a family of newer instructions (tensor,
  // dsm) may skip everything, but each of its benchmarks with a reason.
  for (const auto& name : family_names) {
    if (f.arch() >= 900)
      EXPECT_GE(each.added[name], 1) << "family " << name << " plans nothing to run on " << f.gpu_name << " ("
                                     << each.skipped[name] << " skipped)";
    else
      EXPECT_GE(each.added[name] + each.skipped[name], 1) << "family " << name << " plans nothing on " << f.gpu_name;
  }
  for (const char* expected : {"coalescing", "smem_banks", "sync", "ceiling", "gemm"})
    EXPECT_EQ(family_names.count(expected), 1u) << "no family named " << expected;
  // ... and as the runner plans them: all at once, the same benchmarks (no name across two families).
  CheckingPlanner all(f);
  mh::plan_all(all);
  EXPECT_EQ(all.names, each.names);
}

// The checks above can fail: a plan that breaks each rule is caught.
TEST(CheckingPlannerSelfTest, FlagsEveryBrokenRule) {
  const mh::DeviceFacts f = mh::load_device_facts(std::string(MH_DEVICES_DIR) + "/t4.json");
  CheckingPlanner p(f);
  p.family = "fam";
  mh::Launch ok;
  ok.threads = 256;
  ok.blocks_per_sm = 4;
  ok.blocks = 4LL * f.sm_count;
  auto body = [](benchmark::State&) {};
  p.add("fam/ok", ok, body);
  p.skip("fam/skipped", "needs 2048 threads per SM");
  EXPECT_EQ(p.added["fam"], 1);
  EXPECT_EQ(p.skipped["fam"], 1);
  mh::Launch two_big = ok;
  two_big.threads = 1024;
  two_big.blocks_per_sm = 2;  // sm_75 holds 1024 threads
  EXPECT_NONFATAL_FAILURE(p.add("fam/not_resident", two_big, body), "planned as");
  mh::Launch no_blocks = ok;
  no_blocks.blocks = 0;
  EXPECT_NONFATAL_FAILURE(p.add("fam/no_blocks", no_blocks, body), "no blocks");
  EXPECT_NONFATAL_FAILURE(p.add("fam/no_body", ok, mh::Body()), "no body");
  EXPECT_NONFATAL_FAILURE(p.skip("fam/silent", " "), "without a reason");
  EXPECT_NONFATAL_FAILURE(p.skip("fam/two_lines", "a\nb"), "one line");
  EXPECT_NONFATAL_FAILURE(p.add("fam/ok", ok, body), "planned twice");
  EXPECT_NONFATAL_FAILURE(p.add("other/x", ok, body), "not under its name");
  EXPECT_NONFATAL_FAILURE(p.add("fam/a b", ok, body), "whitespace");
}

std::string gpu_label(const ::testing::TestParamInfo<std::string>& info) {
  std::string s = fs::path(info.param).stem().string();
  for (char& c : s)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return s;
}

// An empty prefix: the tests are DeviceFacts.PlansEveryFamily/<gpu>.
INSTANTIATE_TEST_SUITE_P(, DeviceFacts, ::testing::ValuesIn(device_files()), gpu_label);

// ---------------------------------------------------------------------------------------------------
// The table itself

TEST(DeviceTable, CoversTuringToBlackwell) {
  std::set<std::string> ccs;
  const std::vector<std::string> files = device_files();
  EXPECT_GE(files.size(), 9u);
  for (const std::string& path : files) {
    const mh::DeviceFacts f = mh::load_device_facts(path);
    ccs.insert(f.compute_capability);
    EXPECT_NE(read_text(path).find("\"source\""), std::string::npos) << path << ": no \"source\"";
    // Per-SM limits are compute-capability facts (CUDA C++ Programming Guide); check the ones all parts share.
    EXPECT_EQ(f.max_threads_per_block, 1024) << path;
    EXPECT_EQ(f.regs_per_sm, 65536) << path;
    EXPECT_EQ(f.smem_per_block_bytes, 48u << 10) << path;
    EXPECT_EQ(f.reserved_smem_per_block_bytes, f.cc_major >= 8 ? 1024u : 0u) << path;
    EXPECT_LE(f.smem_per_sm_bytes, f.l1_smem_per_sm_bytes) << path;
  }
  for (const char* cc : {"7.5", "8.0", "8.6", "8.9", "9.0", "10.0", "12.0"}) EXPECT_EQ(ccs.count(cc), 1u) << cc;
}

// ---------------------------------------------------------------------------------------------------
// Occupancy

mh::DeviceFacts facts(const std::string& file) { return mh::load_device_facts(std::string(MH_DEVICES_DIR) + "/" + file); }

TEST(Occupancy, KnownAnswersSm90) {
  const mh::DeviceFacts h = facts("h200.json");
  EXPECT_EQ(mh::blocks_per_sm(h, 256, 0, 32), 8);    // 8 warps x 32 x 32 registers = 8192: 65536 / 8192
  EXPECT_EQ(mh::blocks_per_sm(h, 1024, 0, 64), 1);   // 65536 registers: the whole file
  EXPECT_EQ(mh::blocks_per_sm(h, 1024, 0, 32), 2);   // the GEMM kernels' __launch_bounds__(1024, 2)
  EXPECT_EQ(mh::blocks_per_sm(h, 1024, 0, 65), 0);   // 65 x 32 -> 2304 per warp x 32 warps > 65536
  EXPECT_EQ(mh::blocks_per_sm(h, 32, 0, 0), 32);     // the block limit
  EXPECT_EQ(mh::blocks_per_sm(h, 64, 0, 0), 32);
  EXPECT_EQ(mh::blocks_per_sm(h, 96, 0, 0), 21);     // 64 warps / 3
  EXPECT_EQ(mh::blocks_per_sm(h, 100, 0, 0), 16);    // 100 threads take 4 warps
  EXPECT_EQ(mh::blocks_per_sm(h, 256, 0, 33), 6);    // 33 x 32 = 1056 -> 1280 per warp: 12 warps per sub-partition
  EXPECT_EQ(mh::blocks_per_sm(h, 96, 0, 40), 16);    // 1280 per warp: 12 x 4 = 48 warps / 3 (not 65536 / 3840 = 17)
  // Shared memory: 228 KiB per SM, 1 KiB reserved per block, allocated in 128-byte units.
  EXPECT_EQ(mh::blocks_per_sm(h, 32, 0, 0), 32);
  EXPECT_EQ(mh::blocks_per_sm(h, 32, 48 << 10, 0), 4);           // 49 KiB each: 228 / 49
  EXPECT_EQ(mh::blocks_per_sm(h, 32, 56 << 10, 0), 4);           // 57 KiB each: exactly 4
  EXPECT_EQ(mh::blocks_per_sm(h, 32, (56 << 10) + 1, 0), 3);     // one byte more: a 128-byte unit more
  EXPECT_EQ(mh::blocks_per_sm(h, 32, 7000, 0), 28);              // 8024 -> 8064 bytes: 233472 / 8064
  EXPECT_EQ(mh::blocks_per_sm(h, 32, 227 << 10, 0), 1);          // the opt-in maximum
  EXPECT_EQ(mh::blocks_per_sm(h, 32, (227 << 10) + 1, 0), 0);
  EXPECT_EQ(mh::blocks_per_sm(h, 1025, 0, 0), 0);
  EXPECT_EQ(mh::blocks_per_sm(h, 0, 0, 0), 0);
}

TEST(Occupancy, KnownAnswersOtherArchitectures) {
  const mh::DeviceFacts t4 = facts("t4.json"), a100 = facts("a100_sxm_80gb.json"), ga102 = facts("rtx3090.json"),
                        ad = facts("rtx4090.json"), gb202 = facts("rtx5090.json");
  EXPECT_EQ(mh::blocks_per_sm(t4, 1024, 0, 0), 1);   // 1024 threads per SM on sm_75
  EXPECT_EQ(mh::blocks_per_sm(t4, 1024, 0, 32), 1);
  EXPECT_EQ(mh::blocks_per_sm(t4, 512, 0, 0), 2);
  EXPECT_EQ(mh::blocks_per_sm(t4, 32, 0, 0), 16);    // 16 blocks per SM
  EXPECT_EQ(mh::blocks_per_sm(t4, 32, 32 << 10, 0), 2);   // 64 KiB, no reserve
  EXPECT_EQ(mh::blocks_per_sm(t4, 32, 100, 0), 16);       // 256-byte units: 65536 / 256 = 256, not limiting
  EXPECT_EQ(mh::blocks_per_sm(t4, 32, 5000, 0), 12);      // 5000 -> 5120 bytes: 65536 / 5120
  EXPECT_EQ(mh::blocks_per_sm(a100, 1024, 0, 32), 2);
  EXPECT_EQ(mh::blocks_per_sm(a100, 32, 40 << 10, 0), 4);  // 41 KiB each in 164 KiB
  EXPECT_EQ(mh::blocks_per_sm(ga102, 1024, 0, 32), 1);     // 1536 threads per SM
  EXPECT_EQ(mh::blocks_per_sm(ga102, 512, 0, 0), 3);
  EXPECT_EQ(mh::blocks_per_sm(ga102, 32, 0, 0), 16);
  EXPECT_EQ(mh::blocks_per_sm(ad, 32, 0, 0), 24);
  EXPECT_EQ(mh::blocks_per_sm(ad, 32, 49 << 10, 0), 2);    // 50 KiB each in 100 KiB
  EXPECT_EQ(mh::blocks_per_sm(gb202, 32, 0, 0), 24);
  EXPECT_EQ(mh::blocks_per_sm(gb202, 32, 99 << 10, 0), 1);
  EXPECT_EQ(mh::blocks_per_sm(gb202, 32, (99 << 10) + 1, 0), 0);
}

TEST(Occupancy, CheckLaunchSaysWhy) {
  const mh::DeviceFacts h = facts("h200.json"), t4 = facts("t4.json");
  mh::Launch l;
  l.threads = 1024;
  l.blocks_per_sm = 2;
  l.blocks = 2LL * h.sm_count;
  l.regs_per_thread = 32;
  EXPECT_EQ(mh::check_launch(h, l), "");
  const std::string why = mh::check_launch(t4, l);
  EXPECT_NE(why.find("2 blocks of 1024 threads per SM wanted, 1 fit"), std::string::npos) << why;
  l.blocks_per_sm = 1;
  EXPECT_EQ(mh::check_launch(t4, l), "");
  l.threads = 2048;
  EXPECT_NE(mh::check_launch(h, l).find("threads per block"), std::string::npos);
  l.threads = 32;
  l.smem_per_block = (227 << 10) + 4;
  EXPECT_NE(mh::check_launch(h, l).find("shared memory per block"), std::string::npos);
  l.smem_per_block = 0;
  l.device_bytes = h.global_mem_bytes + 1;
  EXPECT_NE(mh::check_launch(h, l).find("device memory"), std::string::npos);
  mh::Launch copy;  // no kernel of ours (a cudaMemcpy): only memory counts
  copy.device_bytes = h.global_mem_bytes / 2;
  EXPECT_EQ(mh::check_launch(h, copy), "");
}

// CUDA's occupancy calculator (cuda_occupancy.h, what cudaOccupancyMaxActiveBlocksPerMultiprocessor
// implements) for a kernel of `regs` registers per thread and no static shared memory.
int cuda_occ_blocks(const mh::DeviceFacts& f, int threads, size_t smem, int regs) {
  cudaOccDeviceProp prop;
  prop.computeMajor = f.cc_major;
  prop.computeMinor = f.cc_minor;
  prop.maxThreadsPerBlock = f.max_threads_per_block;
  prop.maxThreadsPerMultiprocessor = f.max_threads_per_sm;
  prop.regsPerBlock = f.regs_per_block;
  prop.regsPerMultiprocessor = f.regs_per_sm;
  prop.warpSize = 32;
  prop.sharedMemPerBlock = f.smem_per_block_bytes;
  prop.sharedMemPerMultiprocessor = f.smem_per_sm_bytes;
  prop.numSms = f.sm_count;
  prop.sharedMemPerBlockOptin = f.smem_per_block_optin_bytes;
  prop.reservedSharedMemPerBlock = f.reserved_smem_per_block_bytes;
  cudaOccFuncAttributes attr;
  attr.maxThreadsPerBlock = f.max_threads_per_block;
  attr.numRegs = regs;
  attr.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;  // as after cudaFuncAttributeMaxDynamicSharedMemorySize
  attr.maxDynamicSharedSizeBytes = f.smem_per_block_optin_bytes;
  attr.numBlockBarriers = 1;
  cudaOccDeviceState state;
  cudaOccResult result;
  const cudaOccError err = cudaOccMaxActiveBlocksPerMultiprocessor(&result, &prop, &attr, &state, threads, smem);
  if (err != CUDA_OCC_SUCCESS) return -1000 - static_cast<int>(err);
  return result.activeBlocksPerMultiprocessor;
}

TEST(Occupancy, MatchesCudaOccupancyHeader) {
  int devices = 0;
  for (const std::string& path : device_files()) {
    const mh::DeviceFacts f = mh::load_device_facts(path);
    // An older toolkit's header knows no newer architecture (CUDA 13.0's goes to 12.x).
    if (f.cc_major * 10 + f.cc_minor > __CUDA_OCC_MAJOR__ * 10 + __CUDA_OCC_MINOR__) continue;
    ++devices;
    std::vector<size_t> smems = {0, 1, 100, 128, 1000, 4096, 7000, 16 << 10, 40 << 10, 48 << 10, 60 << 10, 99 << 10};
    for (size_t s : {f.smem_per_block_optin_bytes - 1, f.smem_per_block_optin_bytes, f.smem_per_block_optin_bytes + 1,
                     f.smem_per_sm_bytes / 3, f.smem_per_sm_bytes / 2})
      smems.push_back(s);
    int checked = 0;
    for (int threads : {1, 31, 32, 33, 64, 96, 100, 128, 160, 192, 200, 256, 384, 512, 640, 768, 992, 1000, 1024})
      for (int regs : {0, 16, 24, 32, 33, 40, 48, 56, 64, 65, 72, 80, 96, 128, 168, 200, 255})
        for (size_t smem : smems) {
          const int want = cuda_occ_blocks(f, threads, smem, regs);
          ASSERT_GE(want, 0) << path << ": cuda_occupancy.h refused the device";
          EXPECT_EQ(mh::blocks_per_sm(f, threads, smem, regs), want)
              << path << " threads=" << threads << " regs=" << regs << " smem=" << smem;
          ++checked;
        }
    EXPECT_GT(checked, 1000);
  }
  EXPECT_GE(devices, 8);
}

// ---------------------------------------------------------------------------------------------------
// LoadDeviceFacts: bad files

class LoadDeviceFacts : public ::testing::Test {
 protected:
  // Writes `text` to a file of its own and returns its path.
  std::string write(const std::string& text) {
    const std::string path = ::testing::TempDir() + "mh_facts_" +
                             ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
                             std::to_string(n_++) + ".json";
    std::ofstream(path) << text;
    return path;
  }
  // h200.json with `key`'s line replaced by `line` (empty: removed).
  std::string h200_with(const std::string& key, const std::string& line) {
    std::istringstream in(read_text(std::string(MH_DEVICES_DIR) + "/h200.json"));
    std::string out, l;
    bool found = false;
    while (std::getline(in, l)) {
      if (l.find("\"" + key + "\"") != std::string::npos) {
        found = true;
        if (!line.empty()) out += line + "\n";
      } else {
        out += l + "\n";
      }
    }
    EXPECT_TRUE(found) << key;
    return out;
  }
  // The loader refuses `path` with a message that starts with the path and contains `what`.
  static void refuses(const std::string& path, const std::string& what) {
    try {
      mh::load_device_facts(path);
      ADD_FAILURE() << path << " was accepted; wanted an error containing '" << what << "'";
    } catch (const std::invalid_argument& e) {
      const std::string msg = e.what();
      EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
      EXPECT_NE(msg.find(what), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
  int n_ = 0;
};

TEST_F(LoadDeviceFacts, AcceptsTheMeasuredH200) {
  const mh::DeviceFacts f = mh::load_device_facts(write(h200_with("sm_count", "  \"sm_count\": 132,")));
  EXPECT_EQ(f.gpu_name, "NVIDIA H200");
  EXPECT_EQ(f.cc_major, 9);
  EXPECT_EQ(f.cc_minor, 0);
  EXPECT_EQ(f.sm_count, 132);
  EXPECT_EQ(f.smem_per_sm_bytes, 233472u);
  EXPECT_EQ(f.driver_version, "(facts file)");
}

TEST_F(LoadDeviceFacts, RefusesAMissingKey) {
  for (const char* key : {"sm_count", "l2_bytes", "max_threads_per_sm", "reserved_smem_per_block_bytes", "regs_per_block"})
    refuses(write(h200_with(key, "")), std::string("missing key \"") + key + "\"");
  refuses(write(h200_with("gpu_name", "")), "missing key \"gpu_name\"");
  refuses(write("{}"), "missing key");
}

TEST_F(LoadDeviceFacts, RefusesAWrongType) {
  refuses(write(h200_with("sm_count", "  \"sm_count\": \"many\",")), "\"sm_count\" must be an integer");
  refuses(write(h200_with("sm_count", "  \"sm_count\": true,")), "\"sm_count\" must be an integer");
  refuses(write(h200_with("sm_count", "  \"sm_count\": 132.5,")), "\"sm_count\" must be an integer");
  refuses(write(h200_with("sm_count", "  \"sm_count\": ,")), "\"sm_count\" must be an integer");
  refuses(write(h200_with("sm_count", "  \"sm_count\": 0,")), "\"sm_count\" must be an integer in [1, 1024]");
  refuses(write(h200_with("l2_bytes", "  \"l2_bytes\": -1,")), "\"l2_bytes\" must be an integer");
  refuses(write(h200_with("compute_capability", "  \"compute_capability\": \"nine\",")), "compute_capability");
  refuses(write(h200_with("compute_capability", "  \"compute_capability\": \"6.1\",")), "7.5 and newer");
  refuses(write(h200_with("smem_per_block_optin_bytes", "  \"smem_per_block_optin_bytes\": 300000,")),
          "exceeds shared memory per SM");
}

// Values no GPU the suite builds for has: each refused with one line naming the field.
TEST_F(LoadDeviceFacts, RefusesWhatNoSupportedGpuHas) {
  const auto cc = [&](const std::string& v) {
    return write(h200_with("compute_capability", "  \"compute_capability\": \"" + v + "\","));
  };
  // sm_70 has no build (sm_75 is the oldest): 7.0 and 7.2 are refused as 6.1 is; 7.5 is the first accepted.
  for (const char* old : {"7.0", "7.2", "6.1"}) refuses(cc(old), "\"compute_capability\" " + std::string(old) + " is not one the suite builds for (7.5 and newer");
  const mh::DeviceFacts turing = mh::load_device_facts(cc("7.5"));
  EXPECT_EQ(turing.cc_major * 10 + turing.cc_minor, 75);
  EXPECT_EQ(mh::load_device_facts(cc("12.0")).cc_major, 12);
  refuses(cc("13.0"), "is not one the suite builds for");
  // Strict: what atoi would read as 9.0 (or 9.5) is not a compute capability.
  for (const char* bad : {"9.x", "9.", ".0", "9", "9.0.1", " 9.0", "9.0a", "+9.0", "9.-1", "x9.5"})
    refuses(cc(bad), "\"compute_capability\" must look like \"9.0\", got \"" + std::string(bad) + "\"");
  // A block cannot have more registers than its SM.
  refuses(write(h200_with("regs_per_block", "  \"regs_per_block\": 131072,")),
          "\"regs_per_block\" (131072) exceeds \"regs_per_sm\" (65536)");
  EXPECT_EQ(mh::load_device_facts(write(h200_with("regs_per_block", "  \"regs_per_block\": 65536,"))).regs_per_block, 65536);
}

TEST_F(LoadDeviceFacts, RefusesNestedJunk) {
  // A nested value is never a number: a key planning needs refuses it, naming the key.
  refuses(write(h200_with("sm_count", "  \"sm_count\": [132],")), "\"sm_count\" must be an integer");
  refuses(write(h200_with("sm_count", "  \"sm_count\": {\"n\": 132},")), "\"sm_count\" must be an integer");
  refuses(write(h200_with("source", "  \"source\": [\"a\", {\"b\": [1, 2]}")), "");  // unterminated
  refuses(write(h200_with("sm_count", "  \"sm_count\": 132, \"sm_count\": 64,")), "duplicate key \"sm_count\"");
  refuses(write(read_text(std::string(MH_DEVICES_DIR) + "/h200.json") + "{\"sm_count\": 1}"), "after the closing");
  refuses(write("[1, 2, 3]"), "expected '{'");
  refuses(write("{\"gpu_name\": \"x\""), "");
  refuses(write(""), "expected '{'");
  // Brackets inside a nested list's strings are text, not structure.
  const mh::DeviceFacts f = mh::load_device_facts(
      write(h200_with("source", "  \"source\": [\"a ] b\", \"c } [ d\", \"e \\\" ]\"]")));
  EXPECT_EQ(f.sm_count, 132);
}

TEST_F(LoadDeviceFacts, RefusesAnUnreadableFile) {
  refuses(::testing::TempDir() + "mh_no_such_facts_file.json", "cannot open");
  refuses(::testing::TempDir(), "");  // a directory opens on Linux but reads as nothing
}

}  // namespace

namespace {

// ---------------------------------------------------------------------------------------------------
// Code for another architecture (gpubench's context key code_from_ptx), and plans on the device.

TEST(CodeFromPtx, OnlyCodeOfTheDevicesOwnArchitectureIsNot) {
  EXPECT_FALSE(mh::code_from_ptx(90, 90, 9, 0));  // an sm_90 build on an H200
  EXPECT_FALSE(mh::code_from_ptx(86, 86, 8, 6));
  EXPECT_FALSE(mh::code_from_ptx(103, 103, 10, 3));
  // A 75-virtual build on an H200: the driver JIT-compiles the PTX, so the machine code is the device's own
  // (binaryVersion 90) and only the PTX's architecture (ptxVersion 75, the __CUDA_ARCH__ of the build) tells.
  EXPECT_TRUE(mh::code_from_ptx(90, 75, 9, 0));
  EXPECT_TRUE(mh::code_from_ptx(120, 100, 12, 0));
  // Another architecture's machine code: sm_80 on compute capability 8.6, sm_120 on 12.1.
  EXPECT_TRUE(mh::code_from_ptx(80, 80, 8, 6));
  EXPECT_TRUE(mh::code_from_ptx(120, 120, 12, 1));
}

// A planner that answers every residency question as the run on an H200 does for a 75-virtual build
// (the JIT-compiled kernels of 1024 threads: 64 registers, one block per SM, where the facts say two),
// standing in for the compiled kernels, and records what the families plan with that answer.
class CompiledAnswerPlanner final : public mh::Planner {
 public:
  explicit CompiledAnswerPlanner(const mh::DeviceFacts& f) : f_(f) {}
  const mh::DeviceFacts& facts() const override { return f_; }
  mh::Residency residency(const mh::Residency& planned, const std::function<mh::Residency()>&) const override {
    ++asked;
    return from_facts ? planned : answer;
  }
  void add(const std::string& name, const mh::Launch& l, mh::Body) override { added[name] = l; }
  void skip(const std::string& name, const std::string&) override { skipped.insert(name); }
  void context(const std::string&, const std::string&) override {}
  bool from_facts = false;  // answer as --plan-for does, for comparison
  mh::Residency answer{64, 1};
  mutable int asked = 0;
  std::map<std::string, mh::Launch> added;
  std::set<std::string> skipped;

 private:
  const mh::DeviceFacts& f_;
};

// The families whose grids or models depend on resident blocks take them from residency() (on a GPU: the
// compiled kernel), not from the facts: the GEMM model and launch, the bank-conflict throughput grids, the
// FMA ceiling's grid and the coalescing family's.
TEST(CompiledResidency, SetsTheGridsAndTheModel) {
  const mh::DeviceFacts h200 = mh::load_device_facts(std::string(MH_DEVICES_DIR) + "/h200.json");
  std::map<std::string, int> checked;  // by family: a family's several plans (files) count together
  for (const mh::Family& fam : mh::families()) {
    const std::string family = fam.name;
    if (family != "gemm" && family != "smem_banks" && family != "coalescing" && family != "ceiling") continue;
    SCOPED_TRACE(family);
    CompiledAnswerPlanner p(h200), facts(h200);
    fam.plan(p);
    facts.from_facts = true;
    fam.plan(facts);
    EXPECT_GT(p.asked, 0) << "the plan never asked for the compiled kernels' residency";
    // The answer changes grids, not which benchmarks run: a plan that kept a facts figure beside the
    // answer's registers would refuse its own launch.
    EXPECT_EQ(p.skipped, facts.skipped);
    for (const auto& [name, l] : p.added) {
      const bool gemm_ours = family == "gemm" && l.threads > 0;
      // The BF16 tensor-core ladder has no counting model yet (gemm/tc_gemm.cu's table): no predictions.
      const std::vector<std::string> tc = mh::gemm::tc_kernel_names();
      const bool tensor_core =
          std::any_of(tc.begin(), tc.end(), [&](const std::string& k) { return name.rfind("gemm/" + k + "/", 0) == 0; });
      const bool banks = name.find("throughput/") != std::string::npos;
      if (gemm_ours || banks || name == "ceiling/fma") {
        EXPECT_EQ(l.blocks_per_sm, 1) << name;
        EXPECT_EQ(l.regs_per_thread, 64) << name;
        ++checked[family];
      }
      if (banks || name == "ceiling/fma") EXPECT_EQ(l.blocks, h200.sm_count) << name;  // one block on every SM
      if (gemm_ours && !tensor_core) EXPECT_EQ(p.predictions().at(name).at("model_blocks_per_sm"), 1) << name;
      // Coalescing, l1 and l2: one resident block of 256 threads per SM at most (the answer), not the facts' eight.
      if (family == "coalescing" && name.find("/hbm/") == std::string::npos) EXPECT_LE(l.blocks, h200.sm_count) << name;
    }
  }
  for (const char* family : {"gemm", "smem_banks", "ceiling"}) EXPECT_GT(checked[family], 0) << family;
}

}  // namespace

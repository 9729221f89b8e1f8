#include <gtest/gtest.h>

#include <map>

#include "model/link_model.hpp"

using namespace mh::model;

namespace {
std::map<std::string, std::string> as_map(const LinkInfo& li) {
  std::map<std::string, std::string> m;
  for (const auto& [k, v] : link_context_entries(li)) {
    EXPECT_TRUE(m.emplace(k, v).second) << "key twice: " << k;
  }
  return m;
}
}  // namespace

TEST(LinkModel, PcieRatesPerLaneFollowTheEncoding) {
  EXPECT_DOUBLE_EQ(pcie_lane_bytes_per_second(1), 0.25e9);
  EXPECT_DOUBLE_EQ(pcie_lane_bytes_per_second(2), 0.5e9);
  EXPECT_NEAR(pcie_lane_bytes_per_second(3), 0.984615e9, 1e3);
  // Each generation from 3 to 5 doubles the rate; Gen6 doubles the signalling but FLITs cost 14/256.
  EXPECT_DOUBLE_EQ(pcie_lane_bytes_per_second(4), 2 * pcie_lane_bytes_per_second(3));
  EXPECT_DOUBLE_EQ(pcie_lane_bytes_per_second(5), 2 * pcie_lane_bytes_per_second(4));
  EXPECT_NEAR(pcie_lane_bytes_per_second(6), 7.5625e9, 1e3);
  EXPECT_EQ(pcie_lane_bytes_per_second(0), 0.0);
  EXPECT_EQ(pcie_lane_bytes_per_second(7), 0.0);
}

TEST(LinkModel, Gen5x16IsSixtyThreeGBps) {
  EXPECT_NEAR(pcie_peak_bytes_per_second(5, 16), 63.015e9, 1e7);
  EXPECT_NEAR(pcie_peak_bytes_per_second(4, 16), 31.508e9, 1e7);
  EXPECT_NEAR(pcie_peak_bytes_per_second(5, 8), 31.508e9, 1e7);  // a degraded x8 link halves it
  EXPECT_EQ(pcie_peak_bytes_per_second(5, 0), 0.0);
  EXPECT_EQ(pcie_peak_bytes_per_second(9, 16), 0.0);
}

TEST(LinkModel, NvlinkVersionIsNvmlsEnumNotTheGeneration) {
  // An H200 answered 6 (NVML_NVLINK_VERSION_4_0); nvidia-smi nvlink -s there: 26.56 GB/s per link.
  EXPECT_DOUBLE_EQ(nvlink_version_bytes_per_second(6), 26.5625e9);
  EXPECT_DOUBLE_EQ(nvlink_version_bytes_per_second(1), 20e9);
  EXPECT_DOUBLE_EQ(nvlink_version_bytes_per_second(2), 25.78125e9);
  EXPECT_DOUBLE_EQ(nvlink_version_bytes_per_second(3), 25.78125e9);  // 2.2
  EXPECT_DOUBLE_EQ(nvlink_version_bytes_per_second(4), 25e9);        // 3.0, A100
  EXPECT_DOUBLE_EQ(nvlink_version_bytes_per_second(5), 25e9);        // 3.1
  EXPECT_DOUBLE_EQ(nvlink_version_bytes_per_second(7), 50e9);        // 5.0, B200
  EXPECT_EQ(nvlink_version_bytes_per_second(0), 0.0);
  EXPECT_EQ(nvlink_version_bytes_per_second(8), 0.0);
  EXPECT_STREQ(nvlink_generation(6), "4.0");
  EXPECT_STREQ(nvlink_generation(3), "2.2");
  EXPECT_STREQ(nvlink_generation(7), "5.0");
  EXPECT_EQ(nvlink_generation(0), nullptr);
  EXPECT_EQ(nvlink_generation(8), nullptr);
  // An H200 with 18 links by the table: 478.1 GB/s per direction, as from the speed field.
  LinkInfo h200;
  h200.nvlink_count = 18;
  h200.nvlink_link_bytes_per_second = nvlink_version_bytes_per_second(6);
  EXPECT_NEAR(h200.nvlink_peak(), 478.1e9, 0.1e9);
  LinkInfo li;
  li.nvlink_count = 18;
  li.nvlink_link_bytes_per_second = 26562e6;
  EXPECT_NEAR(li.nvlink_peak(), 478.1e9, 0.1e9);
}

TEST(LinkModel, PciePeakUsesTheHighestGenerationAtTheTrainedWidth) {
  LinkInfo li;
  li.source = "nvml";
  li.pcie_gen_max = 5;
  li.pcie_gen_current = 1;  // idle
  li.pcie_width_max = 16;
  li.pcie_width_current = 8;
  EXPECT_DOUBLE_EQ(li.pcie_peak(), pcie_peak_bytes_per_second(5, 8));
}

TEST(LinkModel, ContextOfAnH200) {
  LinkInfo li;
  li.source = "nvml";
  li.pcie_gen_max = li.pcie_gen_current = 5;
  li.pcie_width_max = li.pcie_width_current = 16;
  li.nvlink_count = 18;
  li.nvlink_version = 6;
  li.nvlink_link_bytes_per_second = 26562e6;
  li.nvlink_rate_source = "nvml speed field";
  const auto m = as_map(li);
  EXPECT_EQ(m.at("link_info_source"), "nvml");
  EXPECT_EQ(m.at("pcie_gen"), "5");
  EXPECT_EQ(m.at("pcie_width"), "16");
  EXPECT_EQ(m.at("pcie_peak_bytes_per_second"), "63015384615");
  EXPECT_EQ(m.at("nvlink_count"), "18");
  EXPECT_EQ(m.at("nvlink_version"), "6");
  EXPECT_EQ(m.at("nvlink_generation"), "4.0");
  EXPECT_EQ(m.at("nvlink_peak_bytes_per_second"), "478116000000");
  EXPECT_EQ(m.at("nvlink_rate_source"), "nvml speed field");
}

TEST(LinkModel, UnknownValuesAreLeftOutNotZero) {
  LinkInfo none;
  none.source = "NVML not available";
  const auto m = as_map(none);
  EXPECT_EQ(m.size(), 1u);
  EXPECT_EQ(m.at("link_info_source"), "NVML not available");

  LinkInfo pcie_only;  // a PCIe card: NVML answers, no NVLink
  pcie_only.source = "nvml";
  pcie_only.pcie_gen_max = 4;
  pcie_only.pcie_width_current = 16;
  const auto p = as_map(pcie_only);
  EXPECT_EQ(p.at("nvlink_count"), "0");
  EXPECT_EQ(p.count("nvlink_peak_bytes_per_second"), 0u);
  EXPECT_EQ(p.count("nvlink_generation"), 0u);
  EXPECT_EQ(p.count("pcie_gen_current"), 0u);
  EXPECT_EQ(p.count("pcie_peak_bytes_per_second"), 1u);
}

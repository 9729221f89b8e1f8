// Peak rates of the links past a GPU's own memory (PCIe to the host, NVLink to its peers), from what
// NVML reports about the device (micro/link.cu reads it), and the JSON context keys that carry them.
//
// PCIe: per lane and direction, the transfer rate after line encoding, before packet (TLP/DLLP)
// overhead: Gen1/2 use 8b/10b, Gen3-5 128b/130b, Gen6 FLIT mode (242 of every 256 bytes carry TLPs).
// So Gen5 x16 = 16 * 32 GT/s * 128/130 / 8 = 63.0 GB/s; the packets cost another ~10-15 % of it,
// which is why pinned copies top out around 53-56 GB/s there.
// NVLink: links x the per-link rate per direction. NVML's NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON is the
// source (26562 MB/s per link on an H100/H200, as `nvidia-smi nvlink -s` prints); where the driver
// lacks that field, the signalling rate of the link's version (lanes x lane rate / 8) stands in.
#pragma once
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

namespace mh::model {

// Bytes per second per lane and direction after line encoding; 0 for an unknown generation.
inline double pcie_lane_bytes_per_second(int gen) {
  switch (gen) {
    case 1: return 2.5e9 * 8 / 10 / 8;
    case 2: return 5.0e9 * 8 / 10 / 8;
    case 3: return 8.0e9 * 128 / 130 / 8;
    case 4: return 16.0e9 * 128 / 130 / 8;
    case 5: return 32.0e9 * 128 / 130 / 8;
    case 6: return 64.0e9 * 242 / 256 / 8;
    default: return 0.0;
  }
}

inline double pcie_peak_bytes_per_second(int gen, int width) {
  return width > 0 ? pcie_lane_bytes_per_second(gen) * width : 0.0;
}

// nvmlDeviceGetNvLinkVersion answers with an nvmlNvlinkVersion_t, not the generation: 1 = NVLink 1.0,
// 2 = 2.0, 3 = 2.2, 4 = 3.0, 5 = 3.1, 6 = 4.0 (H100/H200), 7 = 5.0 (B200); 0 invalid. The generation it
// names, "4.0" for 6; nullptr when unknown.
inline const char* nvlink_generation(int version) {
  static const char* const names[] = {"1.0", "2.0", "2.2", "3.0", "3.1", "4.0", "5.0"};
  return version >= 1 && version <= 7 ? names[version - 1] : nullptr;
}

// Per link and direction, by that NVML version: lanes x lane rate / 8; 0 when unknown. Only a fallback
// for drivers without the speed field (a two-H200 VM refused it and answered 6: 18 x 26.5625 GB/s).
inline double nvlink_version_bytes_per_second(int version) {
  switch (version) {
    case 1: return 8 * 20.0e9 / 8;       // 1.0 (P100): 8 lanes x 20 Gbit/s
    case 2:                              // 2.0 (V100)
    case 3: return 8 * 25.78125e9 / 8;   // 2.2: 8 lanes x 25.78 Gbit/s
    case 4:                              // 3.0 (A100)
    case 5: return 4 * 50.0e9 / 8;       // 3.1: 4 lanes x 50 Gbit/s
    case 6: return 2 * 106.25e9 / 8;     // 4.0 (H100/H200): 2 lanes x 106.25 Gbit/s (PAM4)
    case 7: return 2 * 200.0e9 / 8;      // 5.0 (B200): 2 lanes x 200 Gbit/s
    default: return 0.0;
  }
}

// What NVML said about one GPU's links. Zero means "not known".
struct LinkInfo {
  std::string source;              // "nvml", or why there is nothing ("NVML not available: ...")
  int pcie_gen_max = 0;            // the most the device and the system support
  int pcie_gen_current = 0;        // drops at idle (power saving), so not the one for the peak
  int pcie_width_max = 0;
  int pcie_width_current = 0;      // the trained width: a degraded link (x8 in an x16 slot) shows here
  int nvlink_count = 0;            // active links
  int nvlink_version = 0;           // NVML's nvmlNvlinkVersion_t (6 = NVLink 4.0), see nvlink_generation()
  double nvlink_link_bytes_per_second = 0;  // per link and direction
  std::string nvlink_rate_source;           // "nvml speed field" or "nvlink version table"

  // Peak per direction: the highest generation (idle links run slower) at the width the link trained to.
  double pcie_peak() const { return pcie_peak_bytes_per_second(pcie_gen_max, pcie_width_current); }
  double nvlink_peak() const { return nvlink_count * nvlink_link_bytes_per_second; }
};

inline std::string format_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

// JSON context entries: pcie_gen, pcie_width, pcie_peak_bytes_per_second, nvlink_count, nvlink_version
// (NVML's enum) with nvlink_generation ("4.0"), and nvlink_peak_bytes_per_second (per direction) when known, plus what they came from. Keys whose value
// is unknown are left out, so that a reader never mistakes a 0 for a measured peak.
inline std::vector<std::pair<std::string, std::string>> link_context_entries(const LinkInfo& li) {
  std::vector<std::pair<std::string, std::string>> out{{"link_info_source", li.source}};
  auto put = [&](const char* key, double v) {
    if (v > 0) out.emplace_back(key, format_number(v));
  };
  put("pcie_gen", li.pcie_gen_max);
  put("pcie_gen_current", li.pcie_gen_current);
  put("pcie_width", li.pcie_width_current);
  put("pcie_width_max", li.pcie_width_max);
  put("pcie_peak_bytes_per_second", li.pcie_peak());
  if (li.source == "nvml") out.emplace_back("nvlink_count", std::to_string(li.nvlink_count));
  put("nvlink_version", li.nvlink_version);
  if (const char* g = nvlink_generation(li.nvlink_version)) out.emplace_back("nvlink_generation", g);
  put("nvlink_link_bytes_per_second", li.nvlink_link_bytes_per_second);
  put("nvlink_peak_bytes_per_second", li.nvlink_peak());
  if (li.nvlink_peak() > 0) out.emplace_back("nvlink_rate_source", li.nvlink_rate_source);
  return out;
}

}  // namespace mh::model

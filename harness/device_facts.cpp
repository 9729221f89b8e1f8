#include "harness/device_facts.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

namespace mh {
namespace {

// A JSON object of "key": number | "string" | true/false/null; a nested list or object (e.g. "source")
// is kept as its raw text, so a key planning needs never takes one. Enough for devices/*.json;
// anything else (duplicate keys, text after the object) is refused with the offending position.
std::map<std::string, std::string> parse_flat_json(const std::string& text, const std::string& path) {
  std::map<std::string, std::string> out;
  size_t i = 0;
  auto fail = [&](const std::string& what) -> void {
    throw std::invalid_argument(path + ": " + what + " at byte " + std::to_string(i));
  };
  auto ws = [&] { while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i; };
  auto str = [&]() -> std::string {
    if (text[i] != '"') fail("expected a string");
    std::string s;
    for (++i; i < text.size() && text[i] != '"'; ++i) {
      if (text[i] == '\\' && i + 1 < text.size()) ++i;
      s += text[i];
    }
    if (i >= text.size()) fail("unterminated string");
    ++i;
    return s;
  };
  ws();
  if (i >= text.size() || text[i] != '{') fail("expected '{'");
  ++i;
  ws();
  if (i < text.size() && text[i] == '}') return out;  // an empty object: load_device_facts names the first missing key
  while (true) {
    ws();
    const std::string key = str();
    ws();
    if (i >= text.size() || text[i] != ':') fail("expected ':'");
    ++i;
    ws();
    if (i >= text.size()) fail("missing value");
    if (out.count(key)) fail("duplicate key \"" + key + "\"");
    if (text[i] == '"') {
      out[key] = str();
    } else if (text[i] == '{' || text[i] == '[') {
      // brackets inside strings do not count
      const size_t start = i;
      int depth = 0;
      while (i < text.size()) {
        if (text[i] == '"') {
          str();
          continue;
        }
        if (text[i] == '{' || text[i] == '[') ++depth;
        if ((text[i] == '}' || text[i] == ']') && --depth == 0) break;
        ++i;
      }
      if (i >= text.size()) fail("unterminated value");
      ++i;
      out[key] = text.substr(start, i - start);
    } else {
      const size_t start = i;
      while (i < text.size() && text[i] != ',' && text[i] != '}' && !std::isspace(static_cast<unsigned char>(text[i]))) ++i;
      out[key] = text.substr(start, i - start);
    }
    ws();
    if (i < text.size() && text[i] == ',') { ++i; continue; }
    if (i < text.size() && text[i] == '}') break;
    fail("expected ',' or '}'");
  }
  ++i;
  ws();
  if (i < text.size()) fail("text after the closing '}'");
  return out;
}

long long number(const std::map<std::string, std::string>& kv, const std::string& key, const std::string& path,
                 long long lo, long long hi) {
  auto it = kv.find(key);
  if (it == kv.end()) throw std::invalid_argument(path + ": missing key \"" + key + "\"");
  char* end = nullptr;
  const double v = std::strtod(it->second.c_str(), &end);
  if (it->second.empty() || *end != '\0' || v != static_cast<double>(static_cast<long long>(v)) || v < lo || v > hi)
    throw std::invalid_argument(path + ": \"" + key + "\" must be an integer in [" + std::to_string(lo) + ", " +
                                std::to_string(hi) + "], got " + it->second);
  return static_cast<long long>(v);
}

std::string text_of(const std::map<std::string, std::string>& kv, const std::string& key, const std::string& fallback = "") {
  auto it = kv.find(key);
  return it == kv.end() ? fallback : it->second;
}

// "<major>.<minor>", one or two digits each, nothing else ("9.x" is not 9.0), from 7.5 (sm_75, the
// oldest the suite builds for) to 12.x; sets cc_major and cc_minor.
void parse_compute_capability(DeviceFacts& f, const std::string& path) {
  const std::string& cc = f.compute_capability;
  const size_t dot = cc.find('.');
  const auto digits = [](const std::string& s) {
    return !s.empty() && s.size() <= 2 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (dot == std::string::npos || !digits(cc.substr(0, dot)) || !digits(cc.substr(dot + 1)))
    throw std::invalid_argument(path + ": \"compute_capability\" must look like \"9.0\", got \"" + cc + "\"");
  f.cc_major = std::stoi(cc.substr(0, dot));
  f.cc_minor = std::stoi(cc.substr(dot + 1));
  if (f.cc_major * 10 + f.cc_minor < 75 || f.cc_major > 12)
    throw std::invalid_argument(path + ": \"compute_capability\" " + cc + " is not one the suite builds for (7.5 and newer, up to 12.x)");
}

}  // namespace

DeviceFacts load_device_facts(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  const auto kv = parse_flat_json(ss.str(), path);
  constexpr long long kMaxBytes = 1ll << 50;
  DeviceFacts f;
  f.gpu_name = text_of(kv, "gpu_name");
  if (f.gpu_name.empty()) throw std::invalid_argument(path + ": missing key \"gpu_name\"");
  f.compute_capability = text_of(kv, "compute_capability");
  parse_compute_capability(f, path);
  f.sm_count = static_cast<int>(number(kv, "sm_count", path, 1, 1024));
  f.sm_clock_mhz = static_cast<int>(number(kv, "sm_clock_mhz", path, 100, 5000));
  f.mem_clock_mhz = static_cast<int>(number(kv, "mem_clock_mhz", path, 100, 50000));
  f.mem_bus_bits = static_cast<int>(number(kv, "mem_bus_bits", path, 32, 16384));
  f.l2_bytes = static_cast<size_t>(number(kv, "l2_bytes", path, 1 << 16, kMaxBytes));
  f.global_mem_bytes = static_cast<size_t>(number(kv, "global_mem_bytes", path, 1ll << 28, kMaxBytes));
  f.smem_per_sm_bytes = static_cast<size_t>(number(kv, "smem_per_sm_bytes", path, 16 << 10, 1 << 20));
  f.smem_per_block_bytes = static_cast<size_t>(number(kv, "smem_per_block_bytes", path, 16 << 10, 1 << 20));
  f.smem_per_block_optin_bytes = static_cast<size_t>(number(kv, "smem_per_block_optin_bytes", path, 16 << 10, 1 << 20));
  f.reserved_smem_per_block_bytes = static_cast<size_t>(number(kv, "reserved_smem_per_block_bytes", path, 0, 1 << 16));
  f.l1_smem_per_sm_bytes = static_cast<size_t>(number(kv, "l1_smem_per_sm_bytes", path, 32 << 10, 1 << 20));
  f.max_threads_per_sm = static_cast<int>(number(kv, "max_threads_per_sm", path, 256, 4096));
  f.max_threads_per_block = static_cast<int>(number(kv, "max_threads_per_block", path, 256, 4096));
  f.max_blocks_per_sm = static_cast<int>(number(kv, "max_blocks_per_sm", path, 1, 64));
  f.regs_per_sm = static_cast<int>(number(kv, "regs_per_sm", path, 16384, 1 << 20));
  f.regs_per_block = static_cast<int>(number(kv, "regs_per_block", path, 16384, 1 << 20));
  f.driver_version = text_of(kv, "driver_version", "(facts file)");
  f.runtime_version = text_of(kv, "runtime_version", "(facts file)");
  if (f.regs_per_block > f.regs_per_sm)
    throw std::invalid_argument(path + ": \"regs_per_block\" (" + std::to_string(f.regs_per_block) + ") exceeds \"regs_per_sm\" (" +
                                std::to_string(f.regs_per_sm) + ")");
  if (f.smem_per_block_optin_bytes > f.smem_per_sm_bytes || f.smem_per_block_bytes > f.smem_per_block_optin_bytes)
    throw std::invalid_argument(path + ": shared memory per block exceeds shared memory per SM");
  return f;
}

bool code_from_ptx(int binary_version, int ptx_version, int cc_major, int cc_minor) {
  const int cc = cc_major * 10 + cc_minor;
  return binary_version != cc || ptx_version != cc;
}

std::string human_bytes(double b) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) b /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", b, unit[u]);
  return buf;
}

size_t pinning_smem(const DeviceFacts& f, int blocks_per_sm, size_t need) {
  if (blocks_per_sm < 1) throw std::invalid_argument("blocks_per_sm must be >= 1");
  const long long per_block = static_cast<long long>(f.smem_per_sm_bytes) / blocks_per_sm -
                              static_cast<long long>(f.reserved_smem_per_block_bytes);
  const size_t bytes = static_cast<size_t>(std::clamp<long long>(per_block, 0, f.smem_per_block_optin_bytes)) / 128 * 128;
  return bytes >= need ? bytes : 0;
}

int blocks_per_sm(const DeviceFacts& f, int threads, size_t smem, int regs) {
  // The rules of CUDA's cuda_occupancy.h (cudaOccMaxActiveBlocksPerMultiprocessor) for sm_75 and newer,
  // default carve-out; the host test Occupancy.MatchesCudaOccupancyHeader holds the two together.
  if (threads <= 0 || threads > f.max_threads_per_block) return 0;
  constexpr int kWarp = 32, kSubPartitions = 4, kRegUnit = 256;
  const int warps = (threads + kWarp - 1) / kWarp;  // threads are allocated by whole warps
  int n = std::min(f.max_blocks_per_sm, f.max_threads_per_sm / kWarp / warps);
  // Shared memory: the block's bytes plus the driver's reserve, in units of 256 bytes (sm_7x) or 128.
  const size_t unit = f.cc_major >= 8 ? 128 : 256;
  const size_t per_block = (smem + f.reserved_smem_per_block_bytes + unit - 1) / unit * unit;
  if (smem > f.smem_per_block_optin_bytes || per_block > f.smem_per_block_optin_bytes + f.reserved_smem_per_block_bytes)
    return 0;
  if (per_block > 0) n = std::min<long long>(n, static_cast<long long>(f.smem_per_sm_bytes / per_block));
  if (regs > 0) {
    // Registers go to warps in units of 256, each warp inside one of the SM's four sub-partitions; the
    // per-block check rounds the warps up to a multiple of four.
    const int per_warp = (regs * kWarp + kRegUnit - 1) / kRegUnit * kRegUnit;
    const int rounded_warps = (warps + kSubPartitions - 1) / kSubPartitions * kSubPartitions;
    if (regs > 255 || per_warp * rounded_warps > f.regs_per_block) return 0;
    const int warps_per_sm = f.regs_per_sm / kSubPartitions / per_warp * kSubPartitions;
    n = std::min(n, warps_per_sm / warps);
  }
  return std::max(n, 0);
}

std::string check_launch(const DeviceFacts& f, const Launch& l) {
  if (l.device_bytes > f.global_mem_bytes)
    return "needs " + human_bytes(static_cast<double>(l.device_bytes)) + " of device memory, the GPU has " +
           human_bytes(static_cast<double>(f.global_mem_bytes));
  if (l.threads == 0) return {};
  if (l.threads < 0 || l.threads > f.max_threads_per_block)
    return std::to_string(l.threads) + " threads per block; the GPU allows " + std::to_string(f.max_threads_per_block);
  if (l.smem_per_block > f.smem_per_block_optin_bytes)
    return human_bytes(static_cast<double>(l.smem_per_block)) + " of shared memory per block; the GPU allows " +
           human_bytes(static_cast<double>(f.smem_per_block_optin_bytes));
  const int fit = blocks_per_sm(f, l.threads, l.smem_per_block, l.regs_per_thread);
  if (fit < 1) return "no block of " + std::to_string(l.threads) + " threads fits on one SM";
  if (l.blocks_per_sm > fit)
    return std::to_string(l.blocks_per_sm) + " blocks of " + std::to_string(l.threads) + " threads per SM wanted, " +
           std::to_string(fit) + " fit (" + std::to_string(f.max_threads_per_sm) + " threads, " +
           std::to_string(f.max_blocks_per_sm) + " blocks, " + human_bytes(static_cast<double>(f.smem_per_sm_bytes)) +
           " shared memory, " + std::to_string(f.regs_per_sm) + " registers per SM)";
  return {};
}

std::string describe(const Launch& l) {
  std::string s;
  if (l.threads > 0) {
    s = "threads=" + std::to_string(l.threads) + " blocks=" + std::to_string(l.blocks);
    if (l.blocks_per_sm > 0) s += " (" + std::to_string(l.blocks_per_sm) + "/SM)";
    s += " smem=" + human_bytes(static_cast<double>(l.smem_per_block));
    if (l.regs_per_thread > 0) s += " regs<=" + std::to_string(l.regs_per_thread);
  } else {
    s = "no kernel of ours";
  }
  if (l.device_bytes > 0) s += " mem=" + human_bytes(static_cast<double>(l.device_bytes));
  if (!l.note.empty()) s += " " + l.note;
  return s;
}

}  // namespace mh

// The MH_* environment variables that take a value, each parsed in one place. gpubench's main calls
// check_environment() before it plans or prints anything, so a bad value is one line and exit 1, never
// half a plan followed by the error; the code that uses a value calls the same parser.
// (MH_PROFILE and MH_SWEEP are switches: any value but empty or "0" turns them on, nothing to refuse.)
#pragma once
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace mh::env {

// MH_SETTLE_MS: the longest wait for throttling to clear before a repetition, ms in [0, 60000]; `fallback`
// when unset.
inline double settle_ms(double fallback) {
  const char* v = std::getenv("MH_SETTLE_MS");
  if (!v) return fallback;
  char* end = nullptr;
  const double ms = std::strtod(v, &end);
  if (!*v || *end || !(ms >= 0) || ms > 60000)
    throw std::invalid_argument(std::string("MH_SETTLE_MS='") + v + "': not a number of milliseconds in [0, 60000]");
  return ms;
}

// MH_PLACEMENTS: how many placements a hierarchy/read launch rotates over, 1 to 64 (default 8).
constexpr int kDefaultPlacements = 8;
inline int placements() {
  const char* v = std::getenv("MH_PLACEMENTS");
  if (!v) return kDefaultPlacements;
  char* end = nullptr;
  const long n = std::strtol(v, &end, 10);
  if (!*v || *end || n < 1 || n > 64)
    throw std::invalid_argument(std::string("MH_PLACEMENTS='") + v + "': not a whole number in [1, 64]");
  return static_cast<int>(n);
}

// MH_PEER_DEVICE: the peer GPU's CUDA index (digits, at most 4), -1 when unset or empty. Whether that
// device exists is for the link family to check, on the GPU.
inline int peer_device() {
  const char* env = std::getenv("MH_PEER_DEVICE");
  if (!env || !*env) return -1;
  const std::string v = env;
  if (v.size() > 4 || v.find_first_not_of("0123456789") != std::string::npos)
    throw std::invalid_argument("MH_PEER_DEVICE needs a GPU index, got '" + v + "'");
  return std::stoi(v);
}

// Parses every variable above; throws the first one's error.
inline void check_environment() {
  settle_ms(0);
  placements();
  peer_device();
}

}  // namespace mh::env

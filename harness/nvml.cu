#include "harness/nvml.cuh"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "harness/cuda_check.cuh"
#include "harness/device_info.cuh"

namespace mh::nvml {
namespace {

constexpr int kClockSm = 1;                  // NVML_CLOCK_SM of nvmlClockType_t
constexpr unsigned kVersionBufferBytes = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE

using InitFn = int (*)();
using ErrorStringFn = const char* (*)(int);
using ByStringFn = int (*)(const char*, Device*);
using VersionFn = int (*)(char*, unsigned);
using ReasonsFn = int (*)(Device, unsigned long long*);
using ClockFn = int (*)(Device, int, unsigned*);

// The process's one NVML session: opened on first use, shut down at exit (never dlclose'd: other
// statics may still hold function pointers into it while the process ends).
class Library {
 public:
  Library() {
    lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib_) {
      const char* e = dlerror();
      why_ = std::string("NVML not available (libnvidia-ml.so.1 did not load: ") + (e ? e : "?") + ")";
      return;
    }
    auto init = reinterpret_cast<InitFn>(dlsym(lib_, "nvmlInit_v2"));
    shutdown_ = reinterpret_cast<InitFn>(dlsym(lib_, "nvmlShutdown"));
    error_string_ = reinterpret_cast<ErrorStringFn>(dlsym(lib_, "nvmlErrorString"));
    if (!init || !shutdown_) {
      why_ = "NVML not available (libnvidia-ml.so.1 lacks nvmlInit_v2 or nvmlShutdown)";
      return;
    }
    if (const int r = init(); r != kSuccess) {
      why_ = "NVML did not initialize (nvmlInit_v2: " + error(r) + ")";
      return;
    }
    ready_ = true;
  }
  ~Library() {
    if (ready_) shutdown_();  // its result does not matter at exit
  }
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  const std::string& why() const { return why_; }
  void* symbol(const char* name) const { return ready_ ? dlsym(lib_, name) : nullptr; }
  std::string error(int r) const {
    const char* s = error_string_ ? error_string_(r) : nullptr;
    return (s ? std::string(s) : std::string("error")) + " " + std::to_string(r);
  }

 private:
  void* lib_ = nullptr;
  InitFn shutdown_ = nullptr;
  ErrorStringFn error_string_ = nullptr;
  bool ready_ = false;
  std::string why_;
};

Library& library() {
  static Library lib;  // C++11 magic static: initialized once, thread-safe
  return lib;
}

// The clock-event reasons function, resolved once: the new name (NVML 12.2 on), else the old one.
ReasonsFn reasons_fn() {
  static const ReasonsFn fn = [] {
    auto f = function<ReasonsFn>("nvmlDeviceGetCurrentClocksEventReasons");
    return f ? f : function<ReasonsFn>("nvmlDeviceGetCurrentClocksThrottleReasons");
  }();
  return fn;
}

ClockFn clock_fn() {
  static const ClockFn fn = function<ClockFn>("nvmlDeviceGetClockInfo");
  return fn;
}

double now_ms() {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

const std::string& unavailable_reason() { return library().why(); }

void* symbol(const char* name) { return library().symbol(name); }

std::string driver_version() {
  auto version = function<VersionFn>("nvmlSystemGetDriverVersion");
  char buf[kVersionBufferBytes] = {};
  if (!version || version(buf, sizeof buf) != kSuccess) return {};
  return buf;
}

bool power_limit_watts(Device dev, double* watts) {
  using LimitFn = int (*)(Device, unsigned*);
  static const LimitFn fn = function<LimitFn>("nvmlDeviceGetEnforcedPowerLimit");
  unsigned mw = 0;
  if (!dev || !fn || fn(dev, &mw) != kSuccess || mw == 0) return false;
  *watts = mw / 1000.0;
  return true;
}

bool module_id(Device dev, unsigned* id) {
  using ModuleFn = int (*)(Device, unsigned*);
  static const ModuleFn fn = function<ModuleFn>("nvmlDeviceGetModuleId");
  unsigned v = 0;
  if (!dev || !fn || fn(dev, &v) != kSuccess) return false;
  *id = v;
  return true;
}

bool total_energy_mj(Device dev, unsigned long long* mj) {
  using EnergyFn = int (*)(Device, unsigned long long*);
  static const EnergyFn fn = function<EnergyFn>("nvmlDeviceGetTotalEnergyConsumption");
  unsigned long long v = 0;
  if (!dev || !fn || fn(dev, &v) != kSuccess) return false;
  *mj = v;
  return true;
}

bool power_usage_mw(Device dev, unsigned* mw) {
  using PowerFn = int (*)(Device, unsigned*);
  static const PowerFn fn = function<PowerFn>("nvmlDeviceGetPowerUsage");
  unsigned v = 0;
  if (!dev || !fn || fn(dev, &v) != kSuccess) return false;
  *mw = v;
  return true;
}

namespace {
std::string board_string(Device dev, const char* fn_name) {
  using StringFn = int (*)(Device, char*, unsigned);
  const StringFn fn = function<StringFn>(fn_name);
  char buf[96] = {};  // NVML's longest: 80 (part number), 32 (VBIOS version)
  if (!dev || !fn || fn(dev, buf, sizeof buf) != kSuccess) return "";
  buf[sizeof buf - 1] = 0;
  return buf;
}
}  // namespace

std::string vbios_version(Device dev) { return board_string(dev, "nvmlDeviceGetVbiosVersion"); }
std::string board_part_number(Device dev) { return board_string(dev, "nvmlDeviceGetBoardPartNumber"); }

Device device_handle(int cuda_device, std::string* why) {
  static std::mutex m;
  static std::map<int, std::pair<Device, std::string>> cache;  // device -> handle, or why none
  std::lock_guard<std::mutex> lock(m);
  auto it = cache.find(cuda_device);
  if (it == cache.end()) {
    Device dev = nullptr;
    std::string reason = unavailable_reason();
    if (reason.empty()) {
      char bus[32] = {};
      CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device));
      auto by_bus = function<ByStringFn>("nvmlDeviceGetHandleByPciBusId_v2");
      auto by_uuid = function<ByStringFn>("nvmlDeviceGetHandleByUUID");
      int r = by_bus ? by_bus(bus, &dev) : -1;
      if (r != kSuccess && by_uuid) {  // e.g. a bus id NVML writes differently: the UUID is the same
        cudaDeviceProp p{};
        CUDA_CHECK(cudaGetDeviceProperties(&p, cuda_device));
        dev = nullptr;
        r = by_uuid(gpu_uuid_string(p.uuid).c_str(), &dev);
      }
      if (r != kSuccess || !dev) {
        dev = nullptr;
        reason = std::string("NVML has no device at PCI bus id ") + bus + " nor with its UUID";
      }
    }
    it = cache.emplace(cuda_device, std::make_pair(dev, reason)).first;
  }
  if (why) *why = it->second.second;
  return it->second.first;
}

std::string throttle_names(uint64_t reasons) {
  static const std::pair<uint64_t, const char*> names[] = {
      {kReasonSwPowerCap, "sw_power_cap"}, {kReasonHwSlowdown, "hw_slowdown"},   {kReasonSyncBoost, "sync_boost"},
      {kReasonSwThermal, "sw_thermal"},    {kReasonHwThermal, "hw_thermal"},     {kReasonHwPowerBrake, "hw_power_brake"}};
  std::string out;
  for (const auto& [bit, name] : names)
    if (reasons & bit) out += (out.empty() ? "" : ",") + std::string(name);
  return out;
}

bool clock_event_reasons(Device dev, uint64_t* reasons) {
  const ReasonsFn fn = reasons_fn();
  unsigned long long r = 0;
  if (!dev || !fn || fn(dev, &r) != kSuccess) return false;
  *reasons = r;
  return true;
}

bool sm_clock_mhz(Device dev, unsigned* mhz) {
  const ClockFn fn = clock_fn();
  unsigned v = 0;
  if (!dev || !fn || fn(dev, kClockSm, &v) != kSuccess) return false;
  *mhz = v;
  return true;
}

double ClockLog::median_clock_mhz() const {
  if (clocks_mhz.empty()) return 0.0;
  std::vector<double> v = clocks_mhz;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

double ClockLog::min_clock_mhz() const {
  return clocks_mhz.empty() ? 0.0 : *std::min_element(clocks_mhz.begin(), clocks_mhz.end());
}

double settle_device(Device dev, double max_ms) {
  if (!dev) return 0.0;
  return settle([dev](uint64_t* r) { return clock_event_reasons(dev, r); },
                [](double ms) { std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms)); }, max_ms, 5.0);
}

ClockWatch::ClockWatch(int cuda_device, double min_interval_ms)
    : dev_(device_handle(cuda_device)), min_interval_ms_(min_interval_ms) {}

void ClockWatch::read() {
  uint64_t r = 0;
  unsigned mhz = 0;
  if (clock_event_reasons(dev_, &r)) log_.add_reasons(r);
  if (sm_clock_mhz(dev_, &mhz)) log_.add_clock(mhz);
  last_ms_ = now_ms();
  pending_ = false;
}

void ClockWatch::sample() {
  if (!dev_) return;
  pending_ = true;
  if (now_ms() - last_ms_ >= min_interval_ms_) read();
}

void ClockWatch::finish() {
  if (dev_ && pending_) read();
}

}  // namespace mh::nvml

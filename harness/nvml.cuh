// NVML, loaded at run time (dlopen "libnvidia-ml.so.1"), so that nothing links against the driver's
// libraries and a machine without it still runs: every query then says "unavailable" and callers leave
// out what they would have reported. nvml.h is not part of the CUDA toolkit; the few types and
// constants used are declared here as NVML documents them.
//
// The library is opened and nvmlInit_v2 called once per process (a function-local static: thread-safe),
// and shut down at exit. Host code only, no CUDA types: the pure parts are unit-tested without a GPU.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace mh::nvml {

using Device = void*;  // nvmlDevice_t
constexpr int kSuccess = 0;  // NVML_SUCCESS; every nvmlReturn_t other than it is an error

// Why NVML cannot be used in this process ("" when it can): library absent, symbol missing, init failed.
const std::string& unavailable_reason();
inline bool available() { return unavailable_reason().empty(); }

// A function of the loaded library by name (nullptr when NVML is unavailable or lacks it). For callers
// with NVML functions of their own (micro/link.cu: PCIe and NVLink state) on the one shared loader.
void* symbol(const char* name);
template <class Fn>
Fn function(const char* name) {
  return reinterpret_cast<Fn>(symbol(name));
}

// NVML's driver version ("580.159.04"); "" when unavailable.
std::string driver_version();

// The NVML handle of CUDA device `cuda_device`, matched by PCI bus id (then by UUID), never by index:
// CUDA_VISIBLE_DEVICES and CUDA's fastest-first order make CUDA and NVML indices differ. nullptr with
// the reason in *why when there is none. Cached per device.
Device device_handle(int cuda_device, std::string* why = nullptr);

// The power limit the driver enforces on `dev`, in watts (nvmlDeviceGetEnforcedPowerLimit); false when NVML
// cannot tell. Two boards of one model may differ in it (SXM and PCIe forms), and with it in their clocks.
bool power_limit_watts(Device dev, double* watts);

// The board's VBIOS version and part number ("" when NVML cannot tell). Boards of one GPU model differ in
// them (board revision, memory parts); compare.py and the noise profile read them from the context to
// tell such boards apart.
std::string vbios_version(Device dev);
std::string board_part_number(Device dev);

// The board's module position (nvmlDeviceGetModuleId: the SXM slot on a baseboard, 1-8 on an HGX H200); false
// when NVML cannot tell (PCIe boards, older drivers). On the H200s measured, a few hosts were 6-7 % slower on
// large pinned copies than all others: recorded so that runs can show whether the slot (its PCIe switch) goes
// with it.
bool module_id(Device dev, unsigned* id);

// ---- Energy and power ---------------------------------------------------------------------------
// The board's energy counter (nvmlDeviceGetTotalEnergyConsumption: millijoules since the driver was
// loaded, Volta on); false when NVML cannot tell (older GPUs, some virtual machines). The driver updates
// it at intervals of its own: micro/energy.cu measures them.
bool total_energy_mj(Device dev, unsigned long long* mj);
// The board's power draw in milliwatts (nvmlDeviceGetPowerUsage); false when NVML cannot tell. NVML
// documents it as averaged over 1 s on Ampere (but GA100) and newer, instantaneous on GA100 and older.
bool power_usage_mw(Device dev, unsigned* mw);

// ---- Clock-event reasons ("throttle reasons" before NVML 12.2) ------------------------------------
// Bits of nvmlClocksEventReasons (nvmlClocksThrottleReasons), as nvml.h defines them.
constexpr uint64_t kReasonGpuIdle = 0x1;             // nothing running: clocks may idle down
constexpr uint64_t kReasonApplicationsClocks = 0x2;  // held at the applications clocks the admin set
constexpr uint64_t kReasonSwPowerCap = 0x4;          // power draw at the limit: the driver lowers clocks
constexpr uint64_t kReasonHwSlowdown = 0x8;          // hardware slowdown (power brake, temperature)
constexpr uint64_t kReasonSyncBoost = 0x10;          // held down to match another GPU of a sync-boost group
constexpr uint64_t kReasonSwThermal = 0x20;          // temperature: the driver lowers clocks
constexpr uint64_t kReasonHwThermal = 0x40;          // temperature: the hardware halves clocks or more
constexpr uint64_t kReasonHwPowerBrake = 0x80;       // an external power-brake signal
// The reasons that slow a measurement down for causes outside the code measured (power, thermal and
// the group's clocks). Idle and applications clocks are a GPU's normal states, not throttling.
constexpr uint64_t kThrottleMask = kReasonSwPowerCap | kReasonHwSlowdown | kReasonSyncBoost | kReasonSwThermal |
                                   kReasonHwThermal | kReasonHwPowerBrake;
constexpr bool is_throttling(uint64_t reasons) { return (reasons & kThrottleMask) != 0; }
// The throttling reasons by name, comma-separated ("sw_power_cap,hw_thermal"); "" when none.
std::string throttle_names(uint64_t reasons);

// The current clock-event reasons of `dev` (nvmlDeviceGetCurrentClocksEventReasons, or on older drivers
// nvmlDeviceGetCurrentClocksThrottleReasons); false when NVML cannot tell.
bool clock_event_reasons(Device dev, uint64_t* reasons);
// The current SM clock of `dev` in MHz (nvmlDeviceGetClockInfo, NVML_CLOCK_SM); false when NVML cannot tell.
bool sm_clock_mhz(Device dev, unsigned* mhz);

// What one repetition saw: the union of the clock-event reasons read and the SM clocks read. Pure.
struct ClockLog {
  uint64_t reasons = 0;
  int reason_reads = 0;
  std::vector<double> clocks_mhz;

  void add_reasons(uint64_t r) {
    reasons |= r;
    ++reason_reads;
  }
  void add_clock(double mhz) { clocks_mhz.push_back(mhz); }
  bool has_reasons() const { return reason_reads > 0; }
  bool throttled() const { return is_throttling(reasons); }
  bool has_clock() const { return !clocks_mhz.empty(); }
  double median_clock_mhz() const;  // the median reading (mean of the middle two for an even count); 0 when none
  double min_clock_mhz() const;     // the lowest reading: a dip the median hides; 0 when none
};

// Waits until no throttling reason is reported (is_throttling) or `max_ms` have passed, reading the reasons
// with `read` (false: NVML cannot tell, so no wait) and sleeping `step_ms` between reads with `sleep_ms`.
// -> milliseconds waited (0 when the first read is clear). Pure given its two functions: unit-tested.
template <class Read, class Sleep>
double settle(Read&& read, Sleep&& sleep_ms, double max_ms, double step_ms) {
  double waited = 0;
  uint64_t r = 0;
  while (waited < max_ms && read(&r) && is_throttling(r)) {
    const double step = step_ms < max_ms - waited ? step_ms : max_ms - waited;
    sleep_ms(step);
    waited += step;
  }
  return waited;
}

// settle() on `dev` with NVML and the wall clock, 5 ms a step. Before a repetition, so that it does not
// start at the clocks a previous benchmark's power draw left (the driver's power cap lifts with a lag: on
// H200s a one-thread chase right after an HBM sweep ran at 1720-1735 MHz instead of 1980).
double settle_device(Device dev, double max_ms);

// Reads the reasons and the SM clock of one CUDA device into a ClockLog, at most once per
// `min_interval_ms` of wall time (an NVML query costs microseconds; a batch may be shorter), and always
// on the first sample() and on finish() when a batch went unread. Does nothing when NVML is unavailable.
class ClockWatch {
 public:
  explicit ClockWatch(int cuda_device, double min_interval_ms = 1.0);
  void sample();  // after a timed batch, outside its events
  void finish();  // after the last batch
  const ClockLog& log() const { return log_; }

 private:
  void read();
  Device dev_ = nullptr;
  double min_interval_ms_;
  double last_ms_ = -1e300;
  bool pending_ = false;  // a batch ran since the last read
  ClockLog log_;
};

}  // namespace mh::nvml

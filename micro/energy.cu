#include "micro/energy.cuh"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "harness/cuda_check.cuh"

namespace mh::energy {

// ---- Arithmetic ---------------------------------------------------------------------------------

std::vector<Reading> edges(const std::vector<Reading>& readings) {
  std::vector<Reading> out;
  for (size_t i = 1; i < readings.size(); ++i)
    if (readings[i].mj != readings[i - 1].mj) out.push_back({0.5 * (readings[i - 1].t_s + readings[i].t_s), readings[i].mj});
  return out;
}

double counter_period_ms(const std::vector<Reading>& e) {
  if (e.size() < 2) return 0.0;
  std::vector<double> gaps;
  for (size_t i = 1; i < e.size(); ++i) gaps.push_back(1e3 * (e[i].t_s - e[i - 1].t_s));
  std::sort(gaps.begin(), gaps.end());
  const size_t n = gaps.size();
  return n % 2 ? gaps[n / 2] : 0.5 * (gaps[n / 2 - 1] + gaps[n / 2]);
}

Span between(const Reading& first, const Reading& last) {
  return {1e-3 * static_cast<double>(counter_delta(first.mj, last.mj)), last.t_s - first.t_s};
}

double drift(const std::vector<Reading>& e) {
  if (e.size() < 3) return 0.0;
  const double mid = 0.5 * (e.front().t_s + e.back().t_s);
  size_t k = 1;  // the inner edge nearest the middle
  for (size_t i = 2; i + 1 < e.size(); ++i)
    if (std::fabs(e[i].t_s - mid) < std::fabs(e[k].t_s - mid)) k = i;
  const double first = between(e.front(), e[k]).watts(), second = between(e[k], e.back()).watts();
  return first > 0 ? second / first - 1.0 : 0.0;
}

Span integrate(const std::vector<PowerSample>& s) {
  Span out;
  for (size_t i = 1; i < s.size(); ++i) {
    const double dt = s[i].t_s - s[i - 1].t_s;
    out.joules += 0.5 * (s[i].watts + s[i - 1].watts) * dt;
    out.seconds += dt;
  }
  return out;
}

PerUnit per_unit(const Span& s, double idle_watts, double units) {
  if (units <= 0) return {};
  return {s.joules / units, (s.joules - idle_watts * s.seconds) / units};
}

// ---- Measurement --------------------------------------------------------------------------------

namespace {

constexpr double kPollS = 200e-6;        // between counter reads: edges timed to ~0.3 ms
constexpr double kPowerEveryS = 0.01;    // between power reads
constexpr double kClockEveryMs = 20.0;   // between clock / clock-event reads
constexpr double kEdgeTimeoutS = 2.0;    // past warm-up + window: the counter has stopped moving

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
void sleep_s(double s) { std::this_thread::sleep_for(std::chrono::duration<double>(s)); }

Reading read_counter(nvml::Device dev) {
  const double t0 = now_s();
  unsigned long long mj = 0;
  if (!nvml::total_energy_mj(dev, &mj)) throw std::runtime_error("NVML stopped answering nvmlDeviceGetTotalEnergyConsumption");
  return {0.5 * (t0 + now_s()), mj};
}

PowerSample read_power(nvml::Device dev) {
  const double t0 = now_s();
  unsigned mw = 0;
  if (!nvml::power_usage_mw(dev, &mw)) throw std::runtime_error("NVML stopped answering nvmlDeviceGetPowerUsage");
  return {0.5 * (t0 + now_s()), mw * 1e-3};
}

// The samples taken in [t0, t1].
std::vector<PowerSample> within(const std::vector<PowerSample>& s, double t0, double t1) {
  std::vector<PowerSample> out;
  for (const PowerSample& p : s)
    if (p.t_s >= t0 && p.t_s <= t1) out.push_back(p);
  return out;
}

// Events of one window: ev[0] before the first batch, ev[i + 1] after batch i.
class Events {
 public:
  ~Events() {
    for (cudaEvent_t e : ev_) cudaEventDestroy(e);  // at exit or unwinding: nothing to report
  }
  void record() {
    cudaEvent_t e = nullptr;
    CUDA_CHECK(cudaEventCreate(&e));
    ev_.push_back(e);
    CUDA_CHECK(cudaEventRecord(e, nullptr));
  }
  bool done(size_t i) const {
    const cudaError_t r = cudaEventQuery(ev_[i]);
    if (r == cudaErrorNotReady) {  // not an error: no later cudaGetLastError (CUDA_CHECK_LAUNCH) may read it as one
      if (cudaPeekAtLastError() == cudaErrorNotReady) (void)cudaGetLastError();
      return false;
    }
    CUDA_CHECK(r);
    return true;
  }
  double seconds(size_t a, size_t b) const {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, ev_[a], ev_[b]));
    return 1e-3 * ms;
  }
  size_t size() const { return ev_.size(); }
  void sync_last() const { CUDA_CHECK(cudaEventSynchronize(ev_.back())); }

 private:
  std::vector<cudaEvent_t> ev_;
};

// One window's loop: batches of launches kept queue_s ahead of the GPU, NVML read between them.
class Runner {
 public:
  Runner(const Loop& loop, nvml::Device dev, const Plan& plan) : loop_(loop), dev_(dev), plan_(plan), clocks_(plan.cuda_device, kClockEveryMs) {}

  Window run() {
    size_batches();
    t0_ = now_s();
    ev_.record();
    for (;;) {
      top_up();
      poll();
      if (state_ == State::finished) break;
      if (now_s() - t0_ > plan_.warmup_s + plan_.window_s + kEdgeTimeoutS)
        throw std::runtime_error(std::string("the energy ") + (plan_.source == Source::counter ? "counter" : "reading") +
                                 " did not complete a window within " + std::to_string(kEdgeTimeoutS) + " s of its length");
      sleep_s(kPollS);
    }
    ev_.sync_last();  // what is still enqueued runs out
    return result();
  }

 private:
  enum class State { warming, measuring, finished };

  // Launches per batch from one timed launch (after one untimed: clocks and caches).
  void size_batches() {
    loop_.launch();
    Events e;
    e.record();
    loop_.launch();
    e.record();
    e.sync_last();
    pre_launches_ = 2;
    const double launch_s = std::max(e.seconds(0, 1), 1e-6);
    per_batch_ = std::max<long long>(1, std::llround(plan_.batch_s / launch_s));
    depth_ = std::max<size_t>(2, static_cast<size_t>(std::ceil(plan_.queue_s / (per_batch_ * launch_s))));
  }

  void top_up() {
    while (done_ + 1 < ev_.size() && ev_.done(done_ + 1)) ++done_;  // batch done_ has ended
    const size_t batches = ev_.size() - 1;
    if (state_ == State::measuring && done_ == batches) idled_ = true;  // the queue had run dry
    for (size_t b = batches; b < done_ + depth_; ++b) {
      for (long long i = 0; i < per_batch_; ++i) loop_.launch();
      ev_.record();
    }
  }

  void poll() {
    const double t = now_s();
    if (t - last_power_ >= kPowerEveryS) {  // the source, or the counter's cross-check (optional)
      last_power_ = t;
      unsigned mw = 0;
      if (plan_.source == Source::power)
        power_.push_back(read_power(dev_));
      else if (nvml::power_usage_mw(dev_, &mw))
        power_.push_back({t, mw * 1e-3});
    }
    if (state_ == State::measuring) clocks_.sample();
    if (plan_.source == Source::counter)
      poll_counter(t);
    else
      poll_power(t);
  }

  void poll_counter(double t) {
    readings_.push_back(read_counter(dev_));
    const size_t n = readings_.size();
    if (n < 2 || readings_[n - 1].mj == readings_[n - 2].mj) return;
    const Reading edge{0.5 * (readings_[n - 2].t_s + readings_[n - 1].t_s), readings_[n - 1].mj};
    if (state_ == State::warming && t - t0_ >= plan_.warmup_s) {
      begin(edge.t_s);
      first_reading_ = n - 2;
    } else if (state_ == State::measuring && edge.t_s - w0_ >= plan_.window_s) {
      end(edge.t_s);
      last_reading_ = n;
    }
  }

  void poll_power(double t) {
    if (state_ == State::warming && t - t0_ >= plan_.warmup_s)
      begin(t);
    else if (state_ == State::measuring && t - w0_ >= plan_.window_s)
      end(t);
  }

  void begin(double t) {
    state_ = State::measuring;
    w0_ = t;
    b1_ = done_;  // the batch running now: counted from its start
  }
  void end(double t) {
    state_ = State::finished;
    w1_ = t;
    b2_ = std::max(done_ + 1, b1_ + 1);  // through the batch running now (at least one)
    clocks_.finish();
  }

  Window result() {
    Window w;
    if (plan_.source == Source::counter) {
      const std::vector<Reading> e =
          edges(std::vector<Reading>(readings_.begin() + first_reading_, readings_.begin() + last_reading_));
      w.energy = between(e.front(), e.back());
      w.drift = drift(e);
      w.power = integrate(within(power_, std::max(w0_, t0_ + plan_.power_avg_s), w1_));
    } else {
      w.energy = integrate(within(power_, w0_, w1_));
    }
    w.gpu_seconds = ev_.seconds(b1_, b2_);
    w.launches = static_cast<long long>(b2_ - b1_) * per_batch_;
    w.all_launches = pre_launches_ + static_cast<long long>(ev_.size() - 1) * per_batch_;
    w.gpu_idled = idled_;
    w.clocks = clocks_.log();
    return w;
  }

  const Loop& loop_;
  nvml::Device dev_;
  const Plan& plan_;
  nvml::ClockWatch clocks_;
  Events ev_;
  State state_ = State::warming;
  long long per_batch_ = 1, pre_launches_ = 0;
  size_t depth_ = 2, done_ = 0, b1_ = 0, b2_ = 0, first_reading_ = 0, last_reading_ = 0;
  double t0_ = 0, w0_ = 0, w1_ = 0, last_power_ = -1e300;
  bool idled_ = false;
  std::vector<Reading> readings_;
  std::vector<PowerSample> power_;
};

}  // namespace

const char* source_name(Source s) {
  switch (s) {
    case Source::counter: return "counter";
    case Source::power: return "power";
    default: return "none";
  }
}

Source probe(nvml::Device dev, std::string* why) {
  static std::mutex m;
  static std::map<nvml::Device, std::pair<Source, std::string>> cache;
  std::lock_guard<std::mutex> lock(m);
  auto it = cache.find(dev);
  if (it == cache.end()) {
    unsigned long long mj = 0;
    unsigned mw = 0;
    std::pair<Source, std::string> found{Source::none, ""};
    if (!dev)
      found.second = "no NVML device: " + nvml::unavailable_reason();
    else if (nvml::total_energy_mj(dev, &mj))
      found.first = Source::counter;
    else if (nvml::power_usage_mw(dev, &mw))
      found.first = Source::power;
    else
      found.second = "NVML gives neither an energy counter (nvmlDeviceGetTotalEnergyConsumption) nor power readings "
                     "(nvmlDeviceGetPowerUsage) for this GPU";
    it = cache.emplace(dev, found).first;
  }
  if (why) *why = it->second.second;
  return it->second.first;
}

Idle measure_idle(nvml::Device dev, Source source, double pause_s, double measure_s) {
  CUDA_CHECK(cudaDeviceSynchronize());
  sleep_s(pause_s);
  Idle out;
  out.source = source;
  const double t0 = now_s();
  if (source == Source::counter) {
    std::vector<Reading> r;
    int moved = 0;  // edges so far
    while (now_s() - t0 < 4 * measure_s && (now_s() - t0 < measure_s || moved < 3)) {
      r.push_back(read_counter(dev));
      if (r.size() > 1 && r.back().mj != r[r.size() - 2].mj) ++moved;
      sleep_s(kPollS);
    }
    const std::vector<Reading> e = edges(r);
    if (e.size() < 2) {
      out.source = Source::none;
      return out;
    }
    out.watts = between(e.front(), e.back()).watts();
    out.period_ms = counter_period_ms(e);
  } else if (source == Source::power) {
    std::vector<PowerSample> s;
    while (now_s() - t0 < measure_s) {
      s.push_back(read_power(dev));
      sleep_s(kPowerEveryS);
    }
    out.watts = integrate(s).watts();
  }
  return out;
}

Window run_window(const Loop& loop, nvml::Device dev, const Plan& plan) {
  if (plan.source == Source::none) throw std::invalid_argument("run_window: no energy source");
  return Runner(loop, dev, plan).run();
}

}  // namespace mh::energy

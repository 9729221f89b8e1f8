#include "harness/registry.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <set>
#include <memory>
#include <regex>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "harness/cuda_check.cuh"

namespace mh {
namespace {

std::vector<Family>& table() {
  static std::vector<Family> t;  // function-local: safe from static-initialization order
  return t;
}

// SkipWithMessage exists from Google Benchmark 1.8 on; detect it rather than the version.
template <class S, class = void>
struct has_skip_with_message : std::false_type {};
template <class S>
struct has_skip_with_message<S, std::void_t<decltype(std::declval<S&>().SkipWithMessage(std::string()))>>
    : std::true_type {};

template <class S>
void skip_state(S& st, const std::string& reason) {
  if constexpr (has_skip_with_message<S>::value)
    st.SkipWithMessage(reason);
  else
    st.SkipWithError((kSkipPrefix + reason).c_str());
}

// Google Benchmark 1.7 wants const char*, 1.8 std::string; both take a C string.
void error_state(benchmark::State& st, const std::string& what) { st.SkipWithError(what.c_str()); }

// What the run planner registered: every benchmark's name, and the context to add when some run.
struct Registered {
  std::vector<std::string> names;
  std::vector<std::pair<std::string, RunContext>> run_context;  // prefix, entries
};
Registered& registered() {
  static Registered r;
  return r;
}

class RunPlanner final : public Planner {
 public:
  explicit RunPlanner(const DeviceFacts& f) : f_(f) {}
  const DeviceFacts& facts() const override { return f_; }
  Residency residency(const Residency&, const std::function<Residency()>& compiled) const override { return compiled(); }
  void add(const std::string& name, const Launch&, Body body) override {
    auto run = [body = std::move(body)](benchmark::State& st) {
      // One benchmark's failure is that benchmark's: the run goes on (a sticky CUDA error, such as an
      // illegal address, still poisons the context for the benchmarks after it).
      try {
        body(st);
      } catch (const std::exception& e) {
        error_state(st, e.what());
      }
    };
    benchmark::RegisterBenchmark(name.c_str(), run)->UseManualTime()->Unit(benchmark::kMicrosecond);
    registered().names.push_back(name);
  }
  void skip(const std::string& name, const std::string& reason) override {
    std::fprintf(stderr, "gpubench: skipping %s: %s\n", name.c_str(), reason.c_str());
    benchmark::RegisterBenchmark(name.c_str(), [reason](benchmark::State& st) {
      skip_state(st, reason);
      for (auto _ : st) {}  // 1.7 runs the loop once even after a skip; harmless here
    })->UseManualTime()->Unit(benchmark::kMicrosecond);  // no Iterations(): it would add "/iterations:1" to the name
    registered().names.push_back(name);
  }
  void context_when_run(const std::string& prefix, RunContext fn) override {
    registered().run_context.emplace_back(prefix, std::move(fn));
  }
  // Several families may publish the same fact (e.g. l1_smem_per_sm_bytes); Google Benchmark warns on a
  // repeated key, so each key is added once.
  void context(const std::string& key, const std::string& value) override {
    if (context_keys_.insert(key).second) benchmark::AddCustomContext(key, value);
  }

 private:
  const DeviceFacts& f_;
  std::set<std::string> context_keys_;
};

class PrintPlanner final : public Planner {
 public:
  PrintPlanner(const DeviceFacts& f, std::FILE* out) : f_(f), out_(out) {}
  const DeviceFacts& facts() const override { return f_; }
  void add(const std::string& name, const Launch& l, Body) override {
    const std::string why = check_launch(f_, l);
    if (!why.empty()) throw std::logic_error(name + ": planned a launch that cannot run here: " + why);
    std::fprintf(out_, "run   %-60s %s\n", name.c_str(), describe(l).c_str());
    ++added;
  }
  void skip(const std::string& name, const std::string& reason) override {
    std::fprintf(out_, "skip  %-60s %s\n", name.c_str(), reason.c_str());
    ++skipped;
  }
  void context(const std::string& key, const std::string& value) override {
    std::fprintf(out_, "ctx   %-60s %s\n", key.c_str(), value.c_str());
  }
  int added = 0, skipped = 0;

 private:
  const DeviceFacts& f_;
  std::FILE* out_;
};

}  // namespace

bool add_family(const char* name, PlanFn plan) {
  table().push_back({name, plan});
  return true;
}

std::vector<Family> families() {
  std::vector<Family> t = table();
  std::stable_sort(t.begin(), t.end(), [](const Family& a, const Family& b) { return std::strcmp(a.name, b.name) < 0; });
  return t;
}

void plan_all(Planner& p) {
  for (const Family& fam : families()) fam.plan(p);
}

void skip_benchmark(benchmark::State& st, const std::string& reason) { skip_state(st, reason); }

std::function<bool(const std::string&)> filter_predicate(const std::string& filter) {
  std::string spec = filter.empty() || filter == "all" ? "." : filter;
  const bool negative = spec[0] == '-';
  if (negative) spec.erase(0, 1);  // "-all" is then the expression "all", as in Google Benchmark
  try {  // Google Benchmark's std::regex build: extended syntax, searched anywhere in the full name
    auto re = std::make_shared<const std::regex>(spec, std::regex::extended);
    return [re, negative](const std::string& name) { return std::regex_search(name + "/manual_time", *re) != negative; };
  } catch (const std::regex_error&) {
    return [](const std::string&) { return false; };  // Google Benchmark refuses the filter and runs nothing
  }
}

bool filter_selects(const std::string& filter, const std::string& name) { return filter_predicate(filter)(name); }

void add_run_context(const std::string& filter) {
  const auto selects = filter_predicate(filter);  // the expression compiled once, not per name
  for (const auto& [prefix, fn] : registered().run_context) {
    const std::vector<std::string>& names = registered().names;
    const bool selected = std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      return n.rfind(prefix, 0) == 0 && selects(n);
    });
    if (selected)
      for (const auto& [key, value] : fn()) benchmark::AddCustomContext(key, value);
  }
}

Predictions register_all(const DeviceFacts& f) {
  RunPlanner p(f);
  plan_all(p);
  return p.predictions();
}

int print_plan(const DeviceFacts& f, std::FILE* out, Predictions* predictions) {
  PrintPlanner p(f, out);
  plan_all(p);
  std::fprintf(out, "# %s: %d benchmarks planned, %d skipped\n", f.gpu_name.c_str(), p.added, p.skipped);
  if (predictions) *predictions = p.predictions();
  return p.added;
}

void write_predictions(const Predictions& predictions, const std::string& path) {
  // Names and keys are the suite's own ("gemm/naive/m:128/n:128/k:128"): nothing to escape but quotes
  // and backslashes, escaped anyway.
  const auto quoted = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') q += '\\';
      q += c;
    }
    return q + "\"";
  };
  std::string text = "{";
  const char* sep = "\n";
  for (const auto& [name, values] : predictions) {
    text += sep + std::string("  ") + quoted(name) + ": {";
    const char* inner = "";
    for (const auto& [key, v] : values) {
      char num[40] = "null";
      if (std::isfinite(v)) std::snprintf(num, sizeof num, "%.17g", v);
      text += inner + quoted(key) + ": " + num;
      inner = ", ";
    }
    text += "}";
    sep = ",\n";
  }
  text += "\n}\n";
  std::FILE* out = std::fopen(path.c_str(), "w");
  const bool ok = out && std::fwrite(text.data(), 1, text.size(), out) == text.size();
  if (out && std::fclose(out) != 0) throw std::runtime_error(path + ": cannot write the model predictions");
  if (!ok) throw std::runtime_error(path + ": cannot write the model predictions");
}

}  // namespace mh

#include "harness/measure.hpp"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>

#include "harness/diagnostics.hpp"
#include "harness/error.hpp"

namespace rooflab::measure {
namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::atomic<int> g_signal{0};
int g_depth = 0;
struct sigaction g_old_int, g_old_term;
extern "C" void on_signal(int sig) {
  int none = 0;
  g_signal.compare_exchange_strong(none, sig);
}

nlohmann::json num(double x) { return std::isfinite(x) ? nlohmann::json(x) : nlohmann::json(nullptr); }

int64_t runs_for(const Batch& batch, const Policy& p) {
  if (p.runs_per_sample > 0) return p.runs_per_sample;
  if (!(p.min_time_s > 0)) return 1;
  if (p.first_run_s > 0)
    return std::max<int64_t>(1, int64_t(std::ceil(p.min_time_s / std::max(p.first_run_s, 1e-9))));
  return calibrate(batch, p.min_time_s);
}
}  // namespace

// ---- statistics ----------------------------------------------------------------------------
double quantile(std::vector<double> v, double q) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const double x = std::clamp(q, 0.0, 1.0) * double(v.size() - 1);
  const size_t k = size_t(x);
  return k + 1 < v.size() ? v[k] + (x - double(k)) * (v[k + 1] - v[k]) : v[k];
}

Stats stats(const std::vector<double>& v) {
  Stats s;
  s.n = v.size();
  if (v.empty()) return s;
  s.min = *std::min_element(v.begin(), v.end());
  s.max = *std::max_element(v.begin(), v.end());
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / double(v.size());
  s.median = quantile(v, 0.5);
  if (v.size() >= 2) {
    double var = 0;
    for (double x : v) var += (x - s.mean) * (x - s.mean);
    s.stddev = std::sqrt(var / double(v.size() - 1));
    s.cv = s.mean > 0 ? s.stddev / s.mean : NAN;
  }
  return s;
}

std::vector<double> Result::seconds(bool quiet_only) const {
  std::vector<double> v;
  for (const Sample& s : samples)
    if (!quiet_only || s.quiet) v.push_back(s.seconds);
  return v;
}

size_t Result::quiet_count() const {
  return size_t(std::count_if(samples.begin(), samples.end(), [](const Sample& s) { return s.quiet; }));
}

double Result::quiet_fraction() const {
  return samples.empty() ? NAN : double(quiet_count()) / double(samples.size());
}

std::vector<size_t> Result::disturbed() const {
  std::vector<size_t> d;
  for (size_t i = 0; i < samples.size(); ++i)
    if (!samples[i].quiet) d.push_back(i);
  return d;
}

double Result::best() const {
  double quiet = INFINITY, all = INFINITY;
  for (const Sample& s : samples) {
    all = std::min(all, s.seconds);
    if (s.quiet) quiet = std::min(quiet, s.seconds);
  }
  return std::isfinite(quiet) ? quiet : all;
}

nlohmann::json Result::to_json() const {
  const Stats s = stats();
  nlohmann::json quiet = nlohmann::json::array();
  for (const Sample& x : samples) quiet.push_back(x.quiet);
  return {{"samples_s", seconds()},    {"quiet", quiet},          {"disturbed", disturbed()},
          {"runs_per_sample", runs_per_sample}, {"best_s", num(best())}, {"min_s", num(s.min)},
          {"median_s", num(s.median)}, {"cv", num(s.cv)},          {"quiet_fraction", num(quiet_fraction())},
          {"interrupted", interrupted}};
}

// ---- quiet marks ---------------------------------------------------------------------------
QuietMark::QuietMark(const QuietPolicy& q) : q_(q) {}

void QuietMark::wait() {
  if (!q_.mark || !(q_.wait_s > 0)) return;
  double max_s = q_.wait_s;
  if (q_.wait_total_s >= 0) max_s = std::min(max_s, q_.wait_total_s - waited_);
  if (!(max_s > 0)) return;
  const auto t0 = Clock::now();
  diag::wait_quiet(q_.threads, max_s);
  waited_ += since(t0);
}

bool QuietMark::quiet_now() const {
  if (!q_.mark) return true;
  const int r = q_.running ? q_.running() : diag::procs_running();
  return r < 0 || r <= q_.threads;  // unknown counts as quiet, as diag::QuietBudget does
}

void QuietMark::begin() {
  wait();
  before_ = quiet_now();
}

bool QuietMark::end() { return before_ && quiet_now(); }

// ---- the driver ----------------------------------------------------------------------------
int64_t calibrate(const Batch& batch, double min_s, int64_t start) {
  int64_t n = std::max<int64_t>(1, start);
  constexpr int64_t kMax = int64_t(1) << 30;
  while (!Interrupt::requested()) {
    const double dt = batch(n, false);
    if (dt >= min_s || n >= kMax) break;
    n = std::min(kMax, std::max(2 * n, int64_t(std::ceil(double(n) * 1.2 * min_s / std::max(dt, 1e-9)))));
  }
  return n;
}

std::vector<Result> measure_round_robin(const std::vector<Batch>& batches, const Policy& p,
                                        const std::vector<double>& first_run_s) {
  if (!first_run_s.empty() && first_run_s.size() != batches.size())
    throw Error("measure: one first-run time per batch expected");
  if (p.repetitions < 1) throw Error("measure: repetitions must be >= 1, got " + std::to_string(p.repetitions));
  if (!(p.min_time_s >= 0) || !std::isfinite(p.min_time_s))
    throw Error("measure: min time must be a finite number >= 0");
  const size_t n = batches.size();
  std::vector<Result> out(n);
  std::vector<int64_t> runs(n, 0);
  auto stop = [&] {
    for (Result& r : out) r.interrupted = true;
    return out;
  };
  const int most = std::max(p.max_samples, p.repetitions);
  QuietMark mark(p.quiet);
  for (int round = 0; round < most; ++round) {
    auto wanted = [&](size_t i) { return int(out[i].quiet_count()) < p.repetitions; };
    bool any = false;
    for (size_t i = 0; i < n; ++i) any = any || wanted(i);
    if (!any) break;
    if (p.on_round) p.on_round(round);
    mark.wait();
    for (size_t i = 0; i < n; ++i) {
      if (!wanted(i)) continue;
      if (Interrupt::requested()) return stop();
      if (runs[i] == 0) {
        for (int w = 0; w < p.warmup && !Interrupt::requested(); ++w) batches[i](1, true);
        if (Interrupt::requested()) return stop();
        Policy pi = p;
        if (!first_run_s.empty()) pi.first_run_s = first_run_s[i];
        out[i].runs_per_sample = runs[i] = runs_for(batches[i], pi);
      }
      const bool before = mark.quiet_now();
      const double dt = batches[i](runs[i], false);
      const bool after = mark.quiet_now();
      if (Interrupt::requested()) return stop();  // the sample may be cut short: not kept
      out[i].samples.push_back({dt / double(runs[i]), before && after});
    }
  }
  return out;
}

Result measure(const Batch& batch, const Policy& p) { return measure_round_robin({batch}, p).front(); }

Result measure(const std::function<void()>& run, const Policy& p, const std::function<void()>& setup) {
  const Batch batch = [&](int64_t runs, bool warmup) {
    if (warmup) {
      if (setup) setup();
      run();
      return 0.0;
    }
    if (setup) setup();
    const auto t0 = Clock::now();
    for (int64_t r = 0; r < runs && !Interrupt::requested(); ++r) run();
    return since(t0);
  };
  return measure(batch, p);
}

// ---- interruption --------------------------------------------------------------------------
Interrupt::Interrupt() {
  if (g_depth++ > 0) return;
  g_signal = 0;
  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  sigaction(SIGINT, &sa, &g_old_int);
  sigaction(SIGTERM, &sa, &g_old_term);
}

Interrupt::~Interrupt() {
  if (--g_depth > 0) return;
  sigaction(SIGINT, &g_old_int, nullptr);
  sigaction(SIGTERM, &g_old_term, nullptr);
}

bool Interrupt::requested() { return g_signal.load(std::memory_order_relaxed) != 0; }
int Interrupt::signal_number() { return g_signal.load(); }
void Interrupt::request(int sig) { on_signal(sig); }
void Interrupt::clear() { g_signal = 0; }

}  // namespace rooflab::measure

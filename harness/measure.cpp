#include "harness/measure.hpp"

#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <string>

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
  nlohmann::json quiet = nlohmann::json::array(), wait = nlohmann::json::array(), steal = nlohmann::json::array();
  for (const Sample& x : samples)
    quiet.push_back(x.quiet), wait.push_back(num(x.runqueue_wait)), steal.push_back(num(x.steal));
  return {{"samples_s", seconds()},    {"quiet", quiet},          {"disturbed", disturbed()},
          {"runqueue_wait", wait}, {"steal", steal}, {"cpu_utilization", num(cpu_utilization(samples))},
          {"runs_per_sample", runs_per_sample}, {"best_s", num(best())}, {"min_s", num(s.min)},
          {"median_s", num(s.median)}, {"cv", num(s.cv)},          {"quiet_fraction", num(quiet_fraction())},
          {"interrupted", interrupted}};
}

// ---- disturbance ---------------------------------------------------------------------------
double cpu_utilization(const std::vector<Sample>& samples) {
  double busy = 0, wall = 0;
  for (const Sample& x : samples)
    if (std::isfinite(x.cpu_utilization) && x.wall_s > 0) busy += x.cpu_utilization * x.wall_s, wall += x.wall_s;
  return wall > 0 ? busy / wall : NAN;
}

Disturbance disturbance_of(const Result& r, const DisturbanceRule& rule, int threads) {
  std::vector<bool> quiet;
  for (const auto& smp : r.samples) quiet.push_back(smp.quiet);
  return classify(r.seconds(), quiet, rule, cpu_utilization(r.samples), threads);
}

Disturbance classify(const std::vector<double>& seconds, const std::vector<bool>& quiet, const DisturbanceRule& rule,
                     double cpu_utilization, int threads) {
  Disturbance d;
  d.cpu_utilization = cpu_utilization;
  if (seconds.empty()) return d;
  std::vector<std::string> why;
  auto fmt = [](const char* f, double x) {
    char b[64];
    std::snprintf(b, sizeof b, f, x);
    return std::string(b);
  };
  if (!quiet.empty()) {
    const size_t n = size_t(std::count(quiet.begin(), quiet.end(), true));
    d.quiet_fraction = double(n) / double(quiet.size());
    if (d.quiet_fraction < rule.min_quiet_fraction)
      why.push_back("load: " + std::to_string(quiet.size() - n) + " of " + std::to_string(quiet.size()) +
                    " samples ran beside other tasks or lost CPU time (run queue, hypervisor steal)");
  }
  // Threads that did not all run: the process got about one CPU's worth of progress.
  const bool idle = threads >= 2 && cpu_utilization < 1.0 / threads + rule.idle_margin;  // false for NaN
  if (idle)
    why.push_back("threads idle: CPU utilization " + fmt("%.2f", cpu_utilization) + " < " +
                  fmt("%.2f", 1.0 / threads + rule.idle_margin) + " (" + fmt("%.2f", cpu_utilization * threads) +
                  " of " + std::to_string(threads) +
                  " threads busy: hypervisor steal, or fewer threads ran, the library's own behaviour when it stays)");
  const Stats s = stats(seconds);
  d.cv = s.cv;
  d.median = s.median;
  if (s.cv > rule.cv_max) why.push_back("cv " + fmt("%.3g", s.cv) + " > " + fmt("%.3g", rule.cv_max));
  if (s.median > 0 && s.max > rule.outlier * s.median)
    why.push_back("outlier: a sample " + fmt("%.3g", s.max / s.median) + "x the median");
  if (s.min > 0 && s.median > rule.median_over_best * s.min)
    why.push_back("median " + fmt("%.3g", s.median / s.min) + "x the best sample");
  d.disturbed = !why.empty();
  d.idle_only = idle && why.size() == 1;
  for (size_t i = 0; i < why.size(); ++i) d.reason += (i ? "; " : "") + why[i];
  return d;
}

void mark_slower(Disturbance& d, double median, double fastest_before, const DisturbanceRule& rule) {
  if (!(fastest_before > 0) || !(median > rule.median_over_best * fastest_before)) return;
  char b[64];
  std::snprintf(b, sizeof b, "%.3g", median / fastest_before);
  d.reason += std::string(d.reason.empty() ? "" : "; ") + "slower: median " + b +
              "x the fastest sample of an earlier measurement (a slowdown no load probe saw: the host's)";
  d.slower_only = !d.disturbed;
  d.disturbed = d.slower = true;
  d.idle_only = false;
}

bool Disturbance::better_than(const Disturbance& o) const {
  if (disturbed != o.disturbed) return !disturbed;
  // The "slower" mark compares with the fastest sample seen before, which may be a noisy
  // measurement's lucky one: against a disturbed measurement that ran no faster it is no
  // evidence (the case is in tests/core/test_measure.cpp).
  const bool mark_counts = !(median > 0 && o.median > 0 && (slower ? median < o.median : o.median < median));
  if (slower != o.slower && mark_counts) return !slower;
  const double q = std::isnan(quiet_fraction) ? 1 : quiet_fraction, oq = std::isnan(o.quiet_fraction) ? 1 : o.quiet_fraction;
  if (q != oq) return q > oq;
  const double c = std::isnan(cv) ? 0 : cv, oc = std::isnan(o.cv) ? 0 : o.cv;
  return c < oc;
}

// ---- quiet marks ---------------------------------------------------------------------------
QuietMark::QuietMark(const QuietPolicy& q) : q_(q) {}

QuietMark::Counters QuietMark::read() const {
  Counters c;
  if (!q_.mark) return c;
  const bool test = bool(q_.running);  // a test's machine: only its own hooks count
  // One /proc/stat read gives both the runnable tasks and the steal.
  const diag::ProcStat st = test ? diag::ProcStat{} : diag::proc_stat();
  c.running = test ? q_.running() : st.procs_running;
  c.wait_ns = q_.runqueue_wait_ns ? q_.runqueue_wait_ns() : test ? -1 : diag::runqueue_wait_ns();
  c.steal_ticks = q_.steal_ticks ? q_.steal_ticks() : st.steal_ticks;
  c.cpus = q_.steal_ticks ? q_.cpus : st.cpus;
  c.cpu_ns = q_.cpu_ns ? q_.cpu_ns() : test ? -1 : diag::process_cpu_ns();
  return c;
}

void QuietMark::look() {
  c0_ = read();
  before_ = quiet(c0_.running);
  t0_ = Clock::now();
}

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
  return quiet(q_.running ? q_.running() : diag::procs_running());
}

bool QuietMark::quiet(int r) const {
  if (!q_.mark || r < 0 || r <= q_.threads) return true;  // unknown counts as quiet, as diag::QuietBudget does
  if (q_.running) return false;
  // This process's runnable threads beyond the sample's own (a library's helpers spinning after
  // the call) are not another task's load.
  const int own = diag::own_running_threads();
  return r - std::max(0, own - q_.threads) <= q_.threads;
}

bool QuietMark::end() {
  const double dt = since(t0_);
  const Counters c1 = read();  // looked at always: a check is a check (tests count them)
  const double thread_s = dt * std::max(1, q_.threads);
  auto grew = [&](int64_t a, int64_t b) { return a >= 0 && b >= a && dt > 0; };
  wall_s_ = dt;
  wait_fraction_ = grew(c0_.wait_ns, c1.wait_ns) ? double(c1.wait_ns - c0_.wait_ns) * 1e-9 / thread_s : NAN;
  // The counter moves in whole ticks (10 ms): one tick less is what was surely stolen, so a tick
  // that turns over during a short sample does not mark it. The steal is summed over all CPUs:
  // shared out evenly when the sample has fewer threads than the machine has CPUs.
  steal_fraction_ = grew(c0_.steal_ticks, c1.steal_ticks)
                        ? double(std::max<int64_t>(0, c1.steal_ticks - c0_.steal_ticks - 1)) * diag::clock_tick_s() /
                              (dt * std::max({1, q_.threads, c1.cpus}))
                        : NAN;
  utilization_ = grew(c0_.cpu_ns, c1.cpu_ns) ? double(c1.cpu_ns - c0_.cpu_ns) * 1e-9 / thread_s : NAN;
  // false for NaN: unknown is quiet
  const bool lost = wait_fraction_ > q_.max_runqueue_wait || steal_fraction_ > q_.max_runqueue_wait;
  return before_ && quiet(c1.running) && !lost;
}

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
      mark.look();
      const double dt = batches[i](runs[i], false);
      const bool quiet = mark.end();
      if (Interrupt::requested()) return stop();  // the sample may be cut short: not kept
      out[i].samples.push_back({dt / double(runs[i]), quiet, mark.runqueue_wait(), mark.steal(),
                                mark.cpu_utilization(), mark.wall_s()});
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

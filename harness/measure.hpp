#pragma once
// The measurement driver: one idea of warm-up, repetitions, minimum time per sample, quiet
// samples and their statistics for every timing loop in rooflab (bench, knob autotuning,
// RTAMM units and evaluation, counters). A caller hands it what one run is (or how to time a
// batch of runs with its own clock: team barriers, device events) and a Policy; it gets the
// samples back with their disturbance marks, and the statistics over them.
//
//   measure::Policy p;
//   p.repetitions = 5, p.min_time_s = 1e-3, p.quiet.threads = 2;
//   const measure::Result r = measure::measure([&] { kernel(); }, p);
//   r.best(), r.stats().median, r.quiet_fraction(), r.disturbed()
#include <chrono>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rooflab::measure {

// Times `runs` back-to-back runs with the caller's clock and returns their seconds. `warmup`:
// an untimed warm-up call (its result is ignored), so a caller can route it through the same
// code as a timed one (counters tag it apart).
using Batch = std::function<double(int64_t runs, bool warmup)>;

// A sample is quiet when no more tasks than its own threads were runnable just before and just
// after it (diag::procs_running, not counting this process's threads beyond them), its threads
// waited for a CPU (diag::runqueue_wait_ns) at most max_runqueue_wait of their time, and the
// hypervisor stole (diag::proc_stat) at most that fraction of the CPU time the sample could have
// had; on a shared machine the others are marked disturbed.
struct QuietPolicy {
  bool mark = true;          // false: no checks, every sample counts as quiet
  int threads = 1;           // the sample's own threads
  double wait_s = 0;         // before each sample (each round): wait up to this for a quiet machine,
  double wait_total_s = -1;  // and at most this in all per call (< 0: no per-call bound); every
                             // wait also draws from the command's diag::quiet_budget()
  double max_runqueue_wait = 0.05;  // fraction of the sample's thread-time (threads x seconds)
  std::function<int()> running;  // runnable tasks now (default diag::procs_running; a test hook)
  // Default diag::runqueue_wait_ns, or unknown (no check) when `running` is a test's hook.
  std::function<int64_t()> runqueue_wait_ns;
  // Test hooks, unknown by default when `running` is a test's: the steal ticks summed over `cpus`
  // CPUs (default diag::proc_stat), and this process's CPU time (default diag::process_cpu_ns).
  std::function<int64_t()> steal_ticks;
  int cpus = 0;  // with the steal_ticks hook (0: the machine's)
  std::function<int64_t()> cpu_ns;
};

struct Policy {
  int repetitions = 3;        // samples wanted: quiet ones when max_samples > repetitions
  int max_samples = 0;        // > repetitions: sample on until `repetitions` quiet ones or this many
  double min_time_s = 0;      // a sample repeats the run until it lasts at least this
  int64_t runs_per_sample = 0;  // > 0: fixed, no calibration
  double first_run_s = 0;     // > 0: seconds of one run already known (e.g. the verification run):
                              // runs per sample = ceil(min_time_s / first_run_s), no calibration
  int warmup = 1;             // untimed runs before the first sample (calibration comes after)
  QuietPolicy quiet;
  std::function<void(int round)> on_round;  // called before each round of samples (progress lines)
};

struct Sample {
  double seconds = 0;  // per run
  bool quiet = true;
  double runqueue_wait = NAN;  // the fraction of its thread-time spent waiting for a CPU (NaN: unknown)
  // At least this fraction of the CPU time it could have had (wall x max(threads, CPUs)) was stolen
  // by the hypervisor: the steal counter's growth less one tick of its granularity (NaN: unknown).
  double steal = NAN;
  // Its process's CPU time over wall x threads: ~1 when every thread ran throughout (NaN: unknown).
  double cpu_utilization = NAN;
  double wall_s = NAN;  // the sample's wall time, all its runs (weights cpu_utilization)
};
// The samples' CPU utilization, weighted by their wall time; NaN when none is known.
double cpu_utilization(const std::vector<Sample>& samples);

struct Stats {  // over a set of per-run times; NaN where undefined (no sample, cv of one)
  size_t n = 0;
  double min = NAN, max = NAN, mean = NAN, median = NAN, stddev = NAN, cv = NAN;
};
Stats stats(const std::vector<double>& v);
// Linear interpolation between order statistics (q = 0.5: the median; the mean of the two
// middle values for an even count). NaN for an empty set.
double quantile(std::vector<double> v, double q);

struct Result {
  std::vector<Sample> samples;
  int64_t runs_per_sample = 1;
  bool interrupted = false;  // stopped by SIGINT / SIGTERM (see Interrupt) before all samples

  std::vector<double> seconds(bool quiet_only = false) const;
  Stats stats() const { return measure::stats(seconds()); }
  size_t quiet_count() const;
  double quiet_fraction() const;            // NaN without samples
  std::vector<size_t> disturbed() const;    // indices of the samples marked disturbed
  // The fastest quiet sample; the fastest of all when none was quiet; +inf without samples.
  double best() const;
  // {"samples_s", "quiet", "runs_per_sample", "min_s", "median_s", "cv", "quiet_fraction", ...}
  nlohmann::json to_json() const;
};

// One run timed with steady_clock. `setup` (optional) runs untimed before each sample (e.g.
// Instance::reset()).
Result measure(const std::function<void()>& run, const Policy& p, const std::function<void()>& setup = {});
Result measure(const Batch& batch, const Policy& p);
// Several runs measured round robin: sample r of every one before sample r + 1 of any, so that a
// burst of load on a shared machine disturbs all alike. The quiet wait (quiet.wait_s) is once
// per round; each sample is marked on its own. Warm-up and calibration happen in round 0, each
// run's right before its first sample.
// `first_run_s` (optional, one per batch): each batch's own first-run seconds (Policy::first_run_s).
std::vector<Result> measure_round_robin(const std::vector<Batch>& batches, const Policy& p,
                                        const std::vector<double>& first_run_s = {});

// Whether a case's measurement is disturbed (load, a spread-out or far-off sample), from its
// samples (per-run seconds) and their quiet marks. Samples one case apart in time share a cause:
// `rooflab bench` re-measures a disturbed case later and marks what stays disturbed.
struct DisturbanceRule {
  double min_quiet_fraction = 0.5;  // fewer quiet samples: "load"
  double cv_max = 0.10;             // a larger coefficient of variation: "cv"
  double outlier = 1.5;             // a sample above this x the median: "outlier"
  double median_over_best = 1.3;    // the median above this x the fastest sample: "median"
  // A case of T >= 2 threads whose CPU utilization is below 1/T + this ran as if on about one
  // CPU: "threads idle" (steal, or a library that used fewer threads; it may be its real behaviour).
  double idle_margin = 0.1;
};
struct Disturbance {
  bool disturbed = false;
  std::string reason;  // "" when undisturbed; else every rule that fired, "; "-separated
  bool idle_only = false;  // "threads idle" is the only rule that fired
  bool slower = false;     // slower than an earlier measurement of the case (mark_slower)
  bool slower_only = false;  // ... and no other rule fired: the host's speed, not load on this machine
  double quiet_fraction = NAN, cv = NAN, cpu_utilization = NAN, median = NAN;  // median: seconds
  // Of two measurements of one case, whether this one is the better: undisturbed first, then
  // not slower than an earlier one (unless the other, both disturbed, has the higher median),
  // then more quiet samples, then the smaller spread.
  bool better_than(const Disturbance& o) const;
};
// A later measurement of a case whose median is above rule.median_over_best x the fastest sample
// of its earlier measurements (`fastest_before`, seconds): disturbed, "slower", with the reason.
void mark_slower(Disturbance& d, double median, double fastest_before, const DisturbanceRule& rule = {});
// `cpu_utilization` (NaN: unknown) of a case of `threads` threads: the "threads idle" rule.
Disturbance classify(const std::vector<double>& seconds, const std::vector<bool>& quiet,
                     const DisturbanceRule& rule = {}, double cpu_utilization = NAN, int threads = 1);
// classify() over a Result's samples, their quiet marks and CPU utilization.
Disturbance disturbance_of(const Result& r, const DisturbanceRule& rule = {}, int threads = 1);

// The runs per sample so that one sample of `batch` lasts >= min_s: doubling (at least) from
// `start` until it does (at most 2^30 runs).
int64_t calibrate(const Batch& batch, double min_s, int64_t start = 1);

// The quiet checks of one sample as the driver does them, for loops whose inner timing is
// someone else's (Google Benchmark's iteration loop in `rooflab bench`): wait() within the
// policy, look() as the sample starts, end() looks again and says whether it was quiet.
class QuietMark {
 public:
  explicit QuietMark(const QuietPolicy& q);
  void look();            // the sample starts: runnable tasks, run-queue wait, steal, CPU time so far
  bool end();             // the sample ended: quiet or disturbed
  // Of the last end() (Sample's fields); NaN unknown.
  double runqueue_wait() const { return wait_fraction_; }
  double steal() const { return steal_fraction_; }
  double cpu_utilization() const { return utilization_; }
  double wall_s() const { return wall_s_; }
  void wait();            // within quiet.wait_s, what is left of quiet.wait_total_s and the budget
  bool quiet_now() const; // no more runnable tasks than quiet.threads (always true unmarked)

 private:
  struct Counters {  // one look at the machine and the process; -1 where unknown
    int running = -1;
    int64_t wait_ns = -1, steal_ticks = -1, cpu_ns = -1;
    int cpus = 0;
  };
  Counters read() const;
  bool quiet(int running) const;
  QuietPolicy q_;
  bool before_ = true;
  double waited_ = 0;
  Counters c0_;
  std::chrono::steady_clock::time_point t0_;
  double wait_fraction_ = NAN, steal_fraction_ = NAN, utilization_ = NAN, wall_s_ = NAN;
};

// SIGINT / SIGTERM while measuring: the first one sets a flag that the driver checks between
// runs, so a command stops at the next run's end and writes what it has measured; the
// signal's number is kept for the exit status (128 + signal).
class Interrupt {
 public:
  Interrupt();   // installs the handlers (nestable; the outermost restores the previous ones)
  ~Interrupt();
  Interrupt(const Interrupt&) = delete;
  Interrupt& operator=(const Interrupt&) = delete;
  static bool requested();
  static int signal_number();   // 0 when none
  static void request(int sig);  // as if `sig` arrived (tests)
  static void clear();
};

}  // namespace rooflab::measure

#include "harness/bench_driver.hpp"

#include <omp.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "harness/args.hpp"
#include "harness/buffer.hpp"
#include "harness/diagnostics.hpp"
#include "harness/error.hpp"
#include "harness/json_io.hpp"
#include "harness/measure.hpp"
#include "harness/progress.hpp"
#include "roofline/predict.hpp"

namespace rooflab {
namespace fs = std::filesystem;
using json = nlohmann::json;

std::vector<Case> select_cases(const std::string& profile, const std::string& filter,
                               const std::vector<std::string>& names) {
  std::vector<Case> cases;
  if (names.empty()) cases = match_cases(profile, filter);
  else if (!filter.empty()) cases = filter_cases(expand_cases(profile), filter);
  for (const auto& n : names) {  // explicit names are checked up front: bad input, not a failure
    cases.push_back(parse_case_name(n));
    validate_case(cases.back());
  }
  return cases;
}

std::vector<Case> calibration_cases_of(const std::vector<Case>& cases, std::set<std::string>* probes) {
  std::set<std::string> seen;
  for (const Case& c : cases) seen.insert(c.name());
  std::vector<Case> out;
  for (const Case& c : cases) {
    const Family* fam = find_family(c.family);
    if (!fam || !fam->calibration_cases) continue;
    std::vector<Case> shapes = fam->calibration_cases(c);
    const size_t n_core = shapes.size();
    if (probes && fam->overlap_probes)
      for (Case& k : fam->overlap_probes(c)) shapes.push_back(std::move(k));
    for (size_t i = 0; i < shapes.size(); ++i) {
      const Case& k = shapes[i];
      if (!seen.insert(k.name()).second) continue;
      try {
        validate_case(k);
        out.push_back(k);
        if (i >= n_core) probes->insert(k.name());
      } catch (const Error& e) {  // the case is then priced against the compute ceiling, and says so
        std::fprintf(stderr, "warning: no in-core calibration for %s: %s\n", c.name().c_str(), e.what());
      }
    }
  }
  return out;
}

namespace {

// State shared by all registered benchmarks of one run. Google Benchmark calls a benchmark's
// function several times (iteration estimation, repetitions); the instance of the current
// case is kept so data is allocated and verified once per case, and only one case's data
// is alive at a time.
struct RunState {
  std::vector<Case> cases;
  std::vector<json> fields;                 // case_fields per case
  size_t evaluated = 0;                     // cases from this index on are calibration cases
  std::set<std::string> probes;             // the calibration cases that are overlap probes
  std::vector<double> predicted_s;          // console only (--machine); 0 when no prediction
  std::map<size_t, Verification> verified; // per case index
  std::map<size_t, std::string> errors;     // per case index: setup/verification failure
  std::set<std::string> unfinished;         // cases an interrupt cut short or never reached
  std::set<std::string>* dropped = &unfinished;  // this pass's cases without a result (the Tee drops them)
  // Per case, each timed call's sample (time and disturbance marks). Google Benchmark's last
  // `repetitions` calls of a case are its reported repetitions (the calls before them estimate
  // the iterations).
  std::map<size_t, std::vector<measure::Sample>> samples;
  // Re-measuring (passes after the first): the case's place in this pass for the progress lines,
  // and when the retry budget is spent (cases not begun by then keep their first measurement).
  int pass = 0;
  std::map<size_t, size_t> position;
  std::chrono::steady_clock::time_point retry_deadline = std::chrono::steady_clock::time_point::max();
  int fake_disturbed_passes = 0;            // ROOFLAB_TEST_DISTURB_PASSES=N (tests): see run_case
  int round = 1;                            // --rounds: the round being timed
  int fake_slow_round = 0;                  // ROOFLAB_TEST_SLOW_ROUND=R (tests): round R's times x10
  int fake_slow_pass = 0;                   // ROOFLAB_TEST_SLOW_PASS=P (tests): retry P's times x10
  size_t current = SIZE_MAX;
  std::unique_ptr<Instance> instance;
  std::unique_ptr<Progress> progress;
  measure::Policy policy;                   // repetitions / min time go to Google Benchmark
};

constexpr const char* kInterrupted = "interrupted";
// Counters shown with --machine on the console, never written to bench.json.
constexpr const char* kConsoleOnly[] = {"predicted_s", "roofline_eff"};

void run_case(benchmark::State& state, RunState& rs, size_t idx) {
  const Case& c = rs.cases[idx];
  const bool out_of_budget = rs.pass > 0 && rs.current != idx && std::chrono::steady_clock::now() > rs.retry_deadline;
  if (measure::Interrupt::requested() || out_of_budget) {  // not measured (again): absent from this pass
    rs.dropped->insert(c.name());
    state.SkipWithError(out_of_budget ? "retry budget spent" : kInterrupted);
    for (auto _ : state) {}  // Google Benchmark 1.7 requires the loop to be entered
    return;
  }
  const bool first_call = rs.current != idx;
  if (first_call) {
    rs.instance.reset();  // free the previous case's data first
    rs.current = idx;
    rs.progress->start(rs.position.count(idx) ? rs.position[idx] : idx, c.name());
    try {
      validate_case(c);
      rs.instance = variant_of(c).make(c);
      omp_set_num_threads(c.threads);
      Verification v = rs.instance->verify();
      rs.verified[idx] = v;
      if (!v.ok) {
        rs.errors[idx] = v.failure();
        rs.instance.reset();
      }
    } catch (const std::exception& e) {
      rs.errors[idx] = e.what();
      rs.instance.reset();
    }
    if (rs.errors.count(idx)) std::fprintf(stderr, "  FAILED: %s\n", rs.errors[idx].c_str());
  }
  if (rs.errors.count(idx)) {
    state.SkipWithError(rs.errors[idx].c_str());
    for (auto _ : state) {}  // Google Benchmark 1.7 requires the loop to be entered
    return;
  }
  omp_set_num_threads(c.threads);
  rs.instance->reset();
  // The driver takes one sample per call, inside Google Benchmark's iteration loop: Google
  // Benchmark chooses the runs per sample (its min time) and the repetitions, the driver does
  // the warm-up (first call of a case), the quiet marks and the interrupt checks.
  measure::Policy p = rs.policy;
  p.repetitions = 1;
  p.runs_per_sample = int64_t(state.max_iterations);
  p.warmup = first_call ? p.warmup : 0;
  p.quiet.threads = c.threads;
  if (rs.fake_disturbed_passes > 0) {  // the test hook: passes before N loaded, later ones quiet
    const bool loaded = rs.pass < rs.fake_disturbed_passes;
    p.quiet.running = [loaded] { return loaded ? 1 << 20 : 1; };  // no wait hook: wait unknown
  }
  bool cut = false, entered = false;
  const measure::Batch batch = [&](int64_t, bool warmup) {
    if (warmup) {
      rs.instance->run();
      return 0.0;
    }
    entered = true;
    double total = 0;
    for (auto _ : state) {
      if (measure::Interrupt::requested()) {
        cut = true;
        state.SkipWithError(kInterrupted);
        break;
      }
      const auto t0 = std::chrono::steady_clock::now();
      rs.instance->run();
      double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      // The test hooks: a slow host state in that round or retry, which no load probe sees.
      if (rs.fake_slow_round == rs.round || (rs.fake_slow_pass > 0 && rs.fake_slow_pass == rs.pass)) dt *= 10;
      state.SetIterationTime(dt);
      total += dt;
    }
    return total;
  };
  const measure::Result r = measure::measure(batch, p);
  if (cut || r.interrupted || r.samples.empty()) {
    rs.dropped->insert(c.name());
    if (!cut) {  // interrupted before Google Benchmark's loop, or just after its last run
      state.SkipWithError(kInterrupted);
      if (!entered)
        for (auto _ : state) {}  // entered once, never twice (Google Benchmark checks it)
    }
    return;
  }
  const json& f = rs.fields[idx];
  using C = benchmark::Counter;
  state.counters["GFLOPS"] = C(f["flops"].get<double>() / 1e9, C::kIsIterationInvariantRate);
  // Not for a case that moves no bytes (peak): the cv row's 0 / 0 would be a NaN in bench.json.
  if (f["bytes"].get<double>() > 0) state.SetBytesProcessed(int64_t(f["bytes"].get<double>() * double(state.iterations())));
  if (rs.predicted_s[idx] > 0) {
    state.counters["predicted_s"] = C(rs.predicted_s[idx]);
    // predicted/measured time per run == attained/predicted performance.
    state.counters["roofline_eff"] = C(rs.predicted_s[idx], C::kIsIterationInvariantRate);
  }
  rs.samples[idx].push_back(r.samples.front());
}

// Reporters that print and write the canonical rooflab name (Google Benchmark would append
// "/manual_time" to manually timed benchmarks).
template <class Base>
struct CanonicalNames : Base {
  using Base::Base;
  void ReportRuns(const std::vector<benchmark::BenchmarkReporter::Run>& runs) override {
    auto copy = runs;
    for (auto& r : copy) r.run_name.time_type.clear();
    Base::ReportRuns(copy);
  }
};

// The display reporter Google Benchmark is given: the console table, and the JSON document
// kept in memory (no temporary file that an interrupt could leave behind). Cases an interrupt
// cut short are dropped from both: bench.json holds finished measurements only.
class Tee : public benchmark::BenchmarkReporter {
 public:
  Tee(const std::set<std::string>& dropped, bool console_aggregates_only)
      : console_(isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_ColorTabular
                                       : benchmark::ConsoleReporter::OO_Tabular),
        dropped_(dropped),
        console_aggregates_only_(console_aggregates_only) {
    json_.SetOutputStream(&buf_);
    json_.SetErrorStream(&buf_);
  }
  bool ReportContext(const Context& c) override {
    console_.SetOutputStream(&GetOutputStream());
    console_.SetErrorStream(&GetErrorStream());
    return console_.ReportContext(c) && json_.ReportContext(c);
  }
  void ReportRuns(const std::vector<Run>& runs) override {
    std::vector<Run> kept;
    for (const Run& r : runs)
      if (!dropped_.count(r.run_name.function_name)) kept.push_back(r);
    if (kept.empty()) return;
    // The roofline counters are for the console only: model.json is the one prediction file.
    std::vector<Run> measured = kept;
    for (Run& r : measured)
      for (const char* k : kConsoleOnly) r.counters.erase(k);
    json_.ReportRuns(measured);
    // --benchmark_display_aggregates_only, done here: Google Benchmark would apply it to this
    // reporter's JSON half as well.
    std::vector<Run> shown;
    if (console_aggregates_only_)
      for (const Run& r : kept)
        if (r.run_type == Run::RT_Aggregate) shown.push_back(r);
    console_.ReportRuns(shown.empty() ? kept : shown);
  }
  void Finalize() override {
    console_.Finalize();
    json_.Finalize();
  }
  std::string json_text() const { return buf_.str(); }

 private:
  CanonicalNames<benchmark::ConsoleReporter> console_;
  CanonicalNames<benchmark::JSONReporter> json_;
  std::ostringstream buf_;
  const std::set<std::string>& dropped_;
  bool console_aggregates_only_;
};

std::vector<char*> make_argv(std::vector<std::string>& storage) {
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  return argv;
}
}  // namespace

BenchFlags parse_benchmark_flags(const std::vector<std::string>& args) {
  BenchFlags f;
  auto bad = [](const std::string& arg, const std::string& what) -> args::UsageError {
    return args::UsageError(arg + ": " + what);
  };
  for (const std::string& a : args) {
    if (a.rfind("--benchmark_", 0) != 0) throw bad(a, "not a Google Benchmark flag (--benchmark_*)");
    const size_t eq = a.find('=');
    const std::string key = a.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const bool has_value = eq != std::string::npos;
    const std::string v = has_value ? a.substr(eq + 1) : "";
    auto need_value = [&] {
      if (!has_value || v.empty()) throw bad(a, "needs a value (--" + key + "=VALUE)");
    };
    auto boolean = [&] {
      static const std::set<std::string> ok = {"true", "false", "1", "0", "yes", "no", "on", "off"};
      if (has_value && !ok.count(v)) throw bad(a, "must be true or false, got '" + v + "'");
    };
    auto one_of = [&](const std::set<std::string>& ok, const std::string& list) {
      need_value();
      if (!ok.count(v)) throw bad(a, "must be one of " + list + ", got '" + v + "'");
    };
    if (key == "benchmark_repetitions") {
      need_value();
      char* end = nullptr;
      errno = 0;
      const long n = std::strtol(v.c_str(), &end, 10);
      if (*end || errno || n < 1 || n > 100000)
        throw bad(a, "must be an integer in 1..100000, got '" + v + "'");
      f.repetitions = int(n);
      continue;
    }
    if (key == "benchmark_min_time" || key == "benchmark_min_warmup_time") {
      need_value();
      std::string num = v;
      if (num.size() > 1 && num.back() == 's') num.pop_back();  // Google Benchmark 1.8's "0.5s"
      char* end = nullptr;
      const double x = std::strtod(num.c_str(), &end);
      const bool warm = key == "benchmark_min_warmup_time";
      if (!num.empty() && num.back() == 'x')
        throw bad(a, "an iteration count ('x') is not supported: rooflab times seconds (e.g. 0.5)");
      if (*end || num.empty() || !std::isfinite(x) || (warm ? x < 0 : x <= 0) || x > 86400)
        throw bad(a, std::string("must be a number of seconds ") + (warm ? ">= 0" : "> 0") + ", got '" + v + "'");
      (warm ? f.min_warmup_time_s : f.min_time_s) = x;
      continue;
    }
    if (key.rfind("benchmark_out", 0) == 0)
      throw bad(a, "set by rooflab (bench.json goes to --out DIR)");
    if (key == "benchmark_list_tests" || key == "benchmark_report_aggregates_only" ||
        key == "benchmark_display_aggregates_only" || key == "benchmark_enable_random_interleaving" ||
        key == "benchmark_counters_tabular")
      boolean();
    else if (key == "benchmark_format")
      one_of({"console", "json", "csv"}, "console, json, csv");
    else if (key == "benchmark_color")
      one_of({"auto", "true", "false", "yes", "no", "1", "0"}, "auto, true, false");
    else if (key == "benchmark_time_unit")
      one_of({"ns", "us", "ms", "s"}, "ns, us, ms, s");
    else if (key == "benchmark_filter" || key == "benchmark_perf_counters" || key == "benchmark_context")
      need_value();
    else
      throw bad(a, "unknown Google Benchmark flag (known: --benchmark_repetitions, --benchmark_min_time, "
                   "--benchmark_min_warmup_time, --benchmark_filter, --benchmark_list_tests, "
                   "--benchmark_display_aggregates_only, --benchmark_report_aggregates_only, "
                   "--benchmark_enable_random_interleaving, --benchmark_counters_tabular, --benchmark_format, "
                   "--benchmark_color, --benchmark_time_unit, --benchmark_perf_counters, --benchmark_context)");
    auto truthy = [&] { return !has_value || v == "true" || v == "1" || v == "yes" || v == "on"; };
    if (key == "benchmark_display_aggregates_only") {
      f.display_aggregates_only = truthy();
      continue;
    }
    if (key == "benchmark_filter") f.filter = v;
    if (key == "benchmark_list_tests") f.list_tests = truthy();
    f.passed.push_back(a);
  }
  return f;
}

int run_bench(const BenchOptions& opt) {
  // Every --benchmark_* flag is checked before anything is created or run.
  const BenchFlags flags = parse_benchmark_flags(opt.benchmark_args);
  ensure_writable_dir(opt.out_dir);
  RunState rs;
  rs.cases = select_cases(opt.profile, opt.filter, opt.cases);
  rs.evaluated = rs.cases.size();
  if (opt.calibration != "on" && opt.calibration != "off" && opt.calibration != "auto")
    throw Error("--calibration must be on, off or auto, got '" + opt.calibration + "'");
  const bool calibrate = opt.calibration == "on" ||
                         (opt.calibration == "auto" && opt.cases.empty() &&
                          (opt.profile == "quick" || opt.profile == "paper"));
  if (calibrate)
    for (Case& k : calibration_cases_of(rs.cases, &rs.probes)) rs.cases.push_back(std::move(k));

  std::unique_ptr<roofline::Machine> machine;
  if (!opt.machine.empty()) {
    try {
      machine = std::make_unique<roofline::Machine>(roofline::load_machine(opt.machine));
    } catch (const Error& e) {
      std::fprintf(stderr, "warning: no roofline efficiency on the console: %s\n", e.what());
    }
  }
  for (const Case& c : rs.cases) {
    json f;
    double predicted = 0;
    try {
      f = case_fields(c);
      // Timed for the model's in-core time only: `rooflab model` never evaluates it.
      f["calibration"] = rs.fields.size() >= rs.evaluated;
      if (f["calibration"].get<bool>()) f["calibration_probe"] = rs.probes.count(c.name()) > 0;
      if (machine) {
        try {
          const Variant& v = variant_of(c);
          predicted = roofline::predict(v.model(c), *machine, c.threads,
                                        roofline::pricing_isa(runs_isa(c), v.is_baseline() || v.code_path)).time_s;
        } catch (const Error&) {
          // no console efficiency; `rooflab model` records why in model.json
        }
      }
    } catch (const std::exception&) {  // unknown variant etc.: the benchmark reports it
      f = {{"name", c.name()}, {"family", c.family}, {"variant", c.variant}, {"flops", 0.0}, {"bytes", 0.0}};
    }
    rs.predicted_s.push_back(predicted);
    rs.fields.push_back(std::move(f));
  }
  rs.progress = std::make_unique<Progress>("bench", rs.cases.size());
  const int procs = omp_get_num_procs();  // the CPUs this process may run on (its affinity mask)
  std::vector<std::string> env_warnings = diag::environment(procs);
  {
    // More threads than those CPUs: the threads take turns on them, so the time is not a
    // T-thread time (the disturbance rule marks such cases; this says why).
    std::vector<std::string> over;
    for (const Case& c : rs.cases)
      if (c.threads > procs) over.push_back(c.name());
    if (!over.empty())
      env_warnings.push_back(std::to_string(over.size()) + " case(s) ask for more threads than the " +
                             std::to_string(procs) +
                             " CPU(s) this process may run on (its affinity mask: taskset, srun, a "
                             "container's cpuset): their threads share CPUs and their times are not "
                             "T-thread times, e.g. " + over.front());
  }

  // The measurement policy: the profile's defaults, the user's flags over them. smoke checks
  // that every case verifies and runs: short samples are enough. paper waits (within the
  // profile's quiet budget) for a quiet machine before each sample; the others only mark.
  const bool paper = opt.profile == "paper", smoke = opt.profile == "smoke";
  rs.policy.repetitions = flags.repetitions > 0 ? flags.repetitions : paper ? 5 : 3;
  rs.policy.min_time_s = flags.min_time_s > 0 ? flags.min_time_s : paper ? 0.5 : smoke ? 0.02 : 0.1;
  rs.policy.warmup = 1;
  rs.policy.quiet.wait_s = paper ? 0.5 : 0;
  if (diag::quiet_budget().total_s() < 0) diag::set_quiet_budget(diag::default_quiet_budget_s(opt.profile));
  char min_time[64];
  std::snprintf(min_time, sizeof min_time, "--benchmark_min_time=%.17g", rs.policy.min_time_s);
  std::vector<std::string> args = {"rooflab-bench",
                                   "--benchmark_repetitions=" + std::to_string(rs.policy.repetitions),
                                   min_time};
  for (const auto& a : flags.passed) args.push_back(a);
  if (flags.min_warmup_time_s >= 0) args.push_back("--benchmark_min_warmup_time=" + std::to_string(flags.min_warmup_time_s));
  auto argv = make_argv(args);
  int argc = int(args.size());
  benchmark::Initialize(&argc, argv.data());
  if (benchmark::ReportUnrecognizedArguments(argc, argv.data()))
    throw args::UsageError("a --benchmark_* flag this Google Benchmark does not accept (see the message above)");
  auto register_cases = [&rs](const std::vector<size_t>& which) {
    for (size_t i : which)
      benchmark::RegisterBenchmark(rs.cases[i].name().c_str(), [&rs, i](benchmark::State& s) { run_case(s, rs, i); })
          ->UseManualTime()
          ->Unit(benchmark::kMillisecond);
  };
  std::vector<size_t> all(rs.cases.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  register_cases(all);
  if (const char* v = std::getenv("ROOFLAB_TEST_DISTURB_PASSES")) rs.fake_disturbed_passes = std::atoi(v);
  if (const char* v = std::getenv("ROOFLAB_TEST_SLOW_ROUND")) rs.fake_slow_round = std::atoi(v);
  if (const char* v = std::getenv("ROOFLAB_TEST_SLOW_PASS")) rs.fake_slow_pass = std::atoi(v);
  Tee tee(rs.unfinished, flags.display_aggregates_only);
  size_t ran = 0;
  int signal = 0;
  {
    // SIGINT / SIGTERM from here on: stop at the next run's end, write what was measured.
    measure::Interrupt interrupt;
    ran = benchmark::RunSpecifiedBenchmarks(&tee);
    signal = measure::Interrupt::signal_number();
    rs.instance.reset();
    benchmark::ClearRegisteredBenchmarks();

    if (signal)
      rs.progress->done("interrupted by signal " + std::to_string(signal) + ": " +
                        std::to_string(rs.unfinished.size()) + " of " + std::to_string(rs.cases.size()) +
                        " cases not measured");
    else
      rs.progress->done(std::to_string(rs.cases.size() - rs.errors.size()) + " timed, " +
                        std::to_string(rs.errors.size()) + " failed");
    if (flags.list_tests || (ran == 0 && !signal)) benchmark::Shutdown();
    if (flags.list_tests) return 0;  // nothing was run, so there is nothing to write
    if (ran == 0 && !signal)
      throw Error("--benchmark_filter=" + flags.filter + " matches none of the " + std::to_string(rs.cases.size()) +
                  " selected benchmarks");

    std::map<std::string, size_t> by_name;
    for (size_t i = 0; i < rs.cases.size(); ++i) by_name[rs.cases[i].name()] = i;
    auto index_of = [&](const json& b) {
      auto it = by_name.find(b.value("run_name", b.value("name", "")));
      return it == by_name.end() ? SIZE_MAX : it->second;
    };
    // The rooflab fields of one pass's rows, from that pass's marks; returns each measured case's
    // verdict (measure::classify over its reported repetitions).
    const measure::DisturbanceRule rule;
    std::map<size_t, double> medians;  // per case: the median of its last annotated measurement
    std::map<size_t, double> fastest;  // per case: its fastest sample in any measurement so far
    auto median_json = [&](size_t i) { return medians.count(i) ? json(medians[i]) : json(nullptr); };
    auto annotate = [&](json& doc) {
      std::map<size_t, measure::Disturbance> verdicts;
      // Once per case (its repetitions' and aggregates' rows share the fields), and against the
      // samples of earlier passes only: this pass's own spread is the "median" rule's.
      std::map<size_t, json> done;
      const std::map<size_t, double> earlier = fastest;
      for (auto& b : doc["benchmarks"]) {
        const size_t i = index_of(b);
        if (i == SIZE_MAX) continue;
        if (const auto same = done.find(i); same != done.end()) {
          b["rooflab"] = same->second;
          continue;
        }
        json f = rs.fields[i];
        if (auto v = rs.verified.find(i); v != rs.verified.end())
          f["verification"] = {{"ok", v->second.ok}, {"max_err", v->second.max_err},
                               {"tol", v->second.tol}, {"detail", v->second.detail}};
        else
          f["verification"] = nullptr;
        // The repetitions' disturbance marks: quiet = no other task runnable just before and
        // just after the repetition, its threads hardly waited for a CPU during it, and the
        // hypervisor hardly stole; the case's CPU utilization over them (threads that did not run).
        if (auto q = rs.samples.find(i); q != rs.samples.end()) {
          const auto& all = q->second;
          const size_t reps = std::min(all.size(), size_t(std::max(1, b.value("repetitions", rs.policy.repetitions))));
          json quiet = json::array(), wait = json::array(), steal = json::array();
          std::vector<bool> qs;
          std::vector<double> secs;
          auto num = [](double x) { return std::isfinite(x) ? json(x) : json(nullptr); };
          const std::vector<measure::Sample> timed(all.end() - ptrdiff_t(reps), all.end());
          for (const measure::Sample& x : timed) {
            qs.push_back(x.quiet);
            secs.push_back(x.seconds);
            quiet.push_back(x.quiet);
            wait.push_back(num(x.runqueue_wait));
            steal.push_back(num(x.steal));
          }
          measure::Disturbance d =
              measure::classify(secs, qs, rule, measure::cpu_utilization(timed), rs.cases[i].threads);
          medians[i] = measure::stats(secs).median;
          // A later measurement (round, retry) far slower than the case has run before, with
          // every probe quiet, was slowed where the probes do not look (the host: another
          // guest on the same cores); a disturbance only ever slows, so the faster one stands.
          if (const auto seen = earlier.find(i); seen != earlier.end())
            measure::mark_slower(d, medians[i], seen->second, rule);
          if (!secs.empty()) {
            const double best = *std::min_element(secs.begin(), secs.end());
            fastest[i] = fastest.count(i) ? std::min(fastest[i], best) : best;
          }
          // Which loss the "load" rule saw, when it was the hypervisor's (the report lists the reason).
          double stolen = 0;
          for (const measure::Sample& x : timed) stolen = std::isfinite(x.steal) ? std::max(stolen, x.steal) : stolen;
          if (d.disturbed && stolen > rs.policy.quiet.max_runqueue_wait)
            d.reason += "; steal: up to " + std::to_string(int(std::lround(100 * stolen))) +
                        "% of a repetition's CPU time";
          f["quiet"] = quiet;
          f["quiet_fraction"] = d.quiet_fraction;
          f["runqueue_wait"] = wait;
          f["steal"] = steal;
          f["cpu_utilization"] = num(d.cpu_utilization);
          f["disturbed"] = d.disturbed;
          f["disturbed_reason"] = d.reason;
          verdicts[i] = d;
        }
        b["rooflab"] = done[i] = f;
      }
      return verdicts;
    };
    json out = json::parse(tee.json_text());
    std::map<size_t, measure::Disturbance> verdict = annotate(out);
    // A case's rows in `out` replaced by those of a later measurement in `doc` (a round, a retry).
    auto replace_rows = [&](const std::set<size_t>& replace, const json& doc) {
      std::map<size_t, json> fresh;
      for (const auto& b : doc["benchmarks"])
        if (const size_t i = index_of(b); replace.count(i)) fresh[i].push_back(b);
      json merged = json::array();
      std::set<size_t> placed;
      for (const auto& b : out["benchmarks"]) {
        const size_t i = index_of(b);
        if (!replace.count(i)) merged.push_back(b);
        else if (placed.insert(i).second)
          for (const auto& nb : fresh[i]) merged.push_back(nb);
      }
      out["benchmarks"] = merged;
    };

    // The cases with an error row in a later pass's `doc` (their earlier measurement stays).
    auto failed_in = [&](const json& doc) {
      std::set<size_t> failed;
      for (const auto& b : doc["benchmarks"])
        if (b.value("error_occurred", false)) failed.insert(index_of(b));
      return failed;
    };

    // One more pass over `again` (a round or a retry): the rows Google Benchmark wrote, and in
    // `dropped` the cases it did not time (retry budget spent, interrupt).
    auto remeasure = [&](const std::vector<size_t>& again, const std::string& label, std::set<std::string>& dropped) {
      rs.position.clear();
      for (size_t k = 0; k < again.size(); ++k) {
        rs.position[again[k]] = k;
        rs.samples.erase(again[k]);
      }
      rs.dropped = &dropped;
      rs.current = SIZE_MAX;
      rs.progress = std::make_unique<Progress>(label, again.size());
      register_cases(again);
      Tee pass_tee(dropped, flags.display_aggregates_only);
      benchmark::RunSpecifiedBenchmarks(&pass_tee);
      rs.instance.reset();
      benchmark::ClearRegisteredBenchmarks();
      rs.dropped = &rs.unfinished;
      signal = measure::Interrupt::signal_number();
      rs.progress->done();
      return json::parse(pass_tee.json_text());
    };

    // Rounds (--rounds N): the selection timed again, every other round in reverse order, so that
    // neighbouring cases meet the same host states on average. A host whose speed changes for
    // seconds to minutes (another tenant on the core's SMT sibling or in a shared cache) moves a
    // whole measurement, not one sample: its CV stays low and only another round shows it. Each
    // case keeps its best round (undisturbed first, then the lowest median); every round's median
    // goes to bench.json, and a spread over 15% is reported.
    std::map<size_t, json> round_log;
    std::map<size_t, int> round_kept;
    if (opt.rounds > 1) {
      auto log_round = [&](size_t i, int round, const measure::Disturbance& d) {
        round_log[i].push_back({{"round", round}, {"median_s", median_json(i)},
                                {"cv", std::isfinite(d.cv) ? json(d.cv) : json(nullptr)}, {"disturbed", d.disturbed},
                                {"slower_only", d.slower_only}});
      };
      std::map<size_t, double> best_median;
      for (const auto& [i, d] : verdict) {
        log_round(i, 1, d);
        best_median[i] = medians.count(i) ? medians[i] : INFINITY;
        round_kept[i] = 1;
      }
      for (int round = 2; round <= opt.rounds && !signal; ++round) {
        std::vector<size_t> again;
        for (const auto& [i, d] : verdict)
          if (!rs.errors.count(i)) again.push_back(i);
        if (round % 2 == 0) std::reverse(again.begin(), again.end());
        if (again.empty()) break;
        std::fprintf(stderr, "round %d of %d: %zu case%s%s\n", round, opt.rounds, again.size(),
                     again.size() == 1 ? "" : "s", round % 2 == 0 ? ", in reverse order" : "");
        rs.round = round;
        std::set<std::string> dropped;
        medians.clear();
        json doc = remeasure(again, "bench round " + std::to_string(round), dropped);
        const std::map<size_t, measure::Disturbance> now = annotate(doc);
        const std::set<size_t> failed = failed_in(doc);
        std::set<size_t> replace;
        for (size_t i : again) {
          const auto v = now.find(i);
          if (dropped.count(rs.cases[i].name()) || failed.count(i) || v == now.end() || !medians.count(i)) continue;
          log_round(i, round, v->second);
          const measure::Disturbance& was = verdict[i];
          const bool better = v->second.disturbed != was.disturbed ? !v->second.disturbed : medians[i] < best_median[i];
          if (better) {
            verdict[i] = v->second;
            best_median[i] = medians[i];
            round_kept[i] = round;
            replace.insert(i);
          }
        }
        replace_rows(replace, doc);
      }
      rs.round = 1;
    }

    // Re-measuring: a disturbed case is timed again after the others (up to kRetries times,
    // within the profile's retry budget), and its better measurement is kept.
    constexpr int kRetries = 2;
    const double retry_budget_s = paper ? 300 : smoke ? 10 : 60;
    const auto retry_t0 = std::chrono::steady_clock::now();
    rs.retry_deadline = retry_t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                       std::chrono::duration<double>(retry_budget_s));
    std::map<size_t, int> retries, kept_retry;  // re-measurements; the one whose rows are kept
    std::map<size_t, json> retry_log;           // per case, each re-measurement's median and verdict
    for (int attempt = 1; attempt <= kRetries && !signal; ++attempt) {
      std::vector<size_t> again;
      for (const auto& [i, d] : verdict)
        if (d.disturbed && !rs.errors.count(i)) again.push_back(i);
      if (again.empty() || std::chrono::steady_clock::now() > rs.retry_deadline) break;
      std::fprintf(stderr, "re-measuring %zu disturbed case%s (retry %d of %d)\n", again.size(),
                   again.size() == 1 ? "" : "s", attempt, kRetries);
      // Later, and on a quieter machine if it gets quiet soon (within the retry budget).
      diag::wait_quiet(1, std::min(rs.retry_deadline, std::chrono::steady_clock::now() + std::chrono::seconds(5)));
      rs.pass = attempt;
      std::set<std::string> dropped;
      json doc = remeasure(again, "bench retry " + std::to_string(attempt), dropped);
      const std::map<size_t, measure::Disturbance> now = annotate(doc);
      const std::set<size_t> failed = failed_in(doc);
      std::set<size_t> replace;
      for (size_t i : again) {
        if (dropped.count(rs.cases[i].name())) continue;  // not timed again (budget, interrupt)
        ++retries[i];
        const auto v = now.find(i);
        if (v == now.end()) continue;
        const bool kept = !failed.count(i) && v->second.better_than(verdict[i]);
        retry_log[i].push_back({{"retry", attempt}, {"median_s", median_json(i)},
                                {"disturbed", v->second.disturbed}, {"reason", v->second.reason}, {"kept", kept}});
        if (kept) {
          verdict[i] = v->second;
          replace.insert(i);
          kept_retry[i] = attempt;
        }
      }
      replace_rows(replace, doc);
    }
    benchmark::Shutdown();
    // A case whose only mark is "threads idle" and that stayed so when measured again later is
    // not disturbed: its threads idle every time (OpenBLAS runs a small GEMM on one thread; a
    // recursion with one task). Its rows stay in the model, claims and figures, with the note.
    for (auto& [i, d] : verdict)
      if (d.idle_only && retries.count(i)) {
        d.disturbed = d.idle_only = false;
        const std::string note = d.reason + " -- the same in " + std::to_string(retries[i]) +
                                 " later measurement(s): the kernel's or library's own behaviour, kept";
        d.reason.clear();
        for (auto& b : out["benchmarks"])
          if (index_of(b) == i && b.contains("rooflab"))
            b["rooflab"]["disturbed"] = false, b["rooflab"]["disturbed_reason"] = "", b["rooflab"]["threads_idle"] = note;
      }
    std::vector<std::string> still;
    for (auto& b : out["benchmarks"])
      if (const size_t i = index_of(b); i != SIZE_MAX && b.contains("rooflab")) {
        b["rooflab"]["retries"] = retries.count(i) ? retries[i] : 0;
        if (retry_log.count(i)) b["rooflab"]["retry_log"] = retry_log[i];
        b["rooflab"]["kept_retry"] = kept_retry.count(i) ? kept_retry[i] : 0;
      }
    // Each round's median, the round kept and the spread of the rounds' medians (max / min over
    // the undisturbed rounds when two or more are, else over all; a round whose only mark is
    // "slower" counts as undisturbed here: its slowness is the host's change the spread reports).
    constexpr double kRoundSpreadMax = 1.15;
    json varied = json::array();
    std::map<size_t, double> spread_of;
    for (const auto& [i, log] : round_log) {
      std::vector<double> clean, all;
      for (const auto& r : log)
        if (r["median_s"].is_number()) {
          all.push_back(r["median_s"].get<double>());
          if (!r["disturbed"].get<bool>() || r["slower_only"].get<bool>()) clean.push_back(r["median_s"].get<double>());
        }
      const auto& use = clean.size() >= 2 ? clean : all;
      if (use.size() < 2) continue;
      const auto [lo, hi] = std::minmax_element(use.begin(), use.end());
      spread_of[i] = *hi / *lo;
      if (spread_of[i] > kRoundSpreadMax)
        varied.push_back({{"name", rs.cases[i].name()}, {"spread", spread_of[i]}});
    }
    for (auto& b : out["benchmarks"])
      if (const size_t i = index_of(b); round_log.count(i) && b.contains("rooflab")) {
        b["rooflab"]["rounds"] = round_log[i];
        b["rooflab"]["round_kept"] = round_kept[i];
        b["rooflab"]["rounds_spread"] = spread_of.count(i) ? json(spread_of[i]) : json(nullptr);
      }
    if (opt.rounds > 1) {
      out["rounds"] = {{"n", opt.rounds}, {"spread_max", kRoundSpreadMax}, {"varied", varied}};
      if (!varied.empty()) {
        std::fprintf(stderr, "rounds: %zu case%s ran more than %.0f%% apart between rounds (the host's speed changed; "
                     "each keeps its best round, bench.json rooflab.rounds):\n",
                     varied.size(), varied.size() == 1 ? "" : "s", 100 * (kRoundSpreadMax - 1));
        for (const auto& v : varied)
          std::fprintf(stderr, "  %s: %.2fx\n", v["name"].get<std::string>().c_str(), v["spread"].get<double>());
      }
    }
    for (const auto& [i, d] : verdict)
      if (d.disturbed) still.push_back(rs.cases[i].name());
    json retried = json::array(), disturbed = json::array();
    for (const auto& [i, n] : retries) retried.push_back(rs.cases[i].name());
    for (const auto& n : still) disturbed.push_back(n);
    out["disturbance"] = {{"rule", {{"min_quiet_fraction", rule.min_quiet_fraction}, {"cv_max", rule.cv_max},
                                    {"outlier", rule.outlier}, {"median_over_best", rule.median_over_best},
                                    {"idle_margin", rule.idle_margin}}},
                          {"max_retries", kRetries}, {"retry_budget_s", retry_budget_s},
                          {"retry_s", std::chrono::duration<double>(std::chrono::steady_clock::now() - retry_t0).count()},
                          {"retried", retried}, {"disturbed", disturbed}};
    if (out.contains("context") && out["context"].is_object()) {
      out["context"]["omp_wait_policy"] = diag::omp_wait_policy();
      out["context"]["omp_affinity"] = diag::omp_affinity();
      out["context"]["pages"] = page_policy();  // compare with machine.json's host.pages
    }
    out["schema"] = "rooflab.bench/1";
    out["profile"] = opt.profile;
    out["filter"] = opt.filter;
    out["machine"] = machine ? json(fs::absolute(opt.machine).string()) : json(nullptr);
    out["created"] = utc_timestamp();
    out["quiet_budget"] = diag::quiet_budget().to_json();
    out["calibration"] = {{"mode", opt.calibration}, {"cases", rs.cases.size() - rs.evaluated}};
    if (signal) {
      // The cases measured before the signal are complete; the others are absent and named here.
      json names = json::array();
      for (const Case& c : rs.cases)
        if (rs.unfinished.count(c.name())) names.push_back(c.name());
      out["interrupted"] = {{"signal", signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : std::to_string(signal)},
                            {"unfinished", names}};
    }
    // Self-diagnosis: the machine state before the run, then how stable the timings were.
    json diagnostics = env_warnings;
    for (const auto& w : diag::timing(out)) diagnostics.push_back(w);
    if (signal) diagnostics.push_back("interrupted: " + std::to_string(rs.unfinished.size()) + " of " +
                                      std::to_string(rs.cases.size()) + " cases not measured");
    if (!still.empty()) {
      std::string list;
      for (size_t k = 0; k < still.size() && k < 5; ++k) list += (k ? ", " : "") + still[k];
      if (still.size() > 5) list += ", and " + std::to_string(still.size() - 5) + " more";
      diagnostics.push_back(std::to_string(still.size()) + " of " + std::to_string(verdict.size()) +
                            " cases stayed disturbed after re-measuring (marked \"disturbed\" in bench.json; "
                            "the model, claims and figures do not use them as good numbers): " + list);
    }
    for (const auto& w : diagnostics) std::fprintf(stderr, "warning: %s\n", w.get<std::string>().c_str());
    out["diagnostics"] = diagnostics;
    const fs::path dest = opt.out_dir / "bench.json";
    // Written with the handlers still installed: a second signal cannot cut the write short.
    write_json_atomic(dest, out);
    std::fprintf(stderr, "wrote %s%s\n", dest.c_str(), signal ? " (interrupted: the cases measured so far)" : "");
    std::fprintf(stderr, "%zu of %zu cases stayed disturbed (%zu re-measured)\n", still.size(), verdict.size(),
                 retries.size());
  }
  // 128 + signal, as a shell reports a command a signal ended: scripts see the run was stopped.
  if (signal) return 128 + signal;
  return rs.errors.empty() ? 0 : 3;
}

}  // namespace rooflab

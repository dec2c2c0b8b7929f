#include "harness/bench_driver.hpp"

#include <omp.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>

#include "harness/diagnostics.hpp"
#include "harness/error.hpp"
#include "harness/json_io.hpp"
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

json case_fields(const Case& c, const roofline::Machine* machine, std::string* why) {
  json j;
  j["name"] = c.name();
  j["family"] = c.family;
  j["variant"] = c.variant;
  j["isa"] = c.isa == Isa::none ? json(nullptr) : json(std::string(to_string(c.isa)));
  j["dtype"] = std::string(to_string(c.dtype));
  j["dims"] = c.dims;
  json params = json::object();
  for (const auto& [k, v] : c.params) params[k] = v;
  j["params"] = params;
  j["threads"] = c.threads;
  const Model m = variant_of(c).model(c);
  j["flops"] = m.flops;
  j["bytes"] = m.bytes();
  j["working_set"] = m.working_set;
  j["intensity"] = m.bytes() > 0 ? json(m.flops / m.bytes()) : json(nullptr);
  j["compute_ceiling"] = m.compute_ceiling;
  j["model_note"] = m.note;
  json traffic = json::array();
  for (const auto& t : m.traffic) traffic.push_back({{"bytes", t.bytes}, {"kernel", t.kernel}});
  j["traffic"] = traffic;
  j["prediction"] = nullptr;
  if (machine) {
    try {
      j["prediction"] = roofline::to_json(roofline::predict(m, *machine, c.threads));
    } catch (const Error& e) {
      if (why) *why = e.what();
    }
  } else if (why && why->empty()) {
    *why = "no machine.json given (run `rooflab characterize` and pass --machine)";
  }
  if (j["prediction"].is_null() && why) j["prediction_missing"] = *why;
  return j;
}

namespace {

// State shared by all registered benchmarks of one run. Google Benchmark calls a benchmark's
// function several times (iteration estimation, repetitions); the instance of the current
// case is kept so data is allocated and verified once per case, and only one case's data
// is alive at a time.
struct RunState {
  std::vector<Case> cases;
  std::vector<json> fields;                 // case_fields per case
  std::vector<double> predicted_s;          // 0 when no prediction
  std::map<size_t, Verification> verified; // per case index
  std::map<size_t, std::string> errors;     // per case index: setup/verification failure
  size_t current = SIZE_MAX;
  std::unique_ptr<Instance> instance;
  std::unique_ptr<Progress> progress;
};

void run_case(benchmark::State& state, RunState& rs, size_t idx) {
  const Case& c = rs.cases[idx];
  if (rs.current != idx) {
    rs.instance.reset();  // free the previous case's data first
    rs.current = idx;
    rs.progress->start(idx, c.name());
    try {
      validate_case(c);
      rs.instance = variant_of(c).make(c);
      omp_set_num_threads(c.threads);
      Verification v = rs.instance->verify();
      rs.verified[idx] = v;
      if (!v.ok) {
        rs.errors[idx] = "verification failed: max error " + std::to_string(v.max_err) +
                         " > tol " + std::to_string(v.tol) + (v.detail.empty() ? "" : " (" + v.detail + ")");
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
  for (auto _ : state) {
    const auto t0 = std::chrono::steady_clock::now();
    rs.instance->run();
    const auto t1 = std::chrono::steady_clock::now();
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }
  const json& f = rs.fields[idx];
  using C = benchmark::Counter;
  state.counters["GFLOPS"] = C(f["flops"].get<double>() / 1e9, C::kIsIterationInvariantRate);
  state.SetBytesProcessed(int64_t(f["bytes"].get<double>() * double(state.iterations())));
  if (rs.predicted_s[idx] > 0) {
    state.counters["predicted_s"] = C(rs.predicted_s[idx]);
    // predicted/measured time per run == attained/predicted performance.
    state.counters["roofline_eff"] = C(rs.predicted_s[idx], C::kIsIterationInvariantRate);
  }
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

std::vector<char*> make_argv(std::vector<std::string>& storage) {
  std::vector<char*> argv;
  for (auto& s : storage) argv.push_back(s.data());
  argv.push_back(nullptr);
  return argv;
}
}  // namespace

int run_bench(const BenchOptions& opt) {
  ensure_writable_dir(opt.out_dir);
  RunState rs;
  rs.cases = select_cases(opt.profile, opt.filter, opt.cases);

  std::unique_ptr<roofline::Machine> machine;
  std::string why;
  if (!opt.machine.empty()) {
    try {
      machine = std::make_unique<roofline::Machine>(roofline::load_machine(opt.machine));
    } catch (const Error& e) {
      why = e.what();
      std::fprintf(stderr, "warning: no predictions: %s\n", e.what());
    }
  }
  for (const Case& c : rs.cases) {
    std::string w = why;
    json f;
    try {
      f = case_fields(c, machine.get(), &w);
    } catch (const std::exception& e) {  // unknown variant etc.: the benchmark reports it
      f = {{"name", c.name()}, {"family", c.family}, {"variant", c.variant}, {"flops", 0.0},
           {"bytes", 0.0}, {"prediction", nullptr}, {"prediction_missing", e.what()}};
    }
    rs.predicted_s.push_back(f["prediction"].is_null() ? 0.0 : f["prediction"]["time_s"].get<double>());
    rs.fields.push_back(std::move(f));
  }
  rs.progress = std::make_unique<Progress>("bench", rs.cases.size());
  const std::vector<std::string> env_warnings = diag::environment(omp_get_num_procs());

  const fs::path tmp = opt.out_dir / (".bench.gbench." + std::to_string(getpid()) + ".json");
  const bool paper = opt.profile == "paper", smoke = opt.profile == "smoke";
  // Profile defaults first, the user's --benchmark_* flags after them (the last one wins).
  // smoke checks that every case verifies and runs: short samples are enough.
  std::vector<std::string> args = {"rooflab-bench",
                                   paper ? "--benchmark_repetitions=5" : "--benchmark_repetitions=3",
                                   paper  ? "--benchmark_min_time=0.5"
                                   : smoke ? "--benchmark_min_time=0.02"
                                           : "--benchmark_min_time=0.1",
                                   "--benchmark_display_aggregates_only=true",
                                   "--benchmark_out_format=json",
                                   "--benchmark_out=" + tmp.string()};
  for (const auto& a : opt.benchmark_args) {
    if (a.rfind("--benchmark_out", 0) == 0)
      throw Error("--benchmark_out is set by rooflab (use --out DIR)");
    args.push_back(a);
  }
  auto argv = make_argv(args);
  int argc = int(args.size());
  benchmark::Initialize(&argc, argv.data());
  if (benchmark::ReportUnrecognizedArguments(argc, argv.data()))
    throw Error("unrecognized Google Benchmark argument");
  for (size_t i = 0; i < rs.cases.size(); ++i) {
    benchmark::RegisterBenchmark(rs.cases[i].name().c_str(),
                                 [&rs, i](benchmark::State& s) { run_case(s, rs, i); })
        ->UseManualTime()
        ->Unit(benchmark::kMillisecond);
  }
  CanonicalNames<benchmark::ConsoleReporter> display(
      isatty(STDOUT_FILENO) ? benchmark::ConsoleReporter::OO_ColorTabular
                            : benchmark::ConsoleReporter::OO_Tabular);
  CanonicalNames<benchmark::JSONReporter> file;
  benchmark::RunSpecifiedBenchmarks(&display, &file);
  benchmark::Shutdown();
  rs.instance.reset();
  rs.progress->done(std::to_string(rs.cases.size() - rs.errors.size()) + " timed, " +
                    std::to_string(rs.errors.size()) + " failed");

  json out;
  try {
    out = read_json_file(tmp);
  } catch (const Error&) {
    // e.g. --benchmark_list_tests: nothing was run, so there is nothing to write.
    std::error_code ec;
    fs::remove(tmp, ec);
    return 0;
  }
  fs::remove(tmp);
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < rs.cases.size(); ++i) by_name[rs.cases[i].name()] = i;
  for (auto& b : out["benchmarks"]) {
    const std::string name = b.value("run_name", b.value("name", ""));
    auto it = by_name.find(name);
    if (it == by_name.end()) continue;
    json f = rs.fields[it->second];
    if (auto v = rs.verified.find(it->second); v != rs.verified.end())
      f["verification"] = {{"ok", v->second.ok}, {"max_err", v->second.max_err},
                           {"tol", v->second.tol}, {"detail", v->second.detail}};
    else
      f["verification"] = nullptr;
    b["rooflab"] = f;
  }
  out["schema"] = "rooflab.bench/1";
  out["profile"] = opt.profile;
  out["filter"] = opt.filter;
  out["machine"] = machine ? json(fs::absolute(opt.machine).string()) : json(nullptr);
  out["created"] = utc_timestamp();
  // Self-diagnosis: the machine state before the run, then how stable the timings were.
  json diagnostics = env_warnings;
  for (const auto& w : diag::timing(out)) diagnostics.push_back(w);
  for (const auto& w : diagnostics) std::fprintf(stderr, "warning: %s\n", w.get<std::string>().c_str());
  out["diagnostics"] = diagnostics;
  const fs::path dest = opt.out_dir / "bench.json";
  write_json_atomic(dest, out);
  std::fprintf(stderr, "wrote %s\n", dest.c_str());
  return rs.errors.empty() ? 0 : 3;
}

}  // namespace rooflab

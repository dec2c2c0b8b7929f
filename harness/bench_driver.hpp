#pragma once
// `rooflab bench`: registers the selected cases with Google Benchmark, verifies each variant
// before timing it, times it, and writes bench.json (Google Benchmark's schema + rooflab's
// fields, docs/json.md).
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/families.hpp"
#include "roofline/machine.hpp"

namespace rooflab {

struct BenchOptions {
  std::string profile = "quick";
  std::string filter;                       // RE2 regex searched in the case name
  std::vector<std::string> cases;           // explicit names (added to the profile's selection)
  std::filesystem::path out_dir = ".";      // bench.json goes here
  std::filesystem::path machine;            // machine.json: roofline efficiency on the console only (optional)
  std::vector<std::string> benchmark_args;  // --benchmark_* flags passed to Google Benchmark
  // The in-core calibration cases (Family::calibration_cases) timed beside the selection:
  // "on", "off", or "auto" (on for the quick and paper profiles' selections, off for smoke and
  // for runs of --case names only).
  std::string calibration = "auto";
  // Times the whole selection is timed, every other round in reverse order; each case keeps its
  // best round and bench.json records every round's median (rooflab.rounds).
  int rounds = 1;
};

// The calibration cases of `cases` (Family::calibration_cases), each once, none equal to a case
// of `cases` (a calibration is never an evaluated case); a shape the family does not accept is
// left out with a warning on stderr.
// With `probes`: the families' overlap probes (Family::overlap_probes) too, their names added.
std::vector<Case> calibration_cases_of(const std::vector<Case>& cases, std::set<std::string>* probes = nullptr);

// Exit codes: 0 all verified and timed, 3 some variant failed verification or errored
// (reported in bench.json, never timed), 128 + signal when SIGINT / SIGTERM stopped it (bench.json
// then holds the cases finished before, and "interrupted" names the others). Throws args::UsageError
// for bad --benchmark_* flags (before anything runs), Error for other bad options.
int run_bench(const BenchOptions& opt);

// The --benchmark_* flags, checked: repetitions and min time become the measurement policy,
// the others (known to Google Benchmark, valid values) are passed on. Throws args::UsageError naming
// the flag for an unknown flag or an invalid value.
struct BenchFlags {
  int repetitions = 0;            // 0: the profile's
  double min_time_s = 0;          // 0: the profile's
  double min_warmup_time_s = -1;  // < 0: not given
  bool list_tests = false;
  bool display_aggregates_only = true;  // the console shows aggregates only (bench.json has all)
  std::string filter;
  std::vector<std::string> passed;  // the other flags, as given
};
BenchFlags parse_benchmark_flags(const std::vector<std::string>& args);

// The cases a bench run selects (profile + filter + explicit names), validated for naming.
std::vector<Case> select_cases(const std::string& profile, const std::string& filter,
                               const std::vector<std::string>& names);

}  // namespace rooflab

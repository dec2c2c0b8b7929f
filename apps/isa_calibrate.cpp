// `rooflab isa-calibrate`: which ISA each ISA-specific variant should run by default on this
// machine, measured. Each family's calibration cases (Family::isa_cases) run at every ISA this
// CPU supports: all verified first, then timed round robin (a burst of load hits every ISA
// alike). Then each tuning knob of the variant (Family::knobs, e.g. sinkhorn's prefetch target)
// at the chosen ISA, the same way. The result is machine.json's "isa_choice" section
// (machine.isa_choice.json), which the profiles' default-ISA cases and the solvers then follow
// (harness/isa_choice.hpp).
#include <omp.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/commands.hpp"
#include "harness/error.hpp"
#include "harness/families.hpp"
#include "harness/isa_choice.hpp"
#include "harness/machine_cpu.hpp"
#include "harness/json_io.hpp"
#include "harness/measure.hpp"
#include "harness/progress.hpp"
#include "microbench/sysinfo.hpp"

namespace rooflab::cli {
namespace {
using nlohmann::json;

// One ISA of one calibration case: its instance (verified) or why it has none.
struct Contender {
  Case c;
  std::unique_ptr<Instance> inst;
  std::string failed;
};

std::string ms(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g ms", s * 1e3);
  return b;
}

// Verifies each contender, then times the verified ones round robin (a burst of load hits them
// alike); a round disturbed by load is measured again, at most twice: the choice compares the
// contenders, and load that hits them unevenly would decide it instead. Failures go to `failed`.
// Returns (index into cs, result) of each timed contender.
std::vector<std::pair<size_t, measure::Result>> verify_and_time(std::vector<Contender>& cs, const Variant& var,
                                                                measure::Policy p, json& failed) {
  std::vector<measure::Batch> batches;
  std::vector<size_t> timed;
  for (size_t k = 0; k < cs.size(); ++k) {
    try {
      validate_case(cs[k].c);
      cs[k].inst = var.make(cs[k].c);
      const Verification ver = cs[k].inst->verify();
      if (!ver.ok) cs[k].failed = ver.failure();
    } catch (const std::exception& e) {
      cs[k].failed = e.what();
    }
    if (!cs[k].failed.empty()) {
      std::fprintf(stderr, "  FAILED: %s: %s\n", cs[k].c.name().c_str(), cs[k].failed.c_str());
      failed.push_back({{"case", cs[k].c.name()}, {"reason", cs[k].failed}});
      cs[k].inst.reset();
      continue;
    }
    Instance* inst = cs[k].inst.get();
    batches.push_back([inst](int64_t runs, bool) {
      inst->reset();
      const auto t0 = std::chrono::steady_clock::now();
      for (int64_t r = 0; r < runs; ++r) inst->run();
      return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    });
    timed.push_back(k);
  }
  std::vector<std::pair<size_t, measure::Result>> out;
  if (timed.empty()) return out;
  omp_set_num_threads(cs[timed[0]].c.threads);
  p.quiet.threads = cs[timed[0]].c.threads;
  auto disturbed_count = [](const std::vector<measure::Result>& r) {
    size_t n = 0;
    for (const auto& x : r) n += measure::disturbance_of(x).disturbed;
    return n;
  };
  std::vector<measure::Result> rs = measure::measure_round_robin(batches, p);
  for (int again = 0; again < 2 && disturbed_count(rs) > 0 && !measure::Interrupt::requested(); ++again)
    if (auto r2 = measure::measure_round_robin(batches, p); disturbed_count(r2) < disturbed_count(rs)) rs = std::move(r2);
  for (size_t b = 0; b < timed.size(); ++b) out.emplace_back(timed[b], std::move(rs[b]));
  for (Contender& k : cs) k.inst.reset();  // the next contenders' memory
  return out;
}

// One timed contender as the section stores it.
json timing(const Case& c, const measure::Result& r) {
  const measure::Stats st = r.stats();
  return {{"case", c.name()}, {"median_s", st.median}, {"min_s", st.min}, {"cv", st.cv},
          {"quiet_fraction", r.quiet_fraction()}, {"disturbed", measure::disturbance_of(r).reason}};
}
std::string timing_text(const std::string& what, const json& t) {
  return what + " " + ms(t["median_s"].get<double>()) + (t["disturbed"].get<std::string>().empty() ? "" : " (disturbed)");
}
}  // namespace

args::Spec isa_calibrate_spec() {
  return args::Spec("rooflab isa-calibrate",
                    "time every ISA of each ISA-specific variant -> machine.isa_choice.json (machine.json's "
                    "\"isa_choice\"): the profiles then run the fastest, not the widest")
      .path("--machine", args::PathKind::input_file, "FILE", "the machine.json to store the calibration beside (required)")
      .hint("; run `rooflab characterize --out DIR` first")
      .string("--filter", "REGEX", "only the calibration cases whose name matches REGEX")
      .flag("--list", "print the calibration cases (each is timed at every ISA this CPU supports) and stop")
      .integer("--reps", "K", "samples per ISA (median)", 1, 1000, 5)
      .real("--min-time", "S", "seconds per sample at least", 0, 60, 0.05)
      .epilog("A narrower ISA is chosen only when its median beats the widest's by more than 3%; a knob's other value "
              "(sinkhorn mapuot / fused_uv pf:l1) only when it beats the default's by more than 3% at the chosen ISA. "
              "Exit 3 when some case failed verification (it is left out of the choice and listed under \"failed\").");
}

std::vector<Case> isa_calibration_cases(const std::string& filter) {
  std::vector<Case> all;
  for (const Family& f : families())
    if (f.isa_cases)
      for (Case& c : f.isa_cases()) all.push_back(std::move(c));
  return filter_cases(all, filter);
}

int isa_calibrate_run(const args::Values& v) {
  const std::string machine = v.str("--machine");
  const std::vector<Case> cases = isa_calibration_cases(v.str("--filter"));
  if (cases.empty()) throw args::UsageError("--filter '" + v.str("--filter") + "' matches no ISA calibration case");
  if (v.flag("--list")) {
    for (const Case& c : cases) std::printf("%s\n", c.name().c_str());
    return 0;
  }
  if (machine.empty()) throw args::UsageError("--machine FILE is required (the machine.json to store the calibration beside)");
  // A malformed machine.json, or one characterized on another CPU, stops here, before any timing.
  if (const std::string why = foreign_cpu(read_machine_json(machine), machine); !why.empty())
    throw Error(machine + ": " + why + "; an ISA choice is measured beside the machine.json of this CPU (run `rooflab "
                "characterize` here first)");
  measure::Policy p;
  p.repetitions = int(v.integer("--reps"));
  p.min_time_s = v.real("--min-time");
  p.warmup = 1;

  json entries = json::array(), failed = json::array();
  Progress prog("isa-calibrate", cases.size());
  measure::Interrupt interrupt;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& base = cases[i];
    const Variant& var = variant_of(base);
    std::vector<Contender> cs;
    for (Isa isa : supported_isas(var.isas)) {
      Contender k{base, nullptr, ""};
      k.c.isa = isa;
      cs.push_back(std::move(k));
    }
    const std::string label = base.family + "/" + base.variant + "/" + std::string(to_string(base.dtype));
    prog.start(i, label);
    if (cs.size() < 2) {
      std::printf("%-32s %s only: nothing to choose\n", label.c_str(),
                  cs.empty() ? "no ISA" : std::string(to_string(cs[0].c.isa)).c_str());
      continue;
    }
    const auto timed = verify_and_time(cs, var, p, failed);
    if (measure::Interrupt::requested()) break;
    json e = {{"family", base.family}, {"variant", base.variant}, {"dtype", to_string(base.dtype)},
              {"dims", base.dims_string()}, {"threads", base.threads}, {"isas", json::object()}};
    std::string line;
    for (const auto& [k, r] : timed) {
      const std::string isa(to_string(cs[k].c.isa));
      e["isas"][isa] = timing(cs[k].c, r);
      line += timing_text(isa, e["isas"][isa]) + ", ";
    }
    if (e["isas"].size() < 2) continue;  // one ISA verified: nothing measured against it
    const Isa chosen = choose_isa(e);
    Isa widest = Isa::none;
    for (const auto& [k, _] : e["isas"].items()) widest = std::max(widest, *parse_isa(k));
    const double ratio = e["isas"][std::string(to_string(widest))]["median_s"].get<double>() /
                         e["isas"][std::string(to_string(chosen))]["median_s"].get<double>();
    e["chosen"] = to_string(chosen);
    e["widest"] = to_string(widest);
    e["widest_over_chosen"] = ratio;
    char why[64] = "";
    if (chosen != widest)
      std::snprintf(why, sizeof why, " (%.2fx the %s)", ratio, std::string(to_string(widest)).c_str());
    std::printf("%-32s %s -> %s%s\n", label.c_str(), line.substr(0, line.size() - 2).c_str(),
                std::string(to_string(chosen)).c_str(), why);
    std::fflush(stdout);
    // The knobs at the chosen ISA: each value timed round robin against the default (values[0],
    // the case without the parameter).
    Case at = base;
    at.isa = chosen;
    const Family* fam = find_family(base.family);
    for (const Knob& kb : fam && fam->knobs ? fam->knobs(at) : std::vector<Knob>{}) {
      if (kb.values.size() < 2 || measure::Interrupt::requested()) continue;
      std::vector<Contender> ks;
      for (size_t n = 0; n < kb.values.size(); ++n) {
        Contender k{at, nullptr, ""};
        if (n > 0) k.c.params.emplace_back(kb.key, kb.values[n]);
        ks.push_back(std::move(k));
      }
      const auto kt = verify_and_time(ks, var, p, failed);
      if (measure::Interrupt::requested()) break;
      json knob = {{"isa", to_string(chosen)}, {"default", kb.values[0]}, {"values", json::object()}};
      std::string kl;
      for (const auto& [k, r] : kt) {
        const std::string& val = kb.values[k];
        knob["values"][val] = timing(ks[k].c, r);
        kl += timing_text(val, knob["values"][val]) + ", ";
      }
      if (!knob["values"].contains(kb.values[0]) || knob["values"].size() < 2) continue;  // nothing to compare with
      const std::string pick = choose_value(knob);
      knob["chosen"] = pick;
      knob["default_over_chosen"] = knob["values"][kb.values[0]]["median_s"].get<double>() /
                                    knob["values"][pick]["median_s"].get<double>();
      std::printf("%-32s %s at %s: %s -> %s\n", "", kb.key.c_str(), std::string(to_string(chosen)).c_str(),
                  kl.substr(0, kl.size() - 2).c_str(), pick.c_str());
      e["knobs"][kb.key] = std::move(knob);
    }
    if (measure::Interrupt::requested()) break;
    entries.push_back(std::move(e));
  }
  if (measure::Interrupt::requested()) {
    std::fprintf(stderr, "rooflab isa-calibrate: interrupted; %s not written\n",
                 machine_section_path(machine, "isa_choice").string().c_str());
    return 128 + measure::Interrupt::signal_number();
  }
  prog.done();
  const json value = {{"cpu_model", microbench::read_host_info().cpu_model},
                      {"isa_cap", isa_cap() ? json(to_string(*isa_cap())) : json(nullptr)},
                      {"tie_margin", kIsaTieMargin},
                      {"repetitions", p.repetitions},
                      {"min_sample_s", p.min_time_s},
                      {"method", "each ISA verified, then timed round robin; median per run; a narrower ISA is chosen "
                                 "when its median is below the widest's by more than tie_margin; then each knob's "
                                 "values at the chosen ISA, likewise: another value than the default when its "
                                 "median is below the default's by more than tie_margin"},
                      {"entries", entries},
                      {"failed", failed}};
  write_machine_section(machine, "isa_choice", value);
  std::fprintf(stderr, "isa-calibrate: %zu choices -> %s\n", entries.size(),
               machine_section_path(machine, "isa_choice").string().c_str());
  return failed.empty() ? 0 : 3;
}

void use_machine_isa_choice(const std::string& machine, bool report_unreadable) {
  json m;
  try {
    m = read_machine_json(machine);
  } catch (const Error& e) {
    if (report_unreadable)
      std::fprintf(stderr, "warning: no ISA calibration used, the default ISAs are the widest: %s\n", e.what());
    return;
  }
  use_machine_isa_choice(m, machine);
}

void use_machine_isa_choice(const json& m, const std::string& machine) {
  try {
    use_isa_choice(m, machine);
  } catch (const Error& e) {
    std::fprintf(stderr, "warning: %s: no ISA calibration used, the default ISAs are the widest: %s\n", machine.c_str(),
                 e.what());
  }
}

}  // namespace rooflab::cli

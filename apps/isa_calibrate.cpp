// `rooflab isa-calibrate`: which ISA each ISA-specific variant should run by default on this
// machine, measured. Each family's calibration cases (Family::isa_cases) run at every ISA this
// CPU supports: all verified first, then timed round robin (a burst of load hits every ISA
// alike), each ISA at every setting of the variant's tuning knobs (Family::knobs, e.g. sinkhorn's
// prefetch target). The result is machine.json's "isa_choice" section
// (machine.isa_choice.json), which the profiles' default-ISA cases and the solvers then follow
// (harness/isa_choice.hpp).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
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
// Returns each contender's result, empty where it failed.
std::vector<std::optional<measure::Result>> verify_and_time(std::vector<Contender>& cs, const Variant& var,
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
  std::vector<std::optional<measure::Result>> out(cs.size());
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
  for (size_t b = 0; b < timed.size(); ++b) out[timed[b]] = std::move(rs[b]);
  for (Contender& k : cs) k.inst.reset();  // the next contenders' memory
  return out;
}

// Every combination of the knobs' values, as {"<key>": "<value>"}; the first is all defaults
// (values[0]). No knobs: one empty setting.
std::vector<json> knob_settings(const std::vector<Knob>& knobs) {
  std::vector<json> out = {json::object()};
  for (const Knob& k : knobs) {
    std::vector<json> next;
    for (const json& s : out)
      for (const std::string& v : k.values) {
        json t = s;
        t[k.key] = v;
        next.push_back(std::move(t));
      }
    out = std::move(next);
  }
  return out;
}
std::string knobs_text(const json& knobs) {
  std::string t;
  for (const auto& [k, v] : knobs.items()) t += (t.empty() ? "" : " ") + k + ":" + v.get<std::string>();
  return t;
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
      .epilog("Each ISA runs at every setting of the variant's tuning knobs (e.g. sinkhorn mapuot / fused_uv pf:l2|l1) "
              "and keeps the default unless another beats it by more than 3%; a narrower ISA is chosen only when its "
              "median beats the widest's by more than 3%. "
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
    const std::vector<Isa> isas = supported_isas(var.isas);
    const std::string label = base.family + "/" + base.variant + "/" + std::string(to_string(base.dtype));
    prog.start(i, label);
    if (isas.size() < 2) {
      std::printf("%-32s %s only: nothing to choose\n", label.c_str(),
                  isas.empty() ? "no ISA" : std::string(to_string(isas[0])).c_str());
      continue;
    }
    // Every ISA at every setting of its knobs (Family::knobs), all in one round robin.
    const Family* fam = find_family(base.family);
    std::vector<Contender> cs;
    std::vector<json> setting_of;  // per contender: its knob values
    for (Isa isa : isas) {
      Case at = base;
      at.isa = isa;
      const std::vector<Knob> kn = fam && fam->knobs ? fam->knobs(at) : std::vector<Knob>{};
      for (const json& s : knob_settings(kn)) {
        Contender k{at, nullptr, ""};
        for (const Knob& kb : kn)  // a case names only the values that are not the default
          if (const std::string v = s[kb.key].get<std::string>(); v != kb.values[0]) k.c.params.emplace_back(kb.key, v);
        cs.push_back(std::move(k));
        setting_of.push_back(s);
      }
    }
    const auto timed = verify_and_time(cs, var, p, failed);
    if (measure::Interrupt::requested()) break;
    json e = {{"family", base.family}, {"variant", base.variant}, {"dtype", to_string(base.dtype)},
              {"dims", base.dims_string()}, {"threads", base.threads}, {"isas", json::object()}};
    std::string line;
    for (Isa isa : isas) {
      std::vector<double> medians;  // this ISA's settings in order (0: the defaults); NaN: not timed
      std::vector<json> ts;
      for (size_t k = 0; k < cs.size(); ++k) {
        if (cs[k].c.isa != isa) continue;
        const auto& r = timed[k];
        medians.push_back(r ? r->stats().median : std::nan(""));
        ts.push_back(r ? timing(cs[k].c, *r) : json(nullptr));
        if (r && !setting_of[k].empty()) ts.back()["knobs"] = setting_of[k];
      }
      const size_t pick = choose_setting(medians);
      if (pick == SIZE_MAX) continue;  // no setting of this ISA verified
      const std::string name(to_string(isa));
      e["isas"][name] = ts[pick];
      line += timing_text(name, ts[pick]);
      if (ts.size() > 1) {
        e["isas"][name]["settings"] = json::array();
        std::string others;
        for (size_t n = 0; n < ts.size(); ++n) {
          if (ts[n].is_null()) continue;
          e["isas"][name]["settings"].push_back(ts[n]);
          if (n != pick) others += (others.empty() ? "" : ", ") + timing_text(knobs_text(ts[n]["knobs"]), ts[n]);
        }
        line = line + " with " + knobs_text(ts[pick]["knobs"]) + (others.empty() ? "" : " (" + others + ")");
      }
      line += ", ";
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
                      {"method", "each ISA at each setting of its knobs verified, then all timed round robin; median "
                                 "per run; an ISA runs its default setting unless another one's median is below it "
                                 "by more than tie_margin; a narrower ISA is chosen when its median (at its setting) "
                                 "is below the widest's by more than tie_margin"},
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

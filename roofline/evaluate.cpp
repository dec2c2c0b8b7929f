#include "roofline/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "harness/error.hpp"
#include "harness/json_io.hpp"
#include "roofline/calibration.hpp"
#include "roofline/ecm.hpp"
#include "roofline/predict.hpp"

namespace rooflab::roofline {
using json = nlohmann::json;

namespace {
// Google Benchmark's time units. Another unit is an error, never taken as seconds.
double to_seconds(double v, const std::string& unit, const std::string& where) {
  if (unit == "ns") return v * 1e-9;
  if (unit == "us") return v * 1e-6;
  if (unit == "ms") return v * 1e-3;
  if (unit == "s") return v;
  throw Error(where + ": unknown time_unit '" + unit + "' (Google Benchmark writes ns, us, ms or s)");
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Typed reads of bench.json that name the file, the benchmark and the key on a wrong shape.
struct Reader {
  std::string where;
  [[noreturn]] void fail(const std::string& what) const { throw Error(where + ": " + what); }
  const json& object(const json& j, const char* key) const {
    if (!j.contains(key) || !j[key].is_object()) fail(std::string("\"") + key + "\" must be an object");
    return j[key];
  }
  double number(const json& j, const char* key, double fallback) const {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_number() || !std::isfinite(j[key].get<double>()) || j[key].get<double>() < 0)
      fail(std::string("\"") + key + "\" must be a finite number >= 0, got " + j[key].dump());
    return j[key].get<double>();
  }
  std::string string(const json& j, const char* key, const std::string& fallback) const {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_string()) fail(std::string("\"") + key + "\" must be a string, got " + j[key].dump());
    return j[key].get<std::string>();
  }
};

// A list of {bytes, kernel} under `key` ("traffic", or one of ecm_traffic's levels).
std::vector<Traffic> traffic_terms(const json& f, const char* key, const std::string& what, const Reader& rd) {
  std::vector<Traffic> out;
  if (!f.contains(key) || f[key].is_null()) return out;
  if (!f[key].is_array()) rd.fail("\"" + what + "\" must be a list, got " + f[key].dump());
  for (const auto& t : f[key]) {
    if (!t.is_object()) rd.fail("a \"" + what + "\" entry must be an object, got " + t.dump());
    out.push_back({rd.number(t, "bytes", 0.0), rd.string(t, "kernel", "")});
  }
  return out;
}

Model model_from_fields(const json& f, const Reader& rd) {
  Model m;
  m.flops = rd.number(f, "flops", 0.0);
  m.working_set = rd.number(f, "working_set", 0.0);
  m.compute_ceiling = rd.string(f, "compute_ceiling", "");
  m.traffic = traffic_terms(f, "traffic", "traffic", rd);
  // Absent (an older bench.json) or null: no per-level traffic, the ECM falls back.
  if (f.contains("ecm_traffic") && !f["ecm_traffic"].is_null()) {
    const json& all = f["ecm_traffic"];
    if (!all.is_array()) rd.fail("\"ecm_traffic\" must be a list of phases or null, got " + all.dump().substr(0, 60));
    for (const json& e : all) {
      if (!e.is_object()) rd.fail("an \"ecm_traffic\" phase must be an object, got " + e.dump().substr(0, 60));
      LevelTraffic lt;
      lt.l1 = traffic_terms(e, "l1", "ecm_traffic.l1", rd);
      lt.l2 = traffic_terms(e, "l2", "ecm_traffic.l2", rd);
      lt.l3 = traffic_terms(e, "l3", "ecm_traffic.l3", rd);
      lt.mem = traffic_terms(e, "mem", "ecm_traffic.mem", rd);
      lt.note = rd.string(e, "note", "");
      lt.flops = rd.number(e, "flops", 0.0);
      lt.name = rd.string(e, "name", "main");
      m.phases.push_back(lt);
    }
  }
  return m;
}

// Which ISA's compute ceilings price a row (pricing_isa): "isa" when set, else "runs_isa"
// (a run-time dispatch); else a vendor library's code (a baseline, "library" set, or a vendor back
// end, "code_path" set) the widest, rooflab's own code scalar. nullopt: a row without "library" (bench.json of an older rooflab), which cannot tell
// the two apart.
std::optional<Isa> row_pricing_isa(const json& f, const Reader& rd) {
  for (const char* key : {"isa", "runs_isa"}) {
    const std::string isa = rd.string(f, key, "");
    if (isa.empty()) continue;
    const auto i = parse_isa(isa);
    if (!i) rd.fail("\"" + std::string(key) + "\" must be scalar, avx2 or avx512, got \"" + isa + "\"");
    return *i;
  }
  if (!f.contains("library")) return std::nullopt;
  return pricing_isa(Isa::none, !rd.string(f, "library", "").empty() || f.contains("code_path"));
}

// The in-core units of a case (bench.json "core_work"; absent in an older bench.json: its flops).
WorkUnits core_work_of(const json& f, const Reader& rd) {
  WorkUnits w;
  if (!f.contains("core_work") || f["core_work"].is_null()) {
    w["flop"] = rd.number(f, "flops", 0.0);
    return w;
  }
  if (!f["core_work"].is_object()) rd.fail("\"core_work\" must be an object {unit: count}, got " + f["core_work"].dump());
  for (const auto& [u, n] : f["core_work"].items()) w[u] = rd.number(f["core_work"], u.c_str(), 0.0);
  return w;
}

// What a calibration case shares with the cases it calibrates: all but the shape (and the
// family's calibration group, e.g. Floyd-Warshall's row stride).
std::string calibration_key(const json& f) {
  json k = json::array();
  for (const char* key : {"family", "variant", "isa", "runs_isa", "dtype", "params", "threads", "library",
                          "calibration_group"})
    k.push_back(f.contains(key) ? f[key] : json(nullptr));
  return k.dump();
}

bool is_calibration(const json& f, const Reader& rd) {
  if (!f.contains("calibration") || f["calibration"].is_null()) return false;
  if (!f["calibration"].is_boolean()) rd.fail("\"calibration\" must be true or false, got " + f["calibration"].dump());
  return f["calibration"].get<bool>();
}

int threads_of(const json& f, const Reader& rd) {
  if (!f.contains("threads") || f["threads"].is_null()) return 1;
  if (!f["threads"].is_number_integer() || f["threads"].get<int64_t>() < 1 || f["threads"].get<int64_t>() > 1 << 20)
    rd.fail("\"threads\" must be an integer in [1, 1048576], got " + f["threads"].dump());
  return f["threads"].get<int>();
}
// The share of the transfers beyond the fit's level that the kernel does not hide, from its
// overlap probe (calibration.hpp CoreFit::overlap): the probe priced by the fit, its measured
// time against T_core + T_beyond. A probe whose T_beyond is under 5% of its time measures
// nothing (noise) and is not used. A probe prices the cases in its own level and deeper, never
// a shallower one (Sinkhorn's DRAM probe says nothing of its L3 cases); of the usable probes the
// deepest not below `case_level` decides (a DRAM probe before an L3 one for a DRAM case).
void measure_overlap(CoreFit& fit, const std::vector<CalibrationSample>& samples,
                     const std::map<std::string, const json*>& probe_fields, const Machine& machine, int threads,
                     Isa isa, const std::string& file, const std::string& case_level) {
  int best = -1;
  for (const auto& s : samples) {
    if (!s.probe || !probe_fields.count(s.name)) continue;
    const json& f = *probe_fields.at(s.name);
    const Reader rd{file + ": benchmark \"" + s.name + "\""};
    CoreFit full = fit;  // the probe's own in-core time: its units at the fitted costs
    full.overlap = 1;
    full.time_s = fit.price(s.work);
    Ecm e;
    try {
      e = ecm(model_from_fields(f, rd), machine, threads, isa, &full);
    } catch (const Error&) {  // priced as the case is: its own row says why
      continue;
    }
    const int lv = level_index(e.level);
    if (!(e.t_beyond > 0.05 * (e.t_ol + e.t_beyond)) || lv > level_index(case_level) || lv <= best) continue;
    best = lv;
    fit.overlap_measured = (s.time_s - e.t_ol) / e.t_beyond;
    fit.overlap = std::max(fit.overlap_measured, 0.0);
    fit.overlap_probe = s.name;
    fit.overlap_level = e.level;
  }
}
}  // namespace

json accuracy(const json& rows) {
  struct Count { int cases = 0; int roof[2] = {0, 0}; int ecm_n = 0; int ecm[2] = {0, 0}; };
  std::map<std::string, Count> by;
  auto within = [](double predicted, double measured, double tol) {
    return predicted > 0 && std::abs(measured / predicted - 1) <= tol;
  };
  for (const auto& r : rows) {
    if (r["status"] != "ok" || !r["predicted_s"].is_number()) continue;
    if (r.value("calibration", false)) continue;  // timed for the in-core fit, never evaluated
    const double med = r["median_s"].get<double>();
    const std::string fam = r["family"].is_string() ? r["family"].get<std::string>() : std::string("?");
    for (const std::string& key : {fam, std::string("all")}) {
      Count& c = by[key];
      ++c.cases;
      const bool has_ecm = r.contains("ecm") && r["ecm"].is_object();
      if (has_ecm) ++c.ecm_n;
      for (int i = 0; i < 2; ++i) {
        const double tol = i == 0 ? 0.1 : 0.2;
        c.roof[i] += within(r["predicted_s"].get<double>(), med, tol);
        if (has_ecm) c.ecm[i] += within(r["ecm"]["time_s"].get<double>(), med, tol);
      }
    }
  }
  json out = json::object();
  for (const auto& [k, c] : by) {
    auto share = [](int n, int of) { return of > 0 ? json(double(n) / of) : json(nullptr); };
    out[k] = {{"cases", c.cases},
              {"roofline", {{"within_10", share(c.roof[0], c.cases)}, {"within_20", share(c.roof[1], c.cases)}}},
              {"ecm", {{"cases", c.ecm_n}, {"within_10", share(c.ecm[0], c.ecm_n)}, {"within_20", share(c.ecm[1], c.ecm_n)}}}};
  }
  return out;
}

json evaluate(const json& bench, const json* machine_json, const std::filesystem::path& bench_path,
              const std::filesystem::path& machine_path, const ExtraPredictions& extra, const Remodel& remodel) {
  require_schema(bench, "rooflab.bench", 1, bench_path);
  std::optional<Machine> machine;
  if (machine_json) machine = machine_from_json(*machine_json, machine_path);

  // Group Google Benchmark entries by case: per-repetition times, errors, rooflab fields.
  struct Acc { json fields; std::vector<double> times; std::string error; };
  std::vector<std::string> order;
  std::map<std::string, Acc> acc;
  const std::string file = bench_path.empty() ? std::string("bench.json") : bench_path.string();
  if (!bench.contains("benchmarks") || !bench["benchmarks"].is_array())
    throw Error(file + ": \"benchmarks\" must be a list (is this a `rooflab bench` output?)");
  for (const auto& b : bench["benchmarks"]) {
    if (!b.is_object()) throw Error(file + ": a \"benchmarks\" entry must be an object, got " + b.dump());
    if (!b.contains("rooflab")) continue;
    const Reader rd{file + ": benchmark " + (b.contains("name") ? b["name"].dump() : std::string("?"))};
    const json& f = rd.object(b, "rooflab");
    const std::string name = rd.string(f, "name", rd.string(b, "run_name", ""));
    if (name.empty()) rd.fail("no case name (rooflab.name)");
    if (!acc.count(name)) order.push_back(name);
    Acc& a = acc[name];
    a.fields = f;
    if (b.contains("error_occurred") && !b["error_occurred"].is_boolean())
      rd.fail("\"error_occurred\" must be true or false, got " + b["error_occurred"].dump());
    if (b.value("error_occurred", false)) {
      a.error = rd.string(b, "error_message", "error");
    } else if (rd.string(b, "run_type", "") == "iteration") {
      if (!b.contains("real_time")) rd.fail("no \"real_time\"");
      if (!b.contains("time_unit")) rd.fail("no \"time_unit\"");
      a.times.push_back(to_seconds(rd.number(b, "real_time", 0.0), rd.string(b, "time_unit", ""), rd.where));
    }
  }

  // --remodel: the model fields from this build's family table. What ran stays as recorded (the
  // measurements, and "runs_isa" / "library" / "code_path": a run-time dispatch here would pick
  // this host's ISA, not the one of the machine that ran the case).
  std::map<std::string, std::string> remodeled;  // name -> "" (re-derived) or why not
  if (remodel)
    for (const auto& name : order) {
      json& f = acc[name].fields;
      try {
        const json fresh = remodel(name);
        for (const char* k : {"flops", "bytes", "working_set", "intensity", "compute_ceiling", "model_note", "traffic",
                              "core_work", "calibration_group", "ecm_traffic"}) {
          if (fresh.contains(k)) f[k] = fresh[k];
          else f.erase(k);
        }
        remodeled[name] = "";
      } catch (const Error& e) {
        remodeled[name] = e.what();
      }
    }

  // The calibration cases' times, by what they share with the cases they calibrate.
  std::map<std::string, std::vector<CalibrationSample>> calibration;
  std::map<std::string, const json*> probe_fields;  // the overlap probes' fields, by name
  for (const auto& name : order) {
    const Acc& a = acc[name];
    const Reader rd{file + ": benchmark \"" + name + "\""};
    if (!is_calibration(a.fields, rd) || !a.error.empty() || a.times.empty()) continue;
    calibration[calibration_key(a.fields)].push_back({name, core_work_of(a.fields, rd), median(a.times),
                                                      rd.number(a.fields, "working_set", 0.0),
                                                      a.fields.value("calibration_probe", false)});
    if (calibration[calibration_key(a.fields)].back().probe) probe_fields[name] = &a.fields;
  }

  json rows = json::array(), calibration_rows = json::array();
  for (const auto& name : order) {
    const Acc& a = acc[name];
    const json& f = a.fields;
    const Reader rd{file + ": benchmark \"" + name + "\""};
    const Model model = model_from_fields(f, rd);
    const int threads = threads_of(f, rd);
    const std::optional<Isa> pricing = row_pricing_isa(f, rd);
    const double flops = rd.number(f, "flops", 0.0), bytes = rd.number(f, "bytes", 0.0);
    json r = {{"name", name}};
    for (const char* k : {"family", "variant", "isa", "library", "dtype", "dims", "params", "threads",
                          "flops", "bytes", "intensity"})
      r[k] = f.contains(k) ? f[k] : json(nullptr);
    r["message"] = "";
    if (remodel)  // null: re-derived by this build; a string: why the recorded model was kept
      r["remodel_missing"] = remodeled[name].empty() ? json(nullptr) : json(remodeled[name]);
    const bool calibration_row = is_calibration(f, rd);
    r["calibration"] = calibration_row;
    if (!a.error.empty()) {
      r["status"] = "failed";
      r["message"] = a.error;
    } else if (a.times.empty()) {
      r["status"] = "skipped";
      r["message"] = "no timed repetitions in bench.json";
    } else {
      r["status"] = "ok";
      const double med = median(a.times);
      double mean = 0, var = 0;
      for (double t : a.times) mean += t / double(a.times.size());
      for (double t : a.times) var += (t - mean) * (t - mean) / double(a.times.size());
      r["median_s"] = med;
      r["cv"] = mean > 0 ? std::sqrt(var) / mean : 0.0;
      r["repetitions"] = a.times.size();
      r["gflops"] = med > 0 ? json(flops / med / 1e9) : json(nullptr);
      r["gbps"] = med > 0 ? json(bytes / med / 1e9) : json(nullptr);
    }
    // `rooflab bench`'s mark of a measurement that stayed disturbed: carried, never dropped.
    r["disturbed"] = f.value("disturbed", false) && r["status"] == "ok";
    r["disturbed_reason"] = r["disturbed"].get<bool>() ? f.value("disturbed_reason", "") : "";
    // Null until predicted (docs/json.md): a row without a prediction has the keys, not holes.
    for (const char* k : {"predicted_s", "bound", "level", "ceiling_gflops", "compute_isa", "bandwidth_isa", "ceiling_gbps",
                          "efficiency", "bandwidth_kernels", "prediction_notes"})
      r[k] = nullptr;
    r["predictions"] = json::object();
    r["ecm"] = nullptr;
    if (machine) {
      try {
        Prediction p = predict(model, *machine, threads, pricing.value_or(Isa::none));
        if (!pricing && !p.compute_isa.empty())  // as before by_isa, and said
          p.notes.insert(p.notes.begin(),
                         "bench.json names no \"library\" for this case (an older `rooflab bench`): a "
                         "vendor baseline cannot be told from rooflab's own baseline-x86-64 code, so it is "
                         "priced against the widest ISA's compute ceilings (" + p.compute_isa +
                         ") as before; re-run `rooflab bench`");
        r["predicted_s"] = p.time_s;
        r["bound"] = p.bound;
        r["level"] = p.level;
        r["ceiling_gflops"] = p.compute_gflops;
        r["compute_isa"] = p.compute_isa.empty() ? json(nullptr) : json(p.compute_isa);
        r["bandwidth_isa"] = p.bandwidth_isa.empty() ? json(nullptr) : json(p.bandwidth_isa);
        r["ceiling_gbps"] = p.bandwidth_gbps;
        r["bandwidth_kernels"] = p.bandwidth_kernels;
        r["prediction_notes"] = p.notes;
        if (r["status"] == "ok" && r["median_s"].get<double>() > 0)
          r["efficiency"] = p.time_s / r["median_s"].get<double>();
      } catch (const Error& e) {
        r["prediction_missing"] = e.what();
      }
      // The in-core time from the case's calibration shapes (never from the case itself).
      std::optional<CoreFit> fit;
      std::string no_fit;
      if (!calibration_row) {
        const auto it = calibration.find(calibration_key(f));
        if (it == calibration.end())
          no_fit = "no calibration case of this variant, ISA, dtype, params and threads in bench.json "
                   "(`rooflab bench --calibration on`): in-core time at the compute ceiling";
        else if (!(fit = fit_core(core_work_of(f, rd), it->second)))
          no_fit = "the calibration cases give no non-negative in-core fit: in-core time at the compute ceiling";
        else {  // the deepest level its shapes lived in: the transfers beyond it are added (ecm.hpp)
          for (const auto& s : it->second) {
            if (s.probe) continue;
            const std::string lv = machine->level_for(s.working_set, threads);
            if (fit->level.empty() || level_index(lv) > level_index(fit->level)) fit->level = lv;
          }
          measure_overlap(*fit, it->second, probe_fields, *machine, threads, pricing.value_or(Isa::none), file,
                          machine->level_for(model.working_set, threads));
        }
      }
      try {
        const Ecm ec = ecm(model, *machine, threads, pricing.value_or(Isa::none), fit ? &*fit : nullptr);
        json e = to_json(ec);
        e["calibration"] = fit ? to_json(*fit) : json(nullptr);
        e["in_core_source"] = fit ? "calibration: fit to " + std::to_string(fit->cases.size()) + " cache-resident run(s) of this variant"
                              : calibration_row ? std::string("peak: a calibration case is priced against the compute ceiling")
                                                : "peak: " + no_fit;
        if (r["status"] == "ok" && r["median_s"].get<double>() > 0)
          e["efficiency"] = e["time_s"].get<double>() / r["median_s"].get<double>();
        else
          e["efficiency"] = nullptr;
        r["ecm"] = e;
      } catch (const Error& e) {
        r["ecm_missing"] = e.what();
      }
      if (extra) {
        try {
          r["predictions"] = extra(name, *machine);
        } catch (const Error& e) {  // the classic roofline above still stands
          r["predictions_missing"] = e.what();
        }
      }
    } else {
      r["prediction_missing"] = "no machine.json (run `rooflab characterize`)";
    }
    // Calibration rows apart: every reader of "rows" (tables, claims, figures) sees evaluated cases only.
    (calibration_row ? calibration_rows : rows).push_back(r);
  }
  return {{"schema", "rooflab.model/1"},
          {"bench", bench_path.string()},
          {"machine", machine_json ? json(machine_path.string()) : json(nullptr)},
          {"created", utc_timestamp()},
          {"rows", rows},
          {"calibration_rows", calibration_rows},
          {"accuracy", accuracy(rows)}};
}

int model_main(const std::filesystem::path& bench_path, const std::filesystem::path& machine_path,
               const std::filesystem::path& out, const ExtraPredictions& extra, const Remodel& remodel) {
  const json bench = read_json_file(bench_path);
  json machine;
  const bool have_machine = !machine_path.empty();
  if (have_machine) {
    if (!std::filesystem::exists(machine_path))
      throw Error("machine model " + machine_path.string() + " not found; run `rooflab characterize` first");
    machine = read_machine_json(machine_path);
  }
  const json m = evaluate(bench, have_machine ? &machine : nullptr, bench_path, machine_path, extra, remodel);
  write_json_atomic(out, m);
  std::printf("%-64s %8s %11s %11s %11s %8s %6s %6s\n", "benchmark", "status", "median_ms",
              "predict_ms", "ecm_ms", "GFLOP/s", "GB/s", "eff");
  for (const auto& r : m["rows"]) {
    auto num = [&](const char* k, double scale) {
      return r.contains(k) && r[k].is_number() ? r[k].get<double>() * scale : NAN;
    };
    const double ecm_ms = r.contains("ecm") && r["ecm"].is_object() ? r["ecm"]["time_s"].get<double>() * 1e3 : NAN;
    std::printf("%-64s %8s %11.3f %11.3f %11.3f %8.2f %6.1f %6.2f\n", r["name"].get<std::string>().c_str(),
                r["status"].get<std::string>().c_str(), num("median_s", 1e3),
                num("predicted_s", 1e3), ecm_ms, num("gflops", 1), num("gbps", 1), num("efficiency", 1));
  }
  if (!m["calibration_rows"].empty())
    std::printf("(%zu calibration cases: the ECM's in-core fits, not evaluated; model.json calibration_rows)\n",
                m["calibration_rows"].size());
  // Within X%: |median / predicted - 1| <= X (ok rows with a prediction).
  if (!m["accuracy"].empty()) {
    std::printf("\n%-24s %6s %12s %12s %10s %10s\n", "family", "cases", "roof<=10%", "roof<=20%", "ecm<=10%",
                "ecm<=20%");
    auto pct = [](const json& v) { return v.is_number() ? v.get<double>() * 100 : NAN; };
    for (const auto& [fam, a] : m["accuracy"].items())
      std::printf("%-24s %6d %11.0f%% %11.0f%% %9.0f%% %9.0f%%\n", fam.c_str(), a["cases"].get<int>(),
                  pct(a["roofline"]["within_10"]), pct(a["roofline"]["within_20"]), pct(a["ecm"]["within_10"]),
                  pct(a["ecm"]["within_20"]));
  }
  std::fprintf(stderr, "wrote %s\n", out.c_str());
  return 0;
}
}  // namespace rooflab::roofline

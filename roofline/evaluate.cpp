#include "roofline/evaluate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "harness/error.hpp"
#include "harness/json_io.hpp"
#include "roofline/predict.hpp"

namespace rooflab::roofline {
using json = nlohmann::json;

namespace {
double to_seconds(double v, const std::string& unit) {
  if (unit == "ns") return v * 1e-9;
  if (unit == "us") return v * 1e-6;
  if (unit == "ms") return v * 1e-3;
  return v;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Model model_from_fields(const json& f) {
  Model m;
  m.flops = f.value("flops", 0.0);
  m.working_set = f.value("working_set", 0.0);
  m.compute_ceiling = f.value("compute_ceiling", "");
  for (const auto& t : f.value("traffic", json::array()))
    m.traffic.push_back({t.value("bytes", 0.0), t.value("kernel", "")});
  return m;
}
}  // namespace

json evaluate(const json& bench, const json* machine_json, const std::filesystem::path& bench_path,
              const std::filesystem::path& machine_path) {
  require_schema(bench, "rooflab.bench", 1, bench_path);
  std::optional<Machine> machine;
  if (machine_json) machine = machine_from_json(*machine_json, machine_path);

  // Group Google Benchmark entries by case: per-repetition times, errors, rooflab fields.
  struct Acc { json fields; std::vector<double> times; std::string error; };
  std::vector<std::string> order;
  std::map<std::string, Acc> acc;
  for (const auto& b : bench.value("benchmarks", json::array())) {
    if (!b.contains("rooflab")) continue;
    const std::string name = b["rooflab"].value("name", b.value("run_name", ""));
    if (!acc.count(name)) order.push_back(name);
    Acc& a = acc[name];
    a.fields = b["rooflab"];
    if (b.value("error_occurred", false)) a.error = b.value("error_message", "error");
    else if (b.value("run_type", "") == "iteration")
      a.times.push_back(to_seconds(b.value("real_time", 0.0), b.value("time_unit", "ns")));
  }

  json rows = json::array();
  for (const auto& name : order) {
    const Acc& a = acc[name];
    const json& f = a.fields;
    json r = {{"name", name}};
    for (const char* k : {"family", "variant", "isa", "dtype", "dims", "params", "threads",
                          "flops", "bytes", "intensity"})
      r[k] = f.contains(k) ? f[k] : json(nullptr);
    r["message"] = "";
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
      r["gflops"] = f.value("flops", 0.0) / med / 1e9;
      r["gbps"] = f.value("bytes", 0.0) / med / 1e9;
    }
    // Null until predicted (docs/json.md): a row without a prediction has the keys, not holes.
    for (const char* k : {"predicted_s", "bound", "level", "ceiling_gflops", "ceiling_gbps", "efficiency"})
      r[k] = nullptr;
    if (machine) {
      try {
        const Prediction p = predict(model_from_fields(f), *machine, f.value("threads", 1));
        r["predicted_s"] = p.time_s;
        r["bound"] = p.bound;
        r["level"] = p.level;
        r["ceiling_gflops"] = p.compute_gflops;
        r["ceiling_gbps"] = p.bandwidth_gbps;
        if (r["status"] == "ok") r["efficiency"] = p.time_s / r["median_s"].get<double>();
      } catch (const Error& e) {
        r["prediction_missing"] = e.what();
      }
    } else {
      r["prediction_missing"] = "no machine.json (run `rooflab characterize`)";
    }
    rows.push_back(r);
  }
  return {{"schema", "rooflab.model/1"},
          {"bench", bench_path.string()},
          {"machine", machine_json ? json(machine_path.string()) : json(nullptr)},
          {"created", utc_timestamp()},
          {"rows", rows}};
}

int model_main(const std::filesystem::path& bench_path, const std::filesystem::path& machine_path,
               const std::filesystem::path& out) {
  const json bench = read_json_file(bench_path);
  json machine;
  const bool have_machine = !machine_path.empty();
  if (have_machine) {
    if (!std::filesystem::exists(machine_path))
      throw Error("machine model " + machine_path.string() + " not found; run `rooflab characterize` first");
    machine = read_json_file(machine_path);
  }
  const json m = evaluate(bench, have_machine ? &machine : nullptr, bench_path, machine_path);
  write_json_atomic(out, m);
  std::printf("%-64s %8s %11s %11s %8s %6s %6s\n", "benchmark", "status", "median_ms",
              "predict_ms", "GFLOP/s", "GB/s", "eff");
  for (const auto& r : m["rows"]) {
    auto num = [&](const char* k, double scale) {
      return r.contains(k) && r[k].is_number() ? r[k].get<double>() * scale : NAN;
    };
    std::printf("%-64s %8s %11.3f %11.3f %8.2f %6.1f %6.2f\n", r["name"].get<std::string>().c_str(),
                r["status"].get<std::string>().c_str(), num("median_s", 1e3),
                num("predicted_s", 1e3), num("gflops", 1), num("gbps", 1), num("efficiency", 1));
  }
  std::fprintf(stderr, "wrote %s\n", out.c_str());
  return 0;
}
}  // namespace rooflab::roofline

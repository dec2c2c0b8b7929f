#include "roofline/predict_on.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>

#include "harness/error.hpp"
#include "harness/json_io.hpp"

namespace rooflab::roofline {
using json = nlohmann::json;

namespace {
const char* kKinds[] = {"roofline_model", "roofline_carried", "ecm_model", "ecm_carried"};

json num_or_null(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key] : json(nullptr);
}

json ecm_time(const json& row) {
  return row.contains("ecm") && row["ecm"].is_object() ? num_or_null(row["ecm"], "time_s") : json(nullptr);
}

// The name with its ISA segment dropped (<family>/<variant>/<isa>/...): how a case of one
// machine is found on another that ran it with another ISA (docs/json.md#predict-on).
std::string without_isa(const std::string& name, const json& isa) {
  if (!isa.is_string()) return name;
  std::vector<std::string> parts;
  std::stringstream ss(name);
  for (std::string p; std::getline(ss, p, '/');) parts.push_back(p);
  if (parts.size() < 3 || parts[2] != isa.get<std::string>()) return name;
  parts.erase(parts.begin() + 2);
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += '/';
    out += parts[i];
  }
  return out;
}

// Wider ISAs rank higher: harness/isa.hpp's enum is in that order.
int isa_rank(const json& isa) {
  return int(isa.is_string() ? parse_isa(isa.get<std::string>()).value_or(Isa::none) : Isa::none);
}

json host_facts(const json& m, const std::filesystem::path& path) {
  const json h = m.value("host", json::object());
  return {{"machine", path.string()},
          {"hostname", h.value("hostname", "")},
          {"cpu", h.value("cpu", "")},
          {"cpu_signature", h.value("cpu_signature", "")},
          {"isa", h.value("isa", json::array())},
          {"threads", h.contains("threads") ? h["threads"] : json(nullptr)}};
}

// The largest thread count any of machine.json's compute ceilings was measured at (0: none).
int measured_threads(const json& m) {
  int most = 0;
  if (!m.contains("compute") || !m["compute"].contains("ceilings")) return 0;
  for (const auto& [key, per_t] : m["compute"]["ceilings"].items())
    if (per_t.is_object())
      for (const auto& [t, v] : per_t.items()) most = std::max(most, std::atoi(t.c_str()));
  return most;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// B's timed cases: name -> its model row (evaluate without a machine: medians only).
struct Measured {
  std::map<std::string, json> by_name;
  std::map<std::string, std::vector<std::string>> by_key;  // name without ISA -> names
};

Measured read_measured(const std::filesystem::path& bench_b) {
  Measured m;
  const json doc = evaluate(read_json_file(bench_b), nullptr, bench_b, {});
  for (const auto& r : doc["rows"]) {
    const std::string name = r["name"].get<std::string>();
    m.by_name[name] = r;
    m.by_key[without_isa(name, r["isa"])].push_back(name);
  }
  return m;
}

// A's case on B: the same name, else the one case of the same key (ISA dropped), else the
// widest ISA among several; json null when B did not run it. `how` says which.
const json* match(const Measured& m, const std::string& name, const json& isa, std::string& how) {
  if (auto it = m.by_name.find(name); it != m.by_name.end()) {
    how = "same name";
    return &it->second;
  }
  auto it = m.by_key.find(without_isa(name, isa));
  if (it == m.by_key.end()) return nullptr;
  const json* best = nullptr;
  for (const auto& n : it->second) {
    const json& r = m.by_name.at(n);
    if (!best || isa_rank(r["isa"]) > isa_rank((*best)["isa"])) best = &r;
  }
  how = "as " + (*best)["name"].get<std::string>() + " (B ran " +
        ((*best)["isa"].is_string() ? (*best)["isa"].get<std::string>() : std::string("no ISA segment")) +
        (it->second.size() > 1 ? ", the widest of " + std::to_string(it->second.size()) + " ISAs" : "") + ")";
  return best;
}

json error_accuracy(const json& rows) {
  std::map<std::string, std::map<std::string, std::vector<double>>> errs;  // family -> kind -> |err|
  for (const auto& r : rows) {
    if (!r["error"].is_object()) continue;
    const std::string fam = r["family"].is_string() ? r["family"].get<std::string>() : "?";
    for (const char* k : kKinds)
      if (r["error"][k].is_number())
        for (const std::string& f : {fam, std::string("all")}) errs[f][k].push_back(std::abs(r["error"][k].get<double>()));
  }
  json out = json::object();
  for (const auto& [fam, kinds] : errs) {
    json f = json::object();
    for (const char* k : kKinds) {
      auto it = kinds.find(k);
      if (it == kinds.end()) {
        f[k] = {{"cases", 0}, {"median_abs_error", nullptr}, {"within_20", nullptr}};
        continue;
      }
      const auto& v = it->second;
      const double within = double(std::count_if(v.begin(), v.end(), [](double e) { return e <= 0.2; })) / double(v.size());
      f[k] = {{"cases", v.size()}, {"median_abs_error", median(v)}, {"within_20", within}};
    }
    out[fam] = f;
  }
  return out;
}
}  // namespace

json predict_on(const PredictOnInput& in, const ExtraPredictions& extra) {
  for (const auto& [p, how] : {std::pair{in.bench_a, "`rooflab bench --out RUN_A`"},
                               std::pair{in.machine_a, "`rooflab characterize --out RUN_A`"},
                               std::pair{in.machine_b, "`rooflab characterize` on machine B"}})
    if (!std::filesystem::is_regular_file(p)) throw Error(p.string() + " not found; make it with " + how);
  const json bench_a = read_json_file(in.bench_a);
  const json ma = read_machine_json(in.machine_a), mb = read_machine_json(in.machine_b);
  // The same evaluation `rooflab model` makes, once with each machine's ceilings.
  const json on_a = evaluate(bench_a, &ma, in.bench_a, in.machine_a, extra);
  const json on_b = evaluate(bench_a, &mb, in.bench_a, in.machine_b, extra);
  Measured measured;
  const bool have_measured = !in.bench_b.empty();
  if (have_measured) measured = read_measured(in.bench_b);

  // The compute ceiling each case names (bench.json's rooflab.compute_ceiling), for the record.
  std::map<std::string, std::string> ceiling_key;
  for (const auto& b : bench_a["benchmarks"])
    if (b.contains("rooflab") && b["rooflab"].is_object() && b["rooflab"].contains("name"))
      ceiling_key[b["rooflab"]["name"].get<std::string>()] = b["rooflab"].value("compute_ceiling", "");

  const json host_b = host_facts(mb, in.machine_b);
  std::set<std::string> isa_b;
  for (const auto& i : host_b["isa"]) isa_b.insert(i.get<std::string>());
  const int b_hw_threads = host_b["threads"].is_number_integer() ? host_b["threads"].get<int>() : 0;
  const int b_ceiling_threads = measured_threads(mb);
  std::set<std::string> used;  // B's ceilings the predictions drew on

  json rows = json::array();
  for (size_t i = 0; i < on_a["rows"].size(); ++i) {
    const json& a = on_a["rows"][i];
    const json& b = on_b["rows"][i];
    const std::string name = a["name"].get<std::string>();
    const int threads = a["threads"].is_number_integer() ? a["threads"].get<int>() : 1;
    json r = {{"name", name},       {"family", a["family"]},   {"variant", a["variant"]},
              {"isa", a["isa"]},    {"threads", a["threads"]}, {"status_a", a["status"]},
              {"measured_a_s", a["status"] == "ok" ? a["median_s"] : json(nullptr)}};
    r["a"] = {{"roofline_s", a["predicted_s"]}, {"ecm_s", ecm_time(a)}, {"level", a["level"]}, {"bound", a["bound"]}};
    json notes = b["prediction_notes"].is_array() ? b["prediction_notes"] : json::array();
    if (b["ecm"].is_object())
      for (const auto& n : b["ecm"].value("notes", json::array()))
        if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(n);
    r["b"] = {{"roofline_s", b["predicted_s"]}, {"ecm_s", ecm_time(b)},       {"level", b["level"]},
              {"bound", b["bound"]},             {"compute_ceiling", ceiling_key[name].empty() ? json(nullptr) : json(ceiling_key[name])},
              {"compute_isa", b["compute_isa"]}, {"ceiling_gflops", b["ceiling_gflops"]},
              {"bandwidth_isa", b["bandwidth_isa"]}, {"bandwidth_kernels", b["bandwidth_kernels"]},
              {"ceiling_gbps", b["ceiling_gbps"]}, {"notes", notes}};
    // What B lacks for this case: said per row, beside whatever number there is.
    json lacks = json::array();
    for (const char* k : {"prediction_missing", "ecm_missing"})
      if (b.contains(k)) lacks.push_back(std::string(k == std::string("ecm_missing") ? "ECM" : "roofline") +
                                         ": no prediction on B: " + b[k].get<std::string>());
    if (a["isa"].is_string() && !isa_b.count(a["isa"].get<std::string>()))
      lacks.push_back("B has no " + a["isa"].get<std::string>() + " (host.isa " + host_b["isa"].dump() +
                      "): the kernel does not run there as it is; priced with B's " +
                      (b["compute_isa"].is_string() ? b["compute_isa"].get<std::string>() : std::string("widest")) +
                      " ceilings, as the kernel of the ISA B has");
    if (b_hw_threads > 0 && threads > b_hw_threads)
      lacks.push_back("the case runs " + std::to_string(threads) + " threads, B has " + std::to_string(b_hw_threads));
    if (b_ceiling_threads > 0 && threads > b_ceiling_threads)
      lacks.push_back("B's ceilings were measured at up to " + std::to_string(b_ceiling_threads) +
                      " thread(s): priced with those for the case's " + std::to_string(threads));
    r["b_lacks"] = lacks;
    if (b["predicted_s"].is_number()) {
      if (b["ceiling_gflops"].is_number() && b["ceiling_gflops"].get<double>() > 0 && !ceiling_key[name].empty())
        used.insert("compute " + ceiling_key[name] + " " +
                    (b["compute_isa"].is_string() ? b["compute_isa"].get<std::string>() : std::string("(no ISA)")) +
                    " " + std::to_string(threads) + "T");
      if (b["bandwidth_kernels"].is_array())
        for (const auto& k : b["bandwidth_kernels"])
          used.insert("bandwidth " + (b["level"].is_string() ? b["level"].get<std::string>() : std::string("?")) + " " +
                      k.get<std::string>() + " " +
                      (b["bandwidth_isa"].is_string() ? b["bandwidth_isa"].get<std::string>() : std::string("?")) +
                      " " + std::to_string(threads) + "T");
    }
    // Carried: A's measured time scaled by the model's B / A ratio.
    auto carried = [&](const json& pa, const json& pb) -> json {
      if (!r["measured_a_s"].is_number() || !pa.is_number() || !pb.is_number() || pa.get<double>() <= 0)
        return nullptr;
      return r["measured_a_s"].get<double>() * pb.get<double>() / pa.get<double>();
    };
    r["predicted_b"] = {{"roofline_model", r["b"]["roofline_s"]},
                        {"roofline_carried", carried(r["a"]["roofline_s"], r["b"]["roofline_s"])},
                        {"ecm_model", r["b"]["ecm_s"]},
                        {"ecm_carried", carried(r["a"]["ecm_s"], r["b"]["ecm_s"])}};
    r["measured_b_s"] = nullptr;
    r["measured_b_name"] = nullptr;
    r["matched"] = nullptr;
    r["error"] = nullptr;
    if (have_measured) {
      std::string how;
      const json* m = match(measured, name, a["isa"], how);
      if (!m) {
        r["matched"] = "not in B's bench.json";
      } else if ((*m)["status"] != "ok") {
        r["matched"] = how + "; B's case " + (*m)["status"].get<std::string>() + ": " + (*m)["message"].get<std::string>();
      } else {
        const double mb_s = (*m)["median_s"].get<double>();
        r["measured_b_s"] = mb_s;
        r["measured_b_name"] = (*m)["name"];
        r["matched"] = how;
        json e = json::object();
        for (const char* k : kKinds)
          e[k] = r["predicted_b"][k].is_number() && mb_s > 0 ? json(r["predicted_b"][k].get<double>() / mb_s - 1)
                                                              : json(nullptr);
        r["error"] = e;
      }
    }
    rows.push_back(r);
  }
  return {{"schema", "rooflab.predict_on/1"},
          {"created", utc_timestamp()},
          {"run_a", {{"bench", in.bench_a.string()}, {"machine", in.machine_a.string()}}},
          {"a", host_facts(ma, in.machine_a)},
          {"b", host_b},
          {"measured_b", have_measured ? json(in.bench_b.string()) : json(nullptr)},
          {"b_ceilings_used", std::vector<std::string>(used.begin(), used.end())},
          {"rows", rows},
          {"accuracy", have_measured ? error_accuracy(rows) : json(nullptr)}};
}

int predict_on_main(const PredictOnInput& in, const std::filesystem::path& out, const ExtraPredictions& extra) {
  const json d = predict_on(in, extra);
  write_json_atomic(out, d);
  auto host = [](const json& h) {
    std::string isa;
    for (const auto& i : h["isa"]) {
      if (!isa.empty()) isa += '+';
      isa += i.get<std::string>();
    }
    const std::string sig = h["cpu_signature"].get<std::string>();
    return h["machine"].get<std::string>() + ": " + h["hostname"].get<std::string>() + ", " + h["cpu"].get<std::string>() +
           ", " + (sig.empty() ? "no cpu_signature" : sig) + ", " + isa;
  };
  std::printf("A: %s\nB: %s\n\n", host(d["a"]).c_str(), host(d["b"]).c_str());
  std::printf("%-60s %10s %10s %10s %10s %10s %10s %10s\n", "benchmark (ms)", "A meas", "A roof", "B roof", "B ecm",
              "carr roof", "carr ecm", "B meas");
  auto ms = [](const json& v) { return v.is_number() ? v.get<double>() * 1e3 : NAN; };
  int lacking = 0;
  for (const auto& r : d["rows"]) {
    std::string name = r["name"].get<std::string>();
    if (name.size() > 60) name = name.substr(0, 57) + "...";
    std::printf("%-60s %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f %10.3f%s\n", name.c_str(), ms(r["measured_a_s"]),
                ms(r["a"]["roofline_s"]), ms(r["predicted_b"]["roofline_model"]), ms(r["predicted_b"]["ecm_model"]),
                ms(r["predicted_b"]["roofline_carried"]), ms(r["predicted_b"]["ecm_carried"]), ms(r["measured_b_s"]),
                r["b_lacks"].empty() ? "" : "  *");
    lacking += !r["b_lacks"].empty();
  }
  if (lacking) std::printf("* %d case(s): B lacks what the case needs (rows' \"b_lacks\" in the JSON)\n", lacking);
  if (d["accuracy"].is_object()) {
    std::printf("\nerror on B (median |predicted / measured - 1|, share within 20%%)\n%-20s %6s", "family", "cases");
    for (const char* k : kKinds) std::printf(" %22s", k);
    std::printf("\n");
    for (const auto& [fam, a] : d["accuracy"].items()) {
      std::printf("%-20s %6d", fam.c_str(), a["roofline_model"]["cases"].get<int>());
      for (const char* k : kKinds) {
        const json& x = a[k];
        if (x["median_abs_error"].is_number())
          std::printf("       %7.1f%% / %4.0f%%", x["median_abs_error"].get<double>() * 100, x["within_20"].get<double>() * 100);
        else
          std::printf(" %22s", "-");
      }
      std::printf("\n");
    }
  } else {
    std::printf("\nno measured times of B (no bench.json beside B's machine.json, no --measured): no errors\n");
  }
  std::fprintf(stderr, "wrote %s\n", out.c_str());
  return 0;
}
}  // namespace rooflab::roofline

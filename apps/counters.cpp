// `rooflab counters`: cache-miss counters per case and back end -> DIR/counters.json.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>

#include <nlohmann/json.hpp>

#include "harness/counters/cachegrind.hpp"
#include "harness/counters/counters.hpp"
#include "harness/counters/measure.hpp"
#include "apps/commands.hpp"
#include "harness/args.hpp"
#include "harness/error.hpp"
#include "harness/json_io.hpp"
#include "harness/progress.hpp"

namespace rooflab::counters {
namespace fs = std::filesystem;
using nlohmann::json;

args::Spec counters_spec() {
  return args::Spec("rooflab counters", "cache-miss counters of each selected case (verified first) -> DIR/counters.json")
      .string("--filter", "REGEX", "only names matching REGEX")
      .string("--case", "NAME", "this case instead of the profile's")
      .repeated()
      .profile("which sizes")
      .choice("--backend", {"cachegrind", "papi", "likwid", "all"}, "counter back end", "cachegrind")
      .path("--machine", args::PathKind::input_file, "FILE",
            "machine.json whose caches cachegrind simulates (default: DIR/machine.json if present)")
      .hint("; run `rooflab characterize` first (--out DIR)")
      .choice("--ll-level", {"L2", "L3"}, "the level cachegrind simulates as its last level (default: auto)")
      .integer("--runs", "K", "runs counted per case (cachegrind is ~50x slower)", 1, 10000, 2)
      .integer("--timeout", "SECONDS", "the most one cachegrind case may take", 1, 86400, 600)
      .path("--out", args::PathKind::output_dir, "DIR", "where counters.json goes (merged with an existing one)", ".")
      .epilog("exit codes: 0 ok, 2 the requested back end is unavailable, 3 a case failed (verification, valgrind "
              "crash or --timeout)");
}

namespace {
struct Options {
  std::string filter, profile, backend, machine, ll_level, out;
  std::vector<std::string> cases;
  int runs = 2;
  double timeout_s = 600;
};

Options options_of(const args::Values& v) {
  Options o;
  o.filter = v.str("--filter");
  o.cases = v.all("--case");
  o.profile = v.str("--profile");
  o.backend = v.str("--backend");
  o.machine = v.str("--machine");
  o.ll_level = v.str("--ll-level");
  o.runs = int(v.integer("--runs"));
  o.timeout_s = double(v.integer("--timeout"));
  o.out = v.str("--out");
  return o;
}

std::vector<Case> select_cases(const Options& o) {
  if (o.cases.empty()) return match_cases(o.profile, o.filter);
  std::vector<Case> cases;
  for (const auto& n : o.cases) cases.push_back(parse_case_name(n));
  cases = filter_cases(cases, o.filter);
  if (cases.empty()) throw Error("filter '" + o.filter + "' matches none of the cases given");
  return cases;
}

// The machine.json to size the simulated caches: --machine, else DIR/machine.json if present.
std::optional<json> load_machine(const Options& o, std::string& path) {
  path = o.machine;
  if (path.empty()) {
    const fs::path guess = fs::path(o.out) / "machine.json";
    if (!fs::exists(guess)) return std::nullopt;
    path = guess.string();
  }
  json m = read_machine_json(path);
  return m;
}

json in_process_row(const Case& c, Backend& backend, int runs) {
  json row = {{"name", c.name()}, {"backend", backend.name()}, {"runs", runs}};
  const auto t0 = std::chrono::steady_clock::now();
  try {
    const Measurement m = measure_case(c, &backend, runs);
    if (!m.verified) {
      row["status"] = "failed";
      row["message"] = m.message;
    } else {
      row["status"] = "ok";
      row["events"] = m.events;
      row["derived"] = json::object();
    }
  } catch (const Error& e) {
    row["status"] = "failed";
    row["message"] = e.what();
  }
  row["elapsed_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return row;
}

std::string summary_of(const json& row) {
  if (row["status"] != "ok") return "FAILED: " + row.value("message", std::string());
  std::string s = "ok";
  if (row.contains("simulated_as")) s += " (simulated as " + row["simulated_as"].get<std::string>() + ")";
  if (row.contains("derived"))
    for (const auto& [k, v] : row["derived"].items()) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "  %s %.4f", k.c_str(), v.get<double>());
      s += buf;
    }
  return s;
}

// Replaces the rows (same name + backend) and back-end entries (same name) of an existing
// counters.json, keeping everything else.
json merge(const fs::path& file, const json& backends, const json& rows) {
  json doc = {{"schema", "rooflab.counters/1"}, {"backends", json::array()}, {"rows", json::array()}};
  if (fs::exists(file)) {
    doc = read_json_file(file);
    require_schema(doc, "rooflab.counters", 1, file);
    if (!doc.contains("backends") || !doc["backends"].is_array()) doc["backends"] = json::array();
    if (!doc.contains("rows") || !doc["rows"].is_array()) doc["rows"] = json::array();
  }
  std::set<std::string> new_backends;
  for (const auto& b : backends) new_backends.insert(b["name"].get<std::string>());
  std::set<std::pair<std::string, std::string>> new_rows;
  for (const auto& r : rows) new_rows.emplace(r["name"], r["backend"]);

  json merged_backends = json::array(), merged_rows = json::array();
  for (const auto& b : doc["backends"])
    if (!new_backends.count(b.value("name", ""))) merged_backends.push_back(b);
  for (const auto& b : backends) merged_backends.push_back(b);
  for (const auto& r : doc["rows"])
    if (!new_rows.count({r.value("name", ""), r.value("backend", "")})) merged_rows.push_back(r);
  for (const auto& r : rows) merged_rows.push_back(r);
  doc["backends"] = merged_backends;
  doc["rows"] = merged_rows;
  doc["updated"] = utc_timestamp();
  return doc;
}
}  // namespace

int counters_run(const args::Values& v) {
  const Options o = options_of(v);
  const std::vector<Case> cases = select_cases(o);
  ensure_writable_dir(o.out);
  std::string machine_path;
  const std::optional<json> machine = load_machine(o, machine_path);

  std::vector<std::string> wanted = {o.backend};
  if (o.backend == "all") wanted = {"cachegrind", "papi", "likwid"};

  json backends = json::array(), rows = json::array();
  int available = 0;
  bool any_failed = false;
  for (const auto& name : wanted) {
    json entry = {{"name", name}};
    std::unique_ptr<Backend> in_process;
    std::unique_ptr<CachegrindRunner> cg;
    Availability a;
    if (name == "cachegrind") {
      cg = std::make_unique<CachegrindRunner>(
          simulated_caches(machine ? &*machine : nullptr, machine_path, o.ll_level), o.timeout_s);
      a = cg->probe();
      entry["config"] = cg->config();
    } else {
      in_process = make_backend(name);
      a = in_process->probe();
      if (a.available) entry["config"] = in_process->config();
    }
    entry["available"] = a.available;
    entry["reason"] = a.reason;
    backends.push_back(entry);
    if (!a.available) {
      std::fprintf(stderr, "rooflab counters: back end %s unavailable: %s\n", name.c_str(), a.reason.c_str());
      continue;
    }
    ++available;
    if (cg)
      std::fprintf(stderr, "rooflab counters: cachegrind simulates D1=%s LL=%s (%s)\n",
                   entry["config"]["D1"].get<std::string>().c_str(),
                   entry["config"]["LL"].get<std::string>().c_str(), o.ll_level.empty() ? "LL auto" : o.ll_level.c_str());
    Progress progress("counters " + name, cases.size());
    for (size_t i = 0; i < cases.size(); ++i) {
      progress.start(i, cases[i].name());
      json row = cg ? cg->run(cases[i], o.runs) : in_process_row(cases[i], *in_process, o.runs);
      any_failed |= row["status"] != "ok";
      std::fprintf(stderr, "    %s (%s)\n", summary_of(row).c_str(),
                   Progress::format_seconds(row.value("elapsed_s", 0.0)).c_str());
      rows.push_back(std::move(row));
    }
    progress.done();
  }

  const fs::path file = fs::path(o.out) / "counters.json";
  write_json_atomic(file, merge(file, backends, rows));
  std::fprintf(stderr, "rooflab counters: wrote %s (%zu rows)\n", file.c_str(), rows.size());
  if (available == 0) return 2;
  return any_failed ? 3 : 0;
}
}  // namespace rooflab::counters

#include "harness/counters/cachegrind.hpp"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string_view>

#include "harness/counters/subprocess.hpp"
#include "harness/error.hpp"
#include "harness/host_caches.hpp"

#ifndef ROOFLAB_SANITIZER  // set by the top-level CMakeLists; "" or "OFF" when not sanitizing
#define ROOFLAB_SANITIZER ""
#endif

namespace rooflab::counters {
namespace fs = std::filesystem;
using nlohmann::json;

std::string CacheGeometry::arg() const {
  return std::to_string(size) + "," + std::to_string(assoc) + "," + std::to_string(line);
}

CacheGeometry valgrind_geometry(int64_t size, int assoc, int line) {
  if (line < 16) line = 16;  // valgrind's minimum: one access may not straddle three lines
  line = int(std::bit_floor(unsigned(line)));
  if (assoc < 1) assoc = 1;
  if (size < 2 * int64_t(line))
    throw Error("cache of " + std::to_string(size) + " bytes is too small to simulate (line " +
                std::to_string(line) + " bytes)");
  // Candidates: every associativity up to a bound (valgrind searches ways linearly, so huge
  // associativities are slow) with the power-of-two set counts just below and above the
  // request. Pick the smallest size error, then the associativity nearest the request.
  const int max_assoc = std::max(64, 2 * assoc);
  CacheGeometry best;
  int64_t best_err = -1;
  int best_dassoc = 0;
  for (int a = 1; a <= max_assoc; ++a) {
    const int64_t way = int64_t(a) * line;
    if (way > size) break;
    const uint64_t below = std::bit_floor(uint64_t(size / way));
    for (uint64_t sets : {below, below * 2}) {
      const int64_t s = int64_t(sets) * way;
      const int64_t err = s > size ? s - size : size - s;
      const int dassoc = a > assoc ? a - assoc : assoc - a;
      if (best_err < 0 || err < best_err || (err == best_err && dassoc < best_dassoc)) {
        best = {s, a, line};
        best_err = err;
        best_dassoc = dassoc;
      }
    }
  }
  return best;
}

namespace {
std::optional<int64_t> machine_cache(const json* machine, const char* kind, const std::string& level) {
  if (!machine || !machine->is_object()) return std::nullopt;
  const json& caches = machine->value("caches", json::object());
  if (!caches.is_object() || !caches.contains(kind) || !caches[kind].is_object()) return std::nullopt;
  const json& k = caches[kind];
  if (!k.contains(level) || !k[level].is_number() || k[level].get<double>() <= 0) return std::nullopt;
  return k[level].get<int64_t>();
}

// Size from machine.json (measured, else reported), geometry rounded for valgrind.
std::optional<CacheGeometry> pick(const json* machine, const std::string& path, const std::string& level,
                                  std::string& source, int64_t& requested) {
  std::optional<int64_t> size;
  for (const char* kind : {"measured", "reported"}) {
    if ((size = machine_cache(machine, kind, level))) {
      source = "machine.json caches." + std::string(kind) + "." + level + " (" + path + ")";
      break;
    }
  }
  if (!size) {
    source = machine ? "valgrind default (host CPUID): " + path + " has no " + level + " size"
                     : "valgrind default (host CPUID): no machine.json";
    return std::nullopt;
  }
  requested = *size;
  const int lvl = level[1] - '0';
  int assoc = lvl == 3 ? 16 : 8, line = 64;
  if (auto s = host_cache(lvl); s && s->assoc > 0 && s->line > 0) {
    assoc = s->assoc;
    line = s->line;
    source += "; associativity and line from sysfs";
  } else {
    source += "; associativity and line assumed (" + std::to_string(assoc) + ", 64)";
  }
  const CacheGeometry wanted{*size, assoc, line}, used = valgrind_geometry(*size, assoc, line);
  if (!(used == wanted))
    source += "; " + wanted.arg() + " rounded to " + used.arg() +
              " (valgrind needs a power-of-two number of sets)";
  return used;
}
}  // namespace

SimulatedCaches simulated_caches(const json* machine, const std::string& machine_path,
                                 const std::string& ll_level) {
  SimulatedCaches s;
  s.ll_level = ll_level;
  if (s.ll_level.empty()) {
    const bool has_l3 = machine_cache(machine, "measured", "L3") || machine_cache(machine, "reported", "L3");
    s.ll_level = has_l3 || !machine ? "L3" : "L2";
  }
  if (s.ll_level != "L2" && s.ll_level != "L3")
    throw Error("--ll-level must be L2 or L3, got '" + s.ll_level + "'");
  s.d1 = pick(machine, machine_path, "L1", s.d1_source, s.d1_requested);
  s.ll = pick(machine, machine_path, s.ll_level, s.ll_source, s.ll_requested);
  return s;
}

CallgrindDump parse_callgrind_file(const fs::path& file) {
  std::ifstream in(file);
  if (!in) throw Error("cannot read callgrind output " + file.string());
  CallgrindDump d;
  std::vector<std::string> events;
  std::string totals, summary;
  for (std::string line; std::getline(in, line);) {
    auto value_of = [&](const char* key) -> std::optional<std::string> {
      const size_t n = std::strlen(key);
      if (line.compare(0, n, key) != 0) return std::nullopt;
      return line.substr(n);
    };
    if (auto v = value_of("events:")) {
      std::istringstream ss(*v);
      events.clear();
      for (std::string e; ss >> e;) events.push_back(e);
    } else if (auto v = value_of("totals:")) {
      totals = *v;
    } else if (auto v = value_of("summary:")) {
      summary = *v;
    } else if (auto v = value_of("desc: Trigger:")) {
      d.trigger = *v;
      d.trigger.erase(0, d.trigger.find_first_not_of(' '));
    }
  }
  if (events.empty()) throw Error(file.string() + ": no 'events:' line (not a callgrind output?)");
  const std::string& values = !totals.empty() ? totals : summary;
  if (values.empty()) throw Error(file.string() + ": no 'totals:' or 'summary:' line");
  std::istringstream ss(values);
  size_t i = 0;
  for (std::string tok; ss >> tok; ++i) {
    if (i >= events.size()) throw Error(file.string() + ": more totals than events");
    try {
      d.totals[events[i]] = std::stod(tok);
    } catch (const std::exception&) {
      throw Error(file.string() + ": bad total '" + tok + "'");
    }
  }
  for (; i < events.size(); ++i) d.totals[events[i]] = 0;  // the format drops trailing zeros
  return d;
}

std::string region_dump_tag(const std::string& region) { return "rooflab-region:" + region; }

RegionTotals sum_region_dumps(const std::vector<fs::path>& files, const std::string& region) {
  const std::string want = "Client Request: " + region_dump_tag(region);
  RegionTotals r;
  for (const auto& f : files) {
    CallgrindDump d = parse_callgrind_file(f);
    if (d.trigger != want) continue;
    for (const auto& [e, v] : d.totals) r.events[e] += v;
    ++r.count;
  }
  return r;
}

std::map<std::string, double> cachegrind_derived(const std::map<std::string, double>& ev) {
  auto get = [&](const char* k) -> std::optional<double> {
    auto it = ev.find(k);
    return it == ev.end() ? std::nullopt : std::optional<double>(it->second);
  };
  std::map<std::string, double> d;
  const auto dr = get("Dr"), dw = get("Dw");
  if (!dr || !dw || *dr + *dw <= 0) return d;
  const double acc = *dr + *dw;
  if (auto mr = get("D1mr"), mw = get("D1mw"); mr && mw) d["L1_miss_rate"] = (*mr + *mw) / acc;
  if (auto mr = get("DLmr"), mw = get("DLmw"); mr && mw) d["LL_miss_rate"] = (*mr + *mw) / acc;
  return d;
}

bool sanitizer_refuses_valgrind() {
  const std::string_view s = ROOFLAB_SANITIZER;  // the -fsanitize= list
  for (const char* rt : {"address", "thread", "memory"})
    if (s.find(rt) != std::string_view::npos) return true;
  return false;
}

ValgrindCase valgrind_case(const Case& c, const std::vector<Isa>& declared,
                           const std::function<std::string(const Case&)>& check) {
  ValgrindCase out;
  if (c.isa != Isa::avx512) {
    out.simulated = c;
    return out;
  }
  std::string tried;
  for (const Isa isa : {Isa::avx2, Isa::scalar}) {
    if (std::find(declared.begin(), declared.end(), isa) == declared.end()) continue;
    Case sib = c;
    sib.isa = isa;
    const std::string why = check(sib);
    if (why.empty()) {
      out.simulated = sib;
      out.note = "valgrind 3.x cannot execute AVX-512 code: simulated the " + std::string(to_string(isa)) +
                 " sibling " + sib.name() + " (same variant, sizes and parameters, narrower vectors), whose "
                 "cache misses stand for this case's";
      return out;
    }
    tried += (tried.empty() ? "" : "; ") + why;
  }
  out.reason = "valgrind 3.x cannot execute AVX-512 code, and variant " + c.variant +
               (tried.empty() ? " has no avx2 or scalar sibling to simulate instead"
                              : " has no avx2 or scalar sibling that accepts this case (" + tried + ")");
  return out;
}

ValgrindCase valgrind_case(const Case& c) {
  std::vector<Isa> declared;
  try {
    declared = variant_of(c).isas;
  } catch (const Error&) {
    // unknown family/variant: nothing to substitute; run() reports validate_case()'s message
  }
  return valgrind_case(c, declared, [](const Case& sib) -> std::string {
    try {
      validate_case(sib);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  });
}

CachegrindRunner::CachegrindRunner(SimulatedCaches caches, double timeout_s)
    : caches_(std::move(caches)), timeout_s_(timeout_s) {}

Availability CachegrindRunner::probe() {
#ifndef ROOFLAB_HAVE_CALLGRIND_H
  return {false, "rooflab was built without valgrind/callgrind.h, so the kernel region cannot be "
                 "delimited (install valgrind, i.e. its headers, and reconfigure)"};
#endif
  if (sanitizer_refuses_valgrind())
    return {false, "this is a sanitizer build (" + std::string(ROOFLAB_SANITIZER) +
                       "); the ASan/TSan/MSan runtimes do not run under valgrind: use a Release build"};
  const char* forced = std::getenv("ROOFLAB_VALGRIND");
  valgrind_ = forced ? forced : find_on_path("valgrind");
  if (valgrind_.empty())
    return {false, "valgrind not found on PATH (apt-get install valgrind)"};
  if (::access(valgrind_.c_str(), X_OK) != 0)
    return {false, "valgrind at " + valgrind_ + " is not executable ($ROOFLAB_VALGRIND)"};
  const fs::path tmp = fs::temp_directory_path() / ("rooflab-vg-version-" + std::to_string(::getpid()));
  const ChildResult r = run_child({valgrind_, "--version"}, {}, tmp, tmp.string() + ".err", 30);
  version_ = tail_of_file(tmp, 1);
  fs::remove(tmp);
  fs::remove(tmp.string() + ".err");
  if (!r.ok()) return {false, valgrind_ + " --version failed: " + r.describe()};
  return {true, ""};
}

json CachegrindRunner::config() const {
  json c = {
      {"tool", "valgrind --tool=callgrind --cache-sim=yes"},
      {"valgrind", version_},
      {"D1", caches_.d1 ? caches_.d1->arg() : "default"},
      {"LL", caches_.ll ? caches_.ll->arg() : "default"},
      {"LL_level", caches_.ll_level},
      {"D1_source", caches_.d1_source},
      {"LL_source", caches_.ll_source},
      {"method",
       "valgrind's cache simulator (the one cachegrind uses) run through callgrind so that only "
       "the kernel region is counted (valgrind 3.19's cachegrind cannot restrict counting to a "
       "region): costs are zeroed before and dumped after each counted run, after verification "
       "and one warm-up run; events are per run, averaged over the runs; all threads are "
       "counted (valgrind serializes them onto one simulated cache hierarchy)"},
  };
  if (caches_.d1) c["D1_requested_bytes"] = caches_.d1_requested;
  if (caches_.ll) c["LL_requested_bytes"] = caches_.ll_requested;
  return c;
}

std::vector<std::string> CachegrindRunner::command(const Case& c, int runs, const fs::path& out_file,
                                                   const fs::path& log_file) const {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find this executable (/proc/self/exe): " + ec.message());
  std::vector<std::string> cmd = {valgrind_.empty() ? "valgrind" : valgrind_, "--tool=callgrind",
                                  "--cache-sim=yes"};
  if (caches_.d1) cmd.push_back("--D1=" + caches_.d1->arg());
  if (caches_.ll) cmd.push_back("--LL=" + caches_.ll->arg());
  cmd.push_back("--callgrind-out-file=" + out_file.string());
  cmd.push_back("--log-file=" + log_file.string());
  cmd.insert(cmd.end(), {self.string(), "run-case", c.name(), "--runs", std::to_string(runs)});
  return cmd;
}

json CachegrindRunner::run(const Case& c, int runs) {
  json row = {{"name", c.name()}, {"backend", "cachegrind"}, {"runs", runs}};
  auto fail = [&](const std::string& why) {
    row["status"] = "failed";
    row["message"] = why;
    return row;
  };
  const ValgrindCase vc = valgrind_case(c);
  if (!vc.simulated) return fail(vc.reason);
  const Case& sim = *vc.simulated;
  if (!vc.note.empty()) {
    row["simulated_as"] = sim.name();
    row["note"] = vc.note;
  }
  try {
    validate_case(sim);
  } catch (const Error& e) {
    return fail(e.what());
  }
  const std::string key = sim.name() + "#" + std::to_string(runs);
  if (auto it = done_.find(key); it != done_.end()) {
    for (const char* k : {"status", "events", "derived"}) row[k] = it->second[k];
    row["elapsed_s"] = 0.0;
    const std::string same = "simulated once for row " + it->second["name"].get<std::string>() +
                             " of this run and reused (the simulation is deterministic)";
    row["note"] = row.contains("note") ? row["note"].get<std::string>() + "; " + same : same;
    return row;
  }

  static int serial = 0;
  const fs::path dir = fs::temp_directory_path() /
                       ("rooflab-cg-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  struct Cleanup {
    fs::path d;
    ~Cleanup() { std::error_code ec; fs::remove_all(d, ec); }
  } cleanup{dir};

  const fs::path out = dir / "callgrind.out", log = dir / "valgrind.log";
  const auto cmd = command(sim, runs, out, log);
  // Passive OpenMP waiting: spinning worker threads would add loads that are not the kernel's.
  std::vector<std::pair<std::string, std::string>> env;
  if (!std::getenv("OMP_WAIT_POLICY")) env.emplace_back("OMP_WAIT_POLICY", "PASSIVE");
  const ChildResult r = run_child(cmd, env, dir / "stdout", dir / "stderr", timeout_s_);
  row["elapsed_s"] = r.seconds;

  if (!r.ok()) {
    std::string why;
    if (!r.timed_out && r.term_signal == 0 && r.exit_code == 3) {
      why = tail_of_file(dir / "stderr", 5);  // run-case's own verification message
      if (why.empty()) why = "verification failed";
    } else {
      why = "valgrind child " + r.describe();
      if (r.timed_out) why += " (raise --timeout, or pick a smaller case)";
      const std::string err = tail_of_file(dir / "stderr", 5), vlog = tail_of_file(log, 8);
      if (!err.empty()) why += "; stderr: " + err;
      if (!vlog.empty() && r.term_signal) why += "; valgrind log: " + vlog;  // why it crashed
    }
    return fail(why);
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().rfind("callgrind.out", 0) == 0) files.push_back(e.path());
  RegionTotals t;
  try {
    t = sum_region_dumps(files, sim.name());
  } catch (const Error& e) {
    return fail(e.what());
  }
  if (t.count != runs)
    return fail("expected " + std::to_string(runs) + " region dumps from callgrind, found " +
                std::to_string(t.count) + " (was the binary built without valgrind/callgrind.h?)");
  json events = json::object();
  for (auto& [k, v] : t.events) events[k] = v / runs;
  row["status"] = "ok";
  row["events"] = events;
  row["derived"] = cachegrind_derived(events.get<std::map<std::string, double>>());
  done_[key] = row;
  return row;
}

}  // namespace rooflab::counters

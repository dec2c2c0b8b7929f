#include "roofline/machine.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "harness/error.hpp"
#include "harness/json_io.hpp"

namespace rooflab::roofline {
namespace {
// Per-thread-count tables are objects keyed by the thread count as a string: the value at
// the largest count <= threads, nullopt when there is none.
std::optional<double> find_threads(const nlohmann::json& table, int threads) {
  if (!table.is_object()) return std::nullopt;
  int best = -1;
  double value = 0;
  for (auto it = table.begin(); it != table.end(); ++it) {
    const int t = std::atoi(it.key().c_str());  // keys checked by check_shape() on load
    if (t <= threads && t > best && it.value().is_number() && it.value().get<double>() > 0) {
      best = t;
      value = it.value();
    }
  }
  if (best < 0) return std::nullopt;
  return value;
}

double lookup_threads(const nlohmann::json& table, int threads, const std::string& what) {
  if (!table.is_object() || table.empty()) throw Error("machine.json has no values for " + what);
  if (auto v = find_threads(table, threads)) return *v;
  throw Error("machine.json has no positive value for " + what + " at <= " +
              std::to_string(threads) + " threads");
}

// The levels table a bandwidth kernel lives in: bandwidth.streams.levels for S > 1.
// raw[key], or an empty object when absent (no copy of the section).
const nlohmann::json& section(const nlohmann::json& raw, const char* key) {
  static const nlohmann::json empty = nlohmann::json::object();
  return raw.contains(key) ? raw[key] : empty;
}

const nlohmann::json& levels_for(const nlohmann::json& raw, const std::string& kernel) {
  static const nlohmann::json empty = nlohmann::json::object();
  const auto& bw = raw["bandwidth"];
  if (split_streams(kernel).streams == 1) return bw["levels"];
  if (!bw.contains("streams") || !bw["streams"].contains("levels")) return empty;
  return bw["streams"]["levels"];
}
// The shapes predict() relies on, checked once on load so that a malformed file is one clear
// error naming the file and the key, never a crash or a silently missing ceiling.
struct ShapeCheck {
  std::string file;
  [[noreturn]] void fail(const std::string& where, const std::string& what) const {
    throw Error(file + ": " + where + " " + what + " (re-run `rooflab characterize`)");
  }
  void object(const nlohmann::json& j, const std::string& where) const {
    if (!j.is_object()) fail(where, "must be an object, got " + j.dump().substr(0, 60));
  }
  // {"<threads>": GB/s or GFLOP/s, ...}: positive integer keys, finite numbers (or null).
  void threads_table(const nlohmann::json& j, const std::string& where) const {
    object(j, where);
    for (auto it = j.begin(); it != j.end(); ++it) {
      const std::string& k = it.key();
      const bool digits = !k.empty() && k.size() <= 7 && k.find_first_not_of("0123456789") == std::string::npos;
      if (!digits || std::atoi(k.c_str()) < 1) fail(where, "has key \"" + k + "\": thread counts must be integers >= 1");
      const auto& v = it.value();
      if (!v.is_null() && (!v.is_number() || !std::isfinite(v.get<double>())))
        fail(where + "." + k, "must be a finite number, got " + v.dump().substr(0, 60));
    }
  }
  // {"fma_f64": {threads table}, ...}
  void ceilings(const nlohmann::json& c, const std::string& where) const {
    object(c, where);
    for (auto k = c.begin(); k != c.end(); ++k) threads_table(k.value(), where + "." + k.key());
  }
  void levels(const nlohmann::json& lv, const std::string& where) const {
    object(lv, where);
    for (auto l = lv.begin(); l != lv.end(); ++l) {
      object(l.value(), where + "." + l.key());
      for (auto k = l.value().begin(); k != l.value().end(); ++k)
        threads_table(k.value(), where + "." + l.key() + "." + k.key());
    }
  }
};
}  // namespace

StreamKernel split_streams(const std::string& kernel) {
  const auto pos = kernel.rfind("_s");
  if (pos == std::string::npos || pos == 0 || pos + 2 >= kernel.size()) return {kernel, 1};
  int s = 0;
  for (size_t i = pos + 2; i < kernel.size(); ++i) {
    if (kernel[i] < '0' || kernel[i] > '9' || s > 1000) return {kernel, 1};
    s = s * 10 + (kernel[i] - '0');
  }
  if (s < 1) return {kernel, 1};
  return {kernel.substr(0, pos), s};
}

std::vector<CacheLevel> cache_levels(const nlohmann::json& j) {
  std::vector<CacheLevel> out;
  if (!j.contains("caches") || !j["caches"].is_object()) return out;
  const auto& caches = j["caches"];
  for (const char* lvl : {"L1", "L2", "L3"})
    for (const char* src : {"measured", "reported"})
      if (caches.contains(src) && caches[src].is_object() && caches[src].contains(lvl) &&
          caches[src][lvl].is_number() && caches[src][lvl].get<double>() > 0) {
        out.push_back({lvl, caches[src][lvl].get<double>(), src});
        break;
      }
  return out;
}

Machine machine_from_json(const nlohmann::json& j, const std::filesystem::path& path) {
  require_schema(j, "rooflab.machine", 1, path.empty() ? "machine.json" : path);
  const ShapeCheck sc{path.empty() ? std::string("machine.json") : path.string()};
  if (j.contains("caches")) {
    sc.object(j["caches"], "caches");
    for (const char* src : {"measured", "reported"})
      if (j["caches"].contains(src) && !j["caches"][src].is_null()) sc.object(j["caches"][src], std::string("caches.") + src);
  }
  if (j.contains("bandwidth")) {
    sc.object(j["bandwidth"], "bandwidth");
    if (j["bandwidth"].contains("levels")) sc.levels(j["bandwidth"]["levels"], "bandwidth.levels");
    if (j["bandwidth"].contains("isa") &&
        !(j["bandwidth"]["isa"].is_string() && parse_isa(j["bandwidth"]["isa"].get<std::string>())))
      sc.fail("bandwidth.isa", "must be scalar, avx2 or avx512, got " + j["bandwidth"]["isa"].dump().substr(0, 60));
    if (j["bandwidth"].contains("by_isa")) {
      const auto& by = j["bandwidth"]["by_isa"];
      sc.object(by, "bandwidth.by_isa");
      for (auto i = by.begin(); i != by.end(); ++i) {
        const std::string where = "bandwidth.by_isa." + i.key();
        if (!parse_isa(i.key())) sc.fail("bandwidth.by_isa", "has key \"" + i.key() + "\": ISAs are scalar, avx2 or avx512");
        sc.object(i.value(), where);
        if (!i.value().contains("levels")) sc.fail(where, "has no \"levels\"");
        sc.levels(i.value()["levels"], where + ".levels");
      }
    }
    if (j["bandwidth"].contains("streams")) {
      sc.object(j["bandwidth"]["streams"], "bandwidth.streams");
      if (j["bandwidth"]["streams"].contains("levels"))
        sc.levels(j["bandwidth"]["streams"]["levels"], "bandwidth.streams.levels");
    }
  }
  if (j.contains("compute")) {
    const auto& comp = j["compute"];
    sc.object(comp, "compute");
    if (comp.contains("isa") && !(comp["isa"].is_string() && parse_isa(comp["isa"].get<std::string>())))
      sc.fail("compute.isa", "must be scalar, avx2 or avx512, got " + comp["isa"].dump().substr(0, 60));
    if (comp.contains("ceilings")) sc.ceilings(comp["ceilings"], "compute.ceilings");
    if (comp.contains("by_isa")) {
      sc.object(comp["by_isa"], "compute.by_isa");
      for (auto i = comp["by_isa"].begin(); i != comp["by_isa"].end(); ++i) {
        const std::string where = "compute.by_isa." + i.key();
        if (!parse_isa(i.key())) sc.fail("compute.by_isa", "has key \"" + i.key() + "\": ISAs are scalar, avx2 or avx512");
        sc.object(i.value(), where);
        if (!i.value().contains("ceilings")) sc.fail(where, "has no \"ceilings\"");
        for (const char* part : {"ceilings", "ceilings_median"})
          if (i.value().contains(part)) sc.ceilings(i.value()[part], where + "." + part);
      }
    }
  }
  if (j.contains("gpu")) sc.object(j["gpu"], "gpu");
  Machine m;
  m.raw = j;
  m.path = path;
  m.caches = cache_levels(j);
  if (!j.contains("bandwidth") || !j["bandwidth"].contains("levels"))
    throw Error((path.empty() ? std::string("machine.json") : path.string()) +
                ": no bandwidth.levels; re-run `rooflab characterize`");
  return m;
}

Machine load_machine(const std::filesystem::path& path) {
  if (!std::filesystem::exists(path))
    throw Error("machine model " + path.string() +
                " not found; run `rooflab characterize --out DIR` first");
  return machine_from_json(read_machine_json(path), path);
}

double Machine::compute(const std::string& key, int threads) const {
  const auto& c = section(section(raw, "compute"), "ceilings");
  if (!c.contains(key)) throw Error("machine.json has no compute ceiling '" + key + "'");
  return lookup_threads(c[key], threads, "compute ceiling " + key);
}

int Machine::measured_threads() const {
  int most = 0;
  if (!raw.contains("compute") || !raw["compute"].contains("ceilings")) return 0;
  for (const auto& table : raw["compute"]["ceilings"])
    if (table.is_object())
      for (auto it = table.begin(); it != table.end(); ++it) most = std::max(most, std::atoi(it.key().c_str()));
  return most;
}

std::string Machine::best_compute_isa() const {
  const auto& c = section(raw, "compute");
  return c.contains("isa") && c["isa"].is_string() ? c["isa"].get<std::string>() : std::string();
}

Machine::ComputeCeiling Machine::find_compute(const std::string& key, int threads, Isa isa) const {
  const auto& comp = section(raw, "compute");
  const std::string best = best_compute_isa();
  const std::string want = isa == Isa::none ? best : std::string(to_string(isa));
  ComputeCeiling out;
  if (!want.empty() && comp.contains("by_isa") && comp["by_isa"].contains(want)) {
    const auto& c = comp["by_isa"][want]["ceilings"];
    if (!c.contains(key)) throw Error("machine.json has no compute ceiling '" + key + "' for " + want);
    out.gflops = lookup_threads(c[key], threads, "compute ceiling " + key + " (" + want + ")");
    out.isa = want;
    return out;
  }
  out.gflops = compute(key, threads);
  out.isa = best;
  if (want != best) {
    const std::string file = path.empty() ? std::string("machine.json") : path.string();
    out.note = comp.contains("by_isa")
                   ? file + " has no " + want + " compute ceilings (the CPU it was measured on lacks " +
                         want + ", or ROOFLAB_MAX_ISA capped `rooflab characterize`): priced against the " + (best.empty() ? "unnamed" : best) + " ones"
                   : file + " has no per-ISA compute ceilings (compute.by_isa, from an older `rooflab "
                            "characterize`): priced against the " + (best.empty() ? "unnamed ISA's" : best) +
                         " ones, not " + want + "'s; re-run `rooflab characterize`";
  }
  return out;
}

double Machine::bandwidth(const std::string& level, const std::string& kernel, int threads) const {
  const auto& lv = levels_for(raw, kernel);
  const bool multi = split_streams(kernel).streams > 1;
  if (!lv.contains(level))
    throw Error("machine.json has no " + std::string(multi ? "multi-stream " : "") +
                "bandwidth for level " + level +
                (multi ? " (bandwidth.streams; re-run `rooflab characterize`)" : ""));
  if (!lv[level].contains(kernel))
    throw Error("machine.json has no '" + kernel + "' bandwidth at " + level);
  return lookup_threads(lv[level][kernel], threads, kernel + " bandwidth at " + level);
}

std::optional<double> Machine::find_bandwidth(const std::string& level, const std::string& kernel,
                                              int threads) const {
  const auto& lv = levels_for(raw, kernel);
  if (!lv.contains(level) || !lv[level].contains(kernel)) return std::nullopt;
  return find_threads(lv[level][kernel], threads);
}

std::pair<double, std::string> Machine::best_dram_traffic(int threads) const {
  std::pair<double, std::string> best{0.0, ""};
  const auto& bw = section(raw, "bandwidth");
  const nlohmann::json* tables[] = {bw.contains("levels") ? &bw["levels"] : nullptr,
                                    bw.contains("streams") && bw["streams"].contains("levels") ? &bw["streams"]["levels"] : nullptr};
  for (const nlohmann::json* t : tables) {
    if (!t || !t->contains("DRAM") || !(*t)["DRAM"].is_object()) continue;
    for (const auto& [kernel, table] : (*t)["DRAM"].items())
      if (const auto v = find_threads(table, threads); v && *v > best.first) best = {*v, kernel};
  }
  return best;
}

std::string Machine::best_bandwidth_isa() const {
  const auto& bw = section(raw, "bandwidth");
  return bw.contains("isa") && bw["isa"].is_string() ? bw["isa"].get<std::string>() : best_compute_isa();
}

Machine::BandwidthCeiling Machine::find_bandwidth(const std::string& level, const std::string& kernel,
                                                  int threads, Isa isa) const {
  BandwidthCeiling out;
  out.isa = best_bandwidth_isa();
  const std::string want = isa == Isa::none ? out.isa : std::string(to_string(isa));
  const bool widest_only = level == "DRAM" || split_streams(kernel).streams > 1;
  if (want == out.isa || widest_only) {
    out.gbps = bandwidth(level, kernel, threads);
    return out;
  }
  const auto& bw = raw["bandwidth"];
  const std::string file = path.empty() ? std::string("machine.json") : path.string();
  if (bw.contains("by_isa") && bw["by_isa"].contains(want)) {
    const auto& lv = bw["by_isa"][want]["levels"];
    if (lv.contains(level) && lv[level].contains(kernel))
      if (auto v = find_threads(lv[level][kernel], threads)) {
        out.gbps = *v;
        out.isa = want;
        return out;
      }
    out.note = file + " has no " + want + " '" + kernel + "' bandwidth at " + level + " for <= " +
               std::to_string(threads) + " threads (bandwidth.by_isa): priced against the " +
               (out.isa.empty() ? "unnamed ISA's" : out.isa) + " one";
  } else if (bw.contains("by_isa")) {
    out.note = file + " has no " + want + " bandwidth ceilings (the CPU it was measured on lacks " +
               want + "): in-cache traffic priced against the " + (out.isa.empty() ? "unnamed ISA's" : out.isa) +
               " ones";
  } else {
    out.no_by_isa = true;
    out.note = file + " has no per-ISA bandwidth ceilings (bandwidth.by_isa, from an older `rooflab "
                      "characterize`): in-cache traffic priced against the " +
               (out.isa.empty() ? "unnamed ISA's" : out.isa) + " ones, not " + want +
               "'s; re-run `rooflab characterize`";
  }
  out.gbps = bandwidth(level, kernel, threads);
  return out;
}

namespace {
const nlohmann::json& gpu_of(const Machine& m) {
  if (!m.has_gpu())
    throw Error((m.path.empty() ? std::string("machine.json") : m.path.string()) +
                " has no \"gpu\" section; run `rooflab gpu-characterize` on the machine with the device");
  return m.raw["gpu"];
}
double positive(const nlohmann::json& j, const std::string& what) {
  if (!j.is_number() || !(j.get<double>() > 0)) throw Error("machine.json has no positive value for " + what);
  return j.get<double>();
}
}  // namespace

bool strip_gpu_prefix(std::string& key) {
  if (key.rfind("gpu:", 0) != 0) return false;
  key.erase(0, 4);
  return true;
}

double Machine::gpu_compute(const std::string& key) const {
  const auto& c = gpu_of(*this).value("compute", nlohmann::json::object());
  if (!c.contains(key)) throw Error("machine.json has no gpu compute ceiling '" + key + "'");
  return positive(c[key], "gpu compute ceiling " + key);
}

double Machine::gpu_bandwidth(const std::string& level, const std::string& kernel) const {
  const auto& bw = gpu_of(*this).value("bandwidth", nlohmann::json::object());
  if (!bw.contains(level) || !bw[level].contains(kernel))
    throw Error("machine.json has no gpu '" + kernel + "' bandwidth at " + level);
  return positive(bw[level][kernel], "gpu " + kernel + " bandwidth at " + level);
}

std::string Machine::gpu_level_for(double bytes) const {
  const auto& g = gpu_of(*this);
  const double l2 = g.value("device", nlohmann::json::object()).value("l2_bytes", 0.0);
  const bool have_l2 = g.value("bandwidth", nlohmann::json::object()).contains("L2");
  return (have_l2 && l2 > 0 && bytes <= l2 / 2) ? "L2" : "DRAM";
}

std::string Machine::level_for(double bytes, int threads) const {
  const auto& lv = raw["bandwidth"]["levels"];
  for (const auto& c : caches) {
    const double cap = (c.name == "L3") ? c.bytes : c.bytes * std::max(threads, 1);
    if (bytes <= cap && lv.contains(c.name)) return c.name;
  }
  return "DRAM";
}
}  // namespace rooflab::roofline

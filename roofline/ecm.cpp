#include "roofline/ecm.hpp"

#include <algorithm>
#include <cstdio>

#include "harness/error.hpp"
#include "roofline/calibration.hpp"
#include "roofline/predict.hpp"

namespace rooflab::roofline {
namespace {
const char* const kLevels[] = {"L1", "L2", "L3", "DRAM"};
}  // namespace

int level_index(const std::string& level) {
  for (int i = 0; i < 4; ++i)
    if (level == kLevels[i]) return i;
  return 3;
}

namespace {

// The capacity the working set is placed against (as Machine::level_for: L1 and L2 private).
const Machine::Level* cache_of(const Machine& machine, const std::string& name) {
  for (const auto& c : machine.caches)
    if (c.name == name) return &c;
  return nullptr;
}
double aggregate(const Machine::Level& c, int threads) {
  return c.name == "L3" ? c.bytes : c.bytes * std::max(threads, 1);
}

std::string mib(double bytes) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3g MiB", bytes / (1024.0 * 1024.0));
  return b;
}

struct Pricer {
  const Machine& machine;
  int threads;
  Isa isa;
  Ecm& e;
  void note(const std::string& n) {
    if (!n.empty() && std::find(e.notes.begin(), e.notes.end(), n) == e.notes.end()) e.notes.push_back(n);
  }
  // Seconds per byte of kernel k in level X.
  double inv_bw(const std::string& level, const std::string& kernel) {
    const StreamKernel sk = split_streams(kernel);
    // S-stream ceilings exist at DRAM only (as predict() uses them); elsewhere the base kernel's.
    if (sk.streams > 1 && level == "DRAM")
      if (const auto v = machine.find_bandwidth(level, kernel, threads); v && *v > 0) return 1.0 / (*v * 1e9);
    const Machine::BandwidthCeiling c = machine.find_bandwidth(level, sk.base, threads, isa);
    if (!(c.gbps > 0)) throw Error("machine.json has no positive '" + sk.base + "' bandwidth at " + level);
    note(c.note);
    if (level != "DRAM" || e.bandwidth_isa.empty()) e.bandwidth_isa = c.isa;
    return 1.0 / (c.gbps * 1e9);
  }
  // Seconds per byte of a transfer into the level above `level` (ecm.hpp).
  double transfer(int idx, const std::string& kernel) {
    const double here = inv_bw(kLevels[idx], kernel);
    if (e.overlap.rule == "overlapping") return here;
    const double above = inv_bw(kLevels[idx - 1], kernel);
    if (here > above) return here - above;
    note(std::string("the measured '") + split_streams(kernel).base + "' bandwidth at " + kLevels[idx] +
         " is not below " + kLevels[idx - 1] + "'s: its transfer costs nothing beyond " + kLevels[idx - 1] +
         "'s (serial rule)");
    return 0;
  }
  double sum(const std::vector<Traffic>& terms, int idx) {
    double t = 0;
    for (const auto& x : terms)
      if (x.bytes > 0) t += x.bytes * (idx == 0 ? inv_bw("L1", x.kernel) : transfer(idx, x.kernel));
    return t;
  }
};

void place(const Model& m, const Machine& machine, int threads, Ecm& e) {
  e.working_set = m.working_set;
  e.level = machine.level_for(m.working_set, threads);
  const int idx = level_index(e.level);
  if (idx < 3) {
    if (const auto* c = cache_of(machine, e.level)) {
      e.capacity_bytes = aggregate(*c, threads);
      e.capacity_source = c->source;
    }
  }
  // The largest capacity it did not fit in: the level above the one priced.
  const Machine::Level* missed = nullptr;
  for (int i = idx - 1; i >= 0 && !missed; --i) missed = cache_of(machine, kLevels[i]);
  const double ws = m.working_set;
  if (e.capacity_bytes > 0 && ws > e.capacity_bytes / 2) {
    e.straddles = true;
    e.notes.push_back("working set " + mib(ws) + " fills more than half of " + e.level + " (" +
                      mib(e.capacity_bytes) + ", " + e.capacity_source + "): priced in " + e.level +
                      "; conflicts or sharing may push part of it out (slower than predicted)");
  } else if (missed && ws <= 2 * aggregate(*missed, threads)) {
    e.straddles = true;
    e.notes.push_back("working set " + mib(ws) + " exceeds " + missed->name + " (" +
                      mib(aggregate(*missed, threads)) + ", " + missed->source + ") by less than 2x: priced in " +
                      e.level + "; part of it may stay in " + missed->name + " (faster than predicted)");
  }
}
}  // namespace

OverlapRule overlap_rule(const Machine& machine) {
  OverlapRule r;
  const auto& raw = machine.raw;
  const std::string file = machine.path.empty() ? std::string("machine.json") : machine.path.string();
  // "undecided": the measurement could not tell the rules apart; the vendor's rule is assumed.
  std::string undecided;
  if (raw.contains("ecm") && raw["ecm"].is_object() && raw["ecm"].contains("overlap")) {
    const auto& o = raw["ecm"]["overlap"];
    if (!o.is_string() || (o != "serial" && o != "overlapping" && o != "undecided"))
      throw Error(file + ": ecm.overlap must be \"serial\", \"overlapping\" or \"undecided\", got " +
                  o.dump().substr(0, 60));
    if (o != "undecided") {
      r.rule = o.get<std::string>();
      r.measured = true;
      r.source = raw["ecm"].value("source", std::string("machine.json ecm.overlap"));
      return r;
    }
    undecided = "; the measurement was undecided (" + raw["ecm"].value("source", std::string("no source")) + ")";
  }
  std::string cpu;
  if (raw.contains("host") && raw["host"].is_object() && raw["host"].contains("cpu") && raw["host"]["cpu"].is_string())
    cpu = raw["host"]["cpu"].get<std::string>();
  const std::string why = file + (undecided.empty() ? " has no ecm.overlap" : "'s ecm.overlap is undecided");
  const bool amd = cpu.find("AMD") != std::string::npos, intel = cpu.find("Intel") != std::string::npos;
  r.rule = amd ? "overlapping" : "serial";
  r.source = amd ? "assumed, not measured (" + why + "): host.cpu \"" + cpu +
                       "\" is AMD, whose cores overlap transfers between cache levels"
           : intel ? "assumed, not measured (" + why + "): host.cpu \"" + cpu +
                         "\" is Intel, whose cores do not overlap transfers between cache levels"
                   : "assumed, not measured (" + why + ", host.cpu \"" + cpu +
                         "\" names no known vendor): serial, the slower of the two rules";
  r.source += undecided;
  return r;
}

namespace {
// The level the calibration shapes lived in (L1 when the fit does not say).
int calibrated_level(const CoreFit& core) { return level_index(core.level.empty() ? "L1" : core.level); }

// The measured in-core time replaces T_OL for the whole run (ecm.hpp): `beyond` the transfers
// its calibration did not see. No floor from the rule's data term: its in-cache terms are in the
// calibration's time already, and the transfers beyond it are what the probe says is not hidden.
void use_calibration(Ecm& e, const CoreFit& core, double beyond) {
  e.in_core = "calibration";
  e.t_core_fit = core.time_s;
  beyond *= core.overlap;  // the share the kernel does not hide (measured by a probe, else 1)
  e.t_beyond = beyond;
  e.t_ol = std::max(core.time_s, e.t_ol_peak);
  if (core.time_s < e.t_ol_peak)
    e.notes.push_back("the calibration's in-core time is below T_OL at the compute ceiling: the ceiling is kept");
  e.time_s = e.t_ol + beyond;
}
}  // namespace

Ecm ecm(const Model& m, const Machine& machine, int threads, Isa isa, const CoreFit* core) {
  Ecm e;
  e.overlap = overlap_rule(machine);
  if (m.phases.empty()) {
    // predict() prices the single-level terms (and gpu models); the ECM is then that bound.
    const Prediction p = predict(m, machine, threads, isa);
    e.fallback = true;
    e.level = p.level;
    e.working_set = m.working_set;
    e.t_ol = p.compute_time_s;
    e.t_mem_fallback = p.memory_time_kernels_s;  // each stream at its own ceiling, not the bound's one pipe
    e.time_s = std::max(p.compute_time_s, e.t_mem_fallback);
    e.compute_isa = p.compute_isa;
    e.bandwidth_isa = p.bandwidth_isa;
    e.notes.push_back("the variant declares no per-level traffic: ECM = the roofline's single-level terms "
                      "(T_nOL and the per-level transfers unknown)");
    for (const auto& n : p.notes) e.notes.push_back(n);
    e.t_ol_peak = e.t_ol;
    if (core)
      use_calibration(e, *core, level_index(e.level) > calibrated_level(*core) ? e.t_mem_fallback : 0);
    return e;
  }
  place(m, machine, threads, e);
  Pricer pr{machine, threads, isa, e};
  const int idx = level_index(e.level);
  double beyond_sum = 0;
  const int calibrated = core ? calibrated_level(*core) : 3;
  for (const LevelTraffic& lt : m.phases) {
    EcmPhase ph;
    ph.name = lt.name;
    ph.note = lt.note;
    if (lt.flops > 0) {
      if (m.compute_ceiling.empty()) throw Error("model has flops but names no compute ceiling");
      const Machine::ComputeCeiling c = machine.find_compute(m.compute_ceiling, threads, isa);
      e.compute_isa = c.isa;
      pr.note(c.note);
      ph.t_ol = lt.flops / (c.gflops * 1e9);
    }
    ph.t_nol = pr.sum(lt.l1, 0);
    if (idx >= 1) ph.t_l1l2 = pr.sum(lt.l2, 1);
    if (idx >= 2) ph.t_l2l3 = pr.sum(lt.l3, 2);
    if (idx >= 3) ph.t_l3mem = pr.sum(lt.mem, 3);
    const double data = e.overlap.rule == "overlapping"
                            ? std::max({ph.t_nol, ph.t_l1l2, ph.t_l2l3, ph.t_l3mem})
                            : ph.t_nol + ph.t_l1l2 + ph.t_l2l3 + ph.t_l3mem;
    ph.time_s = std::max(ph.t_ol, data);
    // The boundaries beyond the calibration's level (transfers into level i from level i+1).
    double beyond = 0;
    const double transfers[] = {ph.t_l1l2, ph.t_l2l3, ph.t_l3mem};
    for (int i = calibrated; i < 3; ++i)
      beyond = e.overlap.rule == "overlapping" ? std::max(beyond, transfers[i]) : beyond + transfers[i];
    beyond_sum += beyond;
    e.time_s += ph.time_s;
    e.t_ol += ph.t_ol, e.t_nol += ph.t_nol, e.t_l1l2 += ph.t_l1l2, e.t_l2l3 += ph.t_l2l3, e.t_l3mem += ph.t_l3mem;
    e.phases.push_back(ph);
  }
  e.t_ol_peak = e.t_ol;
  if (core) use_calibration(e, *core, beyond_sum);
  if (!(e.time_s > 0)) throw Error("ECM predicts zero time (no flops and no traffic)");
  return e;
}

nlohmann::json to_json(const Ecm& e) {
  using json = nlohmann::json;
  auto str = [](const std::string& s) { return s.empty() ? json(nullptr) : json(s); };
  json j = {{"time_s", e.time_s},
            {"T_OL", e.t_ol},
            {"T_nOL", e.fallback ? json(nullptr) : json(e.t_nol)},
            {"T_L1L2", e.fallback ? json(nullptr) : json(e.t_l1l2)},
            {"T_L2L3", e.fallback ? json(nullptr) : json(e.t_l2l3)},
            {"T_L3Mem", e.fallback ? json(nullptr) : json(e.t_l3mem)},
            {"T_mem_roofline", e.fallback ? json(e.t_mem_fallback) : json(nullptr)},
            {"fallback", e.fallback},
            {"overlap", e.overlap.rule},
            {"overlap_measured", e.overlap.measured},
            {"overlap_source", e.overlap.source},
            {"level", e.level},
            {"working_set", e.working_set},
            {"capacity_bytes", e.capacity_bytes > 0 ? json(e.capacity_bytes) : json(nullptr)},
            {"capacity_source", str(e.capacity_source)},
            {"straddles", e.straddles},
            {"compute_isa", str(e.compute_isa)},
            {"bandwidth_isa", str(e.bandwidth_isa)},
            {"notes", e.notes},
            {"in_core", e.in_core},
            {"T_OL_peak", e.t_ol_peak},
            {"T_core_calibrated", e.in_core == "calibration" ? json(e.t_core_fit) : json(nullptr)},
            {"T_beyond_calibration", e.in_core == "calibration" ? json(e.t_beyond) : json(nullptr)}};
  json phases = json::array();
  for (const auto& p : e.phases)
    phases.push_back({{"name", p.name}, {"time_s", p.time_s}, {"T_OL", p.t_ol}, {"T_nOL", p.t_nol},
                      {"T_L1L2", p.t_l1l2}, {"T_L2L3", p.t_l2l3}, {"T_L3Mem", p.t_l3mem},
                      {"note", p.note.empty() ? json(nullptr) : json(p.note)}});
  j["phases"] = phases;
  return j;
}

}  // namespace rooflab::roofline

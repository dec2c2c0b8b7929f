#include "microbench/overlap.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <set>

#include "harness/error.hpp"
#include "microbench/sysinfo.hpp"

namespace rooflab::microbench {
namespace {
using Clock = std::chrono::steady_clock;
std::atomic<double> g_overlap_sink;

constexpr int kLineDoubles = 64 / int(sizeof(double));

// t_L1 and t_X at the loads counts both have, per outer level.
struct Pair {
  double t1, tx;
};
using Pairs = std::map<std::string, std::vector<Pair>>;

double rms(double sq, size_t n) { return n ? std::sqrt(sq / double(n)) : 0; }

// Serial: t_X = t1 + c, c by least relative squares (weights 1 / t_X^2).
OverlapFit fit_serial(const Pairs& pairs) {
  OverlapFit f;
  double sq = 0;
  size_t n = 0;
  for (const auto& [lvl, ps] : pairs) {
    double num = 0, den = 0;
    for (const auto& p : ps) num += (p.tx - p.t1) / (p.tx * p.tx), den += 1 / (p.tx * p.tx);
    const double c = std::max(0.0, num / den);
    f.transfer_ns[lvl] = c;
    for (const auto& p : ps) sq += std::pow((p.t1 + c - p.tx) / p.tx, 2), ++n;
  }
  f.rms_rel_error = rms(sq, n);
  return f;
}

// Overlapping: t_X = max(t1, c). The error is piecewise smooth in c: minimized over a fine
// grid plus the points' own times (where a piece may end).
OverlapFit fit_overlapping(const Pairs& pairs) {
  OverlapFit f;
  double sq = 0;
  size_t n = 0;
  for (const auto& [lvl, ps] : pairs) {
    auto err = [&](double c) {
      double e = 0;
      for (const auto& p : ps) e += std::pow((std::max(p.t1, c) - p.tx) / p.tx, 2);
      return e;
    };
    double hi = 0;
    std::vector<double> cand = {0};
    for (const auto& p : ps) hi = std::max(hi, p.tx), cand.push_back(p.tx), cand.push_back(p.t1);
    for (int k = 0; k <= 4000; ++k) cand.push_back(2 * hi * k / 4000.0);
    double best = 0, best_e = err(0);
    for (double c : cand)
      if (const double e = err(c); e < best_e) best = c, best_e = e;
    f.transfer_ns[lvl] = best;
    sq += best_e, n += ps.size();
  }
  f.rms_rel_error = rms(sq, n);
  return f;
}

std::string pct(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.1f%%", 100 * x);
  return b;
}
}  // namespace

OverlapDecision decide_overlap(const std::vector<OverlapPoint>& points, double min_margin, double min_error) {
  OverlapDecision d;
  d.min_margin = min_margin, d.min_error = min_error;
  std::map<int, double> t1;
  for (const auto& p : points)
    if (p.level == "L1" && p.ns_per_line > 0) t1[p.loads] = p.ns_per_line;
  Pairs pairs;
  for (const auto& p : points)
    if (p.level != "L1" && p.ns_per_line > 0 && t1.count(p.loads)) pairs[p.level].push_back({t1[p.loads], p.ns_per_line});
  for (auto it = pairs.begin(); it != pairs.end();)
    it = it->second.size() < 3 ? pairs.erase(it) : std::next(it);
  if (pairs.empty()) {
    d.overlap = "undecided";
    d.reason = "no level beyond L1 with points at 3 or more loads counts that L1 also has";
    return d;
  }
  d.serial = fit_serial(pairs);
  d.overlapping = fit_overlapping(pairs);
  const bool serial_wins = d.serial.rms_rel_error <= d.overlapping.rms_rel_error;
  d.winner = serial_wins ? "serial" : "overlapping";
  const double win = std::min(d.serial.rms_rel_error, d.overlapping.rms_rel_error);
  const double lose = std::max(d.serial.rms_rel_error, d.overlapping.rms_rel_error);
  // A perfect fit (synthetic data) has error 0: the margin is then taken against a 0.1% floor.
  d.margin = lose / std::max(win, 1e-3);
  const std::string errs = "RMS relative error serial " + pct(d.serial.rms_rel_error) + ", overlapping " +
                           pct(d.overlapping.rms_rel_error);
  if (d.margin >= min_margin && lose >= min_error) {
    d.overlap = d.winner;
    d.reason = errs + ": " + d.winner + " fits better by " + std::to_string(d.margin).substr(0, 4) + "x";
  } else {
    d.overlap = "undecided";
    d.reason = errs + ": the worse fit is not " + std::to_string(min_margin).substr(0, 3) +
               "x the better one's error and above " + pct(min_error) + " (the points do not tell the rules apart)";
  }
  return d;
}

std::map<std::string, size_t> overlap_working_sets(const std::map<std::string, size_t>& capacities) {
  std::map<std::string, size_t> ws;
  size_t above = 0;
  for (const char* lvl : {"L1", "L2", "L3"}) {
    auto it = capacities.find(lvl);
    if (it == capacities.end() || it->second == 0) break;
    // Whole pages (whole vectors and lines); whole lines for a level under 16 KiB (a small L1
    // measured on a loaded machine must not leave the rule unmeasured).
    const size_t q = it->second / 4, w = q >= 4096 ? q / 4096 * 4096 : q / 64 * 64;
    if (w == 0 || (above && w < 2 * above)) break;
    ws[lvl] = w;
    above = it->second;
  }
  return ws;
}

std::vector<OverlapPoint> measure_overlap(const KernelTable& kt, int cpu,
                                          const std::map<std::string, size_t>& working_sets,
                                          const Timing& timing) {
  ScopedPin pin(cpu);
  size_t largest = 0;
  for (const auto& [lvl, b] : working_sets) largest = std::max(largest, b);
  std::vector<double> buf(largest / sizeof(double) + 8, 1.0);
  // 64-byte aligned start: each vector within one line, as in the bandwidth sweeps.
  double* base = buf.data();
  while (reinterpret_cast<uintptr_t>(base) % 64) ++base;
  std::vector<OverlapPoint> out;
  double sink = 0;
  for (const auto& [lvl, bytes] : working_sets) {
    const size_t n = bytes / sizeof(double);
    for (size_t li = 0; li < std::size(kReloadCounts); ++li) {
      const ReadFn fn = kt.read_reload[li];
      auto run = [&](uint64_t reps) {
        const auto t0 = Clock::now();
        sink += fn(base, n, reps);
        return std::chrono::duration<double>(Clock::now() - t0).count();
      };
      uint64_t reps = 1;
      for (double t = run(reps); t < timing.target_s / 2;)  // calibrates and warms the level
        reps = uint64_t(std::ceil(double(reps) * std::clamp(1.2 * timing.target_s / std::max(t, 1e-9), 2.0, 1000.0))),
        t = run(reps);
      std::vector<double> ns;
      for (int s = 0; s < std::max(timing.samples, 1); ++s)
        ns.push_back(run(reps) / double(reps) / (double(n) / kLineDoubles) * 1e9);
      std::sort(ns.begin(), ns.end());
      out.push_back({lvl, kReloadCounts[li], bytes, ns.front(), ns[ns.size() / 2]});
    }
  }
  g_overlap_sink.store(sink, std::memory_order_relaxed);
  return out;
}

nlohmann::json overlap_json(const std::vector<OverlapPoint>& points, const OverlapDecision& d,
                            const std::string& isa, const std::string& capacity_source) {
  using json = nlohmann::json;
  json pts = json::array();
  for (const auto& p : points)
    pts.push_back({{"level", p.level}, {"loads", p.loads}, {"bytes", p.bytes}, {"ns_per_line", p.ns_per_line},
                   {"ns_per_line_median", p.ns_per_line_median}});
  auto fit = [&](const OverlapFit& f) {
    return json{{"rms_rel_error", d.winner.empty() ? json(nullptr) : json(f.rms_rel_error)},
                {"transfer_ns_per_line", f.transfer_ns}};
  };
  json j = {{"overlap", d.overlap},
            {"measured", d.overlap != "undecided"},
            {"source", "measured by rooflab characterize (" +
                           std::string(d.overlap == "undecided" ? "undecided" : d.overlap) + "): " + d.reason},
            {"evidence",
             {{"kernel", "read over one working set per level, each vector loaded L times (" + isa +
                             "), one pinned thread; ns per 64-byte line, best of the samples"},
              {"capacities", capacity_source},
              {"points", pts},
              {"fits", {{"serial", fit(d.serial)}, {"overlapping", fit(d.overlapping)}}},
              {"winner", d.winner.empty() ? json(nullptr) : json(d.winner)},
              {"margin", d.winner.empty() ? json(nullptr) : json(d.margin)},
              {"min_margin", d.min_margin},
              {"min_error", d.min_error},
              {"reason", d.reason}}}};
  return j;
}

}  // namespace rooflab::microbench

#include "microbench/levels.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "harness/error.hpp"

namespace rooflab::microbench {

Labeled label_levels(const std::vector<size_t>& detected,
                     const std::map<std::string, size_t>& reported) {
  std::vector<size_t> caps = detected;
  std::sort(caps.begin(), caps.end());
  std::vector<bool> used(caps.size(), false);
  Labeled out;
  for (const auto& lvl : kCacheLevels) {
    auto it = reported.find(lvl);
    if (it == reported.end() || it->second == 0) continue;
    int best = -1;
    double best_d = std::log(2.0) + 1e-9;
    for (size_t i = 0; i < caps.size(); ++i) {
      double d = std::fabs(std::log(double(caps[i]) / double(it->second)));
      if (!used[i] && d <= best_d) best = int(i), best_d = d;
    }
    if (best >= 0) {
      used[size_t(best)] = true;
      out.levels[lvl] = caps[size_t(best)];
    }
  }
  // Reported matches must themselves be increasing; a crossing pair keeps the smaller level.
  size_t prev = 0;
  for (const auto& lvl : kCacheLevels) {
    auto it = out.levels.find(lvl);
    if (it == out.levels.end()) continue;
    if (it->second <= prev) {
      for (size_t i = 0; i < caps.size(); ++i)
        if (caps[i] == it->second && used[i]) { used[i] = false; break; }
      out.levels.erase(it);
      continue;
    }
    prev = it->second;
  }
  for (size_t i = 0; i < caps.size(); ++i) {
    if (used[i]) continue;
    // Free levels this capacity fits between the labeled ones; prefer the one whose
    // reported size is nearest (a missed L2 must not push the L3 into the "L2" slot).
    int choice = -1;
    double choice_d = std::numeric_limits<double>::infinity();
    for (size_t l = 0; l < kCacheLevels.size(); ++l) {
      if (out.levels.count(kCacheLevels[l])) continue;
      bool fits = true;
      for (size_t o = 0; o < kCacheLevels.size(); ++o) {
        auto it = out.levels.find(kCacheLevels[o]);
        if (it == out.levels.end()) continue;
        if ((o < l && it->second >= caps[i]) || (o > l && it->second <= caps[i])) fits = false;
      }
      if (!fits) continue;
      auto r = reported.find(kCacheLevels[l]);
      const double d = r == reported.end() || r->second == 0
                           ? std::numeric_limits<double>::max()  // unknown: after known ones
                           : std::fabs(std::log(double(caps[i]) / double(r->second)));
      if (choice < 0 || d < choice_d) choice = int(l), choice_d = d;
    }
    if (choice >= 0)
      out.levels[kCacheLevels[size_t(choice)]] = caps[i];
    else
      out.unlabeled.push_back(caps[i]);
  }
  return out;
}

RangeCapacities range_capacities(const Labeled& labeled, const std::map<std::string, size_t>& reported) {
  RangeCapacities out{labeled.levels, {}};
  for (size_t l = 0; l < kCacheLevels.size(); ++l) {
    const std::string& lvl = kCacheLevels[l];
    const auto r = reported.find(lvl);
    if (labeled.levels.count(lvl) || r == reported.end() || r->second == 0) continue;
    bool between = true, above_some = false;
    for (size_t o = 0; o < kCacheLevels.size(); ++o) {
      const auto it = labeled.levels.find(kCacheLevels[o]);
      if (it == labeled.levels.end()) continue;
      if (o < l) between &= it->second < r->second, above_some = true;
      if (o > l) between &= it->second > r->second;
    }
    // Not below the first detected level (nothing else was measured apart from it). The last
    // level is filled too when its step is missing (a VM's L3 is seen at 8 MiB in one run and
    // not at all in the next): the model places working sets against its reported size, so
    // bandwidth.levels needs what working sets of that size got, DRAM-like or not; without it
    // the ECM of every case crossing that level is lost.
    if (between && above_some) {
      out.levels[lvl] = r->second;
      out.filled.push_back(lvl);
    }
  }
  return out;
}

std::map<std::string, Range> level_ranges(const std::map<std::string, size_t>& capacity,
                                          const std::map<std::string, int>& instances,
                                          double dram_floor) {
  std::map<std::string, Range> out;
  double prev = 0;
  for (const auto& lvl : kCacheLevels) {
    auto it = capacity.find(lvl);
    if (it == capacity.end()) continue;
    auto inst = instances.find(lvl);
    const double agg = double(it->second) * (inst == instances.end() ? 1 : inst->second);
    Range r{std::max(2 * prev, agg / 8), agg / 2};
    if (r.lo > r.hi) r = {prev * 1.001, agg};  // levels closer than 4x: the whole gap
    if (r.lo <= r.hi) out[lvl] = r;
    prev = std::max(prev, agg);
  }
  out["DRAM"] = {dram_floor, std::numeric_limits<double>::infinity()};
  return out;
}

std::vector<std::pair<double, double>> at_sweep_sizes(std::vector<std::pair<double, double>> points,
                                                      const std::vector<size_t>& sizes, double tolerance) {
  for (auto& p : points)
    for (size_t s : sizes)
      if (std::abs(p.first / double(s) - 1) <= tolerance) {
        p.first = double(s);
        break;
      }
  return points;
}

std::optional<double> median_in(const std::vector<std::pair<double, double>>& points, Range r) {
  std::vector<double> v;
  for (const auto& [bytes, value] : points)
    if (bytes >= r.lo && bytes <= r.hi) v.push_back(value);
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::optional<double> dram_plateau(const std::vector<std::pair<double, double>>& points, Range r,
                                   double tolerance) {
  const std::pair<double, double>* last = nullptr;
  for (const auto& p : points)
    if (p.first >= r.lo && p.first <= r.hi && (!last || p.first > last->first)) last = &p;
  if (!last) return std::nullopt;
  std::vector<std::pair<double, double>> tail;
  for (const auto& p : points)
    if (p.first >= r.lo && p.first <= r.hi && p.second <= (1 + tolerance) * last->second) tail.push_back(p);
  return median_in(tail, r);
}

std::vector<size_t> plateau_dips(const std::vector<std::pair<double, double>>& points,
                                 double tolerance) {
  std::vector<size_t> out;
  for (size_t i = 1; i + 1 < points.size(); ++i) {
    const double l = points[i - 1].second, v = points[i].second, r = points[i + 1].second;
    if (v < (1 - tolerance) * std::min(l, r) && r >= (1 - tolerance) * l) out.push_back(i);
  }
  return out;
}

double interpolate(const std::vector<std::pair<double, double>>& points, double bytes) {
  if (points.empty()) throw Error("interpolate: empty curve");
  if (bytes <= points.front().first) return points.front().second;
  if (bytes >= points.back().first) return points.back().second;
  auto hi = std::lower_bound(points.begin(), points.end(), std::make_pair(bytes, -1e300));
  auto lo = hi - 1;
  const double t = std::log(bytes / lo->first) / std::log(hi->first / lo->first);
  return std::exp(std::log(lo->second) + t * (std::log(hi->second) - std::log(lo->second)));
}

}  // namespace rooflab::microbench

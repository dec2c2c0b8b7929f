#include "microbench/capacity.hpp"

#include <algorithm>
#include <cmath>

#include "harness/error.hpp"

namespace rooflab::microbench {

std::vector<size_t> detect_capacities(const std::vector<std::pair<double, double>>& curve,
                                      const CapacityOptions& opt) {
  if (!(opt.drop > 0 && opt.drop < 1))
    throw Error("detect_capacities: drop must be in (0, 1)");
  auto pts = curve;
  for (const auto& [bytes, value] : pts)
    if (!(bytes > 0) || !(value > 0) || !std::isfinite(value))
      throw Error("detect_capacities: sizes and values must be positive and finite");
  std::sort(pts.begin(), pts.end());
  const size_t n = pts.size();
  if (n < 3) return {};

  // Work in log space with "higher is better" orientation, so a level ending is a decline.
  std::vector<double> y(n), x(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = pts[i].first;
    double v = std::log(pts[i].second);
    y[i] = opt.higher_is_better ? v : -v;
  }
  std::vector<double> s = y;
  for (size_t i = 1; i + 1 < n; ++i) {
    double a = y[i - 1], b = y[i], c = y[i + 1];
    s[i] = std::max(std::min(a, b), std::min(std::max(a, b), c));  // median of 3
  }

  // first point at most `octaves` octaves below x[j] (at least the neighbour j-1)
  auto back = [&](size_t j, double octaves) {
    size_t b = j - 1;
    while (b > 0 && x[b - 1] * std::exp2(octaves) >= x[j] * (1 - 1e-9)) --b;
    return b;
  };
  const double t1 = -std::log1p(-opt.drop);          // > drop within one octave
  const double t2 = -std::log1p(-1.25 * opt.drop);   // > 1.25 drop within two octaves...
  const double still = -std::log1p(-0.5 * opt.drop);  // ...while still falling
  std::vector<bool> steep(n, false);
  for (size_t j = 1; j < n; ++j) {
    const double d1 = s[back(j, 1)] - s[j], d2 = s[back(j, 2)] - s[j];
    steep[j] = d1 > t1 || (d2 > t2 && d1 > still);
  }

  std::vector<size_t> caps;
  size_t plateau_start = 0;
  for (size_t j = 1; j < n;) {
    if (!steep[j]) { ++j; continue; }
    size_t run_end = j;
    while (run_end + 1 < n && steep[run_end + 1]) ++run_end;
    // The plateau's level is its median; a gradual transition may have started before the
    // first steep point, so the capacity is the last point still within drop/2 of it.
    std::vector<double> plateau(s.begin() + long(plateau_start), s.begin() + long(j));
    std::nth_element(plateau.begin(), plateau.begin() + long(plateau.size() / 2), plateau.end());
    const double level = plateau[plateau.size() / 2];
    size_t last = j - 1;
    while (last > plateau_start && level - s[last] > still) --last;
    if (last + 1 - plateau_start >= opt.min_plateau_points)
      caps.push_back(static_cast<size_t>(std::llround(x[last])));
    plateau_start = run_end + 1;
    j = run_end + 1;
  }
  return caps;
}

}  // namespace rooflab::microbench

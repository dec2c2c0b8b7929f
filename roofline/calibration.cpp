#include "roofline/calibration.hpp"

#include <cmath>
#include <limits>

namespace rooflab::roofline {
namespace {
// Solves the normal equations of min |A x - 1|^2 (A: n x k, row-major); false when singular.
bool least_squares(const std::vector<std::vector<double>>& A, std::vector<double>& x) {
  const size_t n = A.size(), k = A.empty() ? 0 : A[0].size();
  // Columns scaled to a maximum of 1: the units' counts differ by orders of magnitude.
  std::vector<double> scale(k, 0);
  for (const auto& row : A)
    for (size_t j = 0; j < k; ++j) scale[j] = std::max(scale[j], std::abs(row[j]));
  for (double s : scale)
    if (!(s > 0)) return false;
  std::vector<std::vector<double>> M(k, std::vector<double>(k + 1, 0));
  for (size_t i = 0; i < n; ++i)
    for (size_t p = 0; p < k; ++p) {
      for (size_t q = 0; q < k; ++q) M[p][q] += A[i][p] / scale[p] * A[i][q] / scale[q];
      M[p][k] += A[i][p] / scale[p];
    }
  for (size_t c = 0; c < k; ++c) {  // Gaussian elimination, partial pivoting
    size_t piv = c;
    for (size_t r = c + 1; r < k; ++r)
      if (std::abs(M[r][c]) > std::abs(M[piv][c])) piv = r;
    if (std::abs(M[piv][c]) < 1e-10) return false;
    std::swap(M[c], M[piv]);
    for (size_t r = 0; r < k; ++r) {
      if (r == c) continue;
      const double f = M[r][c] / M[c][c];
      for (size_t q = c; q <= k; ++q) M[r][q] -= f * M[c][q];
    }
  }
  x.assign(k, 0);
  for (size_t j = 0; j < k; ++j) x[j] = M[j][k] / M[j][j] / scale[j];
  return true;
}
}  // namespace

std::optional<CoreFit> fit_core(const WorkUnits& work, const std::vector<CalibrationSample>& samples) {
  std::vector<std::string> units;
  for (const auto& [u, n] : work) units.push_back(u);
  std::vector<const CalibrationSample*> used;
  for (const auto& s : samples) {
    bool all = !s.probe && s.time_s > 0 && std::isfinite(s.time_s);
    for (const auto& u : units) all = all && s.work.count(u) && std::isfinite(s.work.at(u)) && s.work.at(u) >= 0;
    if (all) used.push_back(&s);
  }
  const size_t k = units.size();
  if (used.empty() || k == 0 || k > 16) return std::nullopt;
  double best = std::numeric_limits<double>::infinity();
  std::optional<CoreFit> out;
  for (unsigned size = 1; size <= k; ++size)  // smaller subsets first: they win ties
  for (unsigned mask = 1; mask < (1u << k); ++mask) {
    if (unsigned(__builtin_popcount(mask)) != size) continue;
    std::vector<size_t> cols;
    for (size_t j = 0; j < k; ++j)
      if (mask >> j & 1) cols.push_back(j);
    if (cols.size() > used.size()) continue;
    // Relative residuals: row i is sample i's units over its time, against 1.
    std::vector<std::vector<double>> A;
    for (const auto* s : used) {
      std::vector<double> row;
      for (size_t j : cols) row.push_back(s->work.at(units[j]) / s->time_s);
      A.push_back(row);
    }
    std::vector<double> x;
    if (!least_squares(A, x)) continue;
    bool ok = true;
    for (double v : x) ok = ok && v >= 0 && std::isfinite(v);
    if (!ok) continue;
    double res = 0, worst = 0;
    for (const auto& row : A) {
      double fit = 0;
      for (size_t j = 0; j < cols.size(); ++j) fit += row[j] * x[j];
      res += (fit - 1) * (fit - 1);
      worst = std::max(worst, std::abs(fit - 1));
    }
    // A larger subset must fit better (beyond rounding): the simpler model extrapolates more safely.
    if (!(res < best - 1e-12)) continue;
    CoreFit f;
    for (const auto& u : units) f.cost_s[u] = 0;
    for (size_t j = 0; j < cols.size(); ++j) f.cost_s[units[cols[j]]] = x[j];
    f.time_s = f.price(work);
    if (!(f.time_s > 0)) continue;
    for (const auto* s : used) f.cases.push_back(s->name);
    f.max_rel_residual = worst;
    best = res;
    out = f;
  }
  return out;
}

nlohmann::json to_json(const CoreFit& f) {
  auto str = [](const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
  return {{"time_s", f.time_s}, {"cost_s", f.cost_s}, {"cases", f.cases}, {"max_rel_residual", f.max_rel_residual},
          {"level", str(f.level)}, {"overlap", f.overlap},
          {"overlap_measured", f.overlap_probe.empty() ? nlohmann::json(nullptr) : nlohmann::json(f.overlap_measured)},
          {"overlap_probe", str(f.overlap_probe)},
          {"overlap_level", str(f.overlap_level)}};
}

}  // namespace rooflab::roofline

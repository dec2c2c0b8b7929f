// Full solves (see solve.hpp); `rooflab sinkhorn` is apps/sinkhorn_solve.cpp.
#include "kernels/sinkhorn/solve.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <type_traits>

#include <nlohmann/json.hpp>

#include "harness/buffer.hpp"
#include "harness/error.hpp"
#include "harness/isa_choice.hpp"
#include "kernels/sinkhorn/sinkhorn.hpp"

namespace rooflab::sinkhorn {
namespace {

std::string num(double x) {
  std::ostringstream os;
  os.precision(6);
  os << x;
  return os.str();
}

template <class T>
void check_vector(const T* x, int64_t n, const char* name) {
  long double s = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (!std::isfinite(double(x[i])) || x[i] < 0)
      throw Error(std::string("sinkhorn solve: ") + name + "[" + std::to_string(i) + "] = " + num(double(x[i])) +
                  ": marginals must be finite and >= 0");
    s += x[i];
  }
  if (!(s > 0)) throw Error(std::string("sinkhorn solve: ") + name + " sums to 0: nothing to transport");
}

template <class T>
long double total(const T* x, int64_t n) {
  long double s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i];
  return s;
}

// ||P 1 - a||_1 + ||P^T 1 - b||_1 for P = diag(u) K diag(v) (u, v null: P = A).
template <class T>
double marginal_error(const T* A, int64_t M, int64_t N, const T* u, const T* v, const T* a, const T* b) {
  std::vector<long double> col(size_t(N), 0.0L);
  long double err = 0;
  for (int64_t i = 0; i < M; ++i) {
    const T* row = A + i * N;
    long double s = 0;
    const long double ui = u ? u[i] : 1.0L;
    for (int64_t j = 0; j < N; ++j) {
      const long double p = ui * row[j] * (v ? v[j] : 1.0L);
      s += p;
      col[size_t(j)] += p;
    }
    err += std::fabs(s - a[i]);
  }
  for (int64_t j = 0; j < N; ++j) err += std::fabs(col[size_t(j)] - b[j]);
  return double(err);
}

// POT's unbalanced stopping rule between two scaling vectors.
template <class T>
double relative_change(const std::vector<T>& x, const std::vector<T>& prev) {
  double d = 0, mx = 1;
  for (size_t i = 0; i < x.size(); ++i) {
    d = std::max(d, std::fabs(double(x[i]) - double(prev[i])));
    mx = std::max({mx, std::fabs(double(x[i])), std::fabs(double(prev[i]))});
  }
  return d / mx;
}

Isa pick_isa(const std::string& variant, Isa requested, DType dt) {
  const bool has_isa = variant == "microkernel" || variant == "mapuot" || variant == "fused_uv";
  if (!has_isa) {
    if (requested != Isa::none)
      throw Error("sinkhorn solve: variant " + variant + " is not ISA-specific (got isa " +
                  std::string(to_string(requested)) + ")");
    return Isa::none;
  }
  if (requested == Isa::none) return preferred_isa("sinkhorn", variant, dt);
  if (!isa_supported(requested))
    throw Error("sinkhorn solve: this CPU does not support " + std::string(to_string(requested)));
  return requested;
}

}  // namespace

template <class T>
SolveResult<T> solve(const T* C, int64_t M, int64_t N, const T* a, const T* b, const SolveOptions& o) {
  const char* dt = std::is_same_v<T, double> ? "f64" : "f32";
  if (M < 1 || N < 1) throw Error("sinkhorn solve: sizes must be >= 1, got " + std::to_string(M) + "x" + std::to_string(N));
  if (!(o.reg > 0) || !std::isfinite(o.reg)) throw Error("sinkhorn solve: reg must be > 0 and finite, got " + num(o.reg));
  if (!(o.reg_m > 0)) throw Error("sinkhorn solve: reg_m must be > 0 (inf = balanced), got " + num(o.reg_m));
  if (!(o.tol >= 0)) throw Error("sinkhorn solve: tol must be >= 0");
  if (o.max_iter < 1 || o.check_every < 1 || o.threads < 1)
    throw Error("sinkhorn solve: max_iter, check_every and threads must be >= 1");
  const bool balanced = std::isinf(o.reg_m);
  const std::string& var = o.variant;
  const bool fused = var == "mapuot" || var == "fused_uv";
  if (!fused && var != "typical" && var != "c2r" && var != "blocked" && var != "microkernel")
    throw Error("sinkhorn solve: unknown variant '" + var + "' (known: typical, c2r, blocked, microkernel, mapuot, fused_uv)");
  if (!balanced && var != "fused_uv")
    throw Error("sinkhorn solve: unbalanced OT (reg_m) needs variant fused_uv: " + var +
                " scales by pow(target / sum, fi) (MAP-UOT/COFFEE), whose fixed points have exact "
                "marginals (a damped balanced Sinkhorn), not POT's sinkhorn_unbalanced solution");
  const Isa isa = pick_isa(var, o.isa, std::is_same_v<T, double> ? DType::f64 : DType::f32);
  check_vector(a, M, "a");
  check_vector(b, N, "b");
  if (balanced) {
    const long double sa = total(a, M), sb = total(b, N);
    if (std::fabs(double(sa - sb)) > 1e-6 * double(std::max(sa, sb)))
      throw Error("sinkhorn solve: balanced marginals must have equal mass, sum(a) = " + num(double(sa)) +
                  ", sum(b) = " + num(double(sb)) + " (give reg_m for unbalanced OT)");
  }
  require_memory(size_t(2 * M * N) * sizeof(T), "sinkhorn solve");

  // K = exp(-C / reg), computed in double, stored in T; every row (column) with mass to
  // move needs a positive entry, or no scaling can reach its marginal.
  AlignedBuffer<T> K(size_t(M * N));
  std::vector<char> col_alive(size_t(N), 0);
  for (int64_t i = 0; i < M; ++i) {
    bool alive = false;
    double cmin = std::numeric_limits<double>::infinity();
    for (int64_t j = 0; j < N; ++j) {
      const double c = double(C[i * N + j]);
      if (!std::isfinite(c) || c < 0)
        throw Error("sinkhorn solve: C[" + std::to_string(i) + "][" + std::to_string(j) + "] = " + num(c) +
                    ": costs must be finite and >= 0");
      const T k = T(std::exp(-c / o.reg));
      K[size_t(i * N + j)] = k;
      if (k > 0) alive = true, col_alive[size_t(j)] = 1;
      cmin = std::min(cmin, c);
    }
    if (!alive && a[i] > 0)
      throw Error("sinkhorn solve: row " + std::to_string(i) + " of K = exp(-C/reg) underflows to zero in " + dt +
                  " (min cost " + num(cmin) + ", reg " + num(o.reg) +
                  "): use a larger reg, rescale C, or a log-domain (stabilized) solver");
  }
  for (int64_t j = 0; j < N; ++j)
    if (!col_alive[size_t(j)] && b[j] > 0)
      throw Error("sinkhorn solve: column " + std::to_string(j) + " of K = exp(-C/reg) underflows to zero in " + dt +
                  " (reg " + num(o.reg) + "): use a larger reg, rescale C, or a log-domain (stabilized) solver");

  SolveResult<T> res;
  res.isa = isa == Isa::none ? "" : std::string(to_string(isa));
  const int64_t stride = team_stride<T>(N);
  AlignedBuffer<T> partial(static_cast<size_t>(o.threads) * static_cast<size_t>(stride)), work(static_cast<size_t>(N));
  const auto t0 = std::chrono::steady_clock::now();
  double check_s = 0;  // stopping-rule checks, not counted in res.seconds
  int64_t it = 0;

  if (fused) {
    const bool uv = var == "fused_uv";
    const T fi = balanced ? T(1) : T(o.reg_m / (o.reg_m + o.reg));
    std::vector<T> u(static_cast<size_t>(M)), uprev, vprev, sums(static_cast<size_t>(N));
    // mapuot scales its own copy of K in place; fused_uv only reads K.
    AlignedBuffer<T> A;
    if (!uv) {
      A = AlignedBuffer<T>(size_t(M * N));
      std::copy_n(K.data(), M * N, A.data());
    }
    using Kind = typename FusedSolver<T>::Kind;
    // The prefetch target the ISA calibration chose for this ISA (knobs), else the default.
    const std::string pf = preferred_value("sinkhorn", var, std::is_same_v<T, double> ? DType::f64 : DType::f32, "pf", isa);
    res.prefetch = pf.empty() ? kFusedPrefetchNames[0] : pf;
    const auto pft = parse_fused_prefetch(res.prefetch);
    if (!pft) throw Error("sinkhorn solve: the ISA calibration's pf '" + pf + "' is not l1 or l2 (run `rooflab isa-calibrate` again)");
    FusedSolver<T> s(uv ? Kind::uv : Kind::mapuot, fused_kernels<T>(isa, *pft),
                     {uv ? K.data() : A.data(), M, N, N, a, b, fi, work.data(), u.data(), partial.data()},
                     o.threads);
    s.start();
    while (it < o.max_iter) {
      const bool check = (it + 1) % o.check_every == 0 || it + 1 == o.max_iter;
      if (check && !balanced) uprev = u, vprev.assign(work.data(), work.data() + N);
      s.run();
      ++it;
      if (!check) continue;
      const auto c0 = std::chrono::steady_clock::now();
      if (!balanced) {
        res.stop_value = 0.5 * (relative_change(u, uprev) + relative_change(std::vector<T>(work.data(), work.data() + N), vprev));
      } else if (uv) {
        res.stop_value = marginal_error(K.data(), M, N, u.data(), work.data(), a, b);
      } else {
        // After a mapuot pass the rows are exact and the column sums are in the partials.
        s.column_sums(sums.data());
        long double e = 0;
        for (int64_t j = 0; j < N; ++j) e += std::fabs(double(sums[size_t(j)]) - double(b[j]));
        res.stop_value = double(e);
      }
      check_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
      if (!std::isfinite(res.stop_value)) break;
      if (res.stop_value <= o.tol) {
        res.converged = true;
        break;
      }
    }
    s.finish();
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - check_s;
    res.plan.resize(size_t(M * N));
    if (uv) {
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) res.plan[size_t(i * N + j)] = u[size_t(i)] * K[size_t(i * N + j)] * work[size_t(j)];
      res.u = u;
      res.v.assign(work.data(), work.data() + N);
    } else {
      std::copy_n(A.data(), M * N, res.plan.data());
    }
  } else {
    const SkKernels<T> k = kernels_for<T>(var, isa);
    const Blocking bl = var == "microkernel" ? microkernel_default_blocking(isa) : kBlockedDefault;
    const SkArgs<T> args{K.data(), M, N, N, a, b, T(1), work.data(), bl.mc, bl.nc};
    const SkTeam<T> team{o.threads, partial.data(), stride};
    while (it < o.max_iter) {
      parallel_row_rescale(k, args, team);
      parallel_col_rescale(k, args, team);
      ++it;
      if ((it % o.check_every != 0) && it != o.max_iter) continue;
      const auto c0 = std::chrono::steady_clock::now();
      res.stop_value = marginal_error(K.data(), M, N, static_cast<const T*>(nullptr), static_cast<const T*>(nullptr), a, b);
      check_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
      if (!std::isfinite(res.stop_value)) break;
      if (res.stop_value <= o.tol) {
        res.converged = true;
        break;
      }
    }
    res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - check_s;
    res.plan.assign(K.data(), K.data() + M * N);
  }
  res.iterations = it;
  for (size_t e = 0; e < res.plan.size(); ++e)
    if (!std::isfinite(double(res.plan[e])))
      throw Error("sinkhorn solve: the plan became non-finite after " + std::to_string(it) +
                  " iterations (overflow/underflow in " + dt + "): use a larger reg, f64, or a log-domain solver");
  res.marginal_error = marginal_error(res.plan.data(), M, N, static_cast<const T*>(nullptr),
                                      static_cast<const T*>(nullptr), a, b);
  return res;
}

template SolveResult<float> solve<float>(const float*, int64_t, int64_t, const float*, const float*, const SolveOptions&);
template SolveResult<double> solve<double>(const double*, int64_t, int64_t, const double*, const double*, const SolveOptions&);

}  // namespace rooflab::sinkhorn

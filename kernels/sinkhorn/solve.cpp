// Full solves (see solve.hpp) and the `rooflab sinkhorn` subcommand.
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

Isa pick_isa(const std::string& variant, Isa requested) {
  const bool has_isa = variant == "microkernel" || variant == "mapuot" || variant == "fused_uv";
  if (!has_isa) {
    if (requested != Isa::none)
      throw Error("sinkhorn solve: variant " + variant + " is not ISA-specific (got isa " +
                  std::string(to_string(requested)) + ")");
    return Isa::none;
  }
  if (requested == Isa::none) return best_isa();
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
  const Isa isa = pick_isa(var, o.isa);
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
    FusedSolver<T> s(uv ? Kind::uv : Kind::mapuot, fused_kernels<T>(isa),
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
    const Blocking bl = var == "microkernel" ? microkernel_default_blocking(isa) : Blocking{8, 1024};
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

// ---- `rooflab sinkhorn` -------------------------------------------------------------------
namespace {

const char* kSolveUsage = R"(usage: rooflab sinkhorn (--cost FILE | --grid MxN) --reg R [options]

Solves entropic OT (balanced, or unbalanced with --reg-m) with K = exp(-C/reg) and prints a
JSON summary (iterations, convergence, marginal error, time) on stdout.

  --cost FILE        cost matrix as text: one row per line, numbers separated by spaces or
                     commas, '#' comment lines
  --grid MxN         built-in cost C[i][j] = (i/M - (j+0.5)/N)^2 (for benchmarks)
  --a FILE, --b FILE marginals as text (default uniform 1/M, 1/N)
  --reg R            entropic regularization (> 0)
  --reg-m R          marginal relaxation: unbalanced OT, POT's sinkhorn_unbalanced (fused_uv)
  --variant V        typical | c2r | blocked | microkernel | mapuot | fused_uv (default)
  --isa I            scalar | avx2 | avx512 (default: best supported, ISA variants only)
  --dtype D          f64 (default) | f32
  --tol T            stopping tolerance (default 1e-9); 0 runs exactly --max-iter iterations
  --max-iter N       default 1000
  --check-every K    iterations between stopping-rule checks (default 10)
  --threads T        OpenMP threads on row slices (default 1)
  --plan FILE        write the plan as text (%.17g, one row per line)
)";

struct SolveUsage : Error {
  using Error::Error;
};

std::vector<std::vector<double>> read_rows(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read '" + path + "'");
  std::vector<std::vector<double>> rows;
  std::string line;
  int64_t lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    const auto first = line.find_first_not_of(" \t\r");
    if (first == std::string::npos || line[first] == '#') continue;
    std::replace(line.begin(), line.end(), ',', ' ');
    std::istringstream is(line);
    std::vector<double> row;
    std::string tok;
    while (is >> tok) {
      size_t pos = 0;
      double x = 0;
      try {
        x = std::stod(tok, &pos);
      } catch (...) {
        pos = 0;
      }
      if (pos != tok.size()) throw Error(path + ":" + std::to_string(lineno) + ": not a number: '" + tok + "'");
      row.push_back(x);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<double> read_vector(const std::string& path) {
  std::vector<double> v;
  for (auto& r : read_rows(path)) v.insert(v.end(), r.begin(), r.end());
  return v;
}

double to_double(const std::string& s, const std::string& what) {
  size_t pos = 0;
  double x = 0;
  try {
    x = std::stod(s, &pos);
  } catch (...) {
    pos = 0;
  }
  if (pos != s.size() || s.empty()) throw SolveUsage(what + " must be a number, got '" + s + "'");
  return x;
}

int64_t to_int64(const std::string& s, const std::string& what) {
  size_t pos = 0;
  long long x = 0;
  try {
    x = std::stoll(s, &pos);
  } catch (...) {
    pos = 0;
  }
  if (pos != s.size() || s.empty()) throw SolveUsage(what + " must be an integer, got '" + s + "'");
  return x;
}

template <class T>
int run_solve(const std::vector<double>& C, int64_t M, int64_t N, const std::vector<double>& a,
              const std::vector<double>& b, const SolveOptions& o, const std::string& plan_path) {
  const std::vector<T> Ct(C.begin(), C.end()), at(a.begin(), a.end()), bt(b.begin(), b.end());
  const SolveResult<T> r = solve<T>(Ct.data(), M, N, at.data(), bt.data(), o);
  if (!plan_path.empty()) {
    std::FILE* f = std::fopen(plan_path.c_str(), "w");
    if (!f) throw Error("cannot write '" + plan_path + "'");
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) std::fprintf(f, "%.17g%c", double(r.plan[size_t(i * N + j)]), j + 1 == N ? '\n' : ' ');
    if (std::fclose(f) != 0) throw Error("error writing '" + plan_path + "'");
  }
  nlohmann::json j = {{"schema", "rooflab.sinkhorn_solve/1"},
                      {"variant", o.variant},
                      {"isa", r.isa},
                      {"dtype", std::is_same_v<T, double> ? "f64" : "f32"},
                      {"M", M},
                      {"N", N},
                      {"reg", o.reg},
                      {"threads", o.threads},
                      {"iterations", r.iterations},
                      {"converged", r.converged},
                      {"stop_value", r.stop_value},
                      {"marginal_error", r.marginal_error},
                      {"seconds", r.seconds},
                      {"seconds_per_iteration", r.seconds / double(std::max<int64_t>(1, r.iterations))}};
  j["reg_m"] = std::isinf(o.reg_m) ? nlohmann::json(nullptr) : nlohmann::json(o.reg_m);
  std::printf("%s\n", j.dump(1).c_str());
  return 0;
}

}  // namespace

int solve_main(const std::vector<std::string>& args) {
  try {
    SolveOptions o;
    std::string cost, grid, apath, bpath, dtype = "f64", plan;
    bool have_reg = false;
    for (size_t i = 0; i < args.size(); ++i) {
      const std::string& k = args[i];
      if (k == "--help" || k == "-h") {
        std::printf("%s", kSolveUsage);
        return 0;
      }
      std::string key = k, val;
      const auto eq = k.find('=');
      if (k.rfind("--", 0) == 0 && eq != std::string::npos) {
        key = k.substr(0, eq);
        val = k.substr(eq + 1);
      } else {
        if (i + 1 >= args.size()) throw SolveUsage(k + " needs a value");
        val = args[++i];
      }
      if (key == "--cost") cost = val;
      else if (key == "--grid") grid = val;
      else if (key == "--a") apath = val;
      else if (key == "--b") bpath = val;
      else if (key == "--reg") o.reg = to_double(val, key), have_reg = true;
      else if (key == "--reg-m") o.reg_m = to_double(val, key);
      else if (key == "--variant") o.variant = val;
      else if (key == "--isa") {
        const auto isa = parse_isa(val);
        if (!isa || *isa == Isa::none) throw SolveUsage("--isa must be scalar, avx2 or avx512, got '" + val + "'");
        o.isa = *isa;
      } else if (key == "--dtype") dtype = val;
      else if (key == "--tol") o.tol = to_double(val, key);
      else if (key == "--max-iter") o.max_iter = to_int64(val, key);
      else if (key == "--check-every") o.check_every = to_int64(val, key);
      else if (key == "--threads") o.threads = int(to_int64(val, key));
      else if (key == "--plan") plan = val;
      else throw SolveUsage("unknown option '" + k + "'");
    }
    if (cost.empty() == grid.empty()) throw SolveUsage("give exactly one of --cost FILE and --grid MxN");
    if (!have_reg) throw SolveUsage("--reg is required");
    if (dtype != "f64" && dtype != "f32") throw SolveUsage("--dtype must be f64 or f32");
    std::vector<double> C;
    int64_t M = 0, N = 0;
    if (!grid.empty()) {
      const auto x = grid.find('x');
      if (x == std::string::npos) throw SolveUsage("--grid must be MxN, got '" + grid + "'");
      M = to_int64(grid.substr(0, x), "--grid M");
      N = to_int64(grid.substr(x + 1), "--grid N");
      if (M < 1 || N < 1) throw SolveUsage("--grid sizes must be >= 1");
      C.resize(size_t(M * N));
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          const double d = double(i) / double(M) - (double(j) + 0.5) / double(N);
          C[size_t(i * N + j)] = d * d;
        }
    } else {
      const auto rows = read_rows(cost);
      if (rows.empty()) throw Error(cost + ": empty cost matrix");
      M = int64_t(rows.size());
      N = int64_t(rows[0].size());
      for (size_t i = 0; i < rows.size(); ++i) {
        if (int64_t(rows[i].size()) != N)
          throw Error(cost + ": row " + std::to_string(i) + " has " + std::to_string(rows[i].size()) +
                      " entries, row 0 has " + std::to_string(N));
        C.insert(C.end(), rows[i].begin(), rows[i].end());
      }
    }
    std::vector<double> a = apath.empty() ? std::vector<double>(size_t(M), 1.0 / double(M)) : read_vector(apath);
    std::vector<double> b = bpath.empty() ? std::vector<double>(size_t(N), 1.0 / double(N)) : read_vector(bpath);
    if (int64_t(a.size()) != M)
      throw Error("a has " + std::to_string(a.size()) + " entries but the cost matrix has " + std::to_string(M) + " rows");
    if (int64_t(b.size()) != N)
      throw Error("b has " + std::to_string(b.size()) + " entries but the cost matrix has " + std::to_string(N) + " columns");
    return dtype == "f64" ? run_solve<double>(C, M, N, a, b, o, plan) : run_solve<float>(C, M, N, a, b, o, plan);
  } catch (const SolveUsage& e) {
    std::fprintf(stderr, "rooflab sinkhorn: %s\n(see rooflab sinkhorn --help)\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rooflab sinkhorn: error: %s\n", e.what());
    return 1;
  }
}

}  // namespace rooflab::sinkhorn

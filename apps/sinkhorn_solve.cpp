// `rooflab sinkhorn`: a full (unbalanced) OT solve to a tolerance (kernels/sinkhorn/solve.hpp).
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/commands.hpp"
#include "harness/error.hpp"
#include "kernels/sinkhorn/solve.hpp"

namespace rooflab::sinkhorn {
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

// `rooflab sinkhorn`: a full (unbalanced) OT solve to a tolerance (kernels/sinkhorn/solve.hpp).
#include <unistd.h>

#include <climits>
#include <cmath>
#include <tuple>
#include <cstdio>
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "apps/commands.hpp"
#include "harness/args.hpp"
#include "harness/error.hpp"
#include "harness/families.hpp"
#include "harness/json_io.hpp"
#include "kernels/sinkhorn/solve.hpp"

namespace rooflab::sinkhorn {
namespace {

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

// --grid MxN: sizes >= 1 whose cost matrix fits the machine's memory (checked before allocating:
// C in f64, plus the solver's K and plan in the solve's type).
std::pair<int64_t, int64_t> parse_grid(const std::string& grid, size_t elem) {
  const auto x = grid.find('x');
  if (x == std::string::npos) throw args::UsageError("--grid must be MxN, got '" + grid + "'");
  const int64_t M = args::parse_integer("--grid M", grid.substr(0, x), 1, INT64_MAX);
  const int64_t N = args::parse_integer("--grid N", grid.substr(x + 1), 1, INT64_MAX);
  const double need = double(M) * double(N) * double(sizeof(double) + 2 * elem);
  const double have = double(sysconf(_SC_PHYS_PAGES)) * double(sysconf(_SC_PAGE_SIZE));
  if (M > INT64_MAX / N || (have > 0 && need > have)) {
    char b[160];
    std::snprintf(b, sizeof b, "--grid %s needs %.3g GB of memory, this machine has %.3g GB", grid.c_str(), need / 1e9,
                  have / 1e9);
    throw Error(b);
  }
  return {M, N};
}

// The DRAM bytes one iteration must move: the family model's traffic of the variant's full
// iteration (part:iter) at this size, so a speed-up can be set against the bandwidth it implies.
template <class T>
double bytes_per_iteration(const std::string& variant, const std::string& isa, int64_t M, int64_t N, int threads) {
  const Case c{"sinkhorn", variant, isa.empty() ? Isa::none : *parse_isa(isa),
               std::is_same_v<T, double> ? DType::f64 : DType::f32, {M, N}, {}, threads};
  return variant_of(c).model(c).bytes();
}

template <class T>
int run_solve(const std::vector<double>& C, int64_t M, int64_t N, const std::vector<double>& a,
              const std::vector<double>& b, const SolveOptions& o, const std::string& plan_path) {
  const std::vector<T> Ct(C.begin(), C.end()), at(a.begin(), a.end()), bt(b.begin(), b.end());
  const SolveResult<T> r = solve<T>(Ct.data(), M, N, at.data(), bt.data(), o);
  if (!plan_path.empty()) {  // atomically: an interrupted write leaves no partial plan
    std::string text;
    char buf[32];
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        std::snprintf(buf, sizeof buf, "%.17g%c", double(r.plan[size_t(i * N + j)]), j + 1 == N ? '\n' : ' ');
        text += buf;
      }
    write_text_atomic(plan_path, text);
  }
  nlohmann::json j = {{"schema", "rooflab.sinkhorn_solve/1"},
                      {"variant", o.variant},
                      {"isa", r.isa},
                      {"prefetch", r.prefetch.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.prefetch)},
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
                      {"seconds_per_iteration", r.seconds / double(std::max<int64_t>(1, r.iterations))},
                      {"bytes_per_iteration", bytes_per_iteration<T>(o.variant, r.isa, M, N, o.threads)}};
  j["reg_m"] = std::isinf(o.reg_m) ? nlohmann::json(nullptr) : nlohmann::json(o.reg_m);
  std::printf("%s\n", j.dump(1).c_str());
  return 0;
}

}  // namespace

args::Spec solve_spec() {
  using args::PathKind;
  return args::Spec("rooflab sinkhorn", "solves entropic OT (balanced, or unbalanced with --reg-m) with "
                                        "K = exp(-C/reg); a JSON summary on stdout")
      .path("--cost", PathKind::input_file, "FILE",
            "cost matrix as text: one row per line, numbers separated by spaces or commas, '#' comment lines")
      .string("--grid", "MxN", "built-in cost C[i][j] = (i/M - (j+0.5)/N)^2 (for benchmarks)")
      .path("--a", PathKind::input_file, "FILE", "source marginal as text (default uniform 1/M)")
      .path("--b", PathKind::input_file, "FILE", "target marginal as text (default uniform 1/N)")
      .real("--reg", "R", "entropic regularization (> 0)", -HUGE_VAL, HUGE_VAL)
      .required()
      .real("--reg-m", "R", "marginal relaxation: unbalanced OT, POT's sinkhorn_unbalanced (fused_uv)", 0, HUGE_VAL,
            std::nullopt, true)
      .choice("--variant", {"typical", "c2r", "blocked", "microkernel", "mapuot", "fused_uv"}, "the kernel", "fused_uv")
      .choice("--isa", {"scalar", "avx2", "avx512"},
              "default: the one --machine's ISA calibration chose, else the widest supported (ISA variants only)")
      .path("--machine", PathKind::input_file, "FILE", "machine.json with its ISA calibration (`rooflab isa-calibrate`)")
      .choice("--dtype", {"f64", "f32"}, "element type", "f64")
      .real("--tol", "T", "stopping tolerance; 0 runs exactly --max-iter iterations", 0, HUGE_VAL, 1e-9)
      .integer("--max-iter", "N", "the most iterations", 1, int64_t(1) << 40, 1000)
      .integer("--check-every", "K", "iterations between stopping-rule checks", 1, int64_t(1) << 40, 10)
      .threads("OpenMP threads on row slices", 1)
      .path("--plan", PathKind::output_file, "FILE", "write the plan as text (%.17g, one row per line)");
}

int solve_run(const args::Values& v) {
  SolveOptions o;
  const std::string cost = v.str("--cost"), grid = v.str("--grid"), apath = v.str("--a"), bpath = v.str("--b"),
                    dtype = v.str("--dtype"), plan = v.str("--plan");
  o.reg = v.real("--reg");
  if (v.has("--reg-m")) o.reg_m = v.real("--reg-m");
  o.variant = v.str("--variant");
  if (v.has("--isa")) o.isa = *parse_isa(v.str("--isa"));
  if (v.has("--machine")) cli::use_machine_isa_choice(v.str("--machine"));
  o.tol = v.real("--tol");
  o.max_iter = v.integer("--max-iter");
  o.check_every = v.integer("--check-every");
  o.threads = int(v.integer("--threads"));
  if (cost.empty() == grid.empty()) throw args::UsageError("give exactly one of --cost FILE and --grid MxN");
  {
    std::vector<double> C;
    int64_t M = 0, N = 0;
    if (!grid.empty()) {
      std::tie(M, N) = parse_grid(grid, dtype == "f64" ? sizeof(double) : sizeof(float));
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
  }
}

int solve_main(const std::vector<std::string>& argv) {
  try {
    return args::run_single(solve_spec(), argv, solve_run);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rooflab sinkhorn: error: %s\n", e.what());
    return 1;
  }
}
}  // namespace rooflab::sinkhorn

// Full solves: every variant reaches the same plan, the stopping rule, the unbalanced
// fixed point, and clear errors for bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "harness/error.hpp"
#include "harness/isa.hpp"
#include "harness/isa_choice.hpp"
#include "harness/machine_cpu.hpp"
#include "apps/commands.hpp"
#include "kernels/sinkhorn/solve.hpp"

namespace rooflab::sinkhorn {
namespace {

struct OtProblem {
  int64_t M, N;
  std::vector<double> C, a, b;
  OtProblem(int64_t M_, int64_t N_, uint64_t seed) : M(M_), N(N_) {
    uint64_t s = 0x9E3779B97F4A7C15ull * (seed + 1);
    auto next = [&s] {
      s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
      return double((s * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53;
    };
    std::vector<double> x(static_cast<size_t>(M)), y(static_cast<size_t>(N));
    for (auto& v : x) v = next();
    for (auto& v : y) v = next();
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) C.push_back((x[size_t(i)] - y[size_t(j)]) * (x[size_t(i)] - y[size_t(j)]));
    double sa = 0, sb = 0;
    for (int64_t i = 0; i < M; ++i) a.push_back(0.5 + next()), sa += a.back();
    for (int64_t j = 0; j < N; ++j) b.push_back(0.5 + next()), sb += b.back();
    for (auto& v : a) v /= sa;
    for (auto& v : b) v /= sb;
  }
  SolveResult<double> solve(const SolveOptions& o) const { return sinkhorn::solve<double>(C.data(), M, N, a.data(), b.data(), o); }
};

SolveOptions opts(const std::string& variant, int threads = 1) {
  SolveOptions o;
  o.variant = variant;
  o.reg = 0.05;
  o.tol = 1e-11;
  o.max_iter = 5000;
  o.check_every = 5;
  o.threads = threads;
  return o;
}

double max_rel_diff(const std::vector<double>& x, const std::vector<double>& y) {
  double m = 0, scale = 0;
  for (double v : y) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < x.size(); ++i) m = std::max(m, std::fabs(x[i] - y[i]) / std::max(std::fabs(y[i]), 1e-3 * scale));
  return m;
}

TEST(SinkhornSolve, EveryVariantAndThreadCountReachesTheSamePlan) {
  const OtProblem p(53, 71, 1);
  const SolveResult<double> base = p.solve(opts("fused_uv"));
  ASSERT_TRUE(base.converged) << base.stop_value;
  EXPECT_LE(base.marginal_error, 1e-10);
  EXPECT_GT(base.iterations, 5);
  EXPECT_EQ(base.u.size(), size_t(53));
  EXPECT_EQ(base.v.size(), size_t(71));
  for (const char* v : {"typical", "c2r", "blocked", "microkernel", "mapuot", "fused_uv"})
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(std::string(v) + " threads " + std::to_string(threads));
      const SolveResult<double> r = p.solve(opts(v, threads));
      EXPECT_TRUE(r.converged);
      EXPECT_LE(r.marginal_error, 1e-10);
      EXPECT_LE(max_rel_diff(r.plan, base.plan), 1e-7);
      EXPECT_EQ(r.plan.size(), size_t(53 * 71));
    }
}

// The solver runs the fused kernels with the prefetch target the ISA calibration chose for the
// ISA it runs (pf:, harness/isa_choice.hpp); the plan is the same bits either way.
TEST(SinkhornSolve, FusedSolverFollowsTheCalibratedPrefetchTarget) {
  struct Clear {
    ~Clear() { use_isa_choice(nlohmann::json::object()); }
  } clear;
  const Isa w = best_isa();
  if (w == Isa::scalar) GTEST_SKIP() << "scalar only: the fused kernels issue no prefetch";
  const OtProblem p(37, 101, 5);
  for (const char* v : {"mapuot", "fused_uv"}) {
    const SolveResult<double> l2 = p.solve(opts(v));
    EXPECT_EQ(l2.prefetch, "l2") << v;
    const nlohmann::json e = {{"family", "sinkhorn"}, {"variant", v}, {"dtype", "f64"},
                              {"isas", {{std::string(to_string(w)), {{"median_s", 1.0}, {"knobs", {{"pf", "l1"}}}}}}}};
    use_isa_choice({{"isa_choice", {{"cpu", cpu_signature()}, {"entries", nlohmann::json::array({e})}}}});
    const SolveResult<double> l1 = p.solve(opts(v));
    EXPECT_EQ(l1.isa, std::string(to_string(w))) << v;
    EXPECT_EQ(l1.prefetch, "l1") << v;
    EXPECT_EQ(l1.iterations, l2.iterations) << v;
    EXPECT_EQ(l1.plan, l2.plan) << v;
    // Another ISA than the one the choice was made at runs the default.
    SolveOptions o = opts(v);
    o.isa = Isa::scalar;
    EXPECT_EQ(p.solve(o).prefetch, "l2") << v;
    use_isa_choice(nlohmann::json::object());
  }
}

TEST(SinkhornSolve, MaxIterStopsAndReportsNotConverged) {
  const OtProblem p(20, 30, 2);
  SolveOptions o = opts("c2r");
  o.tol = 0;
  o.max_iter = 7;
  const auto r = p.solve(o);
  EXPECT_EQ(r.iterations, 7);
  EXPECT_FALSE(r.converged);
  EXPECT_GT(r.marginal_error, 0);
  EXPECT_EQ(r.marginal_error, r.stop_value);  // c2r checks on the last iteration
}

TEST(SinkhornSolve, UnbalancedReachesPotsFixedPoint) {
  const OtProblem p(40, 25, 3);
  SolveOptions o = opts("fused_uv", 2);
  o.reg_m = 0.3;
  o.tol = 1e-13;
  const auto r = p.solve(o);
  ASSERT_TRUE(r.converged);
  // u = (a / K v)^fi and v = (b / K^T u)^fi at the fixed point, K = exp(-C / reg).
  const double fi = o.reg_m / (o.reg_m + o.reg);
  for (int64_t i = 0; i < p.M; ++i) {
    double kv = 0;
    for (int64_t j = 0; j < p.N; ++j) kv += std::exp(-p.C[size_t(i * p.N + j)] / o.reg) * r.v[size_t(j)];
    EXPECT_NEAR(r.u[size_t(i)], std::pow(p.a[size_t(i)] / kv, fi), 1e-9 * r.u[size_t(i)]) << i;
  }
  // Unbalanced: the marginals are not the targets.
  EXPECT_GT(r.marginal_error, 1e-4);
  EXPECT_THROW(p.solve([&] { auto q = o; q.variant = "c2r"; return q; }()), Error);
}

TEST(SinkhornSolve, FloatWorks) {
  const OtProblem p(30, 20, 4);
  std::vector<float> C(p.C.begin(), p.C.end()), a(p.a.begin(), p.a.end()), b(p.b.begin(), p.b.end());
  SolveOptions o = opts("microkernel");
  o.tol = 1e-5;
  const auto r = solve<float>(C.data(), 30, 20, a.data(), b.data(), o);
  EXPECT_TRUE(r.converged);
  EXPECT_LE(r.marginal_error, 1e-5);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(SinkhornSolve, BadInputIsAClearError) {
  const OtProblem p(6, 5, 5);
  auto with = [&](auto edit, SolveOptions o = opts("c2r")) {
    OtProblem q = p;
    edit(q, o);
    return error_of([&] { q.solve(o); });
  };
  auto has = [](const std::string& msg, const char* what) { return msg.find(what) != std::string::npos; };
  EXPECT_TRUE(has(with([](OtProblem& q, SolveOptions&) { q.C[7] = -1; }), "C[1][2]"));
  EXPECT_TRUE(has(with([](OtProblem& q, SolveOptions&) { q.C[0] = std::nan(""); }), "finite"));
  EXPECT_TRUE(has(with([](OtProblem& q, SolveOptions&) { q.a[2] = -0.1; }), "a[2]"));
  EXPECT_TRUE(has(with([](OtProblem& q, SolveOptions&) { q.b[1] = std::numeric_limits<double>::infinity(); }), "b[1]"));
  EXPECT_TRUE(has(with([](OtProblem& q, SolveOptions&) { for (auto& x : q.b) x = 0; }), "sums to 0"));
  EXPECT_TRUE(has(with([](OtProblem& q, SolveOptions&) { q.b[0] += 0.5; }), "equal mass"));
  EXPECT_TRUE(has(with([](OtProblem&, SolveOptions& o) { o.reg = 0; }), "reg must be > 0"));
  EXPECT_TRUE(has(with([](OtProblem&, SolveOptions& o) { o.reg = -1; }), "reg must be > 0"));
  EXPECT_TRUE(has(with([](OtProblem&, SolveOptions& o) { o.reg_m = 0; }), "reg_m"));
  EXPECT_TRUE(has(with([](OtProblem&, SolveOptions& o) { o.variant = "nope"; }), "unknown variant"));
  EXPECT_TRUE(has(with([](OtProblem&, SolveOptions& o) { o.isa = Isa::avx2; }), "not ISA-specific"));
  // exp(-800 / 1) underflows in f64: a whole row of K is zero.
  EXPECT_TRUE(has(with([](OtProblem& q, SolveOptions&) { for (int64_t j = 0; j < 5; ++j) q.C[size_t(3 * 5 + j)] = 800; }), "log-domain"));
  EXPECT_TRUE(has(with([](OtProblem& q, SolveOptions&) { for (int64_t i = 0; i < 6; ++i) q.C[size_t(i * 5 + 4)] = 800; }), "column 4"));
  // A zero-mass row may have an all-zero K row.
  EXPECT_EQ(with([](OtProblem& q, SolveOptions&) {
              for (int64_t j = 0; j < 5; ++j) q.C[size_t(3 * 5 + j)] = 800;
              const double m = q.a[3];
              q.a[3] = 0;
              q.a[0] += m;
            }),
            "");
  // f32 underflows sooner than f64: exp(-120) is 0 in float.
  std::vector<float> C(30, 0.1f), a(6, 1.0f / 6), b(5, 0.2f);
  for (int64_t j = 0; j < 5; ++j) C[size_t(2 * 5 + j)] = 120;
  SolveOptions o = opts("c2r");
  o.reg = 1;
  EXPECT_TRUE(has(error_of([&] { solve<float>(C.data(), 6, 5, a.data(), b.data(), o); }), "f32"));
}

// ---- The subcommand ---------------------------------------------------------------------------
TEST(SinkhornCli, SolvesFromFilesAndRejectsBadArguments) {
  const std::string dir = ::testing::TempDir();
  const std::string cost = dir + "sk_cost.txt", a = dir + "sk_a.txt", plan = dir + "sk_plan.txt";
  {
    std::ofstream f(cost);
    f << "# 2 x 3\n0, 1, 4\n1 0 1\n";
    std::ofstream g(a);
    g << "0.25\n0.75\n";
  }
  ::testing::internal::CaptureStdout();
  const int rc = solve_main({"--cost", cost, "--a", a, "--reg", "0.5", "--variant=mapuot", "--plan", plan});
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_EQ(rc, 0);
  EXPECT_NE(out.find("\"converged\": true"), std::string::npos) << out;
  std::ifstream pf(plan);
  double x, total = 0;
  int n = 0;
  while (pf >> x) total += x, ++n;
  EXPECT_EQ(n, 6);
  EXPECT_NEAR(total, 1.0, 1e-9);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(solve_main({"--grid", "4x4"}), 2);                           // no --reg
  EXPECT_EQ(solve_main({"--grid", "4x4", "--reg", "x"}), 2);
  EXPECT_EQ(solve_main({"--grid", "4x4", "--cost", cost, "--reg", "1"}), 2);
  EXPECT_EQ(solve_main({"--grid", "4x4", "--reg", "1", "--bogus", "1"}), 2);
  EXPECT_EQ(solve_main({"--cost", cost, "--reg", "1", "--b", a}), 1);   // b has 2 entries, N = 3
  EXPECT_EQ(solve_main({"--cost", dir + "missing.txt", "--reg", "1"}), 1);
  EXPECT_EQ(solve_main({"--grid", "4x4", "--reg", "-1"}), 1);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("b has 2 entries"), std::string::npos) << err;
  EXPECT_NE(err.find("reg must be > 0"), std::string::npos) << err;
}

}  // namespace
}  // namespace rooflab::sinkhorn

// Threads (row slices with private column sums), the unbalanced exponent through the family,
// and the fused one-pass variants (mapuot, fused_uv) against the long-double reference.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "harness/error.hpp"
#include "harness/isa.hpp"
#include "harness/registry.hpp"
#include "kernels/sinkhorn/sinkhorn.hpp"
#include "tests/sinkhorn/problem.hpp"

namespace rooflab::sinkhorn {
namespace {
using sktest::Problem;

struct Shape { int64_t M, N; };
// Fewer rows than threads, a single column, odd sizes around vector widths and group sizes.
const std::vector<Shape> kShapes = {{1, 1},   {2, 9},    {3, 1},     {5, 17},  {9, 4},
                                    {13, 31}, {37, 100}, {100, 37},  {7, 2049}, {257, 1031}};

template <class T>
double tol(int passes, int64_t M, int64_t N, int extra) {
  std::vector<int64_t> lengths;
  for (int p = 0; p < passes; ++p) lengths.push_back((p % 2 ? M : N) + extra);
  return sk_error_bound(lengths, double(std::numeric_limits<T>::epsilon()));
}

template <class T>
std::vector<T> partial_buffer(int threads, int64_t N) {
  // Poisoned: a driver that reads a private row before zeroing it produces NaN.
  return std::vector<T>(size_t(threads) * size_t(team_stride<T>(N)) + 64, std::numeric_limits<T>::quiet_NaN());
}

// ---- Threads on the staged variants ---------------------------------------------------------
struct StagedConfig { const char* variant; Isa isa; };

class Threaded : public ::testing::TestWithParam<StagedConfig> {
 protected:
  template <class T>
  void check() {
    if (!isa_supported(GetParam().isa)) GTEST_SKIP() << "CPU lacks " << to_string(GetParam().isa);
    const SkKernels<T> k = kernels_for<T>(GetParam().variant, GetParam().isa);
    for (int threads : {2, 3, 5}) {
      for (const Shape& s : kShapes) {
        for (T fi : {T(1), T(0.6)}) {
          SCOPED_TRACE(std::to_string(s.M) + "x" + std::to_string(s.N) + " threads " + std::to_string(threads) +
                       " fi " + std::to_string(double(fi)));
          Problem<T> p(s.M, s.N, s.N + 3, uint32_t(threads * 100 + s.M));
          auto partial = partial_buffer<T>(threads, s.N);
          const SkTeam<T> team{threads, partial.data(), team_stride<T>(s.N)};
          SkReference<T> ref(p.A0.data(), s.M, s.N, p.lda, p.r.data(), p.c.data(), fi);
          for (int it = 0; it < 2; ++it) {
            parallel_row_rescale(k, p.args(3, 37, fi), team);
            parallel_col_rescale(k, p.args(3, 37, fi), team);
            ref.iterate();
          }
          const SkCompare w = compare_with_reference(p.A.data(), p.lda, ref);
          ASSERT_LE(w.max_err, tol<T>(4, s.M, s.N, threads + 2)) << "at " << w.i << "," << w.j;
          ASSERT_TRUE(p.guards_intact());
        }
      }
    }
  }
};
TEST_P(Threaded, RowSlicesMatchTheReference) { check<double>(); }
TEST_P(Threaded, RowSlicesMatchTheReferenceF32) { check<float>(); }
INSTANTIATE_TEST_SUITE_P(All, Threaded,
                         ::testing::Values(StagedConfig{"typical", Isa::none}, StagedConfig{"c2r", Isa::none},
                                           StagedConfig{"blocked", Isa::none},
                                           StagedConfig{"microkernel", Isa::scalar},
                                           StagedConfig{"microkernel", Isa::avx2},
                                           StagedConfig{"microkernel", Isa::avx512}),
                         [](const auto& info) {
                           std::string s = info.param.variant;
                           if (info.param.isa != Isa::none) s += "_" + std::string(to_string(info.param.isa));
                           return s;
                         });

// ---- Fused kernels -------------------------------------------------------------------------
using Kind = FusedSolver<double>::Kind;

class Fused : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!isa_supported(GetParam())) GTEST_SKIP() << "CPU lacks " << to_string(GetParam()) << " (compiled, not run)";
  }

  // `iters` fused iterations (+ finish) from A0 against the matching reference.
  template <class T>
  void check(typename FusedSolver<T>::Kind kind, int iters) {
    const bool uv = kind == FusedSolver<T>::Kind::uv;
    for (int threads : {1, 2, 3}) {
      for (const Shape& s : kShapes) {
        for (T fi : {T(1), T(0.6)}) {
          SCOPED_TRACE(std::string(uv ? "fused_uv " : "mapuot ") + std::to_string(s.M) + "x" + std::to_string(s.N) +
                       " threads " + std::to_string(threads) + " fi " + std::to_string(double(fi)));
          Problem<T> p(s.M, s.N, s.N + 3, uint32_t(7 * threads + s.N));
          auto partial = partial_buffer<T>(threads, s.N);
          std::vector<T> u(size_t(s.M), T(-1));
          FusedSolver<T> solver(kind, fused_kernels<T>(GetParam()),
                                {p.A.data(), s.M, s.N, p.lda, p.r.data(), p.c.data(), fi, p.work.data(), u.data(),
                                 partial.data()},
                                threads);
          SkReference<T> ref(p.A0.data(), s.M, s.N, p.lda, p.r.data(), p.c.data(), fi,
                             uv ? Form::scaling : Form::matrix);
          solver.start();
          for (int it = 0; it < iters; ++it) solver.run(), ref.iterate();
          solver.finish();
          if (uv) {
            // K is read-only: A must still be A0 exactly.
            for (int64_t i = 0; i < s.M; ++i)
              for (int64_t j = 0; j < s.N; ++j) ASSERT_EQ(p.A[size_t(i * p.lda + j)], p.A0[size_t(i * p.lda + j)]);
            for (int64_t i = 0; i < s.M; ++i)
              for (int64_t j = 0; j < s.N; ++j)
                p.A[size_t(i * p.lda + j)] = u[size_t(i)] * p.A0[size_t(i * p.lda + j)] * p.work[size_t(j)];
          }
          const SkCompare w = compare_with_reference(p.A.data(), p.lda, ref);
          ASSERT_LE(w.max_err, tol<T>(2 * iters, s.M, s.N, threads + 4))
              << "at " << w.i << "," << w.j << " got " << w.got << " expected " << w.expected;
          ASSERT_TRUE(p.guards_intact());
        }
      }
    }
  }
};

TEST_P(Fused, MapuotMatchesMatrixFormReference) {
  check<double>(FusedSolver<double>::Kind::mapuot, 3);
  check<float>(FusedSolver<float>::Kind::mapuot, 3);
}
TEST_P(Fused, FusedUvPlanMatchesScalingFormReference) {
  check<double>(FusedSolver<double>::Kind::uv, 3);
  check<float>(FusedSolver<float>::Kind::uv, 3);
}

// mapuot's column sums after a pass are the sums of the matrix it leaves (pending factors
// not yet applied); finish() makes the columns reach c.
TEST_P(Fused, MapuotColumnSumsAndFinish) {
  Problem<double> p(61, 45, 45, 3);
  auto partial = partial_buffer<double>(2, 45);
  FusedSolver<double> s(Kind::mapuot, fused_kernels<double>(GetParam()),
                        {p.A.data(), 61, 45, 45, p.r.data(), p.c.data(), 1.0, p.work.data(), nullptr, partial.data()}, 2);
  s.start();
  s.run();
  std::vector<double> sums(45);
  s.column_sums(sums.data());
  for (int64_t j = 0; j < 45; ++j) {
    long double t = 0;
    for (int64_t i = 0; i < 61; ++i) t += p.A[size_t(i * 45 + j)];
    EXPECT_NEAR(sums[size_t(j)], double(t), 1e-12 * double(t));
  }
  for (int64_t i = 0; i < 61; ++i) {  // rows are at their targets after the pass
    long double t = 0;
    for (int64_t j = 0; j < 45; ++j) t += p.A[size_t(i * 45 + j)];
    EXPECT_NEAR(double(t), p.r[size_t(i)], 1e-12);
  }
  s.finish();
  for (int64_t j = 0; j < 45; ++j) {
    long double t = 0;
    for (int64_t i = 0; i < 61; ++i) t += p.A[size_t(i * 45 + j)];
    EXPECT_NEAR(double(t), p.c[size_t(j)], 1e-12);
  }
}

// pf:l1 (FusedPrefetch::l1) changes only where the streamed rows are prefetched to: its kernels
// are other instantiations, and they compute bit for bit what the default ones do.
template <class T>
void same_with_either_prefetch(Isa isa, FusedSolver<double>::Kind kind_d) {
  using Kind = typename FusedSolver<T>::Kind;
  const Kind kind = kind_d == FusedSolver<double>::Kind::uv ? Kind::uv : Kind::mapuot;
  const FusedKernels<T> l2 = fused_kernels<T>(isa, FusedPrefetch::l2), l1 = fused_kernels<T>(isa, FusedPrefetch::l1);
  ASSERT_NE(l2.mapuot, l1.mapuot);
  ASSERT_NE(l2.uv, l1.uv);
  for (int threads : {1, 3})
    for (const Shape& s : {Shape{37, 100}, Shape{7, 2049}, Shape{257, 1031}}) {
      SCOPED_TRACE(std::to_string(s.M) + "x" + std::to_string(s.N) + " threads " + std::to_string(threads));
      std::vector<T> plan[2], u[2], v[2];
      for (int w = 0; w < 2; ++w) {
        Problem<T> p(s.M, s.N, s.N + 5, uint32_t(11 + s.N));
        auto partial = partial_buffer<T>(threads, s.N);
        u[w].assign(size_t(s.M), T(-1));
        FusedSolver<T> solver(kind, w ? l1 : l2,
                              {p.A.data(), s.M, s.N, p.lda, p.r.data(), p.c.data(), T(0.7), p.work.data(),
                               u[w].data(), partial.data()},
                              threads);
        solver.start();
        for (int it = 0; it < 3; ++it) solver.run();
        solver.finish();
        plan[w] = p.A, v[w] = p.work;
      }
      // bit for bit (the matrices' padding holds NaN guards, which == never matches)
      auto same = [](const std::vector<T>& a, const std::vector<T>& b) {
        return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
      };
      EXPECT_TRUE(same(plan[0], plan[1]));
      EXPECT_TRUE(same(u[0], u[1]));
      EXPECT_TRUE(same(v[0], v[1]));
    }
}
TEST_P(Fused, PrefetchIntoL1ComputesTheSame) {
  for (auto kind : {Kind::mapuot, Kind::uv}) {
    same_with_either_prefetch<double>(GetParam(), kind);
    same_with_either_prefetch<float>(GetParam(), kind);
  }
}

INSTANTIATE_TEST_SUITE_P(All, Fused, ::testing::Values(Isa::scalar, Isa::avx2, Isa::avx512),
                         [](const auto& info) { return std::string(to_string(info.param)); });

// ---- The two UOT forms -------------------------------------------------------------------------
// The papers' matrix-form factor pow(target / sum, fi) converges to the balanced plan
// (exact marginals), POT's scaling form to a plan whose marginals stay off the targets.
TEST(UnbalancedForms, MatrixFormIsADampedBalancedSinkhorn) {
  Problem<double> p(40, 30, 30, 9);
  SkReference<double> matrix(p.A0.data(), 40, 30, 30, p.r.data(), p.c.data(), 0.5L, Form::matrix);
  SkReference<double> scaling(p.A0.data(), 40, 30, 30, p.r.data(), p.c.data(), 0.5L, Form::scaling);
  for (int it = 0; it < 400; ++it) matrix.iterate(), scaling.iterate();
  auto row_err = [&](const SkReference<double>& ref) {
    long double e = 0;
    for (int64_t i = 0; i < 40; ++i) {
      long double s = 0;
      for (int64_t j = 0; j < 30; ++j) s += ref.expected(i, j);
      e += std::fabs(s - p.r[size_t(i)]);
    }
    return double(e);
  };
  EXPECT_LT(row_err(matrix), 1e-9);
  EXPECT_GT(row_err(scaling), 1e-2);
}

// ---- Through the family -----------------------------------------------------------------------
TEST(FusedFamily, InstancesVerifyWithThreadsAndFi) {
  for (const char* name :
       {"sinkhorn/mapuot/scalar/f64/67x93/threads:1", "sinkhorn/mapuot/avx2/f32/67x93/fi:0.5/threads:2",
        "sinkhorn/fused_uv/scalar/f64/67x93/fi:0.5/threads:3", "sinkhorn/fused_uv/avx2/f64/67x93/threads:2",
        "sinkhorn/c2r/f64/67x93/fi:0.5/part:iter/threads:2", "sinkhorn/microkernel/avx2/f32/67x93/part:col/threads:2",
        "sinkhorn/typical/f64/67x93/part:row/threads:2", "sinkhorn/blocked/f64/67x93/mc:3/nc:10/fi:0.9/part:iter/threads:3"}) {
    const Case c = parse_case_name(name);
    if (!isa_supported(c.isa)) continue;
    const Variant& v = *sinkhorn_family().find(c.variant);
    ASSERT_EQ(v.accepts(c), "") << name;
    auto inst = v.make(c);
    const Verification ver = inst->verify();
    EXPECT_TRUE(ver.ok) << name << ": " << ver.detail;
    for (int i = 0; i < 100; ++i) inst->run();
    const Verification again = inst->verify();
    EXPECT_TRUE(again.ok) << name << ": " << again.detail;
    EXPECT_EQ(again.max_err, ver.max_err) << name;
  }
}

}  // namespace
}  // namespace rooflab::sinkhorn

// Sinkhorn-Knopp kernels against the long-double reference, the zero-sum rule, verification
// catching wrong kernels, and the family table (names, acceptance, models).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "harness/error.hpp"
#include "harness/families.hpp"
#include "harness/isa.hpp"
#include "kernels/sinkhorn/sinkhorn.hpp"
#include "tests/sinkhorn/problem.hpp"

namespace rooflab::sinkhorn {
namespace {
using sktest::Problem;

enum class Part { iter, row, col };
const char* part_name(Part p) { return p == Part::iter ? "iter" : p == Part::row ? "row" : "col"; }

// ---- Kernel configurations ----------------------------------------------------------------
struct Config {
  std::string variant;
  Isa isa;
  bool f64;
  std::string label() const {
    std::string s = variant;
    if (isa != Isa::none) s.append("_").append(to_string(isa));
    return s.append(f64 ? "_f64" : "_f32");
  }
};

void PrintTo(const Config& c, std::ostream* os) { *os << c.label(); }

std::vector<Config> all_configs() {
  std::vector<Config> out;
  for (bool f64 : {true, false}) {
    for (const char* v : {"typical", "c2r", "blocked"}) out.push_back({v, Isa::none, f64});
    for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) out.push_back({"microkernel", isa, f64});
  }
  return out;
}

struct Shape { int64_t M, N; };
// Odd sizes, M != N, 1 x N, N x 1, sizes around every vector width (1, 4, 8, 16), mr (4),
// mc (8) and nc (1024), N > nc and not a multiple of it.
const std::vector<Shape> kShapes = {
    {1, 1},     {1, 7},    {7, 1},     {2, 3},     {3, 2},     {1, 4097},  {4097, 1},
    {4, 8},     {5, 17},   {17, 5},    {8, 16},    {9, 15},    {13, 31},   {31, 13},
    {33, 65},   {64, 64},  {100, 37},  {37, 100},  {127, 129}, {129, 127}, {7, 2049},
    {257, 1031}, {1023, 517}};

// The tolerance for a sequence of passes (see sk_error_bound), lengths from the pass kinds.
template <class T>
double tolerance(const std::vector<Part>& passes, int64_t M, int64_t N, int extra_per_pass = 0) {
  std::vector<int64_t> lengths;
  for (Part p : passes) {
    if (p != Part::col) lengths.push_back(N + extra_per_pass);
    if (p != Part::row) lengths.push_back(M + extra_per_pass);
  }
  return sk_error_bound(lengths, double(std::numeric_limits<T>::epsilon()));
}

template <class T>
void run_part(const SkKernels<T>& k, const SkArgs<T>& a, Part p) {
  if (p != Part::col) k.row_rescale(a);
  if (p != Part::row) k.col_rescale(a);
}
template <class T>
void ref_part(SkReference<T>& ref, Part p) {
  if (p != Part::col) ref.row_pass();
  if (p != Part::row) ref.col_pass();
}

class SinkhornKernels : public ::testing::TestWithParam<Config> {
 protected:
  void SetUp() override {
    if (!isa_supported(GetParam().isa))
      GTEST_SKIP() << "this CPU lacks " << to_string(GetParam().isa) << " (kernel compiled, not run)";
  }

  // Each part run twice from A0 (as Instance::verify does), for lda = N and lda = N + 3.
  template <class T>
  void check_all_shapes(int64_t mc, int64_t nc) {
    const SkKernels<T> k = kernels_for<T>(GetParam().variant, GetParam().isa);
    uint32_t seed = 0;
    for (const Shape& s : kShapes) {
      for (int64_t pad : {0, 3}) {
        for (Part part : {Part::iter, Part::row, Part::col}) {
          SCOPED_TRACE(std::to_string(s.M) + "x" + std::to_string(s.N) + " lda=N+" +
                       std::to_string(pad) + " part=" + part_name(part) + " mc=" +
                       std::to_string(mc) + " nc=" + std::to_string(nc));
          Problem<T> p(s.M, s.N, s.N + pad, ++seed);
          SkReference<T> ref(p.A0.data(), s.M, s.N, p.lda, p.r.data(), p.c.data());
          for (int rep = 0; rep < 2; ++rep) {
            run_part(k, p.args(mc, nc), part);
            ref_part(ref, part);
          }
          const SkCompare w = compare_with_reference(p.A.data(), p.lda, ref);
          const double tol = tolerance<T>({part, part}, s.M, s.N);
          ASSERT_LE(w.max_err, tol) << "worst at (" << w.i << ", " << w.j << "): got " << w.got
                                    << " expected " << w.expected;
          ASSERT_TRUE(p.guards_intact()) << "wrote outside the M x N matrix";
        }
      }
    }
  }
};

TEST_P(SinkhornKernels, MatchesReferenceDefaultBlocking) {
  if (GetParam().f64) check_all_shapes<double>(8, 1024);
  else check_all_shapes<float>(8, 1024);
}

// Blocking that does not divide anything: mc not a multiple of mr, nc smaller than a vector,
// nc odd, nc larger than N. (typical / c2r ignore mc, nc: still a valid run.)
TEST_P(SinkhornKernels, MatchesReferenceOddBlocking) {
  for (auto [mc, nc] : {std::pair<int64_t, int64_t>{1, 1}, {3, 5}, {5, 37}, {100, 100000}}) {
    if (GetParam().f64) check_all_shapes<double>(mc, nc);
    else check_all_shapes<float>(mc, nc);
  }
}

// The staged column pass (zero, col_sums, col_factors, col_scale) is col_rescale exactly:
// same sums in the same order, same factors.
template <class T>
void staged_equals_fused(const SkKernels<T>& k) {
  for (const Shape& s : {Shape{37, 100}, Shape{1023, 517}, Shape{9, 2049}}) {
    Problem<T> a(s.M, s.N, s.N + 1, 7), b(s.M, s.N, s.N + 1, 7);
    k.col_rescale(a.args());
    std::fill(b.work.begin(), b.work.end(), T(0));
    k.col_sums(b.args());
    col_factors(b.work.data(), b.c.data(), s.N, T(1));
    k.col_scale(b.args());
    for (int64_t i = 0; i < s.M; ++i)
      for (int64_t j = 0; j < s.N; ++j)
        ASSERT_EQ(a.A[size_t(i * a.lda + j)], b.A[size_t(i * b.lda + j)]) << i << "," << j;
  }
}
TEST_P(SinkhornKernels, StagedColumnPassEqualsFused) {
  const Config& c = GetParam();
  if (c.f64) staged_equals_fused(kernels_for<double>(c.variant, c.isa));
  else staged_equals_fused(kernels_for<float>(c.variant, c.isa));
}

// The row-slice contract later threads / MPI ranks rely on: each slice is a sub-matrix; the
// column pass is private sums per slice, a reduction, shared factors, per-slice scaling.
template <class T>
void sliced_iterations(const SkKernels<T>& k) {
  const int64_t M = 301, N = 203;
  Problem<T> p(M, N, N + 5, 11);
  SkReference<T> ref(p.A0.data(), M, N, p.lda, p.r.data(), p.c.data());
  const int64_t cuts[] = {0, 1, 97, 230, M};  // uneven slices, one of a single row
  std::vector<std::vector<T>> partial(4, std::vector<T>(size_t(N)));
  auto slice = [&](int s, T* work) {
    SkArgs<T> a = p.args();
    a.A += cuts[s] * p.lda;
    a.M = cuts[s + 1] - cuts[s];
    a.r += cuts[s];
    a.work = work;
    return a;
  };
  for (int it = 0; it < 2; ++it) {
    for (int s = 0; s < 4; ++s) k.row_rescale(slice(s, p.work.data()));
    for (int s = 0; s < 4; ++s) {
      std::fill(partial[s].begin(), partial[s].end(), T(0));
      k.col_sums(slice(s, partial[s].data()));
    }
    for (int64_t j = 0; j < N; ++j)
      p.work[size_t(j)] = partial[0][j] + partial[1][j] + partial[2][j] + partial[3][j];
    col_factors(p.work.data(), p.c.data(), N, T(1));
    for (int s = 0; s < 4; ++s) k.col_scale(slice(s, p.work.data()));
    ref.iterate();
  }
  const SkCompare w = compare_with_reference(p.A.data(), p.lda, ref);
  EXPECT_LE(w.max_err, tolerance<T>({Part::iter, Part::iter}, M, N)) << w.i << "," << w.j;
  EXPECT_TRUE(p.guards_intact());
}
TEST_P(SinkhornKernels, RowSlicesComposeToTheFullPass) {
  const Config& c = GetParam();
  if (c.f64) sliced_iterations(kernels_for<double>(c.variant, c.isa));
  else sliced_iterations(kernels_for<float>(c.variant, c.isa));
}

// Zero rows and columns stay zero (factor 1), everything else scales as the reference says,
// nothing becomes NaN/inf; an all-zero matrix stays all zero.
template <class T>
void zero_rows_and_columns(const SkKernels<T>& k) {
  for (const Shape& s : {Shape{9, 13}, Shape{40, 1030}, Shape{1, 9}, Shape{9, 1}}) {
    Problem<T> p(s.M, s.N, s.N + 2, 3);
    const int64_t zr = s.M / 2, zc = s.N / 3;
    for (int64_t j = 0; j < s.N; ++j) p.A0[size_t(zr * p.lda + j)] = 0;
    for (int64_t i = 0; i < s.M; ++i) p.A0[size_t(i * p.lda + zc)] = 0;
    p.A = p.A0;
    SkReference<T> ref(p.A0.data(), s.M, s.N, p.lda, p.r.data(), p.c.data());
    for (int it = 0; it < 2; ++it) {
      iterate(k, p.args());
      ref.iterate();
    }
    for (int64_t j = 0; j < s.N; ++j) ASSERT_EQ(p.A[size_t(zr * p.lda + j)], T(0));
    for (int64_t i = 0; i < s.M; ++i) ASSERT_EQ(p.A[size_t(i * p.lda + zc)], T(0));
    const SkCompare w = compare_with_reference(p.A.data(), p.lda, ref);
    ASSERT_LE(w.max_err, tolerance<T>({Part::iter, Part::iter}, s.M, s.N)) << w.i << "," << w.j;
    // Columns other than zc: their targets are reached despite the zero row.
    if (s.M > 1) {
      for (int64_t j = 0; j < s.N; ++j) {
        if (j == zc) continue;
        long double sum = 0;
        for (int64_t i = 0; i < s.M; ++i) sum += p.A[size_t(i * p.lda + j)];
        ASSERT_NEAR(double(sum), double(p.c[size_t(j)]), 1e-3 * double(p.c[size_t(j)]));
      }
    }
  }
  Problem<T> z(5, 11, 11, 1);
  std::fill(z.A.begin(), z.A.begin() + 55, T(0));
  iterate(k, z.args());
  for (int64_t e = 0; e < 55; ++e) ASSERT_EQ(z.A[size_t(e)], T(0));
}
TEST_P(SinkhornKernels, ZeroRowsAndColumnsAreLeftUnchanged) {
  const Config& c = GetParam();
  if (c.f64) zero_rows_and_columns(kernels_for<double>(c.variant, c.isa));
  else zero_rows_and_columns(kernels_for<float>(c.variant, c.isa));
}

// The unbalanced exponent fi (used by the UOT kernels later): factor = (target/sum)^fi.
template <class T>
void unbalanced_exponent(const SkKernels<T>& k) {
  const T fi = T(0.7);
  Problem<T> p(45, 131, 133, 5);
  SkReference<T> ref(p.A0.data(), 45, 131, p.lda, p.r.data(), p.c.data(), fi);
  for (int it = 0; it < 2; ++it) {
    iterate(k, p.args(8, 1024, fi));
    ref.iterate();
  }
  const SkCompare w = compare_with_reference(p.A.data(), p.lda, ref);
  // pow adds about one rounding per pass: one more term per summation length covers it.
  EXPECT_LE(w.max_err, tolerance<T>({Part::iter, Part::iter}, 45, 131, 2));
  // and the result is not the balanced one (fi is really applied)
  SkReference<T> balanced(p.A0.data(), 45, 131, p.lda, p.r.data(), p.c.data());
  balanced.iterate(), balanced.iterate();
  EXPECT_GT(compare_with_reference(p.A.data(), p.lda, balanced).max_err, 1e-3);
}
TEST_P(SinkhornKernels, UnbalancedExponent) {
  const Config& c = GetParam();
  if (c.f64) unbalanced_exponent(kernels_for<double>(c.variant, c.isa));
  else unbalanced_exponent(kernels_for<float>(c.variant, c.isa));
}

// Through the family: the benchmark instance verifies, and repeated run()s stay finite and
// bounded (the reason no reset() is needed).
TEST_P(SinkhornKernels, InstanceVerifiesAndRunsRepeatedly) {
  const Config& cf = GetParam();
  for (const char* part : {"iter", "row", "col"}) {
    Case c = parse_case_name("sinkhorn/" + cf.variant +
                             (cf.isa == Isa::none ? "" : "/" + std::string(to_string(cf.isa))) +
                             (cf.f64 ? "/f64" : "/f32") + "/67x93/part:" + part + "/threads:1");
    const Variant& v = *sinkhorn_family().find(cf.variant);
    ASSERT_EQ(v.accepts(c), "");
    auto inst = v.make(c);
    const Verification ver = inst->verify();
    EXPECT_TRUE(ver.ok) << c.name() << ": " << ver.detail;
    EXPECT_GT(ver.tol, 0);
    EXPECT_NE(ver.detail.find("at ("), std::string::npos);
    for (int i = 0; i < 200; ++i) inst->run();
    const Verification again = inst->verify();  // verify() starts from A0 again
    EXPECT_TRUE(again.ok) << again.detail;
    EXPECT_EQ(again.max_err, ver.max_err);
  }
}

INSTANTIATE_TEST_SUITE_P(All, SinkhornKernels, ::testing::ValuesIn(all_configs()),
                         [](const auto& info) { return info.param.label(); });

// ---- Verification must fail on wrong kernels --------------------------------------------------
namespace wrong {
// Correct c2r passes to build the wrong ones from.
const SkKernels<double> good = c2r_kernels<double>();

// Odd rows scaled by 1.0001 x the right factor. (A factor wrong by the same amount in every
// row would be undone exactly by the following column pass: only part:row could see it.)
void row_factor_off(const SkArgs<double>& a) {
  good.row_rescale(a);
  for (int64_t i = 1; i < a.M; i += 2)
    for (int64_t j = 0; j < a.N; ++j) a.A[i * a.lda + j] *= 1.0001;
}
void col_skips_last_column(const SkArgs<double>& a) {  // an edge bug
  SkArgs<double> b = a;
  b.N = a.N - 1;
  good.col_rescale(b);
}
void col_stale_sums(const SkArgs<double>& a) {  // forgets to zero work: right only on the first call
  good.col_sums(a);
  col_factors(a.work, a.c, a.N, a.fi);
  good.col_scale(a);
}
void row_nan(const SkArgs<double>& a) {
  good.row_rescale(a);
  a.A[(a.M / 2) * a.lda + a.N / 2] = std::numeric_limits<double>::quiet_NaN();
}
}  // namespace wrong

Verification verify_with(const std::string& name, SkKernels<double> k) {
  const Case c = parse_case_name(name);
  return make_instance<double>(c, k)->verify();
}

TEST(SinkhornVerification, CorrectKernelPasses) {
  EXPECT_TRUE(verify_with("sinkhorn/c2r/f64/37x41/part:iter/threads:1", wrong::good).ok);
}

TEST(SinkhornVerification, WrongRowFactorFails) {
  SkKernels<double> k = wrong::good;
  k.row_rescale = wrong::row_factor_off;
  for (const char* part : {"iter", "row"}) {
    const auto v = verify_with(std::string("sinkhorn/c2r/f64/37x41/part:") + part + "/threads:1", k);
    EXPECT_FALSE(v.ok) << v.detail;
    EXPECT_GT(v.max_err, 1e-5);
  }
}

TEST(SinkhornVerification, SkippedEdgeColumnFailsAndIsLocated) {
  SkKernels<double> k = wrong::good;
  k.col_rescale = wrong::col_skips_last_column;
  const auto v = verify_with("sinkhorn/c2r/f64/37x41/part:col/threads:1", k);
  EXPECT_FALSE(v.ok);
  EXPECT_NE(v.detail.find(", 40)"), std::string::npos) << v.detail;  // the worst is in column 40
}

TEST(SinkhornVerification, StaleStateFailsOnTheSecondRun) {
  SkKernels<double> k = wrong::good;
  k.col_rescale = wrong::col_stale_sums;
  const auto v = verify_with("sinkhorn/c2r/f64/37x41/part:col/threads:1", k);
  EXPECT_FALSE(v.ok) << v.detail;
}

TEST(SinkhornVerification, NaNFails) {
  SkKernels<double> k = wrong::good;
  k.row_rescale = wrong::row_nan;
  const auto v = verify_with("sinkhorn/c2r/f64/37x41/part:row/threads:1", k);
  EXPECT_FALSE(v.ok);
  EXPECT_TRUE(std::isinf(v.max_err));
}

TEST(SinkhornVerification, ErrorBoundGrowsWithPassesAndLength) {
  const double eps = std::numeric_limits<double>::epsilon();
  EXPECT_DOUBLE_EQ(sk_error_bound({10}, eps), 11 * eps / 2);
  EXPECT_DOUBLE_EQ(sk_error_bound({10, 20}, eps), (2 * 11 + 21) * eps / 2);
  EXPECT_LT(sk_error_bound({100, 100}, eps), sk_error_bound({100, 100, 100}, eps));
}

// ---- The family table ---------------------------------------------------------------------
const std::regex kGrammar(
    R"(^sinkhorn/((typical|c2r|blocked|microkernel)(/(scalar|avx2|avx512))?/(f32|f64)/[0-9]+x[0-9]+(/mc:[0-9]+/nc:[0-9]+)?(/fi:0\.[0-9]+)?/part:(iter|row|col)|(mapuot|fused_uv)/(scalar|avx2|avx512)/(f32|f64)/[0-9]+x[0-9]+(/fi:0\.[0-9]+)?)/threads:[12]$)");

std::vector<Case> expanded(std::string_view profile) {
  std::vector<Case> out;
  for (Case c : sinkhorn_family().cases(profile)) {
    c.family = "sinkhorn";
    const Variant& v = *sinkhorn_family().find(c.variant);
    if (v.isas.empty() || c.isa != Isa::none) {  // none = each ISA (as expand_cases)
      out.push_back(c);
      continue;
    }
    for (Isa isa : v.isas) c.isa = isa, out.push_back(c);
  }
  return out;
}

TEST(SinkhornFamily, TableHasTheSixVariants) {
  const Family& f = sinkhorn_family();
  EXPECT_EQ(f.name, "sinkhorn");
  std::vector<std::string> names;
  for (const auto& v : f.variants) names.push_back(v.name);
  EXPECT_EQ(names, (std::vector<std::string>{"typical", "c2r", "blocked", "microkernel", "mapuot", "fused_uv"}));
  EXPECT_EQ(f.find("mapuot")->isas, (std::vector<Isa>{Isa::scalar, Isa::avx2, Isa::avx512}));
  EXPECT_EQ(f.find("fused_uv")->isas, (std::vector<Isa>{Isa::scalar, Isa::avx2, Isa::avx512}));
  EXPECT_EQ(f.find("microkernel")->isas, (std::vector<Isa>{Isa::scalar, Isa::avx2, Isa::avx512}));
  EXPECT_TRUE(f.find("c2r")->isas.empty());
}

TEST(SinkhornFamily, ProfilesProduceNamesInTheGrammar) {
  for (const char* profile : {"smoke", "quick", "paper"}) {
    const auto cases = expanded(profile);
    EXPECT_FALSE(cases.empty()) << profile;
    std::set<std::string> seen;
    for (const Case& c : cases) {
      const std::string n = c.name();
      EXPECT_TRUE(std::regex_match(n, kGrammar)) << n;
      EXPECT_TRUE(seen.insert(n).second) << "duplicate " << n;
      EXPECT_EQ(parse_case_name(n).name(), n);
      EXPECT_EQ(sinkhorn_family().find(c.variant)->accepts(c), "") << n;
      const Model m = sinkhorn_family().find(c.variant)->model(c);
      EXPECT_GT(m.flops, 0);
      EXPECT_GT(m.bytes(), 0);
    }
  }
  std::set<std::string> quick;
  for (const Case& c : expanded("quick")) quick.insert(c.name());
  for (const char* n : {"sinkhorn/c2r/f64/4096x4096/part:col/threads:1",
                        "sinkhorn/blocked/f64/4096x4096/mc:8/nc:1024/part:iter/threads:1",
                        "sinkhorn/microkernel/avx2/f32/4096x4096/part:row/threads:1",
                        "sinkhorn/typical/f64/1023x517/part:iter/threads:1",
                        "sinkhorn/microkernel/scalar/f64/4097x1/part:iter/threads:1"})
    EXPECT_TRUE(quick.count(n)) << n;
  std::set<std::string> paper;
  for (const Case& c : expanded("paper")) paper.insert(c.name());
  EXPECT_TRUE(paper.count("sinkhorn/typical/f64/16000x16000/part:col/threads:1"));
  EXPECT_TRUE(paper.count("sinkhorn/blocked/f64/16000x16000/mc:8/nc:1000/part:col/threads:1"));
  EXPECT_TRUE(paper.count("sinkhorn/mapuot/avx2/f64/16000x16000/threads:2"));
  EXPECT_TRUE(paper.count("sinkhorn/fused_uv/scalar/f64/4096x4096/fi:0.5/threads:1"));
  const std::string best(to_string(best_isa()));
  for (const std::string& n : {"sinkhorn/microkernel/" + best + "/f64/4096x4096/part:iter/threads:2",
                              "sinkhorn/mapuot/" + best + "/f64/4096x4096/threads:2",
                              "sinkhorn/fused_uv/" + best + "/f32/4096x4096/threads:1",
                              std::string("sinkhorn/c2r/f64/4096x4096/fi:0.5/part:iter/threads:1"),
                              std::string("sinkhorn/fused_uv/scalar/f64/1023x517/fi:0.7/threads:2")})
    EXPECT_TRUE(quick.count(n)) << n;
  // The extra thread / fi cases run only the widest ISA.
  EXPECT_FALSE(best != "scalar" && quick.count("sinkhorn/mapuot/scalar/f64/4096x4096/threads:2")) << best;
  EXPECT_TRUE(sinkhorn_family().cases("nonsense").empty());
}

TEST(SinkhornFamily, AcceptsRejectsBadCasesWithAReason) {
  const Family& f = sinkhorn_family();
  auto why = [&](const std::string& name) {
    const Case c = parse_case_name(name);
    return f.find(c.variant)->accepts(c);
  };
  EXPECT_EQ(why("sinkhorn/microkernel/avx2/f32/1023x517/part:row/threads:1"), "");
  EXPECT_EQ(why("sinkhorn/microkernel/avx2/f64/64x64/mc:3/nc:7/part:col/threads:1"), "");
  EXPECT_EQ(why("sinkhorn/c2r/f64/64x64/threads:1"), "");  // part defaults to iter
  EXPECT_NE(why("sinkhorn/c2r/f64/64x64/part:diag/threads:1").find("part must be"), std::string::npos);
  EXPECT_NE(why("sinkhorn/c2r/f64/64x64/mc:8/part:row/threads:1").find("unknown parameter 'mc'"),
            std::string::npos);
  EXPECT_NE(why("sinkhorn/blocked/f64/64x64/mc:0/nc:4/part:row/threads:1").find(">= 1"), std::string::npos);
  EXPECT_NE(why("sinkhorn/blocked/f64/64x64/mc:x/nc:4/part:row/threads:1").find("integer"), std::string::npos);
  EXPECT_NE(why("sinkhorn/c2r/f64/64x64x3/part:row/threads:1").find("MxN"), std::string::npos);
  EXPECT_EQ(why("sinkhorn/c2r/f64/64x64/part:row/threads:2"), "");
  EXPECT_EQ(why("sinkhorn/typical/f64/64x64/fi:0.25/part:row/threads:3"), "");
  EXPECT_EQ(why("sinkhorn/mapuot/avx2/f64/64x64/fi:1/threads:2"), "");
  for (const char* bad : {"0", "1.5", "-0.5", "x", "0.5x", "nan"})
    EXPECT_NE(why(std::string("sinkhorn/c2r/f64/64x64/fi:") + bad + "/threads:1").find("fi must be"), std::string::npos) << bad;
  EXPECT_NE(why("sinkhorn/mapuot/avx2/f64/64x64/part:row/threads:1").find("unknown parameter 'part'"), std::string::npos);
  EXPECT_NE(why("sinkhorn/fused_uv/avx2/f64/64x64/mc:4/threads:1").find("unknown parameter 'mc'"), std::string::npos);
  // pf: where the fused kernels prefetch their streamed rows to (l1 or l2), theirs alone
  EXPECT_EQ(why("sinkhorn/fused_uv/avx2/f64/64x64/pf:l1/threads:1"), "");
  EXPECT_EQ(why("sinkhorn/mapuot/avx512/f32/64x64/fi:0.5/pf:l2/threads:2"), "");
  EXPECT_NE(why("sinkhorn/mapuot/avx2/f64/64x64/pf:t0/threads:1").find("pf (where the streamed rows are prefetched to) must be l1 or l2, got 't0'"),
            std::string::npos);
  EXPECT_NE(why("sinkhorn/microkernel/avx2/f64/64x64/pf:l1/part:row/threads:1").find("unknown parameter 'pf'"),
            std::string::npos);
}

TEST(SinkhornFamily, ModelCountsPassesInTheBandwidthConvention) {
  const Family& f = sinkhorn_family();
  auto model = [&](const std::string& name) {
    const Case c = parse_case_name(name);
    return f.find(c.variant)->model(c);
  };
  const double MN = 4096.0 * 4096.0, n = 4096;
  auto bytes_of = [](const Model& m, const char* kernel) {
    double b = 0;
    for (const auto& t : m.traffic) b += t.kernel == kernel ? t.bytes : 0;
    return b;
  };
  const Model row = model("sinkhorn/c2r/f64/4096x4096/part:row/threads:1");
  EXPECT_DOUBLE_EQ(row.flops, 2 * MN);
  EXPECT_DOUBLE_EQ(bytes_of(row, "update"), 2 * MN * 8);
  EXPECT_DOUBLE_EQ(bytes_of(row, "read"), n * 8);
  const Model col = model("sinkhorn/microkernel/avx2/f32/4096x4096/part:col/threads:1");
  EXPECT_DOUBLE_EQ(col.flops, 2 * MN);
  EXPECT_DOUBLE_EQ(bytes_of(col, "read"), n * 4);  // the matrix: mr = 4 rows streamed at once
  EXPECT_DOUBLE_EQ(bytes_of(col, "read_s4"), MN * 4);
  EXPECT_DOUBLE_EQ(bytes_of(col, "update_s4"), 2 * MN * 4);
  EXPECT_EQ(col.compute_ceiling, "add_f32");
  const Model it = model("sinkhorn/blocked/f64/4096x4096/mc:8/nc:1024/part:iter/threads:1");
  EXPECT_DOUBLE_EQ(it.flops, 4 * MN);
  EXPECT_DOUBLE_EQ(it.bytes(), row.bytes() + model("sinkhorn/blocked/f64/4096x4096/part:col/threads:1").bytes());
  EXPECT_EQ(it.compute_ceiling, "add_f64");
  EXPECT_GE(it.working_set, MN * 8);
  EXPECT_NE(model("sinkhorn/typical/f64/4096x4096/part:col/threads:1").note.find("stride"), std::string::npos);
  // A, A0, r, u, c, work, 2 threads x 200 private sums (200 is a whole number of lines),
  // the reference's vectors.
  EXPECT_EQ(sinkhorn_family().memory_bytes(parse_case_name("sinkhorn/c2r/f64/100x200/part:row/threads:2")),
            size_t(2 * 100 * 200 * 8 + (200 + 400) * 8 + 2 * 200 * 8 + (100 + 400) * sizeof(long double)));
  // The fused variants: mapuot one update of A, fused_uv one read of K.
  const Model mu = model("sinkhorn/mapuot/avx2/f64/4096x4096/threads:2");
  EXPECT_DOUBLE_EQ(bytes_of(mu, "update_s4"), 2 * MN * 8);  // groups of 4 rows
  EXPECT_DOUBLE_EQ(bytes_of(mu, "read"), 2 * n * 8);
  const Model uv = model("sinkhorn/fused_uv/avx2/f32/4096x4096/fi:0.5/threads:1");
  EXPECT_DOUBLE_EQ(bytes_of(uv, "update"), 0);
  EXPECT_DOUBLE_EQ(bytes_of(uv, "read_s4"), MN * 4);
  EXPECT_DOUBLE_EQ(bytes_of(uv, "read"), 5 * n * 4);
  EXPECT_EQ(uv.compute_ceiling, "fma_f32");
  EXPECT_NE(uv.note.find("pow"), std::string::npos);
}

// blocked's ECM: the nc-wide factor segment stays in L1 only when it fits there; with one
// panel (nc >= N) the walk is c2r's, and the model says so. 65536 doubles (512 KiB) exceed
// half of any L1, 1024 (8 KiB) fit in every one.
TEST(SinkhornFamily, BlockedModelFollowsItsPanel) {
  auto model = [](const std::string& name) {
    const Case c = parse_case_name(name);
    return sinkhorn_family().find(c.variant)->model(c);
  };
  const Model wide = model("sinkhorn/blocked/f64/4x65536/mc:8/nc:65536/part:col/threads:1");
  const Model panels = model("sinkhorn/blocked/f64/4x65536/mc:8/nc:1024/part:col/threads:1");
  const Model c2r = model("sinkhorn/c2r/f64/4x65536/part:col/threads:1");
  ASSERT_EQ(wide.phases.size(), 2u);
  ASSERT_EQ(panels.phases.size(), 2u);
  for (size_t k = 0; k < 2; ++k) {
    EXPECT_EQ(wide.phases[k].l2.size(), 2u) << "the vector comes from L2 beside A";
    EXPECT_EQ(wide.phases[k].l2.size(), c2r.phases[k].l2.size());
    EXPECT_EQ(panels.phases[k].l2.size(), 1u) << "an 8 KiB segment stays in L1: only A crosses";
  }
  EXPECT_NE(wide.phases[0].note.find("c2r's walk"), std::string::npos);
  EXPECT_EQ(panels.phases[0].note.find("c2r's walk"), std::string::npos);
}

TEST(SinkhornFamily, KernelLookupRejectsUnknownNames) {
  EXPECT_THROW(kernels_for<double>("nope", Isa::none), Error);
  EXPECT_THROW(kernels_for<double>("microkernel", Isa::none), Error);
  EXPECT_THROW(kernels_for<double>("c2r", Isa::avx2), Error);
  EXPECT_THROW(make_instance<float>(parse_case_name("sinkhorn/c2r/f64/4x4/part:row/threads:1"),
                                    c2r_kernels<float>()),
               Error);
}

}  // namespace
}  // namespace rooflab::sinkhorn

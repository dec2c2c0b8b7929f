// Floyd-Warshall: base kernels against a direct loop (aliasing included), every schedule /
// layout / kernel / ISA / dtype against an independent reference at many N, the generators,
// negative cycles, infinity, path reconstruction, verification catching wrong kernels, bad
// input and the family table.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <mutex>
#include <tuple>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "harness/error.hpp"
#include "harness/cache_sets.hpp"
#include "harness/families.hpp"
#include "harness/host_caches.hpp"
#include "harness/isa.hpp"
#include "kernels/floyd_warshall/floyd_warshall.hpp"

namespace rooflab::fw {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// An independent reference for the tests: the three loops in long double, straight from the
// definition (no skipping, no shared code with reference()).
std::vector<long double> slow_fw(Graph g, int64_t n) {
  std::vector<long double> d(size_t(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) d[size_t(i * n + j)] = weight(g, n, i, j);
  for (int64_t k = 0; k < n; ++k)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (d[size_t(i * n + k)] + d[size_t(k * n + j)] < d[size_t(i * n + j)])
          d[size_t(i * n + j)] = d[size_t(i * n + k)] + d[size_t(k * n + j)];
  return d;
}

// ---- Base kernels on rectangles -------------------------------------------------------------
struct KernelCfg {
  Isa isa;  // none: portable
  bool f64;
  std::string label() const {
    return std::string(isa == Isa::none ? "portable" : to_string(isa)) + (f64 ? "_f64" : "_f32");
  }
};
void PrintTo(const KernelCfg& c, std::ostream* os) { *os << c.label(); }

template <class T>
Kernels<T> kernels_of(Isa isa) {
  return isa == Isa::none ? portable_kernels<T>() : simd_kernels<T>(isa);
}

class FwKernels : public ::testing::TestWithParam<KernelCfg> {
 protected:
  void SetUp() override {
    if (GetParam().isa != Isa::none && !isa_supported(GetParam().isa))
      GTEST_SKIP() << "this CPU lacks " << to_string(GetParam().isa) << " (kernel compiled, not run)";
  }
};

// A matrix of small integers (some +inf) with a NaN guard band right of every row and below
// the last: a kernel that reads outside m x n poisons its result, one that writes there is seen.
template <class T>
struct Mat {
  int64_t rows, cols, ld;
  std::vector<T> a;
  Mat(int64_t r, int64_t c, uint64_t seed) : rows(r), cols(c), ld(c + 5), a(size_t((r + 1) * (c + 5)), NAN) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) {
        s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
        const uint64_t x = s * 0x2545F4914F6CDD1Dull;
        a[size_t(i * ld + j)] = x % 7 == 0 ? T(INFINITY) : T(int64_t(x >> 40) % 50);
      }
  }
  T& operator()(int64_t i, int64_t j) { return a[size_t(i * ld + j)]; }
  bool guards_nan() const {
    for (int64_t i = 0; i <= rows; ++i)
      for (int64_t j = i < rows ? cols : 0; j < ld; ++j)
        if (!std::isnan(a[size_t(i * ld + j)])) return false;
    return true;
  }
};

// C (m x n) relaxed through A (m x kk), B (kk x n), all separate matrices (no aliasing).
template <class T>
void check_disjoint(BaseFn<T> f, int64_t m, int64_t n, int64_t kk) {
  Mat<T> A(m, kk, 1), B(kk, n, 2), C(m, n, 3);
  // One common ld: embed the three in one buffer with the widest row.
  const int64_t ld = std::max({m, n, kk}) + 3;
  std::vector<T> buf(size_t(3 * (std::max({m, kk}) + 1) * ld), T(NAN));
  T* pa = buf.data();
  T* pb = pa + (std::max(m, kk) + 1) * ld;
  T* pc = pb + (std::max(m, kk) + 1) * ld;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t k = 0; k < kk; ++k) pa[i * ld + k] = A(i, k);
  for (int64_t k = 0; k < kk; ++k)
    for (int64_t j = 0; j < n; ++j) pb[k * ld + j] = B(k, j);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) pc[i * ld + j] = C(i, j);
  f(pc, pa, pb, ld, m, n, kk);
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      T want = C(i, j);
      for (int64_t k = 0; k < kk; ++k) want = std::min(want, T(A(i, k) + B(k, j)));
      ASSERT_EQ(pc[i * ld + j], want) << m << "x" << n << "x" << kk << " at " << i << "," << j;
    }
  for (int64_t i = 0; i < m; ++i)  // columns n.. of C's rows untouched (NaN)
    for (int64_t j = n; j < ld; ++j) ASSERT_TRUE(std::isnan(pc[i * ld + j])) << "wrote column " << j;
}

TEST_P(FwKernels, DisjointOperandsAllShapes) {
  for (int64_t m : {1, 2, 5, 6, 7, 8, 13, 17, 33})
    for (int64_t n : {1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 64, 65})
      for (int64_t kk : {1, 2, 9, 16}) {
        if (GetParam().f64) {
          const Kernels<double> k = kernels_of<double>(GetParam().isa);
          check_disjoint(k.plain, m, n, kk);
          if (k.regblock) check_disjoint(k.regblock, m, n, kk);
        } else {
          const Kernels<float> k = kernels_of<float>(GetParam().isa);
          check_disjoint(k.plain, m, n, kk);
          if (k.regblock) check_disjoint(k.regblock, m, n, kk);
        }
      }
}

// The plain kernel on an n x n tile that is A, B and C at once (the pivot tile), with a zero
// diagonal: exactly FW on that tile.
template <class T>
void check_pivot_tile(BaseFn<T> f, int64_t n) {
  Mat<T> D(n, n, 7);
  for (int64_t i = 0; i < n; ++i) D(i, i) = 0;
  std::vector<long double> want(size_t(n * n));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) want[size_t(i * n + j)] = D(i, j);
  for (int64_t k = 0; k < n; ++k)
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        want[size_t(i * n + j)] = std::min(want[size_t(i * n + j)], want[size_t(i * n + k)] + want[size_t(k * n + j)]);
  f(D.a.data(), D.a.data(), D.a.data(), D.ld, n, n, n);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < n; ++j) ASSERT_EQ((long double)D(i, j), want[size_t(i * n + j)]) << n << ": " << i << "," << j;
  ASSERT_TRUE(D.guards_nan());
}

TEST_P(FwKernels, PlainKernelHandlesThePivotTile) {
  for (int64_t n : {1, 2, 7, 8, 9, 16, 31, 64, 70}) {
    if (GetParam().f64) check_pivot_tile(kernels_of<double>(GetParam().isa).plain, n);
    else check_pivot_tile(kernels_of<float>(GetParam().isa).plain, n);
  }
}

// The plain kernel under each aliasing the schedules make (C is A: the pivot column, C is B:
// the pivot row, both: the pivot tile; A is C + p, one row: the flat schedule), any diagonal (negative entries too, where the order of
// the reads shows), against its contract written as loops: for k, for i, a = A[i][k] read
// once, then for j, c[i][j] = min(a + B[k][j], c[i][j]) with B[k][j] as it is at that moment.
enum class Alias { ca, cb, cab, flat };
template <class T>
void check_aliased(BaseFn<T> f, Alias alias, int64_t m, int64_t n, int64_t kk, int64_t p = 0) {
  const int64_t ld = std::max({m, n, kk}) + 3, rows = std::max({m, kk}) + 1;
  std::vector<T> buf(size_t(3 * rows * ld), T(NAN));
  T* C = buf.data();
  T* A = alias == Alias::cb ? C + rows * ld : alias == Alias::flat ? C + p : C;
  T* B = alias == Alias::ca || alias == Alias::flat ? C + 2 * rows * ld : C;
  uint64_t s = 0x2545F4914F6CDD1Dull * uint64_t(m * 10007 + n * 101 + kk) + uint64_t(alias);
  auto fill = [&](T* dst, int64_t r, int64_t c) {
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) {
        s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
        const uint64_t x = s * 0x2545F4914F6CDD1Dull;
        dst[i * ld + j] = x % 7 == 0 ? T(INFINITY) : T(int64_t(x >> 40) % 50 - (i == j ? 20 : 0));
      }
  };
  fill(C, m, n);
  if (alias == Alias::cb) fill(A, m, kk);
  if (B != C) fill(B, kk, n);
  if (alias == Alias::flat) C[p] = T(-7), B[p] = T(-3);  // A[0][0] is C[0][p]: it changes within the step
  std::vector<T> ref(buf);
  T* rC = ref.data() + (C - buf.data());
  const T* rA = ref.data() + (A - buf.data());
  const T* rB = ref.data() + (B - buf.data());
  for (int64_t k = 0; k < kk; ++k)
    for (int64_t i = 0; i < m; ++i) {
      const T a = rA[i * ld + k];
      for (int64_t j = 0; j < n; ++j) {
        const T c = a + rB[k * ld + j];
        if (c < rC[i * ld + j]) rC[i * ld + j] = c;
      }
    }
  f(C, A, B, ld, m, n, kk);
  for (size_t e = 0; e < buf.size(); ++e) {
    const bool both_nan = std::isnan(buf[e]) && std::isnan(ref[e]);
    ASSERT_TRUE(both_nan || buf[e] == ref[e]) << "alias " << int(alias) << ", " << m << "x" << n << "x" << kk << " p " << p
                                              << " at row " << int64_t(e) / ld << ", column " << int64_t(e) % ld;
  }
}

TEST_P(FwKernels, PlainKernelKeepsItsContractUnderEveryAliasing) {
  for (Alias alias : {Alias::ca, Alias::cb, Alias::cab})
    for (int64_t m : {1, 3, 8, 17, 64})
      for (int64_t n : {1, 5, 16, 33, 64, 70})
        for (int64_t kk : {1, 4, 17, 64}) {
          // C is A: A's kk columns are C's (kk <= n); C is B: B's kk rows are C's (kk <= m).
          if ((alias != Alias::cb && kk > n) || (alias != Alias::ca && kk > m)) continue;
          if (GetParam().f64) check_aliased(kernels_of<double>(GetParam().isa).plain, alias, m, n, kk);
          else check_aliased(kernels_of<float>(GetParam().isa).plain, alias, m, n, kk);
        }
  for (int64_t n : {1, 5, 16, 33, 64, 70, 300})  // the flat schedule: one row, A = &row[p]
    for (int64_t p : {int64_t(0), n / 3, n - 1}) {
      if (GetParam().f64) check_aliased(kernels_of<double>(GetParam().isa).plain, Alias::flat, 1, n, 1, p);
      else check_aliased(kernels_of<float>(GetParam().isa).plain, Alias::flat, 1, n, 1, p);
    }
}

// The register-blocked kernel in place on a pivot row tile (C = B, b x w) or pivot column tile
// (C = A, w x b) whose other operand is a closed b x b pivot tile (FW by the plain kernel on
// negative edges without a negative cycle), as the regblock schedules call it: exactly the
// loops' result (the contract above), though it reads row k of B / column k of A before or
// after their own relaxation, in its own order.
template <class T>
void check_regblock_pivot_panel(const Kernels<T>& k, Alias alias, int64_t b, int64_t w) {
  const int64_t ld = std::max(b, w) + 3, rows = std::max(b, w) + 1;
  std::vector<T> buf(size_t(2 * rows * ld), T(NAN));
  T* P = buf.data();
  T* C = P + rows * ld;
  uint64_t s = 0x9E3779B97F4A7C15ull * uint64_t(b * 1009 + w * 13 + int64_t(alias));
  auto next = [&] { return s ^= s << 13, s ^= s >> 7, s ^= s << 17, s; };
  std::vector<int64_t> pot(static_cast<size_t>(b));
  for (auto& x : pot) x = int64_t(next() % 20);
  for (int64_t u = 0; u < b; ++u)  // w'(u, v) + p(u) - p(v), w' >= 0: every cycle sums to >= 0
    for (int64_t v = 0; v < b; ++v)
      P[u * ld + v] = u == v ? T(0) : next() % 5 == 0 ? T(INFINITY) : T(int64_t(next() % 30) + pot[size_t(u)] - pot[size_t(v)]);
  k.plain(P, P, P, ld, b, b, b);  // closed: FW on the tile
  const int64_t m = alias == Alias::cb ? b : w, n = alias == Alias::cb ? w : b;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) C[i * ld + j] = next() % 6 == 0 ? T(INFINITY) : T(int64_t(next() % 60) - 10);
  const T* A = alias == Alias::cb ? P : C;
  const T* B = alias == Alias::cb ? C : P;
  std::vector<T> ref(buf);  // the loops on a copy, B[k][j] and A[i][k] as they are at that moment
  T* rC = ref.data() + (C - buf.data());
  const T* rA = ref.data() + (A - buf.data());
  const T* rB = ref.data() + (B - buf.data());
  int64_t changed = 0;
  for (int64_t kk = 0; kk < b; ++kk)
    for (int64_t i = 0; i < m; ++i) {
      const T a = rA[i * ld + kk];
      for (int64_t j = 0; j < n; ++j)
        if (a + rB[kk * ld + j] < rC[i * ld + j]) rC[i * ld + j] = a + rB[kk * ld + j], ++changed;
    }
  if (b > 4 && w > 4) {
    ASSERT_GT(changed, 0) << "the panel's relaxation changes nothing: no test";
  }
  k.regblock(C, A, B, ld, m, n, b);
  for (size_t e = 0; e < buf.size(); ++e) {
    const bool both_nan = std::isnan(buf[e]) && std::isnan(ref[e]);
    ASSERT_TRUE(both_nan || buf[e] == ref[e]) << (alias == Alias::cb ? "C = B" : "C = A") << ", b " << b << " w " << w
                                              << " at row " << int64_t(e) / ld << ", column " << int64_t(e) % ld;
  }
}

TEST_P(FwKernels, RegblockKernelRelaxesPivotRowAndColumnTilesInPlace) {
  for (Alias alias : {Alias::ca, Alias::cb})
    for (int64_t b : {1, 4, 17, 64})
      for (int64_t w : {1, 5, 16, 33, 64, 70}) {
        if (GetParam().f64) {
          const Kernels<double> k = kernels_of<double>(GetParam().isa);
          if (!k.regblock) GTEST_SKIP() << "no register-blocked kernel";
          check_regblock_pivot_panel(k, alias, b, w);
        } else {
          const Kernels<float> k = kernels_of<float>(GetParam().isa);
          if (!k.regblock) GTEST_SKIP() << "no register-blocked kernel";
          check_regblock_pivot_panel(k, alias, b, w);
        }
      }
}

std::vector<KernelCfg> kernel_cfgs() {
  std::vector<KernelCfg> out;
  for (bool f64 : {false, true})
    for (Isa isa : {Isa::none, Isa::scalar, Isa::avx2, Isa::avx512}) out.push_back({isa, f64});
  return out;
}
INSTANTIATE_TEST_SUITE_P(All, FwKernels, ::testing::ValuesIn(kernel_cfgs()),
                         [](const auto& info) { return info.param.label(); });

// ---- Whole solvers: every variant / plan / ISA / dtype vs the independent reference ----------
// Each configuration is a case name prefix; N, bs and threads are added per run.
struct SolverCfg {
  std::string variant;  // "naive", "blocked", ... (with the ISA for SIMD variants)
  Isa isa;
  bool f64;
  std::string params;  // "/sched:rec/layout:bdl" etc. (without bs)
  bool tiled;
  std::string label() const {
    std::string s = variant;  // appends, not one long '+' chain: GCC 12 -Wrestrict false positive
    if (isa != Isa::none) s.append("_").append(to_string(isa));
    s.append(f64 ? "_f64" : "_f32").append(params);
    for (char& c : s)
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    return s;
  }
  std::string name(int64_t n, int64_t bs, const std::string& graph, int threads) const {
    std::string s = "floyd_warshall/" + variant + (isa == Isa::none ? "" : "/" + std::string(to_string(isa))) +
                    (f64 ? "/f64/" : "/f32/") + std::to_string(n) + "x" + std::to_string(n) + params;
    if (tiled && bs > 0) s += "/bs:" + std::to_string(bs);
    if (params.find("sched:rec") != std::string::npos || variant == "recursive" ||
        (variant == "bdl" && params.find("sched:blocked") == std::string::npos) ||
        (variant == "regblock" && params.find("sched:blocked") == std::string::npos))
      s += "/task:8";  // parallel recursion down to small sub-problems, so the test exercises it
    return s + "/graph:" + graph + "/threads:" + std::to_string(threads);
  }
};
void PrintTo(const SolverCfg& c, std::ostream* os) { *os << c.label(); }

std::vector<SolverCfg> solver_cfgs() {
  std::vector<SolverCfg> out;
  for (bool f64 : {false, true}) {
    out.push_back({"naive", Isa::none, f64, "", false});
    for (const char* l : {"std", "bdl"}) {
      out.push_back({"blocked", Isa::none, f64, std::string("/layout:") + l, true});
      out.push_back({"recursive", Isa::none, f64, std::string("/layout:") + l, true});
    }
    for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) {
      out.push_back({"simd", isa, f64, "/sched:flat/layout:std", false});
      for (const char* s : {"blocked", "rec"})
        for (const char* l : {"std", "bdl"})
          out.push_back({"simd", isa, f64, std::string("/sched:") + s + "/layout:" + l, true});
      for (const char* s : {"blocked", "rec"}) {
        out.push_back({"bdl", isa, f64, std::string("/sched:") + s, true});
        for (const char* l : {"std", "bdl"})
          out.push_back({"regblock", isa, f64, std::string("/sched:") + s + "/layout:" + l, true});
      }
    }
  }
  return out;
}

class FwSolvers : public ::testing::TestWithParam<SolverCfg> {
 protected:
  void SetUp() override {
    if (GetParam().isa != Isa::none && !isa_supported(GetParam().isa))
      GTEST_SKIP() << "this CPU lacks " << to_string(GetParam().isa) << " (kernel compiled, not run)";
  }
  static Verification verify(const std::string& name, int threads) {
    const Case c = parse_case_name(name);
    const Variant& v = *floyd_warshall_family().find(c.variant);
    const std::string why = v.accepts(c);
    EXPECT_EQ(why, "") << name;
    if (!why.empty()) return {};
    omp_set_num_threads(threads);
    auto inst = v.make(c);
    Verification r = inst->verify();
    omp_set_num_threads(1);
    return r;
  }
};

// Through the family instance (padding, layout conversion, threads) at many N and tile sizes;
// the instance compares with reference(), which the next test checks against slow_fw.
TEST_P(FwSolvers, MatchesTheReferenceAtManyN) {
  const SolverCfg& cf = GetParam();
  const char* const graphs[] = {"dense", "sparse", "negative"};
  int turn = 0;  // the graphs take turns, so each N x tile size meets one of them
  for (int64_t n : {1, 2, 3, 15, 16, 17, 63, 64, 65, 100, 129, 255}) {
    std::vector<int64_t> tiles = {0};  // 0: the default (64, or the largest power of two <= N)
    if (cf.tiled && n >= 8) tiles.push_back(n >= 64 ? 16 : 4);
    for (int64_t bs : tiles) {
      const std::string g = graphs[turn++ % 3];
      // 2 threads where there are several tiles or rows to share out.
      const int threads = n == 17 || n == 65 || n == 129 || n == 255 ? 2 : 1;
      const std::string name = cf.name(n, bs, g, threads);
      const Verification v = verify(name, threads);
      ASSERT_TRUE(v.ok) << name << ": " << v.detail;
      ASSERT_EQ(v.max_err, 0) << name;
      ASSERT_NE(v.detail.find("exact"), std::string::npos) << v.detail;
    }
  }
}

// A row stride above the padded N (N x N x LD: the ECM's calibration shapes, which keep the
// case's stride): the same exact distances, at a stride of 4 KiB and an odd one, 1 and 2 threads.
TEST_P(FwSolvers, RowStrideLd) {
  const SolverCfg& cf = GetParam();
  for (const auto& [n, ld, threads] : {std::tuple<int64_t, int64_t, int>{65, 512, 2}, {100, 133, 1}, {128, 1024, 2}}) {
    std::string name = cf.name(n, 0, "sparse", threads);
    const std::string dims = std::to_string(n) + "x" + std::to_string(n);
    name.replace(name.find(dims), dims.size(), dims + "x" + std::to_string(ld));
    const Verification v = verify(name, threads);
    ASSERT_TRUE(v.ok) << name << ": " << v.detail;
    ASSERT_EQ(v.max_err, 0) << name;
  }
  // Below the padded N it is refused.
  const Case c = parse_case_name(cf.name(100, 0, "sparse", 1));
  Case k = c;
  k.dims = {100, 100, 99};
  EXPECT_NE(floyd_warshall_family().find(k.variant)->accepts(k), "");
}

// A graph with a negative cycle: every solver must leave a negative diagonal, and verify()
// must say so instead of comparing distances.
TEST_P(FwSolvers, ReportsANegativeCycle) {
  const SolverCfg& cf = GetParam();
  // bs 2 at N = 20: the cycle's vertices 0, 1, 2 in two tiles (pivot row and column tiles on it).
  for (const auto& [n, bs] : {std::pair<int64_t, int64_t>{1, 0}, {2, 0}, {3, 0}, {20, 0}, {77, 0}, {20, 2}}) {
    if (bs > 0 && !cf.tiled) continue;
    const std::string name = cf.name(n, bs, "negcycle", 2);
    const Verification v = verify(name, 2);
    EXPECT_FALSE(v.ok) << name;
    EXPECT_NE(v.detail.find("negative cycle"), std::string::npos) << name << ": " << v.detail;
    EXPECT_TRUE(std::isinf(v.max_err));
  }
}

INSTANTIATE_TEST_SUITE_P(All, FwSolvers, ::testing::ValuesIn(solver_cfgs()),
                         [](const auto& info) { return info.param.label(); });

// solve() directly, compared with the independent long-double loops.
TEST(FwSolve, AgreesWithTheIndependentReference) {
  for (Graph g : {Graph::dense, Graph::sparse, Graph::negative})
    for (int64_t n : {1, 5, 33, 100}) {
      const auto want = slow_fw(g, n);
      const auto ref = reference(g, n);
      for (int64_t e = 0; e < n * n; ++e) ASSERT_EQ((long double)(*ref)[size_t(e)], want[size_t(e)]);
      for (const Plan plan : {Plan{Schedule::flat, Layout::standard, false, 1, 1},
                              Plan{Schedule::blocked, Layout::bdl, true, 8, 1},
                              Plan{Schedule::recursive, Layout::standard, true, 4, 8}}) {
        if (plan.bs > n) continue;
        const int64_t np = padded_size(n, plan);
        std::vector<float> D(size_t(np * np), INFINITY), work(size_t(np * np));
        generate(g, n, D.data(), np);
        solve(plan, simd_kernels<float>(Isa::scalar), D.data(), np, np, work.data());
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j)
            ASSERT_EQ((long double)D[size_t(i * np + j)], want[size_t(i * n + j)]) << n << ": " << i << "," << j;
      }
    }
}

// The parallel recursion at team sizes that do not divide its pieces evenly (3, 4, 5), odd
// tile counts (uneven halves, one-tile ranges) and thresholds from one tile to the whole
// matrix, both layouts, with the register-blocked kernel (order-free only where C is
// disjoint: a piece run under the wrong aliasing would give wrong distances).
TEST(FwSolve, ParallelRecursionMatchesAtAnyTeamSize) {
  const int64_t n = 197, bs = 8, np = 200;  // 25 x 25 tiles
  for (Graph g : {Graph::dense, Graph::negative}) {
    const auto want = slow_fw(g, n);
    for (int threads : {3, 4, 5})
      for (int64_t task_min : {1, 16, 64, 200})
        for (Layout layout : {Layout::standard, Layout::bdl}) {
          const Plan plan{Schedule::recursive, layout, true, bs, task_min};
          ASSERT_EQ(padded_size(n, plan), np);
          std::vector<double> D(size_t(np * np), INFINITY), work(size_t(np * np));
          generate(g, n, D.data(), np);
          omp_set_num_threads(threads);
          solve(plan, simd_kernels<double>(Isa::scalar), D.data(), np, np, work.data());
          omp_set_num_threads(1);
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = 0; j < n; ++j)
              ASSERT_EQ((long double)D[size_t(i * np + j)], want[size_t(i * n + j)])
                  << to_string(g) << " threads " << threads << " task " << task_min << ": " << i << "," << j;
        }
  }
}

// The parallel recursion's split, seen from its tile updates. Right distances alone cannot show
// a wrong split (FW's min-updates reach the right answer in many wrong orders, and an update
// run twice changes nothing), so the kernels log each call: its tiles, its thread and a global
// clock at start and end. Every (I, J, K) tile update must run exactly once; a team of 2+
// threads must share them; and each must start after the updates it reads have ended: its
// own C tile at the previous k-tile, and the pivot column tile (I, K) and pivot row tile (K, J)
// at the previous k-tile (FW-REC may read them before or after their own step K, which gives
// the same values, but never before step K - 1).
namespace tilelog {
struct Op {
  int thread = -1;
  int64_t start = 0, end = 0;
};
std::mutex mu;
std::map<std::tuple<int64_t, int64_t, int64_t>, std::vector<Op>> ops;
std::atomic<int64_t> clock{0};
const double* base = nullptr;
int64_t ld = 0, bs = 0;
BaseFn<double> real_plain = nullptr, real_regblock = nullptr;

std::pair<int64_t, int64_t> tile_of(const double* p) {
  const int64_t off = p - base;
  return {off / ld / bs, off % ld / bs};
}
void log_call(BaseFn<double> f, double* C, const double* A, const double* B, int64_t l, int64_t m, int64_t n,
              int64_t kk) {
  const auto [i, j] = tile_of(C);
  const auto [ai, k] = tile_of(A);
  const auto [bk, bj] = tile_of(B);
  Op op{omp_get_thread_num(), clock.fetch_add(1), 0};
  f(C, A, B, l, m, n, kk);
  op.end = clock.fetch_add(1);
  const std::lock_guard<std::mutex> lock(mu);
  // A's rows are C's, B's columns are C's, A's column tile is B's row tile: else the schedule
  // passed tiles that do not form an FW update (recorded as an impossible key).
  ops[ai == i && bj == j && bk == k ? std::tuple{i, j, k} : std::tuple{int64_t(-1), int64_t(-1), int64_t(-1)}]
      .push_back(op);
}
void plain(double* C, const double* A, const double* B, int64_t l, int64_t m, int64_t n, int64_t kk) {
  log_call(real_plain, C, A, B, l, m, n, kk);
}
void regblock(double* C, const double* A, const double* B, int64_t l, int64_t m, int64_t n, int64_t kk) {
  log_call(real_regblock, C, A, B, l, m, n, kk);
}
}  // namespace tilelog

TEST(FwSolve, ParallelRecursionSplitsTheTileUpdatesOnceInDependencyOrder) {
  const int64_t n = 200, bs = 8, nt = n / bs;  // 25 x 25 tiles: uneven halves
  const Kernels<double> real = simd_kernels<double>(Isa::scalar);
  tilelog::real_plain = real.plain;
  tilelog::real_regblock = real.regblock;
  const Kernels<double> logged{tilelog::plain, tilelog::regblock};
  for (int threads : {1, 2, 3, 4})
    for (int64_t task_min : {1, 16, 200}) {
      const Plan plan{Schedule::recursive, Layout::standard, true, bs, task_min};
      std::vector<double> D(size_t(n * n)), work(size_t(n * n));
      generate(Graph::dense, n, D.data(), n);
      tilelog::ops.clear();
      tilelog::base = D.data();
      tilelog::ld = n;
      tilelog::bs = bs;
      omp_set_num_threads(threads);
      solve(plan, logged, D.data(), n, n, work.data());
      omp_set_num_threads(1);
      const std::string at = "threads " + std::to_string(threads) + " task_min " + std::to_string(task_min);
      ASSERT_EQ(tilelog::ops.size(), size_t(nt * nt * nt)) << at << ": updates missing or malformed";
      std::set<int> workers;
      for (const auto& [key, runs] : tilelog::ops) {
        const auto [i, j, k] = key;
        ASSERT_GE(i, 0) << at << ": a call whose tiles are not an FW update";
        ASSERT_EQ(runs.size(), 1u) << at << ": tile update (" << i << "," << j << "," << k << ") ran " << runs.size()
                                   << " times";
        workers.insert(runs[0].thread);
        if (k == 0) continue;
        for (const auto& [pi, pj] : {std::pair{i, j}, std::pair{i, k}, std::pair{k, j}}) {
          const auto& before = tilelog::ops.at({pi, pj, k - 1});
          ASSERT_GT(runs[0].start, before[0].end) << at << ": (" << i << "," << j << "," << k << ") started before ("
                                                  << pi << "," << pj << "," << k - 1 << ") ended";
        }
      }
      // Below task_min tiles the diagonal call runs on one thread, so 200 (the whole grid) is serial.
      if (threads > 1 && task_min < nt) {
        EXPECT_GT(workers.size(), 1u) << at << ": one thread did all the work";
      }
    }
}

TEST(FwSolve, RejectsInconsistentPlans) {
  std::vector<float> D(64, 0.f), work(64);
  const Kernels<float> k = portable_kernels<float>();
  EXPECT_THROW(solve(Plan{Schedule::blocked, Layout::standard, false, 3, 1}, k, D.data(), 8, 8, work.data()), Error);
  EXPECT_THROW(solve(Plan{Schedule::flat, Layout::bdl, false, 8, 1}, k, D.data(), 8, 8, work.data()), Error);
  EXPECT_THROW(solve(Plan{Schedule::blocked, Layout::bdl, false, 4, 1}, k, D.data(), 8, 8, static_cast<float*>(nullptr)), Error);
  EXPECT_THROW(simd_kernels<float>(Isa::none), Error);
}

// ---- Generators -------------------------------------------------------------------------------
TEST(FwGraphs, DenseSparseNegativeHaveTheirShape) {
  const int64_t n = 400;
  std::vector<double> D(size_t(n * n));
  for (Graph g : {Graph::dense, Graph::sparse, Graph::negative}) {
    generate(g, n, D.data(), n);
    int64_t edges = 0, negative = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const double w = D[size_t(i * n + j)];
        if (i == j) {
          ASSERT_EQ(w, 0);
          continue;
        }
        if (w == kInf) continue;
        ++edges;
        negative += w < 0;
        ASSERT_EQ(w, std::round(w)) << "integer weights";
        // reduced weights are the positive w' in [1, 100]
        const double reduced = w - potential(g, i) + potential(g, j);
        ASSERT_GE(reduced, 1);
        ASSERT_LE(reduced, 100);
      }
    const double frac = double(edges) / double(n * (n - 1));
    if (g == Graph::dense) {
      EXPECT_EQ(edges, n * (n - 1));
    }
    if (g == Graph::sparse) {
      EXPECT_NEAR(frac, 0.02, 0.003);
    }
    if (g == Graph::negative) {
      EXPECT_NEAR(frac, 0.05, 0.005);
      EXPECT_GT(negative, edges / 5) << "the negative graph must have many negative edges";
    }
    if (g != Graph::negative) {
      EXPECT_EQ(negative, 0);
    }
  }
}

TEST(FwGraphs, DeterministicAndIndependentOfN) {
  std::vector<float> a(100 * 100), b(100 * 100);
  generate(Graph::sparse, 100, a.data(), 100);
  generate(Graph::sparse, 100, b.data(), 100);
  EXPECT_EQ(a, b);
  for (int64_t u = 0; u < 50; ++u)
    for (int64_t v = 0; v < 50; ++v) ASSERT_EQ(weight(Graph::negative, 50, u, v), weight(Graph::negative, 3000, u, v));
  EXPECT_EQ(parse_graph("negative"), Graph::negative);
  EXPECT_THROW(parse_graph("complete"), Error);
}

TEST(FwGraphs, NegativeGraphHasNoNegativeCycleAndNegativeDistances) {
  const auto ref = reference(Graph::negative, 300);
  int64_t negative = 0;
  for (int64_t i = 0; i < 300; ++i) {
    ASSERT_EQ((*ref)[size_t(i * 300 + i)], 0);
    for (int64_t j = 0; j < 300; ++j) negative += (*ref)[size_t(i * 300 + j)] < 0;
  }
  EXPECT_GT(negative, 1000);
  EXPECT_EQ(negative_cycle_vertex(ref->data(), 300, 300), -1);
}

TEST(FwGraphs, DijkstraRowsAndColumnsMatchTheReference) {
  for (Graph g : {Graph::dense, Graph::sparse, Graph::negative}) {
    const int64_t n = 250;
    const auto ref = reference(g, n);
    for (int64_t s : {0, 1, 124, 249}) {
      const auto row = dijkstra_row(g, n, s), col = dijkstra_col(g, n, s);
      for (int64_t v = 0; v < n; ++v) {
        ASSERT_EQ(row[size_t(v)], (*ref)[size_t(s * n + v)]) << to_string(g) << " row " << s << " col " << v;
        ASSERT_EQ(col[size_t(v)], (*ref)[size_t(v * n + s)]) << to_string(g) << " col " << s << " row " << v;
      }
    }
  }
  EXPECT_THROW(dijkstra_row(Graph::negcycle, 10, 0), Error);
}

// ---- Infinity, negative cycles, input checks ----------------------------------------------------
TEST(FwInfinity, UnreachablePairsStayInfiniteInF32) {
  // A dense graph with three vertices cut off (their rows and columns +inf), solved in f32
  // (padded to 192) with every SIMD ISA this CPU has: exactly the pairs involving a cut-off
  // vertex stay +inf (never NaN, never a large finite), all others are finite and exact.
  const int64_t n = 130, np = 192;
  const std::vector<long double> want = slow_fw(Graph::dense, n);
  auto cut = [](int64_t v) { return v == 3 || v == 64 || v == 129; };
  for (Isa isa : supported_isas({Isa::scalar, Isa::avx2, Isa::avx512})) {
    std::vector<float> D(size_t(np * np), INFINITY), work(size_t(np * np));
    generate(Graph::dense, n, D.data(), np);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j)
        if (i != j && (cut(i) || cut(j))) D[size_t(i * np + j)] = INFINITY;
    solve(Plan{Schedule::recursive, Layout::bdl, true, 64, 64}, simd_kernels<float>(isa), D.data(), np, np, work.data());
    int64_t inf_pairs = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) {
        const float d = D[size_t(i * np + j)];
        ASSERT_FALSE(std::isnan(d)) << i << "," << j;
        if (i != j && (cut(i) || cut(j))) {
          ASSERT_EQ(d, INFINITY) << to_string(isa) << " " << i << "," << j;
          ++inf_pairs;
        } else if (!cut(i) && !cut(j)) {
          // Paths avoiding the cut vertices: at least as long as in the whole graph.
          ASSERT_TRUE(std::isfinite(d)) << i << "," << j;
          ASSERT_GE((long double)d, want[size_t(i * n + j)]);
        }
      }
    EXPECT_EQ(inf_pairs, 3 * 2 * (n - 1) - 6);
  }
}

TEST(FwChecks, NegativeCycleVertexIsFound) {
  std::vector<double> D(9, 0.0);
  EXPECT_EQ(negative_cycle_vertex(D.data(), 3, 3), -1);
  D[4] = -1;
  EXPECT_EQ(negative_cycle_vertex(D.data(), 3, 3), 1);
  D[4] = NAN;
  EXPECT_EQ(negative_cycle_vertex(D.data(), 3, 3), 1);
  // The negcycle graph solved by the portable blocked solver: the cycle's vertices go negative.
  std::vector<float> G(size_t(40 * 40));
  generate(Graph::negcycle, 40, G.data(), 40);
  solve(Plan{Schedule::blocked, Layout::standard, false, 8, 1}, portable_kernels<float>(), G.data(), 40, 40, static_cast<float*>(nullptr));
  const int64_t v = negative_cycle_vertex(G.data(), 40, 40);
  EXPECT_GE(v, 0);
  EXPECT_LE(v, 2);
}

TEST(FwChecks, BadInputIsRejectedWithTheReason) {
  std::vector<float> D(16, 1.f);
  EXPECT_NO_THROW(check_input(D.data(), 4, 4));
  D[6] = INFINITY;
  EXPECT_NO_THROW(check_input(D.data(), 4, 4));
  D[6] = NAN;
  try {
    check_input(D.data(), 4, 4);
    FAIL() << "NaN accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("1 -> 2 is NaN"), std::string::npos) << e.what();
  }
  D[6] = -INFINITY;
  EXPECT_THROW(check_input(D.data(), 4, 4), Error);
  EXPECT_THROW(check_input(D.data(), 0, 4), Error);
}

// ---- Path reconstruction (blocked with predecessors) -------------------------------------------
TEST(FwPaths, ReconstructedPathsHaveTheShortestLength) {
  for (Graph g : {Graph::sparse, Graph::negative, Graph::dense})
    for (auto [n, bs] : {std::pair<int64_t, int64_t>{1, 1}, {7, 1}, {16, 4}, {40, 8}, {64, 16}, {100, 4}}) {
      std::vector<double> D(size_t(n * n));
      std::vector<int32_t> P(size_t(n * n));
      generate(g, n, D.data(), n);
      if (n % bs) continue;
      blocked_with_paths(D.data(), P.data(), n, n, bs);
      const auto ref = reference(g, n);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) {
          ASSERT_EQ(D[size_t(i * n + j)], (*ref)[size_t(i * n + j)]);
          const auto path = reconstruct_path(P.data(), n, n, i, j);
          if (D[size_t(i * n + j)] == kInf) {
            ASSERT_TRUE(path.empty()) << i << "->" << j;
            continue;
          }
          ASSERT_FALSE(path.empty()) << i << "->" << j;
          ASSERT_EQ(path.front(), i);
          ASSERT_EQ(path.back(), j);
          double len = 0;
          for (size_t e = 0; e + 1 < path.size(); ++e) {
            const double w = weight(g, n, path[e], path[e + 1]);
            ASSERT_NE(w, kInf) << "path uses a missing edge " << path[e] << "->" << path[e + 1];
            len += w;
          }
          ASSERT_EQ(len, D[size_t(i * n + j)]) << to_string(g) << " " << i << "->" << j;
        }
    }
  std::vector<double> D(15);
  std::vector<int32_t> P(15);
  EXPECT_THROW(blocked_with_paths(D.data(), P.data(), 5, 5, 2), Error);  // 5 % 2 != 0
  const int32_t loop[4] = {-1, 1, 0, -1};  // P[0][1] = 1: 0 -> 1's predecessor is itself
  EXPECT_THROW(reconstruct_path(loop, 2, 2, 0, 1), Error);
}

// ---- Verification catches wrong kernels ----------------------------------------------------------
namespace wrong {
// The register-blocked kernel where C is the pivot tile (k order dropped: wrong FW).
void regblock_everywhere(float* C, const float* A, const float* B, int64_t ld, int64_t m, int64_t n, int64_t kk) {
  simd_kernels<float>(Isa::scalar).regblock(C, A, B, ld, m, n, kk);
}
void skips_last_column(float* C, const float* A, const float* B, int64_t ld, int64_t m, int64_t n, int64_t kk) {
  portable_kernels<float>().plain(C, A, B, ld, m, n > 1 ? n - 1 : n, kk);
}
void writes_nan(float* C, const float* A, const float* B, int64_t ld, int64_t m, int64_t n, int64_t kk) {
  portable_kernels<float>().plain(C, A, B, ld, m, n, kk);
  if (m > 3 && n > 3) C[3 * ld + 3] = NAN;
}
}  // namespace wrong

Verification verify_with(const std::string& name, BaseFn<float> plain) {
  return make_instance<float>(parse_case_name(name), Kernels<float>{plain, nullptr})->verify();
}

TEST(FwVerification, WrongKernelsFail) {
  const std::string blocked = "floyd_warshall/blocked/f32/100x100/bs:16/graph:sparse/threads:1";
  EXPECT_TRUE(verify_with(blocked, portable_kernels<float>().plain).ok);
  const Verification a = verify_with(blocked, wrong::regblock_everywhere);
  EXPECT_FALSE(a.ok) << a.detail;
  EXPECT_GT(a.max_err, 0);
  const Verification b = verify_with("floyd_warshall/naive/f32/100x100/graph:dense/threads:1", wrong::skips_last_column);
  EXPECT_FALSE(b.ok);
  EXPECT_NE(b.detail.find(", 99)"), std::string::npos) << b.detail;  // located in the last column
  const Verification c = verify_with(blocked, wrong::writes_nan);
  EXPECT_FALSE(c.ok);
  EXPECT_TRUE(std::isinf(c.max_err));
  EXPECT_THROW(make_instance<double>(parse_case_name(blocked), portable_kernels<double>()), Error);
}

TEST(FwVerification, RunIsRepeatableAndResetRestoresTheInput) {
  const Case c = parse_case_name("floyd_warshall/regblock/scalar/f32/200x200/sched:rec/layout:bdl/bs:16/task:32/graph:negative/threads:2");
  auto inst = floyd_warshall_family().find("regblock")->make(c);
  omp_set_num_threads(2);
  for (int i = 0; i < 3; ++i) inst->run();
  inst->reset();
  inst->run();
  const Verification v = inst->verify();
  omp_set_num_threads(1);
  EXPECT_TRUE(v.ok) << v.detail;
}

TEST(FwVerification, LargeNIsSampledAgainstDijkstra) {
  // Above the full-reference limit verification samples rows and columns; check it runs and
  // says so (N = 2100 f32, the fastest solver this CPU has).
  const Isa isa = best_isa();
  const Case c = parse_case_name("floyd_warshall/regblock/" + std::string(to_string(isa)) +
                                 "/f32/2100x2100/sched:rec/layout:bdl/bs:64/task:256/threads:2");
  omp_set_num_threads(2);
  const Verification v = floyd_warshall_family().find("regblock")->make(c)->verify();
  omp_set_num_threads(1);
  EXPECT_TRUE(v.ok) << v.detail;
  EXPECT_NE(v.detail.find("Dijkstra"), std::string::npos) << v.detail;
}

// ---- The family table ----------------------------------------------------------------------------
std::string why(const std::string& name) {
  const Case c = parse_case_name(name);
  return floyd_warshall_family().find(c.variant)->accepts(c);
}

TEST(FwFamily, AcceptsRejectsBadCasesWithAReason) {
  EXPECT_EQ(why("floyd_warshall/naive/f32/777x777/threads:2"), "");
  EXPECT_EQ(why("floyd_warshall/regblock/avx2/f64/100x100/sched:blocked/layout:std/bs:32/threads:7"), "");
  EXPECT_EQ(why("floyd_warshall/blocked/f32/15x15/threads:1"), "");  // default bs shrinks to 8
  EXPECT_NE(why("floyd_warshall/blocked/f32/64x64/bs:48/threads:1").find("power of two"), std::string::npos);
  EXPECT_NE(why("floyd_warshall/blocked/f32/64x64/bs:0/threads:1").find("power of two"), std::string::npos);
  EXPECT_NE(why("floyd_warshall/blocked/f32/15x15/bs:16/threads:1").find("larger than N = 15"), std::string::npos);
  EXPECT_NE(why("floyd_warshall/naive/f32/64x32/threads:1").find("square"), std::string::npos);
  EXPECT_NE(why("floyd_warshall/naive/f32/64x64/bs:16/threads:1").find("unknown parameter 'bs'"), std::string::npos);
  EXPECT_NE(why("floyd_warshall/bdl/avx2/f32/64x64/layout:std/threads:1").find("unknown parameter 'layout'"),
            std::string::npos);
  EXPECT_NE(why("floyd_warshall/simd/avx2/f32/64x64/sched:flat/layout:bdl/threads:1").find("needs tiles"),
            std::string::npos);
  EXPECT_NE(why("floyd_warshall/bdl/avx2/f32/64x64/sched:flat/threads:1").find("blocked or rec"), std::string::npos);
  EXPECT_NE(why("floyd_warshall/recursive/f32/64x64/task:0/threads:1").find(">= 1"), std::string::npos);
  EXPECT_NE(why("floyd_warshall/naive/f32/64x64/graph:tree/threads:1").find("unknown graph"), std::string::npos);
  Case zero = parse_case_name("floyd_warshall/naive/f32/4x4/threads:1");
  zero.dims = {0, 0};
  EXPECT_NE(floyd_warshall_family().find("naive")->accepts(zero).find("N must be >= 1"), std::string::npos);
  // Too large for memory: the harness's check uses the family's memory_bytes.
  EXPECT_THROW(validate_case(parse_case_name("floyd_warshall/naive/f64/2000000x2000000/threads:1")), Error);
}

TEST(FwFamily, ModelCountsTwoFlopsPerUpdateAndPerVariantTraffic) {
  auto model = [](const std::string& name) {
    const Case c = parse_case_name(name);
    return floyd_warshall_family().find(c.variant)->model(c);
  };
  auto bytes_of = [](const Model& m, const char* kernel) {
    double b = 0;
    for (const auto& t : m.traffic) b += t.kernel == kernel ? t.bytes : 0;
    return b;
  };
  const double n = 4096;
  const Model naive = model("floyd_warshall/naive/f32/4096x4096/threads:1");
  EXPECT_DOUBLE_EQ(naive.flops, 2 * n * n * n);
  EXPECT_EQ(naive.compute_ceiling, "addmin_f32");
  EXPECT_DOUBLE_EQ(bytes_of(naive, "update"), 2 * n * n * n * 4);
  const Model blocked = model("floyd_warshall/blocked/f64/4096x4096/bs:64/threads:2");
  EXPECT_EQ(blocked.compute_ceiling, "addmin_f64");
  EXPECT_DOUBLE_EQ(bytes_of(blocked, "update"), 2 * n * n * n * 8 / 64);
  EXPECT_DOUBLE_EQ(bytes_of(blocked, "read"), 2 * n * n * 8);
  const Model opt = model("floyd_warshall/regblock/avx2/f32/4096x4096/sched:rec/layout:bdl/bs:64/task:256/threads:2");
  EXPECT_DOUBLE_EQ(bytes_of(opt, "copy"), 4 * n * n * 4);
  EXPECT_DOUBLE_EQ(opt.working_set, 2 * n * n * 4);
  EXPECT_NE(opt.note.find("upper bound"), std::string::npos);
  // An odd N: flops for N, traffic for the padded size.
  const Model odd = model("floyd_warshall/blocked/f32/777x777/bs:64/threads:1");
  EXPECT_DOUBLE_EQ(odd.flops, 2.0 * 777 * 777 * 777);
  EXPECT_DOUBLE_EQ(bytes_of(odd, "update"), 2.0 * 832 * 832 * 832 * 4 / 64);
  EXPECT_NE(odd.note.find("padded to 832"), std::string::npos);
}

// The L1 set mapping of a tile (harness/cache_sets, fw::l1_spill; docs/model.md#cross-cpu).
TEST(FwL1Sets, StridedTileLinesPerSet) {
  const CacheGeometry zen4 = vipt_geometry(32 << 10), zen5 = vipt_geometry(48 << 10);
  EXPECT_EQ(zen4.ways, 8);
  EXPECT_EQ(zen4.sets, 64);
  EXPECT_EQ(zen5.ways, 12);
  EXPECT_EQ(zen5.sets, 64);
  EXPECT_NE(zen4.source.find("VIPT"), std::string::npos) << zen4.source;
  const CacheGeometry listed = vipt_geometry(48 << 10, 12, 64, "sysfs");
  EXPECT_EQ(listed.source, "sysfs");  // ways and line known: nothing assumed
  auto count = [](const std::vector<int>& v, int n) { return std::count(v.begin(), v.end(), n); };
  // 64 rows of 64 f32 (4 lines), 2 KiB apart: 8 sets of 32 lines, the other 56 empty.
  const std::vector<int> conflict = lines_per_set(zen4, 0, 64, 256, 2048);
  EXPECT_EQ(count(conflict, 32), 8);
  EXPECT_EQ(count(conflict, 0), 56);
  EXPECT_EQ(lines_per_set(zen5, 0, 64, 256, 2048), conflict);  // 64 sets on both
  // The same tile contiguous (BDL) or 2 KiB + 64 B apart: 4 lines in every set.
  EXPECT_EQ(count(lines_per_set(zen4, 0, 64, 256, 256), 4), 64);
  EXPECT_EQ(count(lines_per_set(zen4, 0, 64, 256, 2048 + 64), 4), 64);
  // A row not starting on a line boundary touches one more line.
  const std::vector<int> unaligned = lines_per_set(zen4, 32, 1, 256, 0);
  EXPECT_EQ(std::accumulate(unaligned.begin(), unaligned.end(), 0), 5);
}

TEST(FwL1Sets, SpillOfThePlainKernelsTiles) {
  Plan std_plan;
  std_plan.schedule = Schedule::blocked;
  std_plan.bs = 64;
  Plan bdl_plan = std_plan;
  bdl_plan.layout = Layout::bdl;
  // N = 512 f32, rows 2 KiB apart: C (32 lines a set in 8 sets) and A's column (32 a set in 2)
  // over-subscribe 8 and 12 ways alike.
  for (const auto& [l1, ways] : {std::pair{32 << 10, 8}, std::pair{48 << 10, 12}}) {
    const fw::L1Spill sp = fw::l1_spill(std_plan, 512, 512, 4, l1, ways, 64);
    EXPECT_DOUBLE_EQ(sp.c, 1.0) << l1;
    EXPECT_DOUBLE_EQ(sp.a, 1.0) << l1;
    EXPECT_GE(sp.max_lines, 32);
  }
  // 2 KiB + 64 B apart: C's 256 lines 4 a set, with A's and B's at most 6: stays.
  const fw::L1Spill padded = fw::l1_spill(std_plan, 512, 528, 4, 32 << 10, 8, 64);
  EXPECT_DOUBLE_EQ(padded.c, 0);
  EXPECT_LE(padded.max_lines, 8);
  // Contiguous tiles (16 KiB): 4 C lines a set; where A's column (4 lines in 16 sets) and B's
  // row meet, one set holds 9 of 8 ways: a few percent of C.
  const fw::L1Spill bdl = fw::l1_spill(bdl_plan, 512, 512, 4, 32 << 10, 8, 64);
  EXPECT_LT(bdl.c, 0.05);
  EXPECT_EQ(fw::l1_spill(bdl_plan, 512, 512, 4, 48 << 10, 12, 64).c, 0);  // 12 ways hold 9
  // 2.5 KiB apart (LD 640): rows start 8 sets apart, so C fills 32 sets with exactly 8 lines;
  // the 4 sets B's row adds to, and the 8 A's column adds to where its column block has C's
  // parity, overflow: part of C, not all.
  const double c640 = fw::l1_spill(std_plan, 512, 640, 4, 32 << 10, 8, 64).c;
  EXPECT_GT(c640, 0.1);
  EXPECT_LT(c640, 0.5);
  // f64 at N = 256 (2 KiB rows), bs 32: 32 rows of 4 lines, 16 a set in 8 sets.
  Plan small = std_plan;
  small.bs = 32;
  EXPECT_DOUBLE_EQ(fw::l1_spill(small, 256, 256, 8, 32 << 10, 8, 64).c, 1.0);
}

// The model's L1 <- L2 traffic follows the set mapping, with the caches of the machine priced.
TEST(FwL1Sets, ModelStreamsCFromL2WhereItsSetsOverflow) {
  auto l2 = [](const std::string& name, int64_t l1) {
    const ScopedHostCaches scope(HostCacheSizes{l1, 1 << 20, 32 << 20, "test"});
    const Case c = parse_case_name(name);
    const Model m = floyd_warshall_family().find(c.variant)->model(c);
    std::map<std::string, double> b;
    for (const auto& t : m.phases.at(0).l2) b[t.kernel] += t.bytes;
    b["note"] = m.phases.at(0).note.find("L1 set conflicts") != std::string::npos;
    b["vipt"] = m.phases.at(0).note.find("VIPT") != std::string::npos;
    return b;
  };
  const double u = 512.0 * 512 * 512;
  for (int64_t l1 : {32 << 10, 48 << 10}) {
    const auto gate = l2("floyd_warshall/simd/avx2/f32/512x512/sched:blocked/layout:std/bs:64/threads:1", l1);
    // C read and written back at every k, both directions priced at the read ceiling; A, B tiles
    EXPECT_DOUBLE_EQ(gate.at("read"), 2 * u * 4 + 2 * u * 4 / 64);
    EXPECT_DOUBLE_EQ(gate.count("update") ? gate.at("update") : 0, 0);
    EXPECT_EQ(gate.at("note"), 1);
    EXPECT_EQ(gate.at("vipt"), 1);  // ways not in a machine.json: assumed, said
    const auto bdl = l2("floyd_warshall/simd/avx2/f32/512x512/sched:blocked/layout:bdl/bs:64/threads:1", l1);
    EXPECT_LT(bdl.at("read"), 0.1 * 2 * u * 4);
    const auto padded = l2("floyd_warshall/simd/avx2/f32/512x512x528/sched:blocked/layout:std/bs:64/threads:1", l1);
    EXPECT_DOUBLE_EQ(padded.at("update"), 2 * u * 4 / 64);  // once per tile op
  }
}

std::vector<Case> expanded(std::string_view profile) {
  std::vector<Case> out;
  for (Case c : floyd_warshall_family().cases(profile)) {
    const Variant& v = *floyd_warshall_family().find(c.variant);
    if (v.isas.empty() || c.isa != Isa::none) {  // an ISA given by the profile stays
      out.push_back(c);
      continue;
    }
    for (Isa isa : v.isas) c.isa = isa, out.push_back(c);
  }
  return out;
}

TEST(FwFamily, ProfilesProduceNamesInTheGrammar) {
  const std::regex grammar(
      R"(^floyd_warshall/(naive|blocked|recursive|(simd|bdl|regblock)/(scalar|avx2|avx512))/(f32|f64)/([0-9]+)x\5(/sched:(flat|blocked|rec))?(/layout:(std|bdl))?(/bs:[0-9]+)?(/task:[0-9]+)?/threads:[12]$)");
  for (const char* profile : {"smoke", "quick", "paper"}) {
    std::set<std::string> seen;
    for (const Case& c : expanded(profile)) {
      const std::string n = c.name();
      EXPECT_TRUE(std::regex_match(n, grammar)) << n;
      EXPECT_TRUE(seen.insert(n).second) << "duplicate " << n;
      EXPECT_EQ(parse_case_name(n).name(), n);
      EXPECT_EQ(why(n), "") << n;
      EXPECT_GT(floyd_warshall_family().find(c.variant)->model(c).bytes(), 0);
    }
    EXPECT_FALSE(seen.empty());
  }
  std::set<std::string> paper;
  for (const Case& c : expanded("paper")) paper.insert(c.name());
  // The four ablations of the paper at N = 8192, 2 threads, at this CPU's widest ISA only.
  const std::string isa(to_string(best_isa()));
  for (const std::string& n : {"regblock/" + isa + "/f32/8192x8192/sched:rec/layout:bdl/bs:64/task:256",
                              "regblock/" + isa + "/f32/8192x8192/sched:blocked/layout:bdl/bs:64",
                              "regblock/" + isa + "/f32/8192x8192/sched:rec/layout:std/bs:64/task:256",
                              "bdl/" + isa + "/f32/8192x8192/sched:rec/bs:64/task:256"})
    EXPECT_TRUE(paper.count("floyd_warshall/" + n + "/threads:2")) << n;
  if (best_isa() != Isa::scalar) {
    EXPECT_FALSE(paper.count("floyd_warshall/bdl/scalar/f32/8192x8192/sched:rec/bs:64/task:256/threads:2"));
    EXPECT_TRUE(paper.count("floyd_warshall/bdl/scalar/f32/2048x2048/sched:rec/bs:64/task:256/threads:2"));
  }
  EXPECT_TRUE(floyd_warshall_family().cases("nonsense").empty());
}

TEST(FwFamily, IsRegisteredWithTheHarness) {
  const Family* f = find_family("floyd_warshall");
  ASSERT_NE(f, nullptr);
  std::vector<std::string> names;
  for (const auto& v : f->variants) names.push_back(v.name);
  EXPECT_EQ(names, (std::vector<std::string>{"naive", "blocked", "recursive", "simd", "bdl", "regblock"}));
  EXPECT_TRUE(f->find("naive")->isas.empty());
  EXPECT_EQ(f->find("regblock")->isas, (std::vector<Isa>{Isa::scalar, Isa::avx2, Isa::avx512}));
}

}  // namespace
}  // namespace rooflab::fw

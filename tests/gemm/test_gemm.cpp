// GEMM family tests. The reference here is independent of the family's own verify(): a
// straight long double triple loop on test-owned matrices with guard bands.
#include <gtest/gtest.h>
#include <omp.h>

#include <chrono>
#include <cmath>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "harness/error.hpp"
#include "harness/families.hpp"
#include "harness/host_caches.hpp"
#include "harness/isa.hpp"
#include "kernels/gemm/gemm.hpp"

namespace rooflab::gemm {
namespace {

constexpr Isa kIsas[] = {Isa::scalar, Isa::avx2, Isa::avx512};

// Row-major matrix with `pad` guard columns holding a sentinel; small integer entries (exact
// in any summation order), seeded.
template <class T>
struct Mat {
  int64_t rows, cols, ld;
  std::vector<T> a;
  static constexpr T kGuard = T(-777);
  Mat(int64_t r, int64_t c, int64_t pad, uint64_t seed) : rows(r), cols(c), ld(c + pad), a(size_t(r * (c + pad)), kGuard) {
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 7;
    for (int64_t i = 0; i < r; ++i)
      for (int64_t j = 0; j < c; ++j) {
        s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
        a[size_t(i * ld + j)] = T(int64_t((s * 0x2545F4914F6CDD1Dull) >> 59) - 16);  // [-16, 15]
      }
  }
  T& operator()(int64_t i, int64_t j) { return a[size_t(i * ld + j)]; }
  T operator()(int64_t i, int64_t j) const { return a[size_t(i * ld + j)]; }
  bool guards_intact() const {
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = cols; j < ld; ++j)
        if (a[size_t(i * ld + j)] != kGuard) return false;
    return true;
  }
};

// Expected C0 + A·B in long double; EXPECTs equality everywhere (integer data: exact).
template <class T>
void expect_product(const Mat<T>& A, const Mat<T>& B, const Mat<T>& C0, const Mat<T>& C, const std::string& what) {
  int64_t bad = 0;
  for (int64_t i = 0; i < C.rows; ++i)
    for (int64_t j = 0; j < C.cols; ++j) {
      long double s = C0(i, j);
      for (int64_t k = 0; k < A.cols; ++k) s += (long double)A(i, k) * B(k, j);
      if ((long double)C(i, j) != s && bad++ < 3)
        ADD_FAILURE() << what << ": C(" << i << ", " << j << ") = " << C(i, j) << ", expected " << double(s);
    }
  EXPECT_EQ(bad, 0) << what;
  EXPECT_TRUE(C.guards_intact()) << what << ": wrote into C's padding";
}

struct Shape {
  int64_t m, n, k, pad;
};
// 1x1x1, vectors, non-multiples of MR (4/12) / NR (4/12/16/24/32) / small blocks, unaligned ld.
const Shape kShapes[] = {{1, 1, 1, 0},   {1, 37, 1, 0},  {37, 1, 1, 3},  {1, 1, 70, 1}, {17, 33, 65, 0},
                         {17, 33, 65, 3}, {6, 8, 64, 0},  {13, 19, 7, 5}, {50, 45, 130, 1}, {97, 101, 129, 7}};

std::string label(Isa isa) { return std::string(to_string(isa)); }

template <class T>
void check_drivers(Isa isa) {
  const Ukernel<T> uk = ukernel<T>(isa);
  for (const Shape& s : kShapes) {
    const Mat<T> A(s.m, s.k, s.pad, 1), B(s.k, s.n, s.pad, 2), C0(s.m, s.n, s.pad, 3);
    const Dims d{s.m, s.n, s.k, A.ld, B.ld, C0.ld};
    const std::string shp = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) +
                            " pad " + std::to_string(s.pad) + " " + label(isa);
    // Blocked: default plan and tiny blocks (many jc / pc / ic iterations, partial blocks).
    for (BlockedPlan bp : {default_blocked_plan(sizeof(T), uk.mr, uk.nr, 32 << 10, 512 << 10, 8 << 20),
                           BlockedPlan{int64_t(uk.mr) + 1, 5, int64_t(uk.nr) + 3}}) {
      for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        Mat<T> C = C0;
        std::vector<T> work(size_t(blocked_workspace(bp, d, uk.mr, uk.nr, threads)));
        blocked(bp, uk, d, A.a.data(), B.a.data(), C.a.data(), work.data());
        expect_product(A, B, C0, C, "blocked mc" + std::to_string(bp.mc) + " " + shp + " t" + std::to_string(threads));
      }
    }
    // SFC-CA: several tiles / K blocks / layers / batch sizes, including non-dividing ones.
    for (SfcPlan sp : {SfcPlan{96, 96, 64, 1, 1}, SfcPlan{7, 9, 5, 1, 1}, SfcPlan{7, 9, 5, 2, 2},
                       SfcPlan{16, 16, 3, 3, 4}, SfcPlan{5, 40, 8, 4, 1}}) {
      try {
        check_sfc_plan(sp, d);
      } catch (const Error&) {
        continue;  // too few K blocks for this plan at this K (bad-knob tests cover the message)
      }
      for (int threads : {1, 2}) {
        omp_set_num_threads(threads);
        Mat<T> C = C0;
        std::vector<T> work(size_t(sfc_workspace(sp, d, uk.mr, uk.nr)));
        sfc_ca(sp, uk, d, sfc_order(sp, d), A.a.data(), B.a.data(), C.a.data(), work.data());
        expect_product(A, B, C0, C, "sfc_ca bm" + std::to_string(sp.bm) + " bk" + std::to_string(sp.bk) +
                                        " L" + std::to_string(sp.k_layers) + " kbf" + std::to_string(sp.kbf) +
                                        " " + shp + " t" + std::to_string(threads));
      }
    }
  }
}

class GemmIsa : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (!isa_supported(GetParam()))
      GTEST_SKIP() << "this CPU lacks " << to_string(GetParam()) << " (kernel compiled, not run)";
  }
};

TEST_P(GemmIsa, MicroKernelBatchReduceAndEdges) {
  for (bool f64 : {true, false}) {
    auto body = [&](auto zero) {
      using T = decltype(zero);
      const Ukernel<T> uk = ukernel<T>(GetParam());
      ASSERT_GT(uk.mr, 0);
      ASSERT_GT(uk.nr, 0);
      for (int64_t nb : {1, 3})
        for (int64_t kc : {1, 7, 40})  // 40: one of the kernel's prefetch chunks of 32 k steps and a short one
          for (int64_t m : {int64_t(1), int64_t(uk.mr) - 1, int64_t(uk.mr)})
            // Every n: each narrower block (n within 1, 2, ... vectors; ukernel_impl.hpp's
            // narrow) with full and partial last vectors.
            for (int64_t n = 1; n <= uk.nr; ++n) {
              if (m < 1) continue;
              const int64_t sa = uk.mr * kc + 5, sb = uk.nr * kc + 3;  // batch strides with gaps
              Mat<T> Ap(1, nb * sa, 0, 11), Bp(1, nb * sb, 0, 12);
              Mat<T> C(uk.mr, uk.nr, 2, 13);
              const Mat<T> C0 = C;
              // Prefetch requests (from 0 lines to more than the call has chunks, contiguous or
              // in rows, from a line within a row) change no value.
              const int64_t pf_lines = (n % 4) * 3;
              const Prefetch pf = pf_lines == 0 ? Prefetch{}
                                  : n % 2   ? Prefetch{Bp.a.data(), 0, pf_lines, 0, 0}
                                            : Prefetch{Ap.a.data(), 1, pf_lines, 2, 64 * 3};
              uk.fn(nb, kc, Ap.a.data(), sa, Bp.a.data(), sb, C.a.data(), C.ld, m, n, pf);
              for (int64_t i = 0; i < uk.mr; ++i)
                for (int64_t j = 0; j < uk.nr; ++j) {
                  long double s = C0(i, j);
                  if (i < m && j < n)
                    for (int64_t b = 0; b < nb; ++b)
                      for (int64_t k = 0; k < kc; ++k)
                        s += (long double)Ap.a[size_t(b * sa + k * uk.mr + i)] * Bp.a[size_t(b * sb + k * uk.nr + j)];
                  ASSERT_EQ((long double)C(i, j), s) << "nb " << nb << " kc " << kc << " m " << m << " n " << n
                                                     << " at (" << i << ", " << j << ")";
                }
              ASSERT_TRUE(C.guards_intact());
            }
    };
    if (f64) body(0.0); else body(0.0f);
  }
}

TEST_P(GemmIsa, BlockedAndSfcMatchReferenceF64) { check_drivers<double>(GetParam()); }
TEST_P(GemmIsa, BlockedAndSfcMatchReferenceF32) { check_drivers<float>(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Isas, GemmIsa, ::testing::ValuesIn(kIsas),
                         [](const auto& info) { return label(info.param); });

// pack_a / pack_b against their contract (gemm.hpp), element by element: odd sizes, lda / ldb
// wider than the block, source and destination one element off any vector alignment, every
// register block of config.hpp plus odd ones (the vector paths need MR a multiple of the vector
// width and full slivers; the rest takes the element path), and nothing written past the end.
template <class T>
void check_packs() {
  // A: `lanes` rows of kc (stride lda) into MR-row slivers; B: kc rows of `lanes` columns
  // (stride ldb) into NR-column slivers. Element (lane, k) sits at lane * ls + k * ks.
  struct Side {
    bool a;
    std::vector<int64_t> lanes;
    std::vector<int> widths;
  };
  for (const Side& side : {Side{true, {1, 3, 8, 17, 33}, {1, 3, 4, 6, 8, 16}},
                           Side{false, {1, 5, 16, 47, 48, 97, 150}, {1, 4, 5, 12, 24, 48}}})
    for (int64_t kc : {1, 3, 4, 9, 70})
      for (int64_t pad : {0, 5})
        for (int64_t lanes : side.lanes) {
          const int64_t ld = (side.a ? kc : lanes) + pad, ls = side.a ? ld : 1, ks = side.a ? 1 : ld;
          std::vector<T> src(size_t(1 + (side.a ? lanes : kc) * ld));
          for (size_t i = 0; i < src.size(); ++i) src[i] = T(int64_t(i % 251) - 125);
          const T* X = src.data() + 1;  // unaligned source
          for (int w : side.widths) {
            const int64_t slivers = (lanes + w - 1) / w;
            std::vector<T> dst(size_t(slivers * w * kc + 2), T(-999));
            if (side.a) pack_a(lanes, kc, X, ld, w, dst.data() + 1);  // unaligned destination
            else pack_b(kc, lanes, X, ld, w, dst.data() + 1);
            int64_t bad = 0;
            for (int64_t s = 0; s < slivers; ++s)
              for (int64_t k = 0; k < kc; ++k)
                for (int64_t i = 0; i < w; ++i) {
                  const int64_t l = s * w + i;
                  bad += dst[size_t(1 + s * w * kc + k * w + i)] != (l < lanes ? X[l * ls + k * ks] : T(0));
                }
            const std::string what = std::string(side.a ? "pack_a" : "pack_b") + " lanes " + std::to_string(lanes) +
                                     " kc " + std::to_string(kc) + " ld " + std::to_string(ld) + " width " +
                                     std::to_string(w);
            EXPECT_EQ(bad, 0) << what;
            EXPECT_EQ(dst.front(), T(-999)) << what;
            EXPECT_EQ(dst.back(), T(-999)) << what << ": wrote past its slivers";
          }
        }
}
TEST(Gemm, PackAAndPackBFollowTheContractF64) { check_packs<double>(); }
TEST(Gemm, PackAAndPackBFollowTheContractF32) { check_packs<float>(); }

// The default blocking of small caches, where K / N / M exceed KC / NC / MC by a little (short
// last blocks before the equal split) and the scratch sized from the blocks run.
TEST(Gemm, BlockedSplitsKAndNIntoEqualBlocks) {
  for (Isa isa : kIsas) {
    if (!isa_supported(isa)) continue;
    const Ukernel<float> uk = ukernel<float>(isa);
    // Small caches: KC, NC a few dozen, so K = KC + 3 and N = NC + 5 stay cheap.
    const BlockedPlan bp = default_blocked_plan(sizeof(float), uk.mr, uk.nr, 4 << 10, 64 << 10, 256 << 10);
    for (const auto& [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{19, bp.nc + 5, bp.kc + 3},
                                  {uk.mr * 3 + 1, 2 * bp.nc + 1, 2 * bp.kc + 1},
                                  {bp.mc + uk.mr + 1, bp.nc + 1, 9}}) {
      const Mat<float> A(m, k, 2, 4), B(k, n, 1, 5), C0(m, n, 3, 6);
      const Dims d{m, n, k, A.ld, B.ld, C0.ld};
      for (int threads : {1, 2, 3}) {  // 3: column blocks not a multiple of 2, one thread may take none
        omp_set_num_threads(threads);
        Mat<float> C = C0;
        std::vector<float> work(size_t(blocked_workspace(bp, d, uk.mr, uk.nr, threads)));
        blocked(bp, uk, d, A.a.data(), B.a.data(), C.a.data(), work.data());
        expect_product(A, B, C0, C, "blocked " + label(isa) + " kc " + std::to_string(bp.kc) + " nc " +
                                        std::to_string(bp.nc) + " " + std::to_string(m) + "x" +
                                        std::to_string(n) + "x" + std::to_string(k));
      }
    }
  }
}

// A micro-kernel that reads its C tile, lets 20 us pass, then writes the tile back: two updates
// of one tile at once then lose one of them (the real kernel's read-modify-write is too short
// for a test to catch).
Ukernel<float> g_inner_uk;
void slow_ukernel(int64_t nb, int64_t kc, const float* A, int64_t sa, const float* B, int64_t sb, float* C,
                  int64_t ldc, int64_t m, int64_t n, Prefetch) {
  std::vector<float> tile(size_t(g_inner_uk.mr * g_inner_uk.nr));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) tile[size_t(i * g_inner_uk.nr + j)] = C[i * ldc + j];
  g_inner_uk.fn(nb, kc, A, sa, B, sb, tile.data(), g_inner_uk.nr, m, n, {});
  std::this_thread::sleep_for(std::chrono::microseconds(20));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) C[i * ldc + j] = tile[size_t(i * g_inner_uk.nr + j)];
}

// The threads do not wait for each other between (M panel, K block) iterations: a column block
// starts once the same block of the previous iteration is finished (the same C tiles), the A
// panel goes to the buffer of two iterations before once every block of that one is finished.
// Many iterations (3 M panels x 10 K blocks); N in many column blocks, and in 2 (fewer than the
// threads: the idle ones start the next iteration at once); more threads than this machine may
// have CPUs (the waits then yield and sleep); each run 3 times. A block updated out of order or
// an A panel overwritten while read changes C by a whole K block's product, and C is exact here
// (small integers).
TEST(Gemm, BlockedIterationsOverlapWithoutRaces) {
  for (Isa isa : kIsas) {
    if (!isa_supported(isa)) continue;
    g_inner_uk = ukernel<float>(isa);
    const Ukernel<float> uk{g_inner_uk.mr, g_inner_uk.nr, &slow_ukernel};
    const BlockedPlan bp{2 * int64_t(uk.mr), 16, int64_t(uk.nr)};
    for (const int64_t n : {int64_t(7) * uk.nr + 5, int64_t(uk.nr) + 5}) {
      const int64_t m = 5 * uk.mr + 3, k = 16 * 9 + 5;
      const Mat<float> A(m, k, 1, 11), B(k, n, 3, 12), C0(m, n, 2, 13);
      const Dims d{m, n, k, A.ld, B.ld, C0.ld};
      const BlockedRun r = run_blocks(bp, d, uk.mr, uk.nr, 4);
      ASSERT_EQ(r.m_panels, 3) << label(isa);
      ASSERT_EQ(r.k_blocks, 10) << label(isa);
      for (int threads : {2, 3, 4}) {
        omp_set_num_threads(threads);
        std::vector<float> work(size_t(blocked_workspace(bp, d, uk.mr, uk.nr, threads)));
        for (int rep = 0; rep < 3; ++rep) {
          Mat<float> C = C0;
          blocked(bp, uk, d, A.a.data(), B.a.data(), C.a.data(), work.data());
          expect_product(A, B, C0, C, "blocked overlap " + label(isa) + " N " + std::to_string(n) + " t" +
                                          std::to_string(threads) + " run " + std::to_string(rep));
        }
      }
    }
  }
}

// The blocks blocked() runs: K, M and N in equal blocks of at most KC / MC / NC (the A panel
// and B block take more rows and columns when K blocks are shorter), N in at least two blocks
// per thread when there are several.
TEST(Gemm, RunBlocksAreTheEqualSplitsOfTheDimensions) {
  // The sizes rule on a Xeon (48 KiB L1, 2 MiB L2) for avx2 f64 4 x 12 gives KC 512, NC 252: a
  // 512^3 product runs one K block of 512, one A panel of 512 rows, N in 3 equal blocks of 180
  // (15 slivers of 12; 43 slivers in all), and with 2 threads in 4 blocks of 132.
  const BlockedRun r = run_blocks({38400, 512, 252}, Dims{512, 512, 512, 512, 512, 512}, 4, 12, 1);
  EXPECT_EQ(r.kc, 512);
  EXPECT_EQ(r.mc, 512);
  EXPECT_EQ(r.nc, 180);
  EXPECT_EQ(run_blocks({38400, 512, 252}, Dims{512, 512, 512, 512, 512, 512}, 4, 12, 2).nc, 132);
  // K = KC + 3: two equal blocks, a multiple of 8; the B block target (256 x 48 elements) then holds 90
  // columns: 72 (NR multiple), and N = 1000 (42 slivers) in 14 blocks of 3 slivers.
  const BlockedRun q = run_blocks({96, 256, 48}, Dims{100, 1000, 259, 259, 1000, 1000}, 8, 24, 1);
  EXPECT_EQ(q.kc, 136);  // ceil(259 / 2) = 130 -> 136
  EXPECT_EQ(q.nc, 72);
  EXPECT_EQ(q.mc, 104);  // the A panel target 256 x 96 / 136 -> 176 rows: 100 in one panel, MR-aligned
  EXPECT_EQ(q.m_panels, 1);
  EXPECT_EQ(q.k_blocks, 2);
  // M beyond the widened panel: 1000 rows in 6 equal panels of at most 176.
  EXPECT_EQ(run_blocks({96, 256, 48}, Dims{1000, 100, 259, 259, 100, 100}, 8, 24, 1).mc, 168);
}

// The blocked model prices the blocks the kernel runs, not the plan's maxima: on a Xeon's
// caches the 512^3 case (avx2 f64, KC 512, N in 3 blocks of 180) keeps its B block
// (512 x 180 f64, 720 KiB) in L2 beside an A micro-panel, and the A micro-panels come from the
// shared A panel (512 x 512, 2 MiB, beyond L2 beside a B block) once per B block but the first
// (which packs each one right before it reads it): C and two A reads cross L2 <- L3 in the
// micro-kernel phase.
TEST(GemmFamily, BlockedModelPricesTheBlocksItRuns) {
  const ScopedHostCaches xeon({48 << 10, 2 << 20, 260 << 20, "a Xeon's"});
  const Case c = parse_case_name("gemm/blocked/avx2/f64/512x512x512/threads:1");
  const Model m = variant_of(c).model(c);
  ASSERT_EQ(m.phases.size(), 2u);
  const auto& compute = m.phases[1];
  double l3 = 0;
  for (const auto& t : compute.l3) l3 += t.bytes;
  EXPECT_DOUBLE_EQ(l3, 2.0 * 8 * 512 * 512 + 2 * 8.0 * 512 * 512) << compute.note;  // C, A twice
  EXPECT_NE(compute.note.find("B block in L2"), std::string::npos) << compute.note;
  EXPECT_EQ(compute.note.find("A panel in L2"), std::string::npos) << compute.note;
  // Where the B block exceeds L2 (a 256 KiB L2: the sizes rule's blocks, KC 176, NC 84, fit;
  // nc:480, run as 2 blocks of 264, does not), it is swept from L3 once per A micro-panel (128
  // of them), and the A micro-panel + B sliver still fit L1.
  const ScopedHostCaches small({48 << 10, 256 << 10, 260 << 20, "a small L2's"});
  const Case wide = parse_case_name("gemm/blocked/avx2/f64/512x512x512/nc:480/threads:1");
  const Model s = variant_of(wide).model(wide);
  double b_l3 = 0;
  for (const auto& t : s.phases[1].l3) b_l3 += t.bytes;
  EXPECT_NE(s.phases[1].note.find("B block exceeds L2"), std::string::npos) << s.phases[1].note;
  EXPECT_NE(s.phases[1].note.find("A micro-panel in L1"), std::string::npos) << s.phases[1].note;
  const double c_bytes = 2.0 * 8 * 512 * 512 * 3, b_sweeps = 8.0 * 512 * 512 * 128;
  EXPECT_GE(b_l3, c_bytes + b_sweeps) << s.phases[1].note;
  EXPECT_LT(b_l3, c_bytes + b_sweeps + 8.0 * 512 * 512 * 8) << s.phases[1].note;
}

// The column blocks the threads take in turn: NR-aligned, within the B block target, at
// least two per thread when N has the columns for it (a thread the host slows can leave one
// to the other), and at one thread the equal NC blocks.
TEST(Gemm, ColumnBlocksFitTheBufferAndGiveEachThreadSeveral) {
  struct Row {
    BlockedPlan p;
    int64_t n, k, nr;
    int threads;
    int64_t want;  // the expected block
  };
  for (const Row& r : {Row{{51200, 384, 336}, 4096, 384, 24, 2, 312},  // 13 blocks of <= 336 -> 14 (even) of 13 slivers
                       Row{{51200, 768, 336}, 1024, 768, 48, 2, 288},  // 22 slivers: 4 blocks of 6, not 3 of 336
                       Row{{51200, 384, 336}, 4096, 384, 24, 1, 336},  // one thread: 13 equal blocks <= 336
                       Row{{38400, 512, 252}, 512, 512, 12, 1, 180},   // the gate's 512^3: 3 blocks
                       Row{{9, 5, 27}, 25, 5, 8, 3, 8},                // NC 27 below 2 NR: one NR sliver each
                       Row{{51200, 384, 336}, 5, 384, 24, 2, 24}}) {   // fewer slivers than threads
    const Dims d{512, r.n, r.k, r.k, r.n, r.n};
    const BlockedRun run = run_blocks(r.p, d, 8, r.nr, r.threads);
    const int64_t nc = run.nc;
    const std::string what = "N " + std::to_string(r.n) + " nc " + std::to_string(r.p.nc) + " t" + std::to_string(r.threads);
    EXPECT_EQ(nc, r.want) << what;
    EXPECT_EQ(nc % r.nr, 0) << what;
    EXPECT_LE(nc * r.k, r.p.kc * ((r.p.nc + r.nr - 1) / r.nr * r.nr)) << what;  // within the B block's cache target
    if (r.threads > 1 && r.n >= 2 * r.threads * r.nr) {
      EXPECT_GE(run.n_blocks, 2 * r.threads) << what;
      EXPECT_EQ(run.n_blocks % r.threads, 0) << what;
    }
    // The blocks tile [0, N) in order, whole NR slivers but the last, none empty, none wider
    // than nc, no wider than another by more than one sliver and the wider ones first (the
    // product ends when the thread with the last block finishes it: the threads taking blocks
    // in turn, the last ones taken should be the short ones).
    int64_t next = 0, lo = nc, hi = 0, prev = nc;
    for (int64_t b = 0; b < run.n_blocks; ++b) {
      const ColumnRange cr = column_block(run, b, r.n, r.nr);
      EXPECT_EQ(cr.first, next) << what << " block " << b;
      EXPECT_GT(cr.last, cr.first) << what << " block " << b;
      EXPECT_LE(cr.last - cr.first, nc) << what << " block " << b;
      if (cr.last < r.n) {
        EXPECT_EQ(cr.last % r.nr, 0) << what << " block " << b;
      }
      const int64_t slivers = (cr.last - cr.first + r.nr - 1) / r.nr;
      lo = std::min(lo, slivers);
      hi = std::max(hi, slivers);
      EXPECT_LE(cr.last - cr.first, prev) << what << " block " << b;
      prev = cr.last - cr.first;
      next = cr.last;
    }
    EXPECT_EQ(next, r.n) << what;
    EXPECT_LE(hi - lo, 1) << what;
  }
  // N = 4096 in 14 blocks for 2 threads (AVX-512 f64, 171 slivers): 13 slivers in the first
  // three, 12 in the rest, the last sliver 16 columns; not 13 blocks of 13 and one of 2.
  const BlockedRun x = run_blocks({51200, 384, 336}, Dims{512, 4096, 384, 384, 4096, 4096}, 8, 24, 2);
  ASSERT_EQ(x.n_blocks, 14);
  EXPECT_EQ(column_block(x, 2, 4096, 24).last - column_block(x, 2, 4096, 24).first, 13 * 24);
  EXPECT_EQ(column_block(x, 3, 4096, 24).last - column_block(x, 3, 4096, 24).first, 12 * 24);
  EXPECT_EQ(column_block(x, 13, 4096, 24).last - column_block(x, 13, 4096, 24).first, 4096 - 159 * 24);
}

// The scratch follows the blocks run on the product, not the plan: a plan whose A panel fills
// half of a 300 MiB L3 (MC 51200 at KC 384, 150 MiB of f64) needs two 512 x 256 A panels for a
// 512^3 product (K in two blocks of 256; the next panel is packed while the threads finish the
// current one) and one for K within one block; one thread's column blocks are the widest of any
// team, so their stride holds every thread's block.
TEST(Gemm, WorkspaceFollowsTheBlocksRunOnTheProduct) {
  const BlockedPlan xeon{51200, 384, 336};
  const Dims d{512, 512, 512, 512, 512, 512};
  const BlockedRun one = run_blocks(xeon, d, 8, 24, 1);
  ASSERT_EQ(one.kc, 256);
  EXPECT_EQ(blocked_workspace(xeon, d, 8, 24, 2), 2 * one.mc * one.kc + 2 * one.kc * one.nc);
  EXPECT_LT(blocked_workspace(xeon, d, 8, 24, 2), 512 * 512 + 2 * 512 * 336);
  const Dims k300{512, 512, 300, 300, 512, 512};
  const BlockedRun single = run_blocks(xeon, k300, 8, 24, 1);
  EXPECT_EQ(blocked_workspace(xeon, k300, 8, 24, 2), single.mc * single.kc + 2 * single.kc * single.nc);
  for (int64_t n : {1, 23, 24, 25, 100, 513, 1000, 4096})
    for (int64_t k : {1, 9, 384, 385, 1000})
      for (int threads = 2; threads <= 5; ++threads) {
        const Dims e{100, n, k, k, n, n};
        EXPECT_LE(run_blocks(xeon, e, 8, 24, threads).nc, run_blocks(xeon, e, 8, 24, 1).nc)
            << "N " << n << " K " << k << " threads " << threads;
      }
  // A host whose L3 the sizes rule would fill with a 2^27-element A panel (half of 2 GiB, f32)
  // runs its default plan: the case is accepted, verifies, and asks for the product's memory
  // (A, B, C, C0, the reference and a scratch of at most 64 x 64 + 2 x 64 x 96: NR <= 48 rounds
  // 64 columns up to 96 at most), not the plan's.
  const ScopedHostCaches big({48 << 10, 2 << 20, int64_t(2) << 30, "a 2 GiB L3's"});
  const Case c = parse_case_name("gemm/blocked/" + std::string(to_string(best_isa())) + "/f32/64x64x64/threads:2");
  const Family* gemm = find_family("gemm");
  ASSERT_NE(gemm, nullptr);
  ASSERT_NO_THROW(validate_case(c));
  EXPECT_TRUE(variant_of(c).make(c)->verify().ok);
  EXPECT_LE(gemm->memory_bytes(c), size_t(4 * 64 * 64 * 4 + 8 * 64 * 64 + 4 * (64 * 64 + 2 * 64 * 96)));
}

// The sizes rule: the B block in half of L2 with KC = 2 NC (the least traffic beyond L2 per
// flop) unless the A micro-panel would exceed half of L1, and MC the half-L3 target rounded
// up to MR, not down: with power-of-two caches and KC the target is a power of two, and a
// power-of-two M must stay one A panel.
TEST(Gemm, SizesRuleShapesTheBlocksAndKeepsAPowerOfTwoMInOnePanel) {
  constexpr int64_t K = 1024, M = K * K;
  struct Row {
    int64_t s;
    int mr, nr;
    int64_t l1, l2, l3;
    int64_t kc;  // expected
  };
  // Zen 4 (AVX-512 f64 / f32, AVX2), Zen 3 (AVX2), a Xeon (48 KiB L1, 2 MiB L2, 105 MiB L3).
  for (const Row& r : {Row{8, 8, 24, 32 * K, M, 32 * M, 256},     // L1 cap 256 below sqrt(1 Mi / 8) = 362
                       Row{4, 8, 48, 32 * K, M, 32 * M, 512},     // sqrt(1 Mi / 4) = 512
                       Row{8, 4, 12, 32 * K, M, 32 * M, 360},     // 362 -> 360
                       Row{4, 4, 24, 32 * K, 512 * K, 32 * M, 360},
                       Row{8, 4, 12, 32 * K, 512 * K, 32 * M, 256},
                       Row{8, 8, 24, 48 * K, 2 * M, 105 * M, 384}}) {  // L1 cap 384 below 512
    const BlockedPlan p = default_blocked_plan(r.s, r.mr, r.nr, r.l1, r.l2, r.l3);
    const int64_t target = r.l3 / 2 / (p.kc * r.s);
    const std::string what = std::to_string(r.mr) + "x" + std::to_string(r.nr) + " s" + std::to_string(r.s) +
                             " L3 " + std::to_string(r.l3) + ": mc " + std::to_string(p.mc) + " kc " +
                             std::to_string(p.kc) + " nc " + std::to_string(p.nc);
    EXPECT_EQ(p.kc, r.kc) << what;
    EXPECT_LE(r.mr * p.kc * r.s, r.l1 / 2) << what;
    EXPECT_EQ(p.nc % r.nr, 0) << what;
    EXPECT_LE(p.kc * p.nc * r.s, r.l2 / 2) << what;
    EXPECT_GT(p.kc * (p.nc + r.nr) * r.s, r.l2 / 2) << what;  // the largest NR multiple
    EXPECT_EQ(p.mc % r.mr, 0) << what;
    EXPECT_GE(p.mc, target) << what;
    EXPECT_LT(p.mc, target + r.mr) << what;
  }
  // On Zen 4 the targets are 8192 rows (f64 KC 256, f32 KC 512): M = 4096 is one A panel.
  EXPECT_GE(default_blocked_plan(8, 8, 24, 32 * K, M, 32 * M).mc, 4096);
  EXPECT_GE(default_blocked_plan(4, 8, 48, 32 * K, M, 32 * M).mc, 4096);
}

// The analytical blocking (Low et al. 2016) on the transposed product at fixture cache
// geometries: the paper's own SandyBridge row (Table III: kc 256, mc 96 for DGEMM 8 x 4, which
// is our 4 x 8 tile with the paper's MC as our NC), this Zen 4, a Zen 3 (AVX2, 512 KiB L2) and a
// Sapphire Rapids Xeon (48 KiB 12-way L1, 2 MiB 16-way L2). Each plan is a valid blocking
// (multiples of 8 / MR / NR), keeps the A micro-panel + B sliver within L1's ways less one,
// the B block within L2 and the A panel beside every thread's B block within L3, and
// blocked() computes with it.
TEST(Gemm, AnalyticBlockingFollowsTheCacheGeometry) {
  constexpr int64_t K = 1024, M = K * K;
  const auto g = [](int64_t size, int ways) { return CacheGeometry{.size = size, .ways = ways, .line = 64}; };
  const CacheGeometry snb[3] = {g(32 * K, 8), g(256 * K, 8), g(8 * M, 16)};
  const CacheGeometry zen4[3] = {g(32 * K, 8), g(M, 8), g(32 * M, 16)};
  const CacheGeometry zen3[3] = {g(32 * K, 8), g(512 * K, 8), g(32 * M, 16)};
  const CacheGeometry spr[3] = {g(48 * K, 12), g(2 * M, 16), g(105 * M, 15)};
  struct Row {
    const char* what;
    const CacheGeometry* c;
    int64_t s;
    int mr, nr, threads;
    BlockedPlan want;
  };
  const Row rows[] = {
      {"SandyBridge f64 8x4 (paper), our 4 x 8", snb, 8, 4, 8, 1, {3584, 256, 96}},
      // Zen 4: L1 4 KiB ways; the 8 x 24 f64 tile: C_Br = floor(7 x 3 / 4) = 5 ways = 106 k steps.
      {"Zen 4 avx512 f64", zen4, 8, 8, 24, 2, {35288, 104, 936}},
      {"Zen 4 avx512 f32", zen4, 4, 8, 48, 2, {57344, 128, 1536}},
      {"Zen 3 avx2 f64", zen3, 8, 4, 12, 2, {17644, 208, 228}},
      {"Zen 3 avx2 f32", zen3, 4, 4, 24, 2, {28672, 256, 384}},
      // 12 ways: C_Br = floor(11 x 3 / 4) = 8 for f64, floor(11 x 6 / 7) = 9 for f32.
      {"Xeon SPR avx512 f64", spr, 8, 8, 24, 2, {70992, 168, 1344}},
      {"Xeon SPR avx512 f32", spr, 4, 8, 48, 2, {124240, 192, 2352}},
  };
  for (const Row& r : rows) {
    const BlockedRule got = analytic_blocked_plan(r.s, r.mr, r.nr, r.c[0], r.c[1], r.c[2], r.threads);
    ASSERT_TRUE(got.ok) << r.what << ": " << got.note;
    EXPECT_EQ(got.plan.mc, r.want.mc) << r.what;
    EXPECT_EQ(got.plan.kc, r.want.kc) << r.what;
    EXPECT_EQ(got.plan.nc, r.want.nc) << r.what;
    EXPECT_EQ(got.plan.kc % 8, 0) << r.what;
    EXPECT_EQ(got.plan.mc % r.mr, 0) << r.what;
    EXPECT_EQ(got.plan.nc % r.nr, 0) << r.what;
    auto ways = [&](int lv, int64_t bytes) {
      const int64_t way = r.c[lv].size / r.c[lv].ways;
      return (bytes + way - 1) / way;
    };
    const int64_t kc = got.plan.kc;
    EXPECT_LE(ways(0, r.mr * kc * r.s) + ways(0, r.nr * kc * r.s), r.c[0].ways - 1) << r.what;
    EXPECT_LE(got.plan.nc * kc * r.s, r.c[1].size) << r.what;
    EXPECT_LE(r.threads * got.plan.nc * kc * r.s + kc * got.plan.mc * r.s, r.c[2].size) << r.what;
    EXPECT_NE(got.note.find("analytical"), std::string::npos) << got.note;
  }
  // A 2-way L1 leaves no whole way to B beside A: eq. 6, half a way per B sliver.
  const CacheGeometry two_way[3] = {{32 * K, 2, 64}, zen4[1], zen4[2]};
  EXPECT_EQ(analytic_blocked_plan(8, 8, 24, two_way[0], two_way[1], two_way[2], 1).plan.kc, 16 * K / 2 / 192 / 8 * 8);
  // Unknown associativity (sysfs without ways_of_associativity) or line size: the sizes rule, said.
  for (const CacheGeometry& l2 : {CacheGeometry{M, 0, 64}, CacheGeometry{M, 8, 0}, CacheGeometry{M + 1, 8, 64}}) {
    const BlockedRule fb = analytic_blocked_plan(8, 8, 24, zen4[0], l2, zen4[2], 2);
    EXPECT_FALSE(fb.ok);
    const BlockedPlan old = default_blocked_plan(8, 8, 24, 32 * K, l2.size, 32 * M);
    EXPECT_EQ(fb.plan.mc, old.mc);
    EXPECT_EQ(fb.plan.kc, old.kc);
    EXPECT_EQ(fb.plan.nc, old.nc);
    EXPECT_NE(fb.note.find("L2's ways or line size unknown"), std::string::npos) << fb.note;
  }
  // The driver computes with an analytic plan of a small cache (several K, N and M blocks).
  for (Isa isa : kIsas) {
    if (!isa_supported(isa)) continue;
    const Ukernel<float> uk = ukernel<float>(isa);
    const CacheGeometry tiny[3] = {{4 * K, 4, 64}, {16 * K, 4, 64}, {64 * K, 4, 64}};
    const BlockedRule r = analytic_blocked_plan(sizeof(float), uk.mr, uk.nr, tiny[0], tiny[1], tiny[2], 2);
    ASSERT_TRUE(r.ok) << r.note;
    const int64_t m = 2 * r.plan.mc + 3, n = r.plan.nc + 5, k = 2 * r.plan.kc + 1;
    const Mat<float> A(m, k, 1, 7), B(k, n, 2, 8), C0(m, n, 0, 9);
    const Dims d{m, n, k, A.ld, B.ld, C0.ld};
    omp_set_num_threads(2);
    Mat<float> C = C0;
    std::vector<float> work(size_t(blocked_workspace(r.plan, d, uk.mr, uk.nr, 2)));
    blocked(r.plan, uk, d, A.a.data(), B.a.data(), C.a.data(), work.data());
    expect_product(A, B, C0, C, "blocked analytic " + label(isa));
  }
  // blocking:analytic of a case: this host's geometry (or the sizes rule, said), verified.
  const Case c = parse_case_name("gemm/blocked/scalar/f64/200x150x700/blocking:analytic/threads:2");
  const Variant& v = variant_of(c);
  ASSERT_EQ(v.accepts(c), "");
  const std::string note = v.model(c).note;
  EXPECT_TRUE(note.find("analytical rule") != std::string::npos ||
              note.find("fell back to the sizes rule") != std::string::npos)
      << note;
  EXPECT_TRUE(v.make(c)->verify().ok);
}

TEST(Gemm, LoopOrdersMatchReference) {
  const std::pair<LoopOrder, const char*> orders[] = {{LoopOrder::ijk, "ijk"}, {LoopOrder::ikj, "ikj"},
                                                      {LoopOrder::jik, "jik"}, {LoopOrder::jki, "jki"},
                                                      {LoopOrder::kij, "kij"}, {LoopOrder::kji, "kji"}};
  omp_set_num_threads(2);
  for (const auto& [o, name] : orders)
    for (const Shape& s : kShapes) {
      const Mat<double> A(s.m, s.k, s.pad, 1), B(s.k, s.n, s.pad, 2), C0(s.m, s.n, s.pad, 3);
      Mat<double> C = C0;
      loops(o, Dims{s.m, s.n, s.k, A.ld, B.ld, C.ld}, A.a.data(), B.a.data(), C.a.data());
      expect_product(A, B, C0, C, std::string(name) + " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                                      std::to_string(s.k));
    }
}

// ---- The curve -------------------------------------------------------------------------------
// A Hamiltonian path on a w x h grid from (0,0) to the other end of the major axis exists only
// when the colours of the grid's checkerboard allow it; where they do not (w*h even but the
// end cell has the start's colour) the curve needs exactly one diagonal step.
TEST(Gilbert, VisitsEveryCellOnceWithNeighbourSteps) {
  std::vector<std::pair<int64_t, int64_t>> sizes;
  for (int64_t w = 1; w <= 24; ++w)
    for (int64_t h = 1; h <= 24; ++h) sizes.emplace_back(w, h);
  for (auto wh : {std::pair<int64_t, int64_t>{100, 7}, {7, 100}, {1, 61}, {64, 64}, {43, 22}, {128, 3}})
    sizes.push_back(wh);
  for (const auto& [w, h] : sizes) {
    const auto c = gilbert(w, h);
    ASSERT_EQ(int64_t(c.size()), w * h) << w << "x" << h;
    std::set<std::pair<int32_t, int32_t>> seen;
    int64_t diagonal = 0;
    for (size_t i = 0; i < c.size(); ++i) {
      const auto [x, y] = c[i];
      ASSERT_TRUE(x >= 0 && x < w && y >= 0 && y < h) << w << "x" << h << ": cell (" << x << ", " << y << ") outside";
      ASSERT_TRUE(seen.insert(c[i]).second) << w << "x" << h << ": cell (" << x << ", " << y << ") visited twice";
      if (i == 0) continue;
      const int64_t dx = std::abs(x - c[i - 1].first), dy = std::abs(y - c[i - 1].second);
      ASSERT_TRUE(std::max(dx, dy) == 1) << w << "x" << h << ": jump at step " << i;
      diagonal += dx == 1 && dy == 1;
    }
    EXPECT_EQ(c.front(), (std::pair<int32_t, int32_t>{0, 0}));
    EXPECT_LE(diagonal, 1) << w << "x" << h;
    const int64_t major = std::max(w, h);
    const bool parity_forces = (w * h) % 2 == 0 && major % 2 == 1;
    if (!parity_forces) {
      EXPECT_EQ(diagonal, 0) << w << "x" << h << ": diagonal step where an edge path exists";
    }
  }
}

TEST(Gilbert, RejectsEmptyGrid) {
  EXPECT_THROW(gilbert(0, 3), Error);
  EXPECT_THROW(gilbert(3, -1), Error);
}

// ---- Instances through the registry --------------------------------------------------------
Case gemm_case(const std::string& name) { return parse_case_name(name); }

TEST(GemmFamily, EveryVariantVerifiesAtOddShapes) {
  const Family* fam = find_family("gemm");
  ASSERT_NE(fam, nullptr);
  omp_set_num_threads(2);
  int checked = 0;
  for (const Variant& v : fam->variants)
    for (DType dt : v.dtypes)
      for (Isa isa : v.isas.empty() ? std::vector<Isa>{Isa::none} : v.isas) {
        if (!isa_supported(isa)) continue;
        for (const char* shp : {"1x1x1", "1x40x1", "17x33x65", "130x97x200/ld:+3", "200x150x700"}) {
          std::string name = "gemm/" + v.name + (isa == Isa::none ? "" : "/" + label(isa)) + "/" +
                             std::string(to_string(dt)) + "/" + shp;
          if (v.name.rfind("sfc_ca", 0) == 0 && std::string(shp) == "200x150x700") name += "/k_layers:2/kbf:3";
          // Libraries at 1 thread: OpenBLAS's pthread pool and libgomp's both spin-wait after
          // each call, and with 2 + 2 spinning threads on 2 cores the many tiny calls here crawl
          // (~20 s instead of ~1 s); threading is covered by our variants and the benchmarks.
          name += v.description.rfind("library", 0) == 0 ? "/threads:1" : "/threads:2";
          const Case c = gemm_case(name);
          ASSERT_EQ(v.accepts(c), "") << name;
          validate_case(c);
          auto inst = v.make(c);
          const Verification r = inst->verify();
          EXPECT_TRUE(r.ok) << name << ": " << r.detail;
          EXPECT_EQ(r.max_err, 0) << name;
          // verify() leaves the instance reset: two runs then verify again.
          inst->run();
          inst->reset();
          EXPECT_TRUE(inst->verify().ok) << name;
          ++checked;
        }
      }
  EXPECT_GE(checked, 5 * (6 + 2 * 2 * 2));
}

// A micro-kernel dropping the last k of every sliver.
Ukernel<double> g_real;
void drop_last_k(int64_t nb, int64_t kc, const double* A, int64_t sa, const double* B, int64_t sb, double* C,
                 int64_t ldc, int64_t m, int64_t n, Prefetch pf) {
  g_real.fn(nb, kc > 1 ? kc - 1 : kc, A, sa, B, sb, C, ldc, m, n, pf);
}

TEST(GemmFamily, VerificationCatchesBrokenKernel) {
  omp_set_num_threads(2);
  g_real = ukernel<double>(Isa::scalar);
  Ukernel<double> broken = g_real;
  broken.fn = drop_last_k;
  // Full reference (small) and Freivalds + samples (M*N*K > 2^27).
  for (const char* name : {"gemm/blocked/scalar/f64/50x40x30/threads:2",
                           "gemm/sfc_ca/scalar/f64/520x530x520/k_layers:1/kbf:2/threads:2"}) {
    auto good = make_instance(gemm_case(name), g_real);
    const Verification ok = good->verify();
    EXPECT_TRUE(ok.ok) << name << ": " << ok.detail;
    auto bad = make_instance(gemm_case(name), broken);
    const Verification r = bad->verify();
    EXPECT_FALSE(r.ok) << name;
    EXPECT_GT(r.max_err, 0) << name;
    if (std::string(name).find("520x") != std::string::npos) {
      EXPECT_NE(r.detail.find("Freivalds"), std::string::npos) << r.detail;
    }
  }
  EXPECT_THROW(make_instance(gemm_case("gemm/blocked/scalar/f32/5x5x5/threads:1"), g_real), Error);
}

TEST(GemmFamily, BadInputIsRejectedWithAReason) {
  const Family* fam = find_family("gemm");
  ASSERT_NE(fam, nullptr);
  const std::pair<const char*, const char*> bad[] = {
      {"gemm/ijk/f64/0x5x5/threads:1", "dimensions must be >= 1"},
      {"gemm/blocked/scalar/f64/5x0x5/threads:1", "dimensions must be >= 1"},
      {"gemm/ikj/f64/4096x4096x4096/threads:1", "refuse"},
      {"gemm/ijk/f64/8x8x8/ld:-2/threads:1", "ld must be"},
      {"gemm/ijk/f64/8x8x8/ld:x/threads:1", "ld must be"},
      {"gemm/ijk/f64/8x8x8/kbf:2/threads:1", "unknown parameter"},
      {"gemm/ijk/f64/8x8/threads:1", "three dimensions"},
      {"gemm/sfc_ca/scalar/f64/64x64x128/k_layers:3/kbf:1/threads:1", "k_layers must be in [1, K blocks"},
      {"gemm/sfc_ca/scalar/f64/64x64x1024/k_layers:2/kbf:5/threads:1", "kbf (K blocks per BRGEMM) must be in [1, 4]"},
      {"gemm/sfc_ca/scalar/f64/64x64x512/k_layers:0/kbf:1/threads:1", "k_layers"},
      {"gemm/sfc_ca/scalar/f64/64x64x512/k_layers:1/kbf:0/threads:1", "kbf"},
      {"gemm/sfc_ca/scalar/f64/64x64x512/bm:0/threads:1", "bm, bn, bk must be >= 1"},
      {"gemm/blocked/scalar/f64/64x64x512/kc:0/threads:1", "mc, kc, nc"},
      {"gemm/blocked/scalar/f64/64x64x512/blocking:best/threads:1", "not a rule (sizes or analytic)"},
      {"gemm/sfc_ca/scalar/f64/64x64x512/blocking:analytic/threads:1", "unknown parameter"},
  };
  for (const auto& [name, why] : bad) {
    const Case c = gemm_case(name);
    const Variant* v = fam->find(c.variant);
    ASSERT_NE(v, nullptr) << name;
    const std::string reason = v->accepts(c);
    EXPECT_NE(reason.find(why), std::string::npos) << name << ": got '" << reason << "'";
    EXPECT_THROW(validate_case(c), Error) << name;
  }
  Dims d{4, 4, 4, 3, 4, 4};
  EXPECT_THROW(check_dims(d), Error);  // lda < K
  if (const Variant* v = fam->find("onednn")) {
    EXPECT_EQ(v->dtypes, std::vector<DType>{DType::f32});
    EXPECT_FALSE(v->accepts(gemm_case("gemm/onednn/f64/8x8x8/threads:1")).empty());
  }
}

TEST(GemmFamily, ProfilesAreValidAndModelsConsistent) {
  for (const char* profile : {"smoke", "quick", "paper"}) {
    const auto cs = expand_cases(profile);
    std::set<std::string> names;
    int gemm_cases = 0;
    for (const Case& c : cs) {
      if (c.family != "gemm") continue;
      ++gemm_cases;
      EXPECT_TRUE(names.insert(c.name()).second) << "duplicate " << c.name();
      EXPECT_EQ(parse_case_name(c.name()).name(), c.name());
      const Variant& v = variant_of(c);
      EXPECT_EQ(v.accepts(c), "") << c.name();
      const Model m = v.model(c);
      const double M = double(c.dims[0]), N = double(c.dims[1]), K = double(c.dims[2]), s = double(dtype_size(c.dtype));
      EXPECT_DOUBLE_EQ(m.flops, 2 * M * N * K);
      EXPECT_DOUBLE_EQ(m.bytes(), s * (M * K + K * N + 2 * M * N));
      EXPECT_EQ(m.compute_ceiling, c.dtype == DType::f64 ? "fma_f64" : "fma_f32");
      if (c.variant == "sfc_ca") {
        EXPECT_NE(c.param("k_layers"), nullptr);
        EXPECT_NE(c.param("kbf"), nullptr);
      }
    }
    if (std::string(profile) == "smoke") {
      // Every variant registered in this build (libraries included) at least once.
      std::set<std::string> variants;
      for (const Case& c : cs)
        if (c.family == "gemm") variants.insert(c.variant);
      for (const Variant& v : find_family("gemm")->variants)
        EXPECT_TRUE(variants.count(v.name)) << "smoke lacks gemm/" << v.name;
    } else {
      EXPECT_GT(gemm_cases, 20) << profile;
    }
    if (std::string(profile) == "paper") {
      int grid = 0;
      for (const Case& c : cs)
        if (c.family == "gemm" && c.variant == "blocked" && c.dtype == DType::f64) ++grid;
      EXPECT_EQ(grid, 125);
    }
  }
}

}  // namespace
}  // namespace rooflab::gemm

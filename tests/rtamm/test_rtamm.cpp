// RTAMM: every plan exact at odd shapes / M != N / unaligned ld (1 and 2 threads, f64 and f32),
// movement counts (closed form = the executor's steps = the paper's formulas on hand-checked
// cases), the cost formulas on hand-computed numbers, the blocking-pool constraints, the unit
// costs' JSON and bad input, the family table and the evaluation's shapes.
#include <gtest/gtest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "harness/error.hpp"
#include "harness/env.hpp"
#include "harness/families.hpp"
#include "harness/isa_choice.hpp"
#include "harness/json_io.hpp"
#include "harness/machine_cpu.hpp"
#include "apps/rtamm/evaluate.hpp"
#include "apps/rtamm/units.hpp"
#include "kernels/rtamm/exec.hpp"
#include "kernels/rtamm/problem.hpp"
#include "kernels/rtamm/rtamm.hpp"

using namespace rooflab;
using namespace rooflab::rtamm;
namespace fs = std::filesystem;

namespace {
gemm::Dims dims(int64_t m, int64_t n, int64_t k, int64_t pad = 0) { return {m, n, k, k + pad, n + pad, n + pad}; }

template <class T>
void expect_exact(const Plan& p, const gemm::Dims& d, int threads) {
  const auto uk = gemm::ukernel<T>(best_isa());
  detail::Problem<T> prob(d);
  // Exactly the scratch the plan needs on d (under ASan a write past it fails the test).
  AlignedBuffer<T> work(static_cast<size_t>(workspace(p, d, uk.mr, uk.nr)));
  omp_set_num_threads(threads);
  run_plan(p, uk, d, prob.A.data(), prob.B.data(), prob.C.data(), work.data());
  const Verification v = prob.check(true, 0);
  EXPECT_TRUE(v.ok) << plan_id(p) << " " << d.m << "x" << d.n << "x" << d.k << " ld+" << d.lda - d.k << " T"
                    << threads << ": " << v.detail;
}

Units flat_units(int mr, int nr, const std::vector<Block>& pool, double rho) {
  Units u;
  u.mr = mr, u.nr = nr, u.threads = 1;
  u.caches = {32768, 1 << 20, 1 << 24, "test"};
  for (const Block& b : pool) {
    BlockUnits bu;
    bu.b = b;
    for (int l = 0; l < kLevels; ++l) bu.load_a[l] = bu.load_b[l] = bu.load_c[l] = 1, bu.store_c[l] = 2, bu.rho[l] = rho;
    bu.k_ns = 1, bu.call_ns = 0, bu.op_kernel = 0.5;
    u.blocks.push_back(bu);
  }
  return u;
}

// The ISA of the micro-kernel this process runs (units measured with another are refused).
std::string run_isa() { return std::string(to_string(kernel_isa(DType::f64))); }
// machine.json's record of the CPU it was characterized on: this one.
json this_cpu() { return {{"cpu_signature", cpu_signature()}}; }

fs::path temp_file(const std::string& name, const json& j) {
  const fs::path p = fs::temp_directory_path() / ("rtamm_test_" + std::to_string(getpid()) + "_" + name);
  write_json_atomic(p, j);
  return p;
}
}  // namespace

TEST(RtammPlans, EveryOrderAndAheadIsExactAtOddShapes) {
  const auto uk = gemm::ukernel<double>(best_isa());
  const int mr = uk.mr, nr = uk.nr;
  // Blocks that leave edge blocks in every dimension; one plan whose block covers everything.
  const Block blocks[] = {{2 * mr, 2 * nr, 16}, {3 * mr, nr, 40}, {mr, 3 * nr, 8}, {40 * mr, 40 * nr, 256}};
  const gemm::Dims shapes[] = {dims(37, 53, 29), dims(61, 100, 300, 3), dims(13, 200, 7), dims(1, 1, 1),
                               dims(5, 3, 70, 1)};
  for (Order o : all_orders())
    for (Ahead a : {Ahead::none, Ahead::ab, Ahead::abc}) {
      for (const Block& b : blocks)
        for (const auto& d : shapes) expect_exact<double>({o, b, a}, d, 1);
      // Two threads split every phase (slivers, rows, tiles, the interleaved ahead tasks); few
      // cases, as barriers are slow when the 2-core machine is busy.
      expect_exact<double>({o, blocks[0], a}, shapes[0], 2);
      expect_exact<double>({o, blocks[1], a}, shapes[1], 2);
      // Three: shares of unequal size in every group (tiles, slivers, rows, ahead tasks).
      expect_exact<double>({o, blocks[2], a}, shapes[1], 3);
    }
}

// The scratch follows the blocks that run: a plan's block beyond the problem is never filled, so
// a 40 MR x 40 NR x 256 block on 37 x 53 x 29 needs buffers of 37 (up to MR) x 29, 29 x 53 (up
// to NR) and 37 (up to MR) x 53 (up to NR), two of each; a problem as large as the blocks needs
// the whole blocks.
TEST(RtammPlans, WorkspaceIsSizedByTheBlocksThatRun) {
  const int mr = 4, nr = 12;
  const Plan big{Order::mnk, {40 * mr, 40 * nr, 256}, Ahead::abc};
  const gemm::Dims d = dims(37, 53, 29);
  const Block rb = run_block(big, d, mr, nr);
  EXPECT_EQ(rb.mcg, 40);  // 37 rounded up to MR 4
  EXPECT_EQ(rb.ncg, 60);  // 53 rounded up to NR 12
  EXPECT_EQ(rb.kcg, 29);
  EXPECT_EQ(workspace(big, d, mr, nr), 2 * (40 * 29 + 29 * 60 + 40 * 60));
  EXPECT_EQ(workspace(big, mr, nr), 2 * (160 * 256 + 256 * 480 + 160 * 480));
  // as large as the blocks (and larger): the plan's blocks, as without a problem
  EXPECT_EQ(workspace(big, dims(160, 480, 256), mr, nr), workspace(big, mr, nr));
  EXPECT_EQ(workspace(big, dims(1000, 999, 777), mr, nr), workspace(big, mr, nr));
  // one dimension small: only its factors shrink
  const Block k1 = run_block(big, dims(500, 500, 1), mr, nr);
  EXPECT_EQ(k1.mcg, 160);
  EXPECT_EQ(k1.ncg, 480);
  EXPECT_EQ(k1.kcg, 1);
}

// Every thread runs its share of each task group of a phase (A slivers, B slivers, C rows), not a
// split of the task list by count: on 528x48x48 with one 816x216x80 block that split gave one of
// two threads all 66 A and 2 B slivers plus 230 C rows, the other 298 C rows only.
TEST(RtammPlans, EveryThreadGetsItsShareOfEachTaskGroup) {
  detail::Xfer x;
  x.a = x.b = x.cl = true;
  x.sa.mc = x.scl.mc = 528, x.sa.kc = 48, x.sb.kc = 48, x.sb.nc = x.scl.nc = 48;
  int64_t n[4];
  detail::group_counts(x, 8, 24, n);
  EXPECT_EQ(n[0], 66);
  EXPECT_EQ(n[1], 2);
  EXPECT_EQ(n[2], 528);
  EXPECT_EQ(n[3], 0);
  EXPECT_EQ(detail::task_count(x, 8, 24), 596);
  for (int64_t parts : {1, 2, 3, 7})
    for (int g = 0; g < 4; ++g) {
      // The parts cover the group exactly once, in order, each within one task of n / parts.
      int64_t end = 0;
      for (int64_t p = 0; p < parts; ++p) {
        int64_t lo, hi;
        detail::share(n[g], p, parts, lo, hi);
        EXPECT_EQ(lo, end) << g << " " << p << "/" << parts;
        EXPECT_LE(hi - lo, n[g] / parts + 1);
        EXPECT_GE(hi - lo, n[g] / parts);
        end = hi;
      }
      EXPECT_EQ(end, n[g]);
    }
  int64_t lo, hi;
  detail::share(n[0], 0, 2, lo, hi);
  EXPECT_EQ(hi - lo, 33);  // half of the A slivers on each of two threads
}

TEST(RtammPlans, F32Exact) {
  const auto uk = gemm::ukernel<float>(best_isa());
  for (Order o : canonical_orders())
    for (Ahead a : {Ahead::none, Ahead::abc})
      expect_exact<float>({o, {2 * uk.mr, 2 * uk.nr, 24}, a}, dims(45, 77, 131, 5), 2);
}

TEST(RtammPlans, VerificationCatchesAWrongEntry) {
  detail::Problem<double> prob(dims(20, 30, 40, 1));
  const auto uk = gemm::ukernel<double>(best_isa());
  const Plan p{Order::mkn, {uk.mr, uk.nr, 8}, Ahead::ab};
  AlignedBuffer<double> work(static_cast<size_t>(workspace(p, uk.mr, uk.nr)));
  run_plan(p, uk, prob.d, prob.A.data(), prob.B.data(), prob.C.data(), work.data());
  ASSERT_TRUE(prob.check(false, 1).ok);
  prob.C[static_cast<size_t>(7 * prob.d.ldc + 11)] += 1;
  EXPECT_FALSE(prob.check(true, 0).ok);
  EXPECT_FALSE(prob.check(false, 1).ok);
  prob.C[static_cast<size_t>(7 * prob.d.ldc + 11)] -= 1;
  prob.C[static_cast<size_t>(3 * prob.d.ldc + 30)] = 0;  // a padding column
  EXPECT_FALSE(prob.check(false, 1).ok);
}

TEST(RtammPlans, BadBlockingIsRefused) {
  const auto uk = gemm::ukernel<double>(best_isa());
  EXPECT_THROW(check_plan({Order::mnk, {uk.mr + 1, uk.nr, 8}, Ahead::none}, uk.mr, uk.nr), Error);
  EXPECT_THROW(check_plan({Order::mnk, {uk.mr, 0, 8}, Ahead::none}, uk.mr, uk.nr), Error);
  EXPECT_THROW(check_plan({Order::mnk, {uk.mr, uk.nr, 0}, Ahead::none}, uk.mr, uk.nr), Error);
}

TEST(RtammMovement, PaperFormulasOnAHandCheckedCase) {
  // M = N = K = 512, Mcg 128, Ncg 256, Kcg 64: m_gb 4, n_gb 2, k_gb 8, MK = KN = MN = 262144.
  const gemm::Dims d = dims(512, 512, 512);
  const Block b{128, 256, 64};
  const double E = 262144;
  const Movement mnk = movement({Order::mnk, b, Ahead::none}, d, 4, 4);
  EXPECT_EQ(mnk.a, 2 * E);   // (2): n_gb MK
  EXPECT_EQ(mnk.b, 4 * E);   //      m_gb KN
  EXPECT_EQ(mnk.c_load, E);  //      MN
  EXPECT_EQ(mnk.c_store, E);
  const Movement mkn = movement({Order::mkn, b, Ahead::none}, d, 4, 4);
  EXPECT_EQ(mkn.a, E);       // (3): MK
  EXPECT_EQ(mkn.b, 4 * E);   //      m_gb KN
  EXPECT_EQ(mkn.c_load, 8 * E);  // k_gb MN
  const Movement nkm = movement({Order::nkm, b, Ahead::none}, d, 4, 4);
  EXPECT_EQ(nkm.a, 2 * E);   // (4): n_gb MK
  EXPECT_EQ(nkm.b, E);       //      KN
  EXPECT_EQ(nkm.c_store, 8 * E);
  EXPECT_EQ(mnk.steps, 64);
  EXPECT_EQ(mnk.kernel_calls, 128 * 128 * 8);  // (512/4)^2 tiles x k_gb
  EXPECT_EQ(mnk.phases, 2 * 64 + 1);
  EXPECT_EQ(movement({Order::mnk, b, Ahead::ab}, d, 4, 4).phases, 8 + 64 + 1);  // C changes 8 times
  // A single K block: the mkn "C re-loaded k_gb times" becomes once (C stays resident).
  const Movement one_k = movement({Order::mkn, {128, 256, 512}, Ahead::none}, d, 4, 4);
  EXPECT_EQ(one_k.c_load, E);
  EXPECT_EQ(one_k.a, E);
}

TEST(RtammMovement, ClosedFormEqualsTheExecutorsSteps) {
  const gemm::Dims shapes[] = {dims(512, 512, 512), dims(37, 53, 29), dims(300, 20, 1000), dims(6, 8, 8),
                               dims(100, 700, 64, 3)};
  const Block blocks[] = {{12, 16, 16}, {24, 8, 64}, {6, 64, 8}, {600, 800, 1000}};
  for (Order o : all_orders())
    for (Ahead a : {Ahead::none, Ahead::ab, Ahead::abc})
      for (const Block& b : blocks)
        for (const auto& d : shapes) {
          const Plan p{o, b, a};
          const Movement c = movement(p, d, 6, 8), w = movement_by_steps(p, d, 6, 8);
          const std::string id = plan_id(p) + " at " + std::to_string(d.m) + "x" + std::to_string(d.n) + "x" + std::to_string(d.k);
          EXPECT_EQ(c.a, w.a) << id;
          EXPECT_EQ(c.b, w.b) << id;
          EXPECT_EQ(c.c_load, w.c_load) << id;
          EXPECT_EQ(c.c_store, w.c_store) << id;
          EXPECT_EQ(c.steps, w.steps) << id;
          EXPECT_EQ(c.kernel_calls, w.kernel_calls) << id;
          EXPECT_EQ(c.kernel_k, w.kernel_k) << id;
          EXPECT_EQ(c.phases, w.phases) << id;
        }
}

TEST(RtammMovement, EquivalentOrdersMoveTheSame) {
  const gemm::Dims d = dims(333, 517, 260, 1);
  for (Order o : all_orders()) {
    const Plan p{o, {24, 64, 64}, Ahead::ab}, q{canonical(o), {24, 64, 64}, Ahead::ab};
    const Movement a = movement(p, d, 6, 8), b = movement(q, d, 6, 8);
    EXPECT_EQ(a.a, b.a);
    EXPECT_EQ(a.b, b.b);
    EXPECT_EQ(a.c_load, b.c_load);
    EXPECT_EQ(a.phases, b.phases);
  }
  // With one K block (K <= Kcg) the equivalence breaks: mnk keeps A resident across n, nmk
  // re-packs it for every n block (what the evaluation's equivalent_orders shows).
  const gemm::Dims one_k = dims(333, 517, 60);
  const Block b{24, 64, 64};
  EXPECT_EQ(movement({Order::mnk, b, Ahead::ab}, one_k, 6, 8).a, 333.0 * 60);
  EXPECT_EQ(movement({Order::nmk, b, Ahead::ab}, one_k, 6, 8).a, 9.0 * 333 * 60);  // n_gb = 9
}

TEST(RtammCost, HandComputedFormulas) {
  // 64^3, blocks 32^3, MR = NR = 4; loads 1 ns/element, stores 2, kernel 1 ns per unit of kc
  // per call (no call overhead), no sync. m_gb = n_gb = k_gb = 2.
  const gemm::Dims d = dims(64, 64, 64);
  const Block b{32, 32, 32};
  Units u = flat_units(4, 4, {b}, 1.0);
  // none: A 2*4096 + B 2*4096 + C load 4096 + C store 2*4096 + kernel 16*16*64 = 45056.
  const Cost none = cost({Order::mnk, b, Ahead::none}, d, u);
  EXPECT_DOUBLE_EQ(none.load_a, 8192);
  EXPECT_DOUBLE_EQ(none.store_c, 8192);
  EXPECT_DOUBLE_EQ(none.kernel, 16384);
  EXPECT_DOUBLE_EQ(none.total, 45056);
  // ab, rho = 1 (the paper's max): serial = store 8192 + load C 4096 + first A, B blocks 2048;
  // max(LDST 16384 - 2048, CMPT 16384) = 16384 -> 30720.
  const Cost ab = cost({Order::mnk, b, Ahead::ab}, d, u);
  EXPECT_DOUBLE_EQ(ab.ldst_olp, 14336);
  EXPECT_DOUBLE_EQ(ab.total, 30720);
  // abc: C loads join the overlap: serial = 8192 + first 3072; max(14336 + 4096 - 1024, 16384).
  EXPECT_DOUBLE_EQ(cost({Order::mnk, b, Ahead::abc}, d, u).total, 8192 + 3072 + 17408);
  // rho = 0: nothing hidden, ab costs what none costs.
  u = flat_units(4, 4, {b}, 0.0);
  EXPECT_DOUBLE_EQ(cost({Order::mnk, b, Ahead::ab}, d, u).total, 45056);
  // mkn: A once (4096), B m_gb (8192), C k_gb times: load 8192 + store 16384, kernel 16384.
  EXPECT_DOUBLE_EQ(cost({Order::mkn, b, Ahead::none}, d, u).total, 4096 + 8192 + 8192 + 16384 + 16384);
  // sync: one ns per phase (2 * 8 + 1 phases).
  u.sync_ns = 1;
  EXPECT_DOUBLE_EQ(cost({Order::mnk, b, Ahead::none}, d, u).sync, 17);
}

TEST(RtammCalibration, UnitScalesWithRhoOverlapAreThePlainFormula) {
  const std::vector<Block> pool = {{32, 32, 32}, {16, 64, 16}};
  Units u = flat_units(4, 4, pool, 0.5);
  u.sync_ns = 3, u.region_ns = 7;
  Units k = u;
  k.calib.present = true;
  k.calib.overlap = 0.5;
  k.calib.kernel = {1, 1};
  for (const Plan& p : plans_of(pool))
    for (const auto& d : {dims(64, 64, 64), dims(100, 37, 90, 3), dims(20, 200, 7)}) {
      EXPECT_DOUBLE_EQ(cost(p, d, k).total, cost(p, d, u).total) << plan_id(p);
      // The features reproduce the plain formula with the plain coefficients.
      const std::vector<double> f = calib_features(p, d, u);
      ASSERT_EQ(f.size(), size_t(kCalibFixed) + pool.size());
      double sum = 0;
      for (size_t j = 0; j < f.size(); ++j) sum += (j == 6 ? 0.5 : 1.0) * f[j];
      EXPECT_NEAR(sum, cost(p, d, u).total, 1e-9 * sum) << plan_id(p);
    }
  // A scale moves its term only: twice the B loads.
  k.calib.load_b = 2;
  const Plan none{Order::mnk, pool[0], Ahead::none};
  const gemm::Dims d = dims(64, 64, 64);
  EXPECT_DOUBLE_EQ(cost(none, d, k).total - cost(none, d, u).total, cost(none, d, u).load_b);
}

TEST(RtammCalibration, NnlsSolvesAndStaysNonNegative) {
  // y = 2 x0 + 0.5 x1 exactly: recovered; a column that would want a negative weight gets 0.
  std::vector<std::vector<double>> X;
  std::vector<double> y;
  for (int i = 1; i <= 20; ++i) X.push_back({double(i), double(i * i % 7 + 1)}), y.push_back(2.0 * i + 0.5 * (i * i % 7 + 1));
  const auto c = nnls(X, y);
  EXPECT_NEAR(c[0], 2, 1e-9);
  EXPECT_NEAR(c[1], 0.5, 1e-9);
  std::vector<std::vector<double>> X2;
  std::vector<double> y2;
  for (int i = 1; i <= 20; ++i) X2.push_back({double(i), 1.0}), y2.push_back(double(i) - 3);  // intercept -3
  const auto c2 = nnls(X2, y2);
  EXPECT_EQ(c2[1], 0.0);
  EXPECT_GT(c2[0], 0.0);
  EXPECT_THROW(nnls({}, {}), Error);
}

TEST(RtammCalibration, FitRecoversKnownScalesDespiteSpeedDrift) {
  // Times made by a known calibration, each shape slowed by its own factor (the VM's drift):
  // the fit must recover the scales (up to the shapes' common median) and rank like them.
  const std::vector<Block> pool = {{32, 32, 32}, {16, 64, 16}, {64, 16, 64}};
  Units u = flat_units(4, 4, pool, 0.0);
  u.sync_ns = 50;
  for (int l = 0; l < kLevels; ++l) u.blocks[1].load_a[l] = 0.7, u.blocks[2].store_c[l] = 1.3;
  Units truth = u;
  truth.calib.present = true;
  truth.calib.load_a = 3, truth.calib.load_b = 0.5, truth.calib.load_c = 1, truth.calib.load_c_ahead = 0.2;
  truth.calib.store_c = 2, truth.calib.sync = 1.5, truth.calib.overlap = 0.6, truth.calib.kernel = {1, 0.8, 1.2};
  const auto plans = plans_of(pool);
  std::vector<gemm::Dims> shapes;
  std::vector<std::vector<double>> t;
  const double drift[] = {1.0, 1.4, 0.9, 1.0, 1.2, 1.0, 0.8, 1.0};
  for (int s = 0; s < 8; ++s) {
    shapes.push_back(dims(40 + 23 * s, 90 - 7 * s, 33 + 17 * (s % 4), s % 2));
    t.emplace_back();
    for (const Plan& p : plans) t.back().push_back(drift[s] * cost(p, shapes.back(), truth).total);
  }
  const Calibration k = fit_calibration(u, plans, shapes, t);
  ASSERT_TRUE(k.present);
  ASSERT_EQ(k.kernel.size(), 3u);
  EXPECT_NEAR(k.load_a, 3, 0.03);
  EXPECT_NEAR(k.store_c, 2, 0.02);
  EXPECT_NEAR(k.kernel[1], 0.8, 0.01);
  EXPECT_NEAR(k.kernel[2], 1.2, 0.01);
  Units fitted = u;
  fitted.calib = k;
  const Engine e(plans, fitted), te(plans, truth);
  for (const auto& d : shapes) EXPECT_EQ(plan_id(plans[e.choose(d)]), plan_id(plans[te.choose(d)]));
  EXPECT_THROW(fit_calibration(u, plans, {}, {}), Error);
}

TEST(RtammCalibration, DecisionRefinementReportsWhatTheEngineChooses) {
  // Times the formula terms cannot represent (ahead plans 12% slower on odd shapes, a per-block
  // factor that flips with the shape): the least-squares fit ranks some shapes wrong. The refined
  // scales must choose at least as well on the training shapes, and the accuracy the provenance
  // reports must be the one the engine's own choices reach with the returned calibration.
  const std::vector<Block> pool = {{32, 32, 32}, {16, 64, 16}, {64, 16, 64}};
  Units u = flat_units(4, 4, pool, 0.0);
  u.sync_ns = 50;
  const auto plans = plans_of(pool);
  std::vector<gemm::Dims> shapes;
  std::vector<std::vector<double>> t;
  for (int s = 0; s < 24; ++s) {
    shapes.push_back(dims(40 + 23 * s, 150 - 5 * s, 33 + 17 * (s % 5), s % 2));
    t.emplace_back();
    for (size_t i = 0; i < plans.size(); ++i) {
      double v = cost(plans[i], shapes.back(), u).total;
      if (plans[i].ahead != Ahead::none && s % 2) v *= 1.12;
      if (plans[i].b.mcg == 64 && s % 3 == 0) v *= 0.85;
      t.back().push_back(v);
    }
  }
  const Calibration k = fit_calibration(u, plans, shapes, t);
  const json& dr = k.provenance.at("decision_refinement");
  const double ls = dr.at("least_squares").at("training_within_5pct").get<double>();
  const double refined = dr.at("refined").at("training_within_5pct").get<double>();
  EXPECT_GE(refined, ls);
  EXPECT_LE(k.overlap, 1.0);
  Units fitted = u;
  fitted.calib = k;
  const Engine e(plans, fitted);
  size_t within = 0;
  for (size_t s = 0; s < shapes.size(); ++s)
    within += t[s][e.choose(shapes[s])] <= 1.05 * *std::min_element(t[s].begin(), t[s].end());
  EXPECT_DOUBLE_EQ(refined, double(within) / double(shapes.size()));
}

TEST(RtammCost, SourceLevelFollowsTheWorkingSet) {
  const Caches c{32768, 1 << 20, 1 << 24, "t"};
  EXPECT_EQ(source_level(dims(64, 64, 64), 8, c), kL2);
  EXPECT_EQ(source_level(dims(512, 512, 512), 8, c), kL3);
  EXPECT_EQ(source_level(dims(2048, 2048, 2048), 8, c), kDram);
}

TEST(RtammEngine, ChoosesTheLeastPredictedPlan) {
  const std::vector<Block> pool = {{12, 16, 16}, {48, 64, 64}, {96, 256, 128}};
  Units u = flat_units(6, 8, pool, 0.5);
  u.blocks[1].k_ns = 0.5;  // a faster kernel for the middle triple
  const Engine e(plans_of(pool), u);
  for (const auto& d : {dims(64, 64, 64), dims(500, 30, 900), dims(1000, 1000, 10)}) {
    const size_t c = e.choose(d);
    for (size_t i = 0; i < e.plans().size(); ++i) EXPECT_LE(e.predict(c, d), e.predict(i, d));
  }
  EXPECT_EQ(e.plans().size(), 3u * 3u * 3u);
  EXPECT_EQ(plans_of(pool, true).size(), 6u * 3u * 3u);
}

TEST(RtammPool, DerivedPoolSatisfiesTheConstraints) {
  const PoolRules r{8, 6, 8, {32768, 370752, 16777216, "measured"}};
  const auto pool = derive_pool(r, 6);
  ASSERT_EQ(pool.size(), 6u);
  EXPECT_NO_THROW(check_pool(pool, r));
  for (const Block& b : pool) {
    EXPECT_EQ(pool_violation(b, r), "");
    EXPECT_EQ(b.mcg % 6, 0);
    EXPECT_EQ(b.ncg % 8, 0);
    EXPECT_LE(b.kcg * 8 * 8, 32768 / 2);   // (c1)
    EXPECT_LE(b.mcg * b.kcg * 8, 370752 / 2);  // (c2)
  }
  const Plan s = static_plan(pool);
  EXPECT_EQ(s.order, Order::mnk);
  EXPECT_EQ(s.ahead, Ahead::ab);
  EXPECT_EQ(s.b, pool.front());
  EXPECT_EQ(s.b.kcg, 256);
  // Smaller caches, smaller blocks: the pool follows the measured capacities.
  const auto small = derive_pool({8, 6, 8, {16384, 131072, 1 << 20, "small"}}, 6);
  for (const Block& b : small) EXPECT_LE(b.mcg * b.kcg * 8, 131072 / 2);
}

// The pool's caches: per level the measured capacity, else the reported one (the Zen 4 VM's
// read-bandwidth curve shows no L2 step), the source naming the levels taken from hwloc; a
// level neither measured nor reported is an error.
TEST(RtammPool, CachesAreMeasuredElseReportedPerLevel) {
  const json m = {{"caches",
                   {{"measured", {{"L1", 32768}, {"L3", 8388608}}},
                    {"reported", {{"L1", 32768}, {"L2", 1048576}, {"L3", 33554432}}}}}};
  const Caches c = caches_from_machine(m, "z4/machine.json");
  EXPECT_EQ(c.l1, 32768);
  EXPECT_EQ(c.l2, 1048576);
  EXPECT_EQ(c.l3, 8388608);
  EXPECT_NE(c.source.find("L2: caches.reported"), std::string::npos) << c.source;
  const json all = {{"caches", {{"measured", {{"L1", 49152}, {"L2", 1048576}, {"L3", 33554432}}}}}};
  EXPECT_EQ(caches_from_machine(all, "m.json").source, "m.json caches.measured");
  const json none = {{"caches", {{"measured", {{"L1", 32768}, {"L3", 8388608}}}}}};
  EXPECT_THROW(caches_from_machine(none, "m.json"), Error);
}

// The pool follows the micro-kernel RTAMM runs (kernel_isa's MR x NR) and the caches of the CPU:
// two synthetic CPUs, an AVX2-like 4 x 12 tile with 32 KiB / 512 KiB / 32 MiB and an AVX-512-like
// 12 x 16 (and 8 x 24) tile with 48 KiB / 1 MiB / 32 MiB, f64 and f32: every entry a multiple of
// the tile, within (c1)-(c3) as computed here, and accepted by check_pool.
TEST(RtammPool, EveryEntryFitsTheMicroKernelOfEachIsa) {
  struct Cpu {
    int mr, nr;
    Caches c;
  };
  const std::vector<Cpu> cpus = {{4, 12, {32768, 524288, 33554432, "avx2-like"}},
                                 {12, 16, {49152, 1048576, 33554432, "avx512-like"}},
                                 {8, 24, {49152, 1048576, 33554432, "avx512-like 8x24"}}};
  for (const Cpu& cpu : cpus)
    for (int64_t s : {8, 4}) {
      const PoolRules r{s, cpu.mr, cpu.nr, cpu.c};
      const auto pool = derive_pool(r, 6);
      ASSERT_FALSE(pool.empty()) << cpu.c.source;
      EXPECT_NO_THROW(check_pool(pool, r)) << cpu.c.source;
      for (const Block& b : pool) {
        const std::string at = cpu.c.source + " s=" + std::to_string(s) + " " + std::to_string(b.mcg) + "x" +
                               std::to_string(b.ncg) + "x" + std::to_string(b.kcg);
        EXPECT_EQ(b.mcg % cpu.mr, 0) << at;
        EXPECT_EQ(b.ncg % cpu.nr, 0) << at;
        EXPECT_EQ(b.kcg % 8, 0) << at;
        EXPECT_GT(b.mcg * b.ncg * b.kcg, 0) << at;
        EXPECT_LE(b.kcg * cpu.nr * s, cpu.c.l1 / 2) << at;                                       // (c1)
        EXPECT_LE(b.mcg * b.kcg * s, cpu.c.l2 / 2) << at;                                        // (c2)
        EXPECT_LE(2 * (b.mcg * b.kcg + b.kcg * b.ncg + b.mcg * b.ncg) * s, cpu.c.l3 / 2) << at;  // (c3)
      }
      // A tile that is not a divisor of the entries is refused, naming MR or NR.
      const PoolRules odd{s, cpu.mr + 1, cpu.nr, cpu.c};
      bool refused = false;
      for (const Block& b : pool) refused |= pool_violation(b, odd).find("multiple of MR") != std::string::npos;
      EXPECT_TRUE(refused) << cpu.c.source;
    }
  // The process's own micro-kernel: the pool `rooflab rtamm pool` derives for it fits it.
  const auto uk = gemm::ukernel<double>(kernel_isa(DType::f64));
  for (const Block& b : derive_pool({8, uk.mr, uk.nr, {49152, 1048576, 33554432, "here"}}, 6))
    EXPECT_TRUE(b.mcg % uk.mr == 0 && b.ncg % uk.nr == 0) << b.mcg << "x" << b.ncg << " vs " << uk.mr << "x" << uk.nr;
}

TEST(RtammPool, BadPoolsAreRefusedWithTheReason) {
  const PoolRules r{8, 6, 8, {32768, 370752, 16777216, "measured"}};
  auto msg = [&](const std::vector<Block>& p) {
    try {
      check_pool(p, r);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(msg({}).find("empty"), std::string::npos);
  EXPECT_NE(msg({{48, 64, 64}, {48, 64, 64}}).find("twice"), std::string::npos);
  EXPECT_NE(msg({{7, 64, 64}}).find("multiple of MR"), std::string::npos);
  EXPECT_NE(msg({{600, 64, 256}}).find("(c2)"), std::string::npos);
  EXPECT_NE(msg({{48, 64, 512}}).find("(c1)"), std::string::npos);
  try {
    derive_pool({8, 6, 8, {256, 1024, 4096, "tiny"}});
    FAIL() << "a tiny cache must give an empty pool";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("blocking pool is empty"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("rooflab characterize"), std::string::npos);
  }
}

TEST(RtammUnits, JsonRoundTripAndMissingUnits) {
  const std::vector<Block> pool = {{12, 16, 16}, {48, 64, 64}};
  Units u = flat_units(6, 8, pool, 0.25);
  u.dtype = "f64", u.threads = 2, u.isa = run_isa();
  const Units back = units_from_json(to_json(u));
  ASSERT_EQ(back.blocks.size(), 2u);
  EXPECT_EQ(back.blocks[1].b, pool[1]);
  EXPECT_DOUBLE_EQ(back.blocks[0].store_c[kDram], 2);
  EXPECT_DOUBLE_EQ(back.blocks[0].rho[kL3], 0.25);

  json m = {{"schema", "rooflab.machine/1"}, {"host", this_cpu()},
            {"caches", {{"measured", {{"L1", 32768}, {"L2", 370752}, {"L3", 16777216}}}}}};
  const fs::path no_section = temp_file("nosec.json", m);
  try {
    load_units(no_section, "f64", 2);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rooflab rtamm units --machine"), std::string::npos) << e.what();
  }
  m["rtamm"] = {{"units", json::array({to_json(u)})}};
  const fs::path with = temp_file("with.json", m);
  EXPECT_EQ(load_units(with, "f64", 2).blocks.size(), 2u);
  try {
    load_units(with, "f64", 1);  // other thread count
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--threads 1"), std::string::npos) << e.what();
  }
  // A plan whose triple has no units: the engine says which command measures them.
  try {
    Engine e({{Order::mnk, {96, 256, 128}, Ahead::none}}, u);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rooflab rtamm units"), std::string::npos);
  }
  json bad = to_json(u);
  bad["blocks"][0].erase("op_load_a_ns");
  EXPECT_THROW(units_from_json(bad), Error);
  // The calibration travels with its units; one kernel scale per block or a clear error.
  EXPECT_TRUE(to_json(u)["calibration"].is_null());
  EXPECT_FALSE(units_from_json(to_json(u)).calib.present);
  u.calib.present = true, u.calib.store_c = 2.5, u.calib.overlap = 0.3, u.calib.kernel = {0.9, 1.1};
  u.calib.provenance = {{"training_seed", 2}};
  const Units cb = units_from_json(to_json(u));
  EXPECT_TRUE(cb.calib.present);
  EXPECT_DOUBLE_EQ(cb.calib.store_c, 2.5);
  EXPECT_DOUBLE_EQ(cb.calib.kernel[1], 1.1);
  EXPECT_EQ(cb.calib.provenance["training_seed"], 2);
  json short_k = to_json(u);
  short_k["calibration"]["kernel"] = json::array({1.0});
  try {
    units_from_json(short_k);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rooflab rtamm calibrate"), std::string::npos) << e.what();
  }
  fs::remove(no_section), fs::remove(with);
}

// Unit costs (and so their calibration) hold on the CPU and micro-kernel they were measured with:
// a machine.json of another CPU (host.cpu_signature) or units of another micro-kernel are refused
// where plans run here, one line naming both; rescoring (nothing runs) reads them; a machine.json
// naming no CPU (older) is used with one warning.
TEST(RtammUnits, UnitsOfAnotherCpuOrMicroKernelAreRefused) {
  Units u = flat_units(6, 8, {{12, 16, 16}}, 0.25);
  u.dtype = "f64", u.threads = 2, u.isa = run_isa();
  json m = {{"schema", "rooflab.machine/1"}, {"host", {{"cpu_signature", "SomeoneElse family 1 model 1 stepping 1"}}},
            {"rtamm", {{"units", json::array({to_json(u)})}}}};
  const fs::path other = temp_file("other_cpu.json", m);
  auto error_of = [](const fs::path& f) {
    try {
      load_units(f, "f64", 2);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  const std::string e1 = error_of(other);
  EXPECT_NE(e1.find("measured on \"SomeoneElse family 1 model 1 stepping 1\", this CPU is \"" + cpu_signature()),
            std::string::npos) << e1;
  EXPECT_NE(e1.find("never carried to another CPU"), std::string::npos) << e1;
  EXPECT_EQ(e1.find('\n'), std::string::npos) << e1;
  EXPECT_EQ(load_units(other, "f64", 2, true, false).blocks.size(), 1u);  // rescore: nothing runs here
  // This CPU, but units of another micro-kernel.
  m["host"] = this_cpu();
  json ju = to_json(u);
  ju["isa"] = run_isa() == "scalar" ? "avx2" : "scalar";
  m["rtamm"]["units"] = json::array({ju});
  const fs::path kernel = temp_file("other_kernel.json", m);
  const std::string e2 = error_of(kernel);
  EXPECT_NE(e2.find("measured with the " + ju["isa"].get<std::string>() + " micro-kernel (6x8), this process runs the " +
                    run_isa()), std::string::npos) << e2;
  EXPECT_NE(e2.find("rooflab rtamm units --machine " + kernel.string() + " --threads 2` again"), std::string::npos) << e2;
  EXPECT_EQ(load_units(kernel, "f64", 2, true, false).isa, ju["isa"]);
  // No CPU recorded: used, one warning per file.
  m.erase("host");
  m["rtamm"]["units"] = json::array({to_json(u)});
  const fs::path unknown = temp_file("unknown_cpu.json", m);
  testing::internal::CaptureStderr();
  EXPECT_EQ(load_units(unknown, "f64", 2).blocks.size(), 1u);
  EXPECT_EQ(load_units(unknown, "f64", 2).blocks.size(), 1u);
  const std::string w = testing::internal::GetCapturedStderr();
  EXPECT_NE(w.find("warning: " + unknown.string() + " names no CPU"), std::string::npos) << w;
  EXPECT_EQ(std::count(w.begin(), w.end(), '\n'), 1) << w;
  fs::remove(other), fs::remove(kernel), fs::remove(unknown);
}

// The calibration is its own section (machine.rtamm_calibration.json), fitted on the units of
// machine.rtamm.json: joined while those units are the ones it was fitted on; after the units
// are measured again it is stale: not applied, one warning naming both files and the command.
TEST(RtammUnits, CalibrationIsItsOwnSectionTiedToItsUnits) {
  const fs::path dir = fs::temp_directory_path() / ("rtamm_calib_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path m = dir / "machine.json";
  write_json_atomic(m, json{{"schema", "rooflab.machine/1"}, {"created", "T1"}, {"host", this_cpu()}});
  Units u = flat_units(6, 8, {{12, 16, 16}, {48, 64, 64}}, 0.25);
  u.dtype = "f64", u.threads = 2, u.isa = run_isa();
  json entry = to_json(u);
  entry["measured"] = "M1";
  write_machine_section(m, "rtamm", {{"units", json::array({entry})}});
  Calibration k;
  k.present = true, k.store_c = 2.5, k.overlap = 0.3, k.kernel = {0.9, 1.1};
  const json cal = {{"calibrations", json::array({{{"dtype", "f64"}, {"threads", 2}, {"units_measured", "M1"},
                                                    {"calibration", calibration_to_json(k)}}})}};
  // Without its units there is nothing to fit on.
  fs::remove(dir / "machine.rtamm.json");
  try {
    write_machine_section(m, "rtamm_calibration", cal, {"rtamm"});
    FAIL() << "a calibration without units was written";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("machine.rtamm.json"), std::string::npos) << e.what();
  }
  write_machine_section(m, "rtamm", {{"units", json::array({entry})}});
  write_machine_section(m, "rtamm_calibration", cal, {"rtamm"});
  EXPECT_FALSE(read_json_file(dir / "machine.rtamm.json")["value"]["units"][0].contains("calibration"));
  testing::internal::CaptureStderr();
  const Units fresh = load_units(m, "f64", 2);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  EXPECT_TRUE(fresh.calib.present);
  EXPECT_DOUBLE_EQ(fresh.calib.store_c, 2.5);
  EXPECT_DOUBLE_EQ(fresh.calib.kernel[1], 1.1);
  EXPECT_FALSE(load_units(m, "f64", 2, false).calib.present);  // what `rtamm calibrate` fits from
  // The units measured again (same values even, within the same second): the calibration is stale.
  write_machine_section(m, "rtamm", {{"units", json::array({entry})}});
  EXPECT_TRUE(read_machine_json(m)["stale_sections"].contains("rtamm_calibration"));
  testing::internal::CaptureStderr();
  const Units stale = load_units(m, "f64", 2);
  const std::string warning = testing::internal::GetCapturedStderr();
  EXPECT_FALSE(stale.calib.present);
  EXPECT_NE(warning.find((dir / "machine.rtamm_calibration.json").string()), std::string::npos) << warning;
  EXPECT_NE(warning.find((dir / "machine.rtamm.json").string()), std::string::npos) << warning;
  EXPECT_NE(warning.find("re-run `rooflab rtamm calibrate --machine " + m.string() + " --threads 2`"),
            std::string::npos) << warning;
  EXPECT_EQ(std::count(warning.begin(), warning.end(), '\n'), 1) << warning;
  // Malformed calibrations (fitted on the present units) are errors naming the file.
  auto expect_malformed = [&](const json& value, const std::string& says) {
    write_machine_section(m, "rtamm_calibration", value, {"rtamm"});
    try {
      load_units(m, "f64", 2);
      FAIL() << "accepted " << value.dump();
    } catch (const Error& e) {
      const std::string w = e.what();
      EXPECT_NE(w.find((dir / "machine.rtamm_calibration.json").string()), std::string::npos) << w;
      EXPECT_NE(w.find(says), std::string::npos) << w;
      EXPECT_EQ(w.find('\n'), std::string::npos) << w;
    }
  };
  json bad = cal;
  bad["calibrations"][0]["calibration"]["sync"] = "fast";
  expect_malformed(bad, "malformed calibration for f64 with 2 threads");
  bad = cal;
  bad["calibrations"][0]["calibration"]["kernel"] = json::array({1.0});
  expect_malformed(bad, "1 kernel scales for 2 blocks");
  expect_malformed(json{{"calibrations", nullptr}}, "expected {\"calibrations\": [...]}");
  expect_malformed(json{{"calibrations", {{{"dtype", 64}, {"threads", 2}}}}}, "malformed calibration for f64");
  write_text_atomic(dir / "machine.rtamm_calibration.json", "{\"schema\": ");
  try {
    load_units(m, "f64", 2);
    FAIL() << "a truncated calibration file was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("machine.rtamm_calibration.json is not valid JSON"), std::string::npos)
        << e.what();
  }
  fs::remove_all(dir);
}

TEST(RtammUnits, MicroBenchmarkGivesPositiveCosts) {
  const Caches c{32768, 262144, 1 << 20, "test"};
  // A pool triple must be a multiple of this CPU's micro-kernel tile (as check_pool requires).
  const auto uk = gemm::ukernel<double>(best_isa());
  const Block blk{3 * int64_t(uk.mr), 2 * int64_t(uk.nr), 64};
  ASSERT_NO_THROW(check_pool({blk}, {8, uk.mr, uk.nr, c}));
  const Units u = measure_units({blk}, c, DType::f64, 1);
  ASSERT_EQ(u.blocks.size(), 1u);
  const BlockUnits& b = u.blocks[0];
  for (int l = 0; l < kLevels; ++l) {
    EXPECT_GT(b.load_a[l], 0);
    EXPECT_GT(b.store_c[l], 0);
    EXPECT_GE(b.rho[l], 0);
    EXPECT_LE(b.rho[l], 1);
  }
  EXPECT_GT(b.op_kernel, 0);
  EXPECT_GT(b.call_ns + b.k_ns, 0);
}

TEST(RtammFamily, NamesVerifyAndBadInput) {
  // Blocking factors valid for this CPU's micro-kernel (MR x NR of its best ISA): 2 MR x 2 NR
  // gives several blocks of 37x53x29 in M and N; MR + 1 is a multiple of no MR (all are > 1).
  const auto uk = gemm::ukernel<double>(best_isa());
  ASSERT_GT(uk.mr, 1);
  const std::string mcg = std::to_string(2 * uk.mr), ncg = std::to_string(2 * uk.nr);
  const Case ok =
      parse_case_name("rtamm/nkm/f64/37x53x29/mcg:" + mcg + "/ncg:" + ncg + "/kcg:16/ahead:abc/ld:+3/threads:2");
  ASSERT_NO_THROW(validate_case(ok));
  auto inst = variant_of(ok).make(ok);
  const Verification v = inst->verify();
  EXPECT_TRUE(v.ok) << v.detail;
  const Case st = parse_case_name("rtamm/static/f32/45x31x77/threads:1");
  ASSERT_NO_THROW(validate_case(st));
  EXPECT_TRUE(variant_of(st).make(st)->verify().ok);
  EXPECT_THROW(validate_case(parse_case_name("rtamm/mnk/f64/37x53x29/mcg:" + std::to_string(uk.mr + 1) + "/threads:1")),
               Error);
  EXPECT_THROW(validate_case(parse_case_name("rtamm/mnk/f64/37x53x29/ncg:" + std::to_string(uk.nr + 1) + "/threads:1")),
               Error);
  EXPECT_THROW(validate_case(parse_case_name("rtamm/mnk/f64/37x53x29/ahead:maybe/threads:1")), Error);
  EXPECT_THROW(validate_case(parse_case_name("rtamm/static/f64/37x53x29/mcg:12/threads:1")), Error);
  EXPECT_THROW(validate_case(parse_case_name("rtamm/zzz/f64/37x53x29/threads:1")), Error);
  EXPECT_THROW(validate_case(parse_case_name("rtamm/mnk/f64/37x53/threads:1")), Error);
  // adaptive without unit costs names the command that measures them.
  unsetenv("ROOFLAB_MACHINE");
  const Case ad = parse_case_name("rtamm/adaptive/f64/37x53x29/threads:1");
  try {
    variant_of(ad).make(ad);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rooflab rtamm units"), std::string::npos);
  }
  // ... and with them picks a plan and verifies.
  const std::vector<Block> pool = {{uk.mr * 2, uk.nr * 2, 16}, {uk.mr * 4, uk.nr * 8, 64}};
  Units u = flat_units(uk.mr, uk.nr, pool, 0.5);
  u.caches = {32768, 370752, 16777216, "test"};
  u.dtype = "f64", u.threads = 1, u.isa = run_isa();
  const json m = {{"schema", "rooflab.machine/1"}, {"host", this_cpu()}, {"rtamm", {{"units", json::array({to_json(u)})}}}};
  const fs::path f = temp_file("adaptive.json", m);
  {
    const ScopedEnv machine("ROOFLAB_MACHINE", f.string());
    EXPECT_TRUE(variant_of(ad).make(ad)->verify().ok);
    // Its memory: the matrices (no full reference above 2^27 m*n*k) and the scratch of the
    // engine's largest plan (it runs whichever it chooses), the pool's larger block here, not the
    // static plan's.
    const Case big = parse_case_name("rtamm/adaptive/f64/2000x1000x3000/threads:1");
    const int64_t b = pool[1].mcg * 64 + 64 * pool[1].ncg + pool[1].mcg * pool[1].ncg;
    EXPECT_EQ(find_family("rtamm")->memory_bytes(big), size_t(8 * (2000 * 3000 + 3000 * 1000 + 2 * 2000 * 1000 + 2 * b)));
  }
  fs::remove(f);
  // The family's quick profile lists every order, equivalent ones included.
  const Family* fam = find_family("rtamm");
  ASSERT_NE(fam, nullptr);
  EXPECT_EQ(fam->cases("quick").size(), 6u * 3u + 1u);
}

TEST(RtammEvaluate, ShapesCoverTheSixCategories) {
  const auto shapes = make_shapes(120, {});
  std::map<std::string, int> per;
  for (const Shape& s : shapes) {
    ++per[s.category];
    const bool aligned = s.category.back() == 'A' && s.category.substr(s.category.size() - 2) != "NA";
    for (int64_t x : {s.d.m, s.d.n, s.d.k}) {
      EXPECT_GE(x, 1);
      if (aligned) EXPECT_EQ(x % 16, 0) << s.category;
      else EXPECT_NE(x % 8, 0) << s.category;
    }
    if (aligned) EXPECT_EQ(s.d.lda, s.d.k);
    else EXPECT_GT(s.d.lda, s.d.k);
    EXPECT_NO_THROW(gemm::check_dims(s.d));
  }
  ASSERT_EQ(per.size(), 6u);
  for (const auto& [c, n] : per) EXPECT_EQ(n, 20) << c;
  // A ratio of up to 10 between the scaled dimension and the others.
  double rmax = 0;
  for (const Shape& s : shapes) {
    const double hi = double(std::max({s.d.m, s.d.n, s.d.k})), lo = double(std::min({s.d.m, s.d.n, s.d.k}));
    rmax = std::max(rmax, hi / lo);
  }
  EXPECT_GT(rmax, 7);
}

// The miss rule on synthetic timings: ABBA rounds cancel a linear drift of the machine's speed,
// the median ignores a disturbed round, quiet rounds are preferred when there are enough, the
// interval is the sign test's order statistics, and the class follows the interval.
TEST(RtammEvaluate, RemeasuredRatioCancelsDriftAndClassifiesMisses) {
  // Chosen 1.03x the oracle; the machine slows by 2% per sample (c1 o1 o2 c2 in time order).
  std::vector<double> c1, o1, o2, c2;
  double t = 1.0;
  for (int k = 0; k < 8; ++k) {
    c1.push_back(1.03 * t), t *= 1.02;
    o1.push_back(1.00 * t), t *= 1.02;
    o2.push_back(1.00 * t), t *= 1.02;
    c2.push_back(1.03 * t), t *= 1.02;
  }
  PairedRatio r = paired_ratio(c1, o1, o2, c2);
  EXPECT_EQ(r.rounds, 8u);
  EXPECT_EQ(r.used, 8u);
  EXPECT_NEAR(r.median, 1.03, 0.002);  // c1 o1 only (no ABBA) would read 1.03 / 1.02 = 1.01
  EXPECT_LE(r.lo, r.median);
  EXPECT_GE(r.hi, r.median);
  EXPECT_EQ(miss_class(r, 1.05), "hit");
  // One round disturbed 3x on the chosen plan: the median does not move past the threshold.
  c1[3] *= 3;
  r = paired_ratio(c1, o1, o2, c2);
  EXPECT_NEAR(r.median, 1.03, 0.003);
  EXPECT_EQ(miss_class(r, 1.05), "hit");
  // Clearly slower (1.10x in every round): a miss beyond noise.
  std::vector<double> one(8, 1.0), slow(8, 1.10);
  r = paired_ratio(slow, one, one, slow);
  EXPECT_NEAR(r.median, 1.10, 1e-12);
  EXPECT_EQ(miss_class(r, 1.05), "miss_model");
  // Median above 5% but rounds on both sides of it: a miss within noise.
  const std::vector<double> mixed = {1.00, 1.02, 1.04, 1.06, 1.07, 1.08, 1.12, 1.20};
  r = paired_ratio(mixed, one, one, mixed);
  EXPECT_GT(r.median, 1.05);
  EXPECT_LE(r.lo, 1.05);
  EXPECT_EQ(r.lo, 1.02);  // n = 8: the 2nd and 7th order statistics (>= 90%)
  EXPECT_EQ(r.hi, 1.12);
  EXPECT_EQ(miss_class(r, 1.05), "miss_noise");
  // Quiet rounds preferred when at least 5 are quiet: the three loud ones (slow) are dropped.
  std::vector<double> c = {1.0, 1.0, 1.0, 1.0, 1.0, 1.5, 1.5, 1.5};
  std::vector<bool> quiet = {true, true, true, true, true, false, false, false};
  r = paired_ratio(c, one, one, c, quiet);
  EXPECT_EQ(r.quiet_rounds, 5u);
  EXPECT_EQ(r.used, 5u);
  EXPECT_DOUBLE_EQ(r.median, 1.0);
  // ... but all rounds when fewer are quiet.
  quiet = {true, true, false, false, false, false, false, false};
  r = paired_ratio(c, one, one, c, quiet);
  EXPECT_EQ(r.used, 8u);
  // Too few rounds for an interval: a median above the threshold is a miss within noise.
  r = paired_ratio({1.2, 1.2}, {1.0, 1.0}, {1.0, 1.0}, {1.2, 1.2});
  EXPECT_TRUE(std::isnan(r.lo));
  EXPECT_EQ(miss_class(r, 1.05), "miss_noise");
  EXPECT_THROW(paired_ratio({1.0}, {1.0, 1.0}, {1.0}, {1.0}), Error);
}

TEST(RtammEvaluate, PairedRunsSizeEveryPlanByTheFastest) {
  // 8 us and 40 us warm runs, 0.5 ms samples: 63 runs for both (the fastest sizes them), so a
  // fixed per-sample cost is spread over the same number of runs in each plan's samples.
  EXPECT_EQ(paired_runs({8e-6, 40e-6}, 5e-4), 63);
  EXPECT_EQ(paired_runs({40e-6, 8e-6}, 5e-4), 63);
  EXPECT_EQ(paired_runs({1e-3, 2e-3}, 5e-4), 1);  // runs longer than a sample: one
  EXPECT_EQ(paired_runs({0.0, -1.0, 1e-4}, 5e-4), 5);  // unknown times ignored
  EXPECT_EQ(paired_runs({}, 5e-4), 1);
  EXPECT_EQ(paired_runs({1e-5}, 0), 1);
}

TEST(RtammEvaluate, PlanDifferenceNamesTheDimensions) {
  const Plan a{Order::mnk, {96, 240, 64}, Ahead::ab};
  EXPECT_EQ(plan_difference(a, a), "same");
  EXPECT_EQ(plan_difference(a, {Order::nmk, {96, 240, 64}, Ahead::ab}), "same");  // one cost class
  EXPECT_EQ(plan_difference(a, {Order::mkn, {96, 240, 64}, Ahead::ab}), "order");
  EXPECT_EQ(plan_difference(a, {Order::mnk, {96, 240, 128}, Ahead::abc}), "triple+ahead");
  EXPECT_EQ(plan_difference(a, {Order::nkm, {48, 240, 64}, Ahead::none}), "order+triple+ahead");
}

// The summary counts raw and re-measured accuracy side by side: a raw miss the re-measurement
// clears, a raw hit it turns into a miss, misses beyond and within noise, per plan difference.
TEST(RtammEvaluate, SummaryReportsRawAndRemeasuredAccuracy) {
  auto rec = [](double tc, double to, const char* cls, json rm, const char* diff) {
    return json{{"category", "SMA"}, {"m", 64}, {"n", 64}, {"k", 64},
                {"retimed_ns", {{"chosen", tc}, {"oracle", to}, {"static", 1.1 * to}}},
                {"measured_ns", {to, tc}}, {"predicted_ns", {to, tc}}, {"decision_ns", 10.0},
                {"repeatability", 0.02}, {"quiet_fraction", 1.0}, {"plan_difference", diff},
                {"miss_class", cls}, {"remeasured", rm}};
  };
  json shapes = json::array();
  shapes.push_back(rec(100, 100, "hit", nullptr, "same"));                             // chosen = oracle
  shapes.push_back(rec(110, 100, "hit", {{"ratio", 1.01}}, "ahead"));                  // raw miss, cleared
  shapes.push_back(rec(103, 100, "miss_noise", {{"ratio", 1.06}}, "triple"));          // raw hit, now a miss
  shapes.push_back(rec(120, 100, "miss_model", {{"ratio", 1.15}}, "order+triple"));    // miss both ways
  const json s = summarize(shapes, "");
  EXPECT_DOUBLE_EQ(s["decision_accuracy"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(s["decision_accuracy_remeasured"].get<double>(), 0.5);
  const json& r = s["remeasured"];
  EXPECT_EQ(r["shapes_remeasured"], 3);
  EXPECT_EQ(r["misses"], 2);
  EXPECT_EQ(r["misses_model"], 1);
  EXPECT_EQ(r["misses_noise"], 1);
  EXPECT_EQ(r["raw_misses_now_hits"], 1);
  EXPECT_EQ(r["raw_hits_now_misses"], 1);
  EXPECT_NEAR(r["mean_loss_vs_oracle"].get<double>(), (0 + 0.01 + 0.06 + 0.15) / 4, 1e-12);
  EXPECT_EQ(r["misses_by_plan_difference"], json({{"triple", 1}, {"order+triple", 1}}));
  EXPECT_EQ(s["misses_by_plan_difference"], json({{"ahead", 1}, {"order+triple", 1}}));
  // A record without its class (a rescored or older file): no re-measured accuracy at all.
  shapes[0].erase("miss_class");
  EXPECT_TRUE(summarize(shapes, "")["decision_accuracy_remeasured"].is_null());
}

// rtamm cases name no ISA but run gemm/blocked's default ISA's micro-kernel (without a calibration
// the widest): bench.json says which ("runs_isa"), so the model prices them against that ISA's
// ceilings; a case with its own ISA gets no field.
TEST(RtammRegistry, CasesRecordTheIsaTheyRun) {
  const Case c = parse_case_name("rtamm/static/f64/131x97x67/threads:1");
  ASSERT_EQ(c.isa, Isa::none);
  EXPECT_EQ(runs_isa(c), best_isa());
  EXPECT_EQ(case_fields(c).value("runs_isa", ""), std::string(to_string(best_isa())));
  const Case g = parse_case_name("gemm/blocked/avx2/f64/64x64x64/threads:1");
  EXPECT_EQ(runs_isa(g), Isa::avx2);
  EXPECT_FALSE(case_fields(g).contains("runs_isa"));
  // With an ISA calibration that chose scalar for gemm/blocked f64, rtamm f64 runs (and verifies
  // with) the scalar micro-kernel; f32 keeps the widest.
  if (best_isa() == Isa::scalar) return;
  const nlohmann::json entry = {{"family", "gemm"}, {"variant", "blocked"}, {"dtype", "f64"},
                                {"isas", {{"scalar", {{"median_s", 0.1}}}, {std::string(to_string(best_isa())), {{"median_s", 1.0}}}}}};
  use_isa_choice({{"isa_choice", {{"cpu", cpu_signature()}, {"entries", nlohmann::json::array({entry})}}}});
  EXPECT_EQ(runs_isa(c), Isa::scalar);
  EXPECT_EQ(rtamm::kernel_isa(DType::f64), Isa::scalar);
  EXPECT_EQ(runs_isa(parse_case_name("rtamm/static/f32/131x97x67/threads:1")), best_isa());
  auto inst = variant_of(c).make(c);
  EXPECT_TRUE(inst->verify().ok);
  use_isa_choice(nlohmann::json::object());
  EXPECT_EQ(runs_isa(c), best_isa());
}

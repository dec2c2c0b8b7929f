// `rooflab rtamm evaluate`: the paper's Table 3 / 4 on this machine. For each shape of the six
// categories every plan is run, verified (one Freivalds vector, exact) and timed (the oracle);
// the adaptive engine's choice, the static plan and the oracle's best are compared.
#include "apps/rtamm/evaluate.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "harness/diagnostics.hpp"
#include "harness/error.hpp"
#include "harness/measure.hpp"
#include "harness/progress.hpp"
#include "kernels/rtamm/exec.hpp"
#include "kernels/rtamm/problem.hpp"

namespace rooflab::rtamm {
namespace {
using clk = std::chrono::steady_clock;
double seconds_since(clk::time_point t0) { return std::chrono::duration<double>(clk::now() - t0).count(); }

const char* kCats[6] = {"SMA", "SMNA", "MMA", "MMNA", "BMA", "BMNA"};
constexpr double kThreshold = 1.05;  // the target's "within 5% of the oracle"

}  // namespace

std::vector<Shape> make_shapes(size_t count, const ShapeConfig& cfg) {
  std::vector<Shape> v;
  for (size_t idx = 0; idx < count; ++idx) {
    const int cat = int(idx % 6);
    const uint64_t i = idx / 6;
    const int64_t base = cfg.base[cat / 2];
    const bool aligned = cat % 2 == 0;
    const int64_t r = 1 + int64_t(i % 10);  // the ratio of the scaled dimension to the others
    const int scaled = int((i / 10) % 3);   // which of M, N, K is scaled
    int64_t dims[3];
    for (int t = 0; t < 3; ++t) {
      // jitter in [0.8, 1.25): shapes between the grid points
      const double jit = 0.8 + 0.45 * double(detail::mix(cfg.seed * 131 + idx * 7 + uint64_t(t)) % 1000) / 1000.0;
      double x = double(base) * jit * (t == scaled ? double(r) : 1.0);
      int64_t dmn = std::max<int64_t>(1, int64_t(std::llround(x)));
      if (aligned) dmn = std::max<int64_t>(16, (dmn + 8) / 16 * 16);
      else if (dmn % 8 == 0) dmn += 1 + int64_t(detail::mix(idx * 3 + uint64_t(t)) % 7);
      dims[t] = dmn;
    }
    Shape s;
    s.category = kCats[cat];
    s.d.m = dims[0], s.d.n = dims[1], s.d.k = dims[2];
    const int64_t pad = aligned ? 0 : 1 + int64_t(detail::mix(cfg.seed + idx) % 7);
    s.d.lda = s.d.k + pad, s.d.ldb = s.d.n + pad, s.d.ldc = s.d.n + pad;
    v.push_back(s);
  }
  return v;
}

namespace {
double mean(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? NAN : s / double(v.size());
}
double vmax(const std::vector<double>& v) { return v.empty() ? NAN : *std::max_element(v.begin(), v.end()); }
double median(std::vector<double> v) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}
double percentile(std::vector<double> v, double q) {
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, size_t(q * double(v.size())))];
}
json num(double x) { return std::isfinite(x) ? json(x) : json(nullptr); }

// Sign-test rank j (1-based): the largest j with P(Binom(n, 1/2) <= j - 1) <= 5%, so that
// [x_(j), x_(n+1-j)] covers the median with >= 90%; 0 when n is too small for any.
size_t sign_test_rank(size_t n) {
  size_t j = 0;
  double cdf = 0, pmf = std::ldexp(1.0, -int(n));  // P(X = 0)
  for (size_t i = 0; i < n / 2; ++i) {
    cdf += pmf;
    if (cdf > 0.05) break;
    j = i + 1;
    pmf = pmf * double(n - i) / double(i + 1);
  }
  return j;
}
}  // namespace

PairedRatio paired_ratio(const std::vector<double>& c1, const std::vector<double>& o1, const std::vector<double>& o2,
                         const std::vector<double>& c2, const std::vector<bool>& quiet) {
  const size_t n = c1.size();
  if (o1.size() != n || o2.size() != n || c2.size() != n || (!quiet.empty() && quiet.size() != n))
    throw Error("rtamm paired_ratio: the rounds' sample lists differ in length");
  PairedRatio r;
  r.rounds = n;
  std::vector<double> all, q;
  for (size_t k = 0; k < n; ++k) {
    const double x = (c1[k] + c2[k]) / (o1[k] + o2[k]);
    if (!std::isfinite(x)) continue;
    all.push_back(x);
    if (quiet.empty() || quiet[k]) q.push_back(x);
  }
  r.quiet_rounds = q.size();
  std::vector<double>& v = q.size() >= 5 ? q : all;  // noisy rounds only when too few are quiet
  r.used = v.size();
  if (v.empty()) return r;
  std::sort(v.begin(), v.end());
  r.median = measure::quantile(v, 0.5);
  if (const size_t j = sign_test_rank(v.size()); j > 0) r.lo = v[j - 1], r.hi = v[v.size() - j];
  return r;
}

std::string miss_class(const PairedRatio& r, double threshold) {
  if (!(r.median > threshold)) return std::isfinite(r.median) ? "hit" : "miss_noise";
  return r.lo > threshold ? "miss_model" : "miss_noise";
}

int64_t paired_runs(const std::vector<double>& warm_run_s, double min_sample_s) {
  double t = INFINITY;
  for (double x : warm_run_s)
    if (x > 0 && x < t) t = x;
  if (!(min_sample_s > 0) || !std::isfinite(t)) return 1;
  return std::max<int64_t>(1, int64_t(std::ceil(min_sample_s / t)));
}

std::string plan_difference(const Plan& a, const Plan& b) {
  std::string s;
  auto add = [&](const char* w) {
    if (!s.empty()) s += '+';
    s += w;
  };
  if (canonical(a.order) != canonical(b.order)) add("order");
  if (!(a.b == b.b)) add("triple");
  if (a.ahead != b.ahead) add("ahead");
  return s.empty() ? "same" : s;
}

// Accuracy, gains, losses, overhead over the shapes' records (j["shapes"]).
json summarize(const json& shapes, const std::string& category) {
  std::vector<double> gain, loss, oracle_gain, ovh, ovh_big, relerr, repeat;
  size_t n = 0, accurate = 0, nq = 0, accurate_q = 0, accurate_noise = 0, in_training = 0;
  int table[6] = {};  // adaptive vs static speed ratio > 1.05, < 0.95, > 1.25, < 0.75, > 1.5, < 0.5
  // The re-measured rule (paired_ratio / miss_class): present when every record has its class.
  bool have_re = true;
  size_t re_hits = 0, re_shapes = 0, miss_model = 0, miss_noise = 0, raw_miss_to_hit = 0, raw_hit_to_miss = 0;
  std::vector<double> loss_re;
  json diff_raw = json::object(), diff_re = json::object();
  auto bump = [](json& o, const std::string& k) { o[k] = o.value(k, 0) + 1; };
  for (const json& s : shapes) {
    if (!category.empty() && s["category"] != category) continue;
    const auto& t = s["measured_ns"];
    const auto& r = s["retimed_ns"];
    const double tc = r["chosen"], to = r["oracle"], ts = r["static"];
    ++n;
    const bool raw_hit = tc <= 1.05 * to;
    if (raw_hit) ++accurate;
    const std::string diff = s.value("plan_difference", "");
    if (!raw_hit && !diff.empty()) bump(diff_raw, diff);
    if (!s.contains("miss_class") || !s["miss_class"].is_string()) {
      have_re = false;
    } else {
      const std::string cls = s["miss_class"];
      const bool hit = cls == "hit";
      re_hits += hit, miss_model += cls == "miss_model", miss_noise += cls == "miss_noise";
      raw_miss_to_hit += !raw_hit && hit, raw_hit_to_miss += raw_hit && !hit;
      if (!hit && !diff.empty()) bump(diff_re, diff);
      const json& rm = s.contains("remeasured") ? s["remeasured"] : json();
      if (rm.is_object() && rm["ratio"].is_number()) {
        ++re_shapes;
        loss_re.push_back(std::max(0.0, rm["ratio"].get<double>() - 1));
      } else {
        loss_re.push_back(tc / to - 1);
      }
    }
    // Noise-aware: within max(5%, the shape's measured repeatability) of the oracle (a second
    // number next to the strict one, never instead of it).
    const double rep = s.contains("repeatability") && s["repeatability"].is_number() ? s["repeatability"].get<double>() : NAN;
    if (std::isfinite(rep)) repeat.push_back(rep), accurate_noise += tc <= (1 + std::max(0.05, rep)) * to;
    in_training += s.value("in_calibration_training_set", false);
    if (s.value("quiet_fraction", 0.0) >= 0.9) ++nq, accurate_q += tc <= 1.05 * to;
    gain.push_back(ts / tc - 1), loss.push_back(tc / to - 1), oracle_gain.push_back(ts / to - 1);
    const double o = s["decision_ns"].get<double>() / tc;
    ovh.push_back(o);
    const double mnk = s["m"].get<double>() * s["n"].get<double>() * s["k"].get<double>();
    if (mnk >= 256.0 * 256 * 256) ovh_big.push_back(o);
    const double ratio = ts / tc;
    const double th[3] = {1.05, 1.25, 1.5};
    for (int q = 0; q < 3; ++q) table[2 * q] += ratio > th[q], table[2 * q + 1] += ratio < 2 - th[q];
    for (size_t i = 0; i < t.size(); ++i)
      relerr.push_back(std::fabs(s["predicted_ns"][i].get<double>() / t[i].get<double>() - 1));
  }
  json j = {{"shapes", n},
            {"decision_accuracy", n ? double(accurate) / double(n) : NAN},
            {"quiet_shapes", nq},  // >= 90% of the shape's samples quiet
            {"decision_accuracy_quiet_shapes", nq ? json(double(accurate_q) / double(nq)) : json(nullptr)},
            {"decision_accuracy_noise_aware",
             repeat.size() == n && n ? json(double(accurate_noise) / double(n)) : json(nullptr)},
            {"median_repeatability", num(median(repeat))},
            {"p90_repeatability", num(percentile(repeat, 0.9))},
            {"shapes_in_calibration_training_set", in_training},
            {"mean_gain_over_static", num(mean(gain))},
            {"max_gain_over_static", num(vmax(gain))},
            {"mean_oracle_gain_over_static", num(mean(oracle_gain))},
            {"mean_loss_vs_oracle", num(mean(loss))},
            {"max_loss_vs_oracle", num(vmax(loss))},
            {"median_loss_vs_oracle", num(median(loss))},
            {"median_gain_over_static", num(median(gain))},
            {"mean_decision_overhead", num(mean(ovh))},
            {"mean_decision_overhead_ge_256cubed", num(mean(ovh_big))},
            {"max_decision_overhead_ge_256cubed", num(vmax(ovh_big))},
            {"shapes_ge_256cubed", ovh_big.size()},
            {"median_abs_prediction_error", num(median(relerr))},
            {"vs_static", {{">1.05", table[0]}, {"<0.95", table[1]}, {">1.25", table[2]}, {"<0.75", table[3]},
                           {">1.5", table[4]}, {"<0.5", table[5]}}}};
  if (!j["decision_accuracy"].is_number() || !std::isfinite(j["decision_accuracy"].get<double>())) j["decision_accuracy"] = nullptr;
  j["misses_by_plan_difference"] = diff_raw;  // raw misses: which of order / triple / ahead differ
  if (have_re && n) {
    j["decision_accuracy_remeasured"] = double(re_hits) / double(n);
    j["remeasured"] = {{"shapes_remeasured", re_shapes},       {"misses", n - re_hits},
                       {"misses_model", miss_model},           {"misses_noise", miss_noise},
                       {"raw_misses_now_hits", raw_miss_to_hit}, {"raw_hits_now_misses", raw_hit_to_miss},
                       {"mean_loss_vs_oracle", num(mean(loss_re))}, {"max_loss_vs_oracle", num(vmax(loss_re))},
                       {"misses_by_plan_difference", diff_re}};
  } else {
    j["decision_accuracy_remeasured"] = nullptr;  // not re-measured (rescored, or an older file)
  }
  return j;
}

namespace {
// Every plan: one run from C0, verified (one exact Freivalds vector; failures appended), then
// timed round robin (sample s of every plan before sample s + 1 of any), so that a burst of load
// on this shared machine hits all plans alike. Quiet samples count; a plan with none keeps its
// best noisy one. Besides the best of all samples, the best of the even and of the odd samples:
// two independent measurements of the same plan (the repeatability).
struct Timed {
  std::vector<double> best, half[2];
  int64_t samples = 0, quiet = 0;
};
Timed time_plans(const std::vector<Plan>& ps, int samples, const gemm::Ukernel<double>& uk,
                 detail::Problem<double>& prob, double* work, const EvalOptions& opt, json& failures, size_t si,
                 bool same_runs = false) {
  const gemm::Dims& d = prob.d;
  const size_t n = ps.size();
  auto run = [&](const Plan& p) { run_plan(p, uk, d, prob.A.data(), prob.B.data(), prob.C.data(), work); };
  // The verification run of each plan also says how many runs make a sample of min_sample_s.
  std::vector<measure::Batch> batches;
  std::vector<double> first(n);
  for (size_t i = 0; i < n; ++i) {
    prob.reset();
    run(ps[i]);
    const Verification v = prob.check(false, 1);
    if (!v.ok) failures.push_back({{"shape", si}, {"plan", plan_id(ps[i])}, {"detail", v.detail}});
    // The verification run can be cold (workspace pages touched first, caches holding another
    // plan's buffers): sized from it, a small shape's samples were single runs, each paying the
    // switch from the previous plan. A second, warm run sizes them.
    const auto tf = clk::now();
    run(ps[i]);
    first[i] = seconds_since(tf);
  }
  for (size_t i = 0; i < n; ++i)
    batches.push_back([&, i](int64_t runs, bool) {
      const auto t0 = clk::now();
      for (int64_t r = 0; r < runs; ++r) run(ps[i]);
      return seconds_since(t0);
    });
  measure::Policy p;
  p.repetitions = samples;
  p.min_time_s = opt.min_sample_s;  // runs per sample: ceil(min_sample_s / the plan's first run)
  // Plans compared head to head: the same runs per sample for all (paired_runs).
  if (same_runs) p.runs_per_sample = paired_runs(first, opt.min_sample_s);
  p.warmup = 0;                     // the verification run was the warm-up
  p.quiet.threads = omp_get_max_threads();
  // Bounded per round (opt.wait_quiet_s) and in total (the command's diag::quiet_budget).
  p.quiet.wait_s = opt.wait_quiet_s;
  const std::vector<measure::Result> rs = measure::measure_round_robin(batches, p, first);
  // Besides the best of all samples, the best of the even and of the odd samples: two
  // independent measurements of the same plan (the repeatability).
  Timed out;
  out.best.resize(n);
  for (int h = 0; h < 2; ++h) out.half[h].resize(n);
  for (size_t i = 0; i < n; ++i) {
    measure::Result half[2];
    for (size_t k = 0; k < rs[i].samples.size(); ++k) half[k % 2].samples.push_back(rs[i].samples[k]);
    for (int h = 0; h < 2; ++h) out.half[h][i] = half[h].best() * 1e9;  // ns
    out.best[i] = rs[i].best() * 1e9;
    out.samples += int64_t(rs[i].samples.size());
    out.quiet += int64_t(rs[i].quiet_count());
  }
  return out;
}

// Chosen vs oracle again (paired_ratio's ABBA rounds): a warm-up and a timed run of each (the
// timed ones size the samples, paired_runs), then `rounds` rounds of the batches chosen, oracle,
// oracle, chosen.
PairedRatio remeasure(const Plan& chosen, const Plan& oracle, int rounds, const gemm::Ukernel<double>& uk,
                      detail::Problem<double>& prob, double* work, const EvalOptions& opt, int64_t& samples,
                      int64_t& quiet) {
  const gemm::Dims& d = prob.d;
  const Plan* ps[2] = {&chosen, &oracle};
  std::vector<double> warm(2);
  for (int i = 0; i < 2; ++i) {
    run_plan(*ps[i], uk, d, prob.A.data(), prob.B.data(), prob.C.data(), work);
    const auto t0 = clk::now();
    run_plan(*ps[i], uk, d, prob.A.data(), prob.B.data(), prob.C.data(), work);
    warm[i] = seconds_since(t0);
  }
  std::vector<measure::Batch> batches;
  for (int i : {0, 1, 1, 0})
    batches.push_back([&, i](int64_t runs, bool) {
      const auto t0 = clk::now();
      for (int64_t r = 0; r < runs; ++r) run_plan(*ps[i], uk, d, prob.A.data(), prob.B.data(), prob.C.data(), work);
      return seconds_since(t0);
    });
  measure::Policy p;
  p.repetitions = rounds;
  p.runs_per_sample = paired_runs(warm, opt.min_sample_s);
  p.warmup = 0;
  p.quiet.threads = omp_get_max_threads();
  p.quiet.wait_s = opt.wait_quiet_s;
  const std::vector<measure::Result> rs = measure::measure_round_robin(batches, p);
  std::vector<double> v[4];
  std::vector<bool> q;
  const size_t k = std::min({rs[0].samples.size(), rs[1].samples.size(), rs[2].samples.size(), rs[3].samples.size()});
  for (size_t r = 0; r < k; ++r) {
    bool all_quiet = true;
    for (int b = 0; b < 4; ++b) v[b].push_back(rs[size_t(b)].samples[r].seconds), all_quiet &= rs[size_t(b)].samples[r].quiet;
    q.push_back(all_quiet);
  }
  for (int b = 0; b < 4; ++b) samples += int64_t(rs[size_t(b)].samples.size()), quiet += int64_t(rs[size_t(b)].quiet_count());
  return paired_ratio(v[0], v[1], v[2], v[3], q);
}
}  // namespace

std::vector<std::vector<double>> sweep(const std::vector<Plan>& plans, const std::vector<Shape>& shapes,
                                       const EvalOptions& opt, json& failures) {
  const gemm::Ukernel<double> uk = gemm::ukernel<double>(kernel_isa(DType::f64));
  int64_t wmax = 0;
  for (const Plan& p : plans) wmax = std::max(wmax, workspace(p, uk.mr, uk.nr));
  AlignedBuffer<double> work(static_cast<size_t>(wmax));
  std::vector<std::vector<double>> t;
  Progress prog("rtamm sweep", shapes.size());
  for (size_t si = 0; si < shapes.size(); ++si) {
    const gemm::Dims& d = shapes[si].d;
    if (si % opt.progress_every == 0)
      prog.start(si, shapes[si].category + " " + std::to_string(d.m) + "x" + std::to_string(d.n) + "x" +
                         std::to_string(d.k));
    detail::Problem<double> prob(d);
    t.push_back(time_plans(plans, opt.samples, uk, prob, work.data(), opt, failures, si).best);
  }
  prog.done();
  return t;
}

json evaluate(const Engine& engine, const Plan& stat, const std::vector<Shape>& shapes, const EvalOptions& opt) {
  const auto& plans = engine.plans();
  const auto sit = std::find_if(plans.begin(), plans.end(), [&](const Plan& p) { return plan_id(p) == plan_id(stat); });
  if (sit == plans.end()) throw Error("rtamm evaluate: the static plan " + plan_id(stat) + " is not among the plans");
  const size_t static_idx = size_t(sit - plans.begin());
  const gemm::Ukernel<double> uk = gemm::ukernel<double>(kernel_isa(DType::f64));
  if (uk.mr != engine.units().mr || uk.nr != engine.units().nr)
    throw Error("rtamm evaluate: the unit costs were measured with a " + std::to_string(engine.units().mr) + "x" +
                std::to_string(engine.units().nr) + " micro-kernel, this build uses " + std::to_string(uk.mr) + "x" +
                std::to_string(uk.nr) + " (rerun `rooflab rtamm units`)");
  int64_t wmax = 0;
  for (const Plan& p : plans) wmax = std::max(wmax, workspace(p, uk.mr, uk.nr));
  for (Order o : all_orders())  // the equivalence check runs the other orders with the static triple
    wmax = std::max(wmax, workspace({o, stat.b, stat.ahead}, uk.mr, uk.nr));
  AlignedBuffer<double> work(static_cast<size_t>(wmax));
  // A calibrated engine must not be scored on its own training shapes: each record says whether
  // its shape is one of them (the summary counts them; `rooflab rtamm calibrate` excludes the
  // evaluation's shapes, so 0 is expected).
  std::vector<std::vector<int64_t>> training;
  const json& prov = engine.units().calib.provenance;
  if (prov.contains("training_dims"))
    for (const json& t : prov["training_dims"]) training.push_back(t.get<std::vector<int64_t>>());
  auto in_training = [&](const gemm::Dims& d) {
    const std::vector<int64_t> key = {d.m, d.n, d.k, d.lda, d.ldb, d.ldc};
    return std::find(training.begin(), training.end(), key) != training.end();
  };

  json plan_list = json::array();
  for (const Plan& p : plans)
    plan_list.push_back({{"id", plan_id(p)}, {"order", to_string(p.order)}, {"mcg", p.b.mcg}, {"ncg", p.b.ncg},
                         {"kcg", p.b.kcg}, {"ahead", to_string(p.ahead)}});
  json out = {{"schema", "rooflab.rtamm/1"},
              {"created", utc_timestamp()},
              {"complete", false},
              {"config", opt.config},
              {"plans", plan_list},
              {"static_plan", static_idx},
              {"shapes", json::array()},
              {"equivalent_orders", json::array()},
              {"failures", json::array()}};
  if (opt.remeasure_rounds > 0)
    out["remeasure"] = {
        {"method", "where the chosen plan is not the sweep's oracle, both re-timed in rounds of four samples "
                   "chosen, oracle, oracle, chosen (ABBA), the same runs per sample for both (sized by the "
                   "faster plan's warm run); ratio = median over rounds of (c1 + c2) / (o1 + o2) (quiet "
                   "rounds when >= 5); interval: sign-test order statistics, >= 90%; hit: ratio <= threshold; "
                   "miss_model: the interval above it; miss_noise: the rest"},
        {"rounds", opt.remeasure_rounds}, {"threshold", kThreshold}, {"confidence", 0.9}};
  Progress prog("rtamm evaluate", shapes.size());
  const auto t_start = clk::now();
  for (size_t si = 0; si < shapes.size(); ++si) {
    const Shape& sh = shapes[si];
    const gemm::Dims& d = sh.d;
    if (si % opt.progress_every == 0)
      prog.start(si, sh.category + " " + std::to_string(d.m) + "x" + std::to_string(d.n) + "x" + std::to_string(d.k));
    detail::Problem<double> prob(d);
    int64_t total_samples = 0, quiet_samples = 0;
    // The decision: every plan's formula, timed over many calls.
    size_t chosen = 0;
    measure::Policy dp;
    dp.repetitions = 1;
    dp.runs_per_sample = 200;
    dp.warmup = 0;
    dp.quiet.mark = false;
    const double decision_ns = measure::measure([&] { chosen = engine.choose(d); }, dp).best() * 1e9;

    const Timed sw = time_plans(plans, opt.samples, uk, prob, work.data(), opt, out["failures"], si);
    const std::vector<double>& t = sw.best;
    total_samples += sw.samples, quiet_samples += sw.quiet;
    json measured = json::array(), predicted = json::array();
    size_t oracle = 0;
    for (size_t i = 0; i < plans.size(); ++i) {
      if (t[i] < t[oracle]) oracle = i;
      measured.push_back(t[i]);
      predicted.push_back(engine.predict(i, d));
    }
    // The sweep's minimum over many plans is biased low by noise (the winner's curse): the chosen,
    // oracle and static plans are re-timed head to head (round robin, 2 x samples) for the
    // accuracy, gain and loss.
    const Timed rtt = time_plans({plans[chosen], plans[oracle], plans[static_idx]}, 2 * opt.samples, uk, prob,
                                 work.data(), opt, out["failures"], si, true);
    total_samples += rtt.samples, quiet_samples += rtt.quiet;
    const std::vector<double>& rt = rtt.best;
    const json retimed = {{"chosen", rt[0]}, {"oracle", std::min(rt[1], rt[0])}, {"static", rt[2]}};
    // The oracle's own noise: the largest disagreement of two independent measurements (even /
    // odd samples) of the same plan among the three.
    double repeat = 0;
    for (size_t j = 0; j < 3; ++j) repeat = std::max(repeat, std::fabs(rtt.half[0][j] / rtt.half[1][j] - 1));
    // The miss rule: where chosen and oracle differ, both timed again head to head (ABBA rounds)
    // and classified hit / miss within noise / miss beyond noise, next to the raw re-timing.
    json remeasured = nullptr;
    std::string cls = "hit";
    if (chosen != oracle && opt.remeasure_rounds > 0) {
      const PairedRatio pr = remeasure(plans[chosen], plans[oracle], opt.remeasure_rounds, uk, prob, work.data(), opt,
                                       total_samples, quiet_samples);
      cls = miss_class(pr, kThreshold);
      remeasured = {{"ratio", num(pr.median)}, {"ci_low", num(pr.lo)}, {"ci_high", num(pr.hi)},
                    {"rounds", pr.rounds}, {"quiet_rounds", pr.quiet_rounds}, {"rounds_used", pr.used}};
    }
    json rec = {{"retimed_ns", retimed}, {"category", sh.category}, {"m", d.m}, {"n", d.n}, {"k", d.k}, {"lda", d.lda},
                             {"ldb", d.ldb}, {"ldc", d.ldc},
                             {"level", level_name(source_level(d, 8, engine.units().caches))},
                             {"measured_ns", measured}, {"predicted_ns", predicted}, {"chosen", chosen},
                             {"oracle", oracle}, {"static", static_idx}, {"decision_ns", decision_ns},
                             {"repeatability", num(repeat)}, {"elapsed_s", seconds_since(t_start)},
                             {"in_calibration_training_set", in_training(d)},
                             {"plan_difference", plan_difference(plans[chosen], plans[oracle])},
                             {"quiet_fraction", double(quiet_samples) / double(std::max<int64_t>(1, total_samples))}};
    if (opt.remeasure_rounds > 0) rec["remeasured"] = remeasured, rec["miss_class"] = cls;
    out["shapes"].push_back(std::move(rec));
    // The equivalent orders (nmk = mnk, kmn = mkn, knm = nkm) with the static triple, timed
    // on every equiv_every-th shape next to their canonical twins.
    if (opt.equiv_every > 0 && si % opt.equiv_every == 0) {
      for (Order o : {Order::nmk, Order::kmn, Order::knm}) {
        const Plan twin{canonical(o), stat.b, stat.ahead}, other{o, stat.b, stat.ahead};
        const std::vector<double> tt =
            time_plans({twin, other}, opt.samples, uk, prob, work.data(), opt, out["failures"], si).best;
        const double ta = tt[0], tb = tt[1];
        const Movement ma = movement(twin, d, uk.mr, uk.nr), mb = movement(other, d, uk.mr, uk.nr);
        out["equivalent_orders"].push_back(
            {{"shape", si}, {"a", plan_id(twin)}, {"b", plan_id(other)}, {"measured_a_ns", ta},
             {"measured_b_ns", tb}, {"predicted_a_ns", cost(twin, d, engine.units()).total},
             {"predicted_b_ns", cost(other, d, engine.units()).total},
             {"same_movement", ma.a == mb.a && ma.b == mb.b && ma.c_load == mb.c_load && ma.phases == mb.phases}});
      }
    }
    if ((si + 1) % 25 == 0 && !opt.out_file.empty()) {
      out["quiet_budget"] = diag::quiet_budget().to_json();
      out["summary"] = summarize(out["shapes"], "");
      write_json_atomic(opt.out_file, out);
    }
  }
  json by_cat = json::object();
  for (const char* c : kCats) by_cat[c] = summarize(out["shapes"], c);
  out["summary"] = summarize(out["shapes"], "");
  out["by_category"] = by_cat;
  out["wall_seconds"] = seconds_since(t_start);
  // The command's total wait for quiet: exhausted = the later samples were taken without
  // waiting, under whatever load there was (their quiet_fraction says how much).
  out["quiet_budget"] = diag::quiet_budget().to_json();
  out["complete"] = true;
  const json& s = out["summary"];
  prog.done("accuracy " + std::to_string(s["decision_accuracy"].is_number() ? s["decision_accuracy"].get<double>() : 0.0));
  return out;
}

json rescore(const Engine& engine, const json& in) {
  const auto& plans = engine.plans();
  if (!in.contains("plans") || in["plans"].size() != plans.size())
    throw Error("rtamm rescore: the file's plans differ from the pool's plans (same pool needed)");
  for (size_t i = 0; i < plans.size(); ++i)
    if (in["plans"][i].value("id", "") != plan_id(plans[i]))
      throw Error("rtamm rescore: plan " + std::to_string(i) + " is " + in["plans"][i].value("id", "?") + " in the file, " +
                  plan_id(plans[i]) + " in the pool");
  json out = in;
  out["rescored"] = {{"created", utc_timestamp()},
                     {"note", "decisions recomputed with other unit costs against the same sweep; accuracy, gain and "
                              "loss from the sweep's times (measured_ns), not a head-to-head re-timing (no "
                              "re-measured accuracy)"}};
  out.erase("remeasure");
  for (json& s : out["shapes"]) {
    gemm::Dims d;
    d.m = s["m"], d.n = s["n"], d.k = s["k"], d.lda = s["lda"], d.ldb = s["ldb"], d.ldc = s["ldc"];
    const size_t c = engine.choose(d);
    json pred = json::array();
    for (size_t i = 0; i < plans.size(); ++i) pred.push_back(engine.predict(i, d));
    s["predicted_ns"] = pred;
    s["chosen"] = c;
    // The re-measurement was of the evaluation's choice: a rescore has none (sweep times only).
    s.erase("remeasured"), s.erase("miss_class");
    s["plan_difference"] = plan_difference(plans[c], plans[s["oracle"].get<size_t>()]);
    const auto& t = s["measured_ns"];
    s["retimed_ns"] = {{"chosen", t[c]}, {"oracle", t[s["oracle"].get<size_t>()]}, {"static", t[s["static"].get<size_t>()]}};
  }
  json by_cat = json::object();
  for (const char* c : kCats) by_cat[c] = summarize(out["shapes"], c);
  out["summary"] = summarize(out["shapes"], "");
  out["by_category"] = by_cat;
  return out;
}

}  // namespace rooflab::rtamm

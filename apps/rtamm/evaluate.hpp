#pragma once
// The evaluation behind `rooflab rtamm evaluate` (docs/json.md,
// rooflab.rtamm/1).
#include <filesystem>
#include <string>
#include <vector>

#include "kernels/rtamm/rtamm.hpp"

namespace rooflab::rtamm {

// The paper's six categories SMA, SMNA, MMA, MMNA, BMA, BMNA (small / medium / big base size,
// aligned / not aligned), round robin. Shape i of a category: ratio r = 1 + i % 10 applied to
// one of M, N, K (rotating every 10 shapes), each dimension jittered by [0.8, 1.25). Aligned:
// dimensions multiples of 16 and ld = the dimension (128-byte rows for f64); not aligned:
// dimensions not multiples of 8 and every ld padded by 1..7 elements.
struct ShapeConfig {
  int64_t base[3] = {48, 128, 256};
  uint64_t seed = 1;
};
struct Shape {
  std::string category;
  gemm::Dims d;
};
std::vector<Shape> make_shapes(size_t count, const ShapeConfig& cfg);

struct EvalOptions {
  int samples = 3;            // timed samples per plan, round robin (best taken)
  double min_sample_s = 5e-4; // repetitions per sample so that it lasts at least this
  size_t equiv_every = 25;    // time the equivalent orders on every n-th shape (0: never)
  size_t progress_every = 10;
  int remeasure_rounds = 24;  // ABBA rounds re-measuring chosen vs oracle where they differ (0: off)
  double wait_quiet_s = 0.5;  // before each sample: wait up to this for nothing else runnable
                              // (all waits together: at most diag::quiet_budget(), set by the CLI)
  std::filesystem::path out_file;  // partial results written every 25 shapes
  json config;                // echoed into the output
};
// f64, omp_get_max_threads() threads. Returns the rooflab.rtamm/1 document.
json evaluate(const Engine& engine, const Plan& static_plan, const std::vector<Shape>& shapes, const EvalOptions& opt);
// Every plan timed on every shape (verified first; failures appended to `failures`), best of
// opt.samples round-robin samples: t[shape][plan] in ns (the calibration's training data).
std::vector<std::vector<double>> sweep(const std::vector<Plan>& plans, const std::vector<Shape>& shapes,
                                       const EvalOptions& opt, json& failures);
// ---- Re-measuring chosen vs oracle (the miss rule; pure functions, tested on synthetic times) ----
// Where the chosen plan is not the sweep's oracle, both are timed again in R rounds of four
// samples, chosen / oracle / oracle / chosen (ABBA: a linear drift of the VM's speed cancels
// within a round). Round k's ratio = (c1 + c2) / (o1 + o2); the shape's re-measured ratio is the
// median over the rounds (the quiet rounds when at least 5 are), with a distribution-free
// confidence interval of >= 90% (order statistics of the binomial sign test).
struct PairedRatio {
  size_t rounds = 0, quiet_rounds = 0;  // rounds given, of them quiet (all four samples)
  size_t used = 0;                      // rounds the median is taken over
  double median = NAN;
  double lo = NAN, hi = NAN;  // the interval; NaN with fewer than 5 rounds used
};
// c1, o1, o2, c2: per-run seconds of round k; quiet[k]: all four samples of round k quiet (empty:
// all quiet). Throws Error when the four lengths differ.
PairedRatio paired_ratio(const std::vector<double>& c1, const std::vector<double>& o1,
                         const std::vector<double>& o2, const std::vector<double>& c2,
                         const std::vector<bool>& quiet = {});
// Runs per sample, the same for every plan timed against the others: each sample lasts at least
// min_sample_s with the fastest warm run (seconds; entries <= 0 ignored; 1 when none). Sized per
// plan from one run each, a plan whose single run was slow (the first after the other plan, a
// timer interrupt) got few runs per sample, and a fixed cost per sample (the switch from the
// other plan's buffers) weighed on it alone: identical plans re-measured 1.1-1.3x apart on 48^3.
int64_t paired_runs(const std::vector<double>& warm_run_s, double min_sample_s);
// "hit" (median <= threshold), "miss_model" (the whole interval above the threshold: the chosen
// plan is slower beyond the measurement's noise) or "miss_noise" (median above, the interval
// reaching the threshold or unknown).
std::string miss_class(const PairedRatio& r, double threshold);
// The plan dimensions in which two plans differ: "order", "triple", "ahead" joined by '+' (order
// compared by cost class: mnk = nmk), "same" when none.
std::string plan_difference(const Plan& a, const Plan& b);
// The summary of a set of shape records (rtamm.json "shapes"), of one category or all ("").
json summarize(const json& shapes, const std::string& category);

// The decisions of an evaluation recomputed with the engine's unit costs (same pool and plans),
// scored against the evaluation's sweep times. No timing.
json rescore(const Engine& engine, const json& evaluation);

}  // namespace rooflab::rtamm

// `rooflab gemm-knobs`: sfc_ca's (k_layers, kbf) by autotuning, the analytic model and the
// nearest neighbour; building the NN set and evaluating both models against the autotuned best.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <numeric>

#include "harness/args.hpp"
#include "harness/diagnostics.hpp"
#include "apps/commands.hpp"
#include "harness/error.hpp"
#include "harness/families.hpp"
#include "harness/json_io.hpp"
#include "harness/progress.hpp"
#include "kernels/gemm/knobs.hpp"
#include "roofline/machine.hpp"

namespace rooflab::gemm::knobs {
namespace fs = std::filesystem;
namespace {

const char* kNotes = R"(defaults: --machine results/latest/machine.json and --nn results/gemm/knobs_nn.json in the
source tree; --cache for tune: ./gemm_knobs_cache.json. build-nn and evaluate resume from
their output file (its autotuned entries are reused; --retune ignores them).
Time it alone: flock /tmp/rooflab-timing.lock rooflab gemm-knobs ...
)";

using Usage = args::UsageError;

int to_int(const std::string& s, const std::string& what, int lo, int hi) {
  return int(args::parse_integer(what, s, lo, hi));
}

struct Common {
  DType dtype = DType::f64;
  int threads = std::max(1, omp_get_num_procs());
  Isa isa = best_isa();
  Grid grid;
  int reps = 3;
  double wait_quiet = 3.0;
  double quiet_budget = rooflab::diag::default_quiet_budget_s("paper");  // these runs take paper-scale time
  bool verbose = false, retune = false;
  std::vector<std::string> shapes;
  std::string machine = std::string(ROOFLAB_SOURCE_DIR) + "/results/latest/machine.json";
  std::string nn = std::string(ROOFLAB_SOURCE_DIR) + "/results/gemm/knobs_nn.json";
  std::string cache, out, sizes = "256,431,724,1218,2048", seed = "1", lo = "256", hi = "2048", count;
  bool nn_given = false;

  Shape shape(const std::string& text) const { return parse_shape(text, dtype, threads, isa); }
  TuneOptions tune_options() const {
    TuneOptions o;
    o.reps = reps;
    o.wait_quiet_s = wait_quiet;
    if (verbose) o.progress = [](const std::string& l) { std::fprintf(stderr, "%s\n", l.c_str()); };
    return o;
  }
};

// The options every subcommand shares, declared once.
args::Spec common_spec(const std::string& sub, const std::string& summary) {
  args::Spec s("rooflab gemm-knobs " + sub, summary);
  s.choice("--dtype", {"f64", "f32"}, "element type", "f64")
      .threads("threads of the timed runs (default: every CPU)")
      .choice("--isa", {"scalar", "avx2", "avx512"}, "micro-kernel ISA (default: the widest of this CPU)")
      .string("--grid", "GRID", "the knobs tried, e.g. k_layers:1,2,4/kbf:1,2,4,8/bk:128 (the default)")
      .integer("--reps", "R", "runs per knob (the fastest is kept)", 1, 1000, 3)
      .real("--wait-quiet", "S", "per knob, the most seconds in all to wait for nothing else runnable", 0, 3600, 3)
      .real("--quiet-budget", "S", "the most the whole command waits for quiet; then it times on, under load, and "
                                   "says so (\"quiet_budget\" in the output)", 0, 86400,
            rooflab::diag::default_quiet_budget_s("paper"))
      .flag("--verbose", "a line per knob timed")
      .flag("--retune", "ignore the autotuned entries of the output / cache file")
      .epilog(kNotes);
  return s;
}

Common common_of(const args::Values& v) {
  Common c;
  c.dtype = *parse_dtype(v.str("--dtype"));
  if (v.has("--threads")) c.threads = int(v.integer("--threads"));
  if (v.has("--isa")) {
    c.isa = *parse_isa(v.str("--isa"));
    if (!isa_supported(c.isa)) throw Error("this CPU does not support " + v.str("--isa"));
  }
  if (v.has("--grid")) c.grid = parse_grid(v.str("--grid"));
  c.reps = int(v.integer("--reps"));
  c.wait_quiet = v.real("--wait-quiet");
  c.quiet_budget = v.real("--quiet-budget");
  c.verbose = v.flag("--verbose");
  c.retune = v.flag("--retune");
  auto opt = [&](const char* name, std::string& field) {
    if (v.declared(name) && (v.has(name) || !v.str(name).empty())) field = v.str(name);
  };
  if (v.declared("--shape")) c.shapes = v.all("--shape");
  c.nn_given = v.declared("--nn") && v.has("--nn");
  opt("--machine", c.machine);
  opt("--nn", c.nn);
  opt("--cache", c.cache);
  opt("--out", c.out);
  opt("--sizes", c.sizes);
  opt("--seed", c.seed);
  opt("--min", c.lo);
  opt("--max", c.hi);
  opt("--shapes", c.count);
  // Every wait for quiet of this command (time_knob's) draws from one total.
  rooflab::diag::set_quiet_budget(c.quiet_budget);
  return c;
}

void warn_if_unoptimized() {
  if (std::string(ROOFLAB_BUILD_TYPE) != "Release" || std::string(ROOFLAB_SANITIZER) != "")
    std::fprintf(stderr, "warning: a %s build: timings are not representative\n", ROOFLAB_BUILD_TYPE);
}

std::string ms(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f ms", s * 1e3);
  return b;
}

// The cached entry when it has every candidate, else tunes the missing ones and stores them.
const Tuned& tuned_for(KnobFile& f, const Shape& s, const Common& c, bool* timed) {
  const Tuned* have = c.retune ? nullptr : f.find(s);
  bool complete = have != nullptr;
  if (have)
    for (const Knob& k : candidates(c.grid, s)) complete = complete && have->find(k);
  if (timed) *timed = !complete;
  if (!complete) f.put(autotune(s, c.grid, c.tune_options(), have));
  return *f.find(s);
}

int cmd_tune(Common& c) {
  if (c.shapes.empty()) throw Usage("tune needs --shape MxNxK (repeatable)");
  if (c.cache.empty()) c.cache = "gemm_knobs_cache.json";
  warn_if_unoptimized();
  KnobFile f = KnobFile::load(c.cache, true);
  Progress pr("gemm-knobs tune", c.shapes.size());
  for (size_t i = 0; i < c.shapes.size(); ++i) {
    const Shape s = c.shape(c.shapes[i]);
    pr.start(i, to_string(s));
    bool timed = false;
    const Tuned& t = tuned_for(f, s, c, &timed);
    if (timed) f.save(c.cache);
    const Timing& b = *t.best_among(candidates(c.grid, s));
    std::printf("%s  best %s  %s%s\n", to_string(s).c_str(), to_string(b.knob).c_str(), ms(b.seconds).c_str(),
                timed ? "" : "  (cached)");
  }
  pr.done(c.cache);
  return 0;
}

int cmd_predict(Common& c) {
  if (c.shapes.empty()) throw Usage("predict needs --shape MxNxK (repeatable)");
  std::vector<Shape> shapes;  // bad shapes are reported before any file is read
  for (const std::string& text : c.shapes) shapes.push_back(c.shape(text));
  const roofline::Machine m = roofline::load_machine(c.machine);
  std::optional<KnobFile> nn;
  if (c.nn_given || fs::exists(c.nn)) nn = KnobFile::load(c.nn, false);
  for (const Shape& s : shapes) {
    const MachineParams mp = machine_params(m, s);
    std::printf("%s  (A, B from %s, C in %s)\n", to_string(s).c_str(), mp.slow_level.c_str(), mp.c_level.c_str());
    for (const Knob& k : candidates(c.grid, s)) {
      const Prediction p = predict(s, k, mp);
      std::printf("  %-26s predicted %s  (pack %s, critical thread %s of which compute %s, reduce %s; "
                  "BRGEMMs by slow operands AB/A/B/none: %lld/%lld/%lld/%lld)\n",
                  to_string(k).c_str(), ms(p.seconds).c_str(), ms(p.pack).c_str(), ms(p.critical).c_str(),
                  ms(p.compute).c_str(), ms(p.reduce).c_str(), (long long)p.brgemm[0], (long long)p.brgemm[1],
                  (long long)p.brgemm[2], (long long)p.brgemm[3]);
    }
    std::printf("  analytic: %s\n", to_string(analytic_choice(s, c.grid, mp).knob).c_str());
    if (nn) {
      const NnChoice ch = nn_choice(nn->entries, s, c.grid);
      std::printf("  nn:       %s  (neighbour %s, distance %.2f)\n", to_string(ch.knob).c_str(),
                  to_string(ch.neighbour->shape).c_str(), ch.distance);
      if (!ch.note.empty()) std::printf("            note: %s\n", ch.note.c_str());
    }
  }
  return 0;
}

std::vector<int64_t> parse_sizes(const std::string& text) {
  std::vector<int64_t> v;
  size_t b = 0;
  while (b <= text.size()) {
    const size_t e = std::min(text.find(',', b), text.size());
    v.push_back(to_int(text.substr(b, e - b), "--sizes entry", 1, 1 << 20));
    b = e + 1;
  }
  return v;
}

int cmd_build_nn(Common& c) {
  c.out = (fs::path(c.out.empty() ? std::string(ROOFLAB_SOURCE_DIR) + "/results/gemm" : c.out) / "knobs_nn.json").string();
  const std::vector<int64_t> sizes = parse_sizes(c.sizes);
  warn_if_unoptimized();
  KnobFile f = KnobFile::load(c.out, true);
  std::vector<Shape> shapes;
  for (int64_t m : sizes)
    for (int64_t n : sizes)
      for (int64_t k : sizes) shapes.push_back(c.shape(std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k)));
  // The set is exactly the --sizes grid: entries of an earlier set with other sizes (or another
  // dtype / thread count / ISA) would otherwise stay as neighbours, timed with another build.
  const size_t before = f.entries.size();
  std::erase_if(f.entries, [&](const Tuned& t) { return std::find(shapes.begin(), shapes.end(), t.shape) == shapes.end(); });
  if (f.entries.size() != before)
    std::fprintf(stderr, "gemm-knobs build-nn: dropped %zu entries of %s not in this --sizes grid\n",
                 before - f.entries.size(), c.out.c_str());
  f.extra = {{"kind", "nn_set"},
             {"produced_by", "rooflab gemm-knobs build-nn --sizes " + c.sizes + " --grid " + to_string(c.grid) +
                                 " --reps " + std::to_string(c.reps) + " --threads " + std::to_string(c.threads) +
                                 " --dtype " + std::string(to_string(c.dtype))},
             {"sizes", sizes},
             {"grid", to_string(c.grid)},
             {"reps", c.reps},
             {"created", utc_timestamp()},
             {"note", "every (M, N, K) of the sizes autotuned: each knob of the grid verified, then the fastest of "
                      "`reps` runs at `threads` threads; made under the timing lock"}};
  Progress pr("gemm-knobs build-nn", shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    pr.start(i, to_string(shapes[i]));
    bool timed = false;
    const Tuned& t = tuned_for(f, shapes[i], c, &timed);
    f.extra["quiet_budget"] = rooflab::diag::quiet_budget().to_json();
    if (timed) f.save(c.out);
    std::fprintf(stderr, "  best %s  %s\n", to_string(t.best().knob).c_str(), ms(t.best().seconds).c_str());
  }
  f.save(c.out);
  pr.done(c.out);
  std::printf("%s\n", c.out.c_str());
  return 0;
}

// ---- evaluate ------------------------------------------------------------------------------
uint64_t splitmix(uint64_t& x) {
  uint64_t z = (x += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

nlohmann::json knob_json(const Knob& k) { return {{"k_layers", k.k_layers}, {"kbf", k.kbf}, {"bk", k.bk}}; }

struct Losses {
  std::vector<double> v;
  nlohmann::json summary() const {
    std::vector<double> s = v;
    std::sort(s.begin(), s.end());
    const size_t n = s.size();
    auto within = [&](double x) { return double(std::count_if(s.begin(), s.end(), [x](double l) { return l <= x; })) / double(n); };
    return {{"shapes", n},
            {"mean_loss", std::accumulate(s.begin(), s.end(), 0.0) / double(n)},
            {"median_loss", n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2])},
            {"max_loss", s.back()},
            {"within_3pct", within(0.03)},
            {"within_7pct", within(0.07)}};
  }
};

int cmd_evaluate(Common& c) {
  const int count = to_int(c.count, "--shapes", 1, 100000);
  const int lo = to_int(c.lo, "--min", 1, 1 << 20), hi = to_int(c.hi, "--max", 1, 1 << 20);
  if (lo > hi) throw Usage("--min " + c.lo + " is larger than --max " + c.hi);
  const uint64_t seed = uint64_t(to_int(c.seed, "--seed", 0, 1 << 30));
  // Everything that can fail without timing fails first.
  const roofline::Machine machine = roofline::load_machine(c.machine);
  const KnobFile nn = KnobFile::load(c.nn, false);
  ensure_writable_dir(c.out);
  warn_if_unoptimized();
  const fs::path dest = fs::path(c.out) / "gemm_knobs.json";
  // Timings already made (this evaluation's earlier run, or --cache FILE) are reused.
  KnobFile f = KnobFile::load(c.cache.empty() ? dest : fs::path(c.cache), true);

  // M, N, K log-uniform integers in [lo, hi]; shapes of the NN set and repeats are skipped.
  std::vector<Shape> shapes;
  uint64_t state = seed;
  auto draw = [&] {
    const double u = double(splitmix(state) >> 11) * 0x1.0p-53;
    return int64_t(std::lround(std::exp(std::log(double(lo)) + u * (std::log(double(hi)) - std::log(double(lo))))));
  };
  for (int tries = 0; int(shapes.size()) < count; ++tries) {
    if (tries > 100 * count) throw Error("cannot draw " + c.count + " distinct shapes in [" + c.lo + ", " + c.hi + "]");
    Shape s{draw(), draw(), draw(), c.dtype, c.threads, c.isa};
    if (nn.find(s) || std::find(shapes.begin(), shapes.end(), s) != shapes.end()) continue;
    shapes.push_back(s);
  }
  for (const Shape& s : shapes) candidates(c.grid, s);  // a grid with no valid knob fails now

  const Knob fixed{1, kSfcDefault.kbf, kSfcDefault.bk};  // the family's default, for reference
  Losses l_analytic, l_nn, l_default, l_retimed;
  nlohmann::json rows = nlohmann::json::array();
  nlohmann::json last;
  int noisy_total = 0, timings_total = 0;
  Progress pr("gemm-knobs evaluate", shapes.size());
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    pr.start(i, to_string(s));
    const Tuned& t = tuned_for(f, s, c, nullptr);
    const std::vector<Knob> cands = candidates(c.grid, s);
    const Timing& best = *t.best_among(cands);
    const Prediction an = analytic_choice(s, c.grid, machine_params(machine, s));
    const NnChoice nc = nn_choice(nn.entries, s, c.grid);
    // The autotuned best timed once more: how much of a "loss" is run-to-run noise.
    const double retimed = time_knob(s, best.knob, c.reps, c.wait_quiet).seconds;
    auto row_of = [&](const Knob& k, Losses& acc) {
      const double sec = t.find(k)->seconds, loss = sec / best.seconds - 1;
      acc.v.push_back(loss);
      return nlohmann::json{{"knob", knob_json(k)}, {"seconds", sec}, {"loss", loss}};
    };
    int noisy = 0;
    for (const Knob& k : cands) noisy += t.find(k)->quiet_reps == 0;
    noisy_total += noisy, timings_total += int(cands.size());
    // The shape's flops from the variant's model (the one source; the figure plots loss against them).
    const Case tuned_case = sfc_case(s, best.knob);
    nlohmann::json row = {{"m", s.m}, {"n", s.n}, {"k", s.k}, {"flops", variant_of(tuned_case).model(tuned_case).flops},
                          {"noisy_timings", noisy}};
    row["autotune"] = {{"knob", knob_json(best.knob)}, {"seconds", best.seconds}, {"retimed_seconds", retimed},
                       {"retimed_loss", retimed / best.seconds - 1}};
    l_retimed.v.push_back(retimed / best.seconds - 1);
    row["analytic"] = row_of(an.knob, l_analytic);
    row["analytic"]["predicted_seconds"] = an.seconds;
    row["nn"] = row_of(nc.knob, l_nn);
    row["nn"]["neighbour"] = {{"m", nc.neighbour->shape.m}, {"n", nc.neighbour->shape.n}, {"k", nc.neighbour->shape.k}};
    row["nn"]["distance"] = nc.distance;
    if (!nc.note.empty()) row["nn"]["note"] = nc.note;  // another ISA's entry (see nn_choice)
    if (t.find(fixed)) row["default"] = row_of(fixed, l_default);
    rows.push_back(row);
    std::fprintf(stderr, "  best %s %s | analytic %s %+.1f%% | nn %s %+.1f%%\n", to_string(best.knob).c_str(),
                 ms(best.seconds).c_str(), to_string(an.knob).c_str(), 100 * row["analytic"]["loss"].get<double>(),
                 to_string(nc.knob).c_str(), 100 * row["nn"]["loss"].get<double>());

    KnobFile res;  // this evaluation's shapes only
    for (const Shape& x : shapes)
      if (const Tuned* e = f.find(x)) res.put(*e);
    res.extra = {{"kind", "evaluation"},
               {"created", utc_timestamp()},
               {"machine", fs::absolute(c.machine).string()},
               {"nn_set", {{"path", fs::absolute(c.nn).string()}, {"entries", nn.entries.size()}}},
               {"dtype", to_string(c.dtype)},
               {"threads", c.threads},
               {"isa", to_string(c.isa)},
               {"grid", to_string(c.grid)},
               {"reps", c.reps},
               {"sampling", {{"seed", seed}, {"min", lo}, {"max", hi}, {"shapes", count},
                             {"how", "M, N, K independent log-uniform integers in [min, max] (splitmix64), "
                                     "shapes of the NN set and repeats skipped"}}},
               {"loss", "time of the method's knob / time of the autotuned best - 1 (same timing table)"},
               {"shapes", rows}};
    nlohmann::json summary = {{"analytic", l_analytic.summary()}, {"nn", l_nn.summary()},
                              {"autotune_retimed", l_retimed.summary()}};
    if (!l_default.v.empty()) summary["default"] = l_default.summary();
    summary["noisy_timing_fraction"] = double(noisy_total) / double(timings_total);
    res.extra["summary"] = summary;
    res.extra["quiet_budget"] = rooflab::diag::quiet_budget().to_json();
    res.save(dest);  // after every shape: an interrupted run resumes from here
    last = res.extra["summary"];
  }
  const nlohmann::json& sm = last;
  for (const char* m : {"analytic", "nn", "default", "autotune_retimed"}) {
    if (!sm.contains(m)) continue;
    const auto& x = sm[m];
    std::printf("%-17s mean loss %5.2f%%  median %5.2f%%  max %6.2f%%  within 3%%: %5.1f%%  within 7%%: %5.1f%%\n", m,
                100 * x["mean_loss"].get<double>(), 100 * x["median_loss"].get<double>(),
                100 * x["max_loss"].get<double>(), 100 * x["within_3pct"].get<double>(),
                100 * x["within_7pct"].get<double>());
  }
  std::printf("timings with no quiet repetition (machine busy): %.1f%%\n", 100 * sm["noisy_timing_fraction"].get<double>());
  pr.done(dest.string());
  std::printf("%s\n", dest.c_str());
  return 0;
}

}  // namespace

namespace {
using args::PathKind;
args::Spec& shapes_opt(args::Spec& s) {
  return s.string("--shape", "MxNxK", "a shape (repeatable)").repeated().required();
}
args::Spec& machine_nn(args::Spec& s) {
  return s.path("--machine", PathKind::input_file, "FILE", "machine.json (default: results/latest/machine.json)")
      .hint("; run `rooflab characterize` first (--out DIR)")
      .path("--nn", PathKind::input_file, "FILE", "the nearest-neighbour set (default: results/gemm/knobs_nn.json)")
      .hint(" (made by `rooflab gemm-knobs build-nn`)");
}
std::function<int(const args::Values&)> with_common(int (*cmd)(Common&)) {
  return [cmd](const args::Values& v) {
    Common c = common_of(v);
    return cmd(c);
  };
}

std::vector<args::Command> table() {
  return {
      {"tune", "autotune sfc_ca's knobs for shapes, cached",
       [] {
         args::Spec s = common_spec("tune", "autotune sfc_ca's knobs for shapes (cached in --cache FILE)");
         shapes_opt(s).path("--cache", PathKind::output_file, "FILE", "the cache (default ./gemm_knobs_cache.json)");
         return s;
       },
       with_common(cmd_tune), nullptr, false},
      {"predict", "the analytic model's prediction per knob + the nearest neighbour's choice",
       [] {
         args::Spec s = common_spec("predict", "the analytic model's prediction per knob and the NN choice");
         shapes_opt(s);
         return machine_nn(s);
       },
       with_common(cmd_predict), nullptr, false},
      {"build-nn", "autotune the nearest-neighbour set -> DIR/knobs_nn.json",
       [] {
         return common_spec("build-nn", "autotune every (M, N, K) of the sizes -> DIR/knobs_nn.json")
             .string("--sizes", "a,b,..", "the sizes of each dimension", "256,431,724,1218,2048")
             .path("--out", PathKind::output_dir, "DIR", "where knobs_nn.json goes (default: results/gemm)");
       },
       with_common(cmd_build_nn), nullptr, false},
      {"evaluate", "analytic and NN vs autotuned over random shapes -> DIR/gemm_knobs.json",
       [] {
         args::Spec s = common_spec("evaluate", "analytic and NN choices vs the autotuned best over random shapes -> "
                                                "DIR/gemm_knobs.json");
         s.integer("--shapes", "N", "random shapes", 1, 100000)
             .required()
             .path("--out", PathKind::output_dir, "DIR", "where gemm_knobs.json goes")
             .required()
             .integer("--seed", "S", "the shapes' seed", 0, 1 << 30, 1)
             .integer("--min", "N", "smallest M, N, K", 1, 1 << 20, 256)
             .integer("--max", "N", "largest M, N, K", 1, 1 << 20, 2048)
             .path("--cache", PathKind::any, "FILE", "reuse the timings of this file (default: DIR/gemm_knobs.json)");
         return machine_nn(s);
       },
       with_common(cmd_evaluate), nullptr, false},
  };
}
}  // namespace

int knobs_main(const std::vector<std::string>& argv) {
  return args::dispatch("rooflab gemm-knobs", "sfc_ca's (k_layers, kbf): autotuning, analytic model, nearest neighbour",
                        table(), argv);
}

}  // namespace rooflab::gemm::knobs

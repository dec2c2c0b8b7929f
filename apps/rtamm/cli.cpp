// `rooflab rtamm`: pool | units | evaluate (see kUsage).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "harness/args.hpp"
#include "harness/diagnostics.hpp"
#include "apps/commands.hpp"
#include "apps/rtamm/units.hpp"
#include "harness/error.hpp"
#include "harness/machine_cpu.hpp"
#include "apps/rtamm/evaluate.hpp"

namespace rooflab::rtamm {
namespace {
namespace fs = std::filesystem;

// The profiles' defaults (the options override them).
const char* kProfiles = R"(profiles (--profile, default paper):
            units --pool-size   calibrate --shapes   evaluate --shapes   --quiet-budget
  smoke           3                  12                   6                 5 s
  quick           6                  24                  48                20 s
  paper           6                 150                1000               300 s
evaluate's base sizes 48,128,256. --quiet-budget S: the most this command waits in all for a
quiet machine before its samples; when spent it measures on and marks the output
("quiet_budget": {"exhausted": true, ...}).
)";

using args::Values;
using Usage = args::UsageError;

int64_t by_profile(const std::string& p, int64_t smoke, int64_t quick, int64_t paper) {
  return p == "smoke" ? smoke : p == "quick" ? quick : paper;
}
// The command's total wait for a quiet machine (diag::QuietBudget): --quiet-budget or the
// profile's default. Every diag::wait_quiet of the command draws from it.
void set_budget(const Values& o, const std::string& profile) {
  diag::set_quiet_budget(o.has("--quiet-budget") ? o.real("--quiet-budget") : diag::default_quiet_budget_s(profile));
}

// The --machine file of the CPU at hand, read.
struct Machine {
  fs::path path;
  json doc;
};
// For the commands that measure or run plans here: refuses a machine.json characterized on another
// CPU (its units and calibration, and any measured beside it now, would mix two CPUs), and installs
// its ISA choice, which decides the micro-kernel (kernel_isa) of the pool, the units and the plans.
Machine machine_at_hand(const Values& o) {
  Machine m{o.path("--machine"), read_machine_json(o.path("--machine"))};
  if (const std::string why = foreign_cpu(m.doc, m.path); !why.empty())
    throw Error(m.path.string() + ": " + why + "; RTAMM's pool, unit costs and calibrations are never carried to "
                "another CPU: run `rooflab characterize` here first");
  cli::use_machine_isa_choice(m.doc, m.path.string());
  return m;
}

DType dtype_of(const Values& o) { return *parse_dtype(o.str("--dtype")); }

PoolRules rules_for(const json& machine, const fs::path& path, DType dt) {
  const gemm::Ukernel<double> u64 = gemm::ukernel<double>(kernel_isa(DType::f64));
  const gemm::Ukernel<float> u32 = gemm::ukernel<float>(kernel_isa(DType::f32));
  return {int64_t(dtype_size(dt)), dt == DType::f64 ? u64.mr : u32.mr, dt == DType::f64 ? u64.nr : u32.nr,
          caches_from_machine(machine, path)};
}

std::vector<Block> parse_pool(const std::string& s) {
  std::vector<Block> v;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    Block b;
    char x1 = 0, x2 = 0;
    std::stringstream is(item);
    if (!(is >> b.mcg >> x1 >> b.ncg >> x2 >> b.kcg) || x1 != 'x' || x2 != 'x' || !is.eof())
      throw Usage("--pool entries must be MxNxK (Mcg x Ncg x Kcg), got '" + item + "'");
    v.push_back(b);
  }
  return v;
}

std::string pool_string(const std::vector<Block>& pool) {
  std::string s;
  for (const Block& b : pool) {
    if (!s.empty()) s += ',';
    s += std::to_string(b.mcg) + "x" + std::to_string(b.ncg) + "x" + std::to_string(b.kcg);
  }
  return s;
}

int cmd_pool(const Values& o) {
  const auto [path, m] = machine_at_hand(o);
  const PoolRules r = rules_for(m, path, dtype_of(o));
  const auto pool = derive_pool(r, size_t(o.has("--pool-size") ? o.integer("--pool-size") : 6));
  check_pool(pool, r);
  std::printf("caches: L1 %lld B, L2 %lld B, L3 %lld B (%s); MR %d, NR %d\n", (long long)r.caches.l1,
              (long long)r.caches.l2, (long long)r.caches.l3, r.caches.source.c_str(), r.mr, r.nr);
  std::printf("pool (Mcg x Ncg x Kcg): %s\nstatic plan: %s\n", pool_string(pool).c_str(),
              plan_id(static_plan(pool)).c_str());
  return 0;
}

const char* kUnitsMethod =
    "rooflab rtamm units: the executor's own phases timed on one block shape at a time (apps/rtamm/units.cpp); "
    "op_load_a/b/c and op_store_c: ns per element packing / copying every block-sized tile of a source region of "
    "L2/2 (l2), L3/2 (l3) or 4 x L3 (dram) bytes after a warm-up pass; op_kernel_ns_per_flop: the kernel phase on "
    "packed blocks at Kcg; kernel_call_ns + kernel_k_ns * kc: per micro-kernel call, fitted from Kcg and Kcg/4; "
    "overlap_rho: share of the shorter of kernel and A+B packing hidden when packed ahead between the tiles; "
    "sync_ns: one empty OpenMP phase. Best of 9 samples of >= 1 ms each, taken round robin over all quantities of all blocks (sync: 200 samples of >= 20 us).";

int cmd_units(const Values& o) {
  const auto [path, m] = machine_at_hand(o);
  const DType dt = dtype_of(o);
  const PoolRules r = rules_for(m, path, dt);
  const int threads = int(o.integer("--threads"));
  const std::string profile = o.str("--profile");
  set_budget(o, profile);
  const auto pool = !o.has("--pool")
                        ? derive_pool(r, size_t(o.has("--pool-size") ? o.integer("--pool-size") : by_profile(profile, 3, 6, 6)))
                        : parse_pool(o.str("--pool"));
  check_pool(pool, r);
  std::fprintf(stderr, "rtamm units: pool %s, %d threads, %s\n", pool_string(pool).c_str(), threads,
               std::string(to_string(dt)).c_str());
  const Units u = measure_units(pool, r.caches, dt, threads);
  json sec = m.contains("rtamm") && m["rtamm"].is_object() ? m["rtamm"] : json::object();
  json entries = json::array();
  if (sec.contains("units"))
    for (const json& e : sec["units"])
      if (!(e.value("dtype", "") == u.dtype && e.value("threads", 0) == u.threads)) entries.push_back(e);
  json ju = to_json(u);
  ju["measured"] = utc_timestamp();
  ju["profile"] = profile;
  ju["quiet_budget"] = diag::quiet_budget().to_json();
  entries.push_back(ju);
  sec["units"] = entries;
  sec["method"] = kUnitsMethod;
  sec["pool_rules"] =
      "Mcg % MR == 0, Ncg % NR == 0, Kcg % 8 == 0; (c1) Kcg*NR*s <= L1/2; (c2) Mcg*Kcg*s <= L2/2; (c3) "
      "2(Mcg*Kcg + Kcg*Ncg + Mcg*Ncg)*s <= L3/2 with caches.measured; candidates Kcg in 64..(c1) step 64, Mcg the "
      "largest within (c2) and its half, Ncg in {128, 256, 512, 1024, largest within (c3)}; thinned by farthest-"
      "point selection in log space from the static triple";
  write_machine_section(path, "rtamm", sec);
  std::printf("%-16s %8s %8s %8s %8s %10s %7s\n", "block", "ldA l3", "ldB l3", "ldC l3", "stC l3", "kern ns/f", "rho l3");
  for (const BlockUnits& b : u.blocks)
    std::printf("%-16s %8.3f %8.3f %8.3f %8.3f %10.5f %7.2f\n",
                (std::to_string(b.b.mcg) + "x" + std::to_string(b.b.ncg) + "x" + std::to_string(b.b.kcg)).c_str(),
                b.load_a[kL3], b.load_b[kL3], b.load_c[kL3], b.store_c[kL3], b.op_kernel, b.rho[kL3]);
  std::printf("sync %.0f ns; quiet share %.0f%%%s; wrote the \"rtamm\" section of %s\n", u.sync_ns,
              100 * u.quiet_fraction, diag::quiet_budget().exhausted() ? " (quiet budget spent: taken under load)" : "",
              path.string().c_str());
  if (fs::exists(machine_section_path(path, "rtamm_calibration")))
    std::fprintf(stderr, "rtamm units: %s was fitted on the units replaced now and is no longer applied: re-run "
                         "`rooflab rtamm calibrate --machine %s`\n",
                 machine_section_path(path, "rtamm_calibration").string().c_str(), path.string().c_str());
  return 0;
}

// The evaluation's shape generator (seed 1) with --base.
ShapeConfig shape_config(const Values& o) {
  ShapeConfig sc;
  if (o.has("--base")) {
    std::stringstream ss(o.str("--base"));
    char c1 = 0, c2 = 0;
    if (!(ss >> sc.base[0] >> c1 >> sc.base[1] >> c2 >> sc.base[2]) || c1 != ',' || c2 != ',' || sc.base[0] < 1 ||
        sc.base[1] < 1 || sc.base[2] < 1 || sc.base[2] > 4096)
      throw Usage("--base must be three sizes S,M,B in [1, 4096], got '" + o.str("--base") + "'");
  }
  return sc;
}

// The f64 units for --threads and their pool, checked against the caches they were derived from.
std::vector<Block> pool_of(const Units& u) {
  std::vector<Block> pool;
  for (const auto& b : u.blocks) pool.push_back(b.b);
  check_pool(pool, {8, u.mr, u.nr, u.caches});
  return pool;
}

int cmd_evaluate(const Values& o) {
  const auto [path, m] = machine_at_hand(o);
  const std::string profile = o.str("--profile");
  const size_t nshapes = size_t(o.has("--shapes") ? o.integer("--shapes") : by_profile(profile, 6, 48, 1000));
  const size_t first = size_t(o.integer("--first"));
  set_budget(o, profile);
  const int threads = int(o.integer("--threads"));
  const fs::path out_dir = o.path("--out");
  const ShapeConfig sc = shape_config(o);
  Units u = load_units(path, "f64", threads);
  // The pool must still satisfy the constraints of the caches it was derived from and of the
  // caches machine.json reports now.
  const std::vector<Block> pool = pool_of(u);
  try {
    check_pool(pool, {8, u.mr, u.nr, caches_from_machine(m, path)});
  } catch (const Error& e) {
    throw Error(std::string(e.what()) + " (rerun `rooflab rtamm units --machine " + path.string() + "`)");
  }
  ensure_writable_dir(out_dir);
  omp_set_num_threads(threads);
  const Engine engine(plans_of(pool), u);
  const Plan stat = static_plan(pool);
  EvalOptions eo;
  eo.samples = int(o.integer("--samples"));
  eo.remeasure_rounds = int(o.integer("--remeasure-rounds"));
  eo.out_file = out_dir / "rtamm.json";
  eo.config = {{"machine", fs::absolute(path).string()}, {"profile", profile}, {"shapes", nshapes}, {"first_shape", first},
               {"threads", threads}, {"dtype", "f64"}, {"isa", u.isa}, {"samples", eo.samples},
               {"min_sample_s", eo.min_sample_s}, {"remeasure_rounds", eo.remeasure_rounds},
               {"base_sizes", {sc.base[0], sc.base[1], sc.base[2]}},
               {"ratios", "1..10 on one of M, N, K"}, {"jitter", "[0.8, 1.25) per dimension"},
               {"accuracy_threshold", 1.05}, {"pool", pool_string(pool)}, {"static_plan", plan_id(stat)},
               {"plans", engine.plans().size()}, {"calibrated", u.calib.present},
               {"cpu_signature", cpu_signature()}};
  // Shapes [first, first + N) of the one seed-1 sequence: a long evaluation runs in parts (each a
  // short timing job) whose shapes are exactly those of the one-piece run.
  auto shapes = make_shapes(first + nshapes, sc);
  shapes.erase(shapes.begin(), shapes.begin() + std::ptrdiff_t(first));
  const json out = evaluate(engine, stat, shapes, eo);
  write_json_atomic(eo.out_file, out);
  const json& s = out["summary"];
  auto pct = [](const json& x) { return x.is_number() ? 100.0 * x.get<double>() : NAN; };
  std::printf("rtamm evaluate: %zu shapes x %zu plans, %d threads, %.0f s\n", shapes.size(), engine.plans().size(),
              threads, out["wall_seconds"].get<double>());
  std::printf("  decision accuracy (within 5%% of the oracle, raw head-to-head re-timing): %.2f%%\n", pct(s["decision_accuracy"]));
  std::printf("  noise-aware (within max(5%%, the shape's repeatability)): %.2f%%; repeatability median %.2f%%, "
              "p90 %.2f%%; %s engine\n", pct(s["decision_accuracy_noise_aware"]), pct(s["median_repeatability"]),
              pct(s["p90_repeatability"]), u.calib.present ? "calibrated" : "uncalibrated");
  if (s["decision_accuracy_remeasured"].is_number()) {
    const json& r = s["remeasured"];
    std::printf("  re-measured (chosen vs oracle where they differ, %d ABBA rounds): %.2f%%; %d misses: %d beyond "
                "noise, %d within it; raw misses now hits %d, raw hits now misses %d; loss vs oracle mean %.2f%%\n",
                eo.remeasure_rounds, pct(s["decision_accuracy_remeasured"]), r["misses"].get<int>(),
                r["misses_model"].get<int>(), r["misses_noise"].get<int>(), r["raw_misses_now_hits"].get<int>(),
                r["raw_hits_now_misses"].get<int>(), pct(r["mean_loss_vs_oracle"]));
  }
  std::printf("  gain over static: mean %.2f%%, max %.2f%% (oracle: mean %.2f%%)\n", pct(s["mean_gain_over_static"]),
              pct(s["max_gain_over_static"]), pct(s["mean_oracle_gain_over_static"]));
  std::printf("  loss vs oracle: mean %.2f%%, max %.2f%%\n", pct(s["mean_loss_vs_oracle"]), pct(s["max_loss_vs_oracle"]));
  std::printf("  decision overhead: mean %.4f%% (shapes >= 256^3: mean %.4f%%, max %.4f%%)\n",
              pct(s["mean_decision_overhead"]), pct(s["mean_decision_overhead_ge_256cubed"]),
              pct(s["max_decision_overhead_ge_256cubed"]));
  if (out["quiet_budget"].value("exhausted", false))
    std::printf("  quiet budget spent after %.0f s of waiting: later samples taken under load (see \"quiet_budget\")\n",
                out["quiet_budget"]["waited_s"].get<double>());
  std::printf("  wrote %s\n", eo.out_file.string().c_str());
  if (!out["failures"].empty()) {
    std::fprintf(stderr, "rtamm evaluate: %zu plan runs FAILED verification (see \"failures\" in %s)\n",
                 out["failures"].size(), eo.out_file.string().c_str());
    return 3;
  }
  return 0;
}
// Median |predicted / measured - 1| and the sweep-based accuracy (argmin of the formulas within
// 5% of the sweep's best) of an engine on timed shapes.
std::pair<double, double> fit_quality(const Engine& e, const std::vector<Shape>& shapes,
                                      const std::vector<std::vector<double>>& t) {
  std::vector<double> err;
  size_t acc = 0;
  for (size_t s = 0; s < shapes.size(); ++s) {
    for (size_t i = 0; i < t[s].size(); ++i) err.push_back(std::fabs(e.predict(i, shapes[s].d) / t[s][i] - 1));
    acc += t[s][e.choose(shapes[s].d)] <= 1.05 * *std::min_element(t[s].begin(), t[s].end());
  }
  std::sort(err.begin(), err.end());
  return {err[err.size() / 2], double(acc) / double(shapes.size())};
}

int cmd_calibrate(const Values& o) {
  const auto [path, m] = machine_at_hand(o);
  const int threads = int(o.integer("--threads"));
  const std::string profile = o.str("--profile");
  const size_t n = size_t(o.has("--shapes") ? o.integer("--shapes") : by_profile(profile, 12, 24, 150));
  set_budget(o, profile);
  const uint64_t seed = uint64_t(o.integer("--seed"));
  const ShapeConfig ev = shape_config(o);
  json tr;  // --training-in: read before anything is measured or loaded (a wrong file fails first)
  if (o.has("--training-in")) tr = read_json_file(o.path("--training-in")), require_schema(tr, "rooflab.rtamm_training", 1, o.path("--training-in"));
  const Units u = load_units(path, "f64", threads, false);
  const std::vector<Block> pool = pool_of(u);
  omp_set_num_threads(threads);
  // Training shapes: the evaluation's generator with another seed, minus every shape of the
  // evaluation set (seed 1, at least the full profile's 1000 shapes).
  std::vector<std::vector<int64_t>> eval_keys;
  for (const Shape& s : make_shapes(std::max<size_t>(1000, n), ev))
    eval_keys.push_back({s.d.m, s.d.n, s.d.k, s.d.lda, s.d.ldb, s.d.ldc});
  ShapeConfig tc = ev;
  tc.seed = seed;
  std::vector<Shape> shapes;
  size_t excluded = 0;
  json dims = json::array();
  const std::vector<Plan> plans = plans_of(pool);
  EvalOptions eo;
  eo.samples = int(o.integer("--samples"));
  std::vector<std::vector<double>> t;
  if (o.has("--training-in")) {
    // A training sweep measured before (`calibrate --out`) fitted again, no timing: for trying the
    // fit on the same data. Its plans must be this pool's and none of its shapes the evaluation's.
    const fs::path tf = o.path("--training-in");
    std::vector<std::string> ids;
    for (const Plan& p : plans) ids.push_back(plan_id(p));
    if (tr.at("plans").get<std::vector<std::string>>() != ids)
      throw Error(tf.string() + ": its plans are not this pool's (" + pool_string(pool) + ")");
    for (const json& r : tr.at("shapes")) {
      const std::vector<int64_t> key = r.at("dims").get<std::vector<int64_t>>();
      if (key.size() != 6 || std::find(eval_keys.begin(), eval_keys.end(), key) != eval_keys.end())
        throw Error(tf.string() + ": training shape " + r.at("dims").dump() + " is malformed or one of the evaluation's");
      Shape s;
      s.category = r.value("category", "");
      s.d = {key[0], key[1], key[2], key[3], key[4], key[5]};
      shapes.push_back(s), dims.push_back(key);
      t.push_back(r.at("measured_ns").get<std::vector<double>>());
      if (t.back().size() != plans.size()) throw Error(tf.string() + ": a shape lacks plan times");
    }
    if (shapes.empty()) throw Error(tf.string() + ": no training shapes");
  } else {
    for (const Shape& s : make_shapes(2 * n, tc)) {
      const std::vector<int64_t> key = {s.d.m, s.d.n, s.d.k, s.d.lda, s.d.ldb, s.d.ldc};
      if (std::find(eval_keys.begin(), eval_keys.end(), key) != eval_keys.end()) {
        ++excluded;
        continue;
      }
      if (shapes.size() < n) shapes.push_back(s), dims.push_back(key);
    }
    std::fprintf(stderr, "rtamm calibrate: %zu training shapes (seed %llu; %zu of the evaluation's excluded) x %zu plans\n",
                 shapes.size(), (unsigned long long)seed, excluded, plans.size());
    json failures = json::array();
    t = sweep(plans, shapes, eo, failures);
    if (!failures.empty()) throw Error("rtamm calibrate: plan runs FAILED verification: " + failures.dump());
  }
  std::vector<gemm::Dims> ds;
  for (const Shape& s : shapes) ds.push_back(s.d);
  const auto before = fit_quality(Engine(plans, u), shapes, t);
  Units uc = u;
  uc.calib = fit_calibration(u, plans, ds, t);
  const auto after = fit_quality(Engine(plans, uc), shapes, t);
  std::string units_measured;
  for (const json& e : m["rtamm"]["units"])
    if (e.value("dtype", "") == "f64" && e.value("threads", 0) == threads) units_measured = e.value("measured", "");
  uc.calib.provenance.update(json{
      {"method", "rooflab rtamm calibrate: non-negative least squares of the relative error over every plan x "
                 "training shape, features = the uncalibrated formula terms (kernels/rtamm/cost.cpp calib_features), "
                 "then a coordinate search on the scales for the training shapes' decisions (decision_refinement); "
                 "the unit costs themselves stay the micro-benchmark's"},
      {"created", utc_timestamp()}, {"units_measured", units_measured}, {"training_seed", seed},
      {"evaluation_seed", ev.seed}, {"base_sizes", {ev.base[0], ev.base[1], ev.base[2]}},
      {"training_shapes", shapes.size()}, {"excluded_evaluation_shapes", excluded}, {"samples", eo.samples},
      {"threads", threads}, {"profile", profile}, {"quiet_budget", diag::quiet_budget().to_json()},
      {"training_median_abs_error", {{"uncalibrated", before.first}, {"calibrated", after.first}}},
      {"training_sweep_accuracy", {{"uncalibrated", before.second}, {"calibrated", after.second}}},
      {"training_dims", dims}});
  if (o.has("--training-in")) uc.calib.provenance["training_from"] = fs::absolute(o.path("--training-in")).string();
  const json cj = calibration_to_json(uc.calib);
  // Its own section, fitted on the "rtamm" units (their revision recorded): re-measuring the
  // units leaves it stale, never applied to units it was not fitted on. The calibrations of
  // other thread counts stay (a stale section was not joined, so none of its entries stays).
  json entries = json::array();
  if (m.contains("rtamm_calibration") && m["rtamm_calibration"].contains("calibrations"))
    for (const json& e : m["rtamm_calibration"]["calibrations"])
      if (!(e.value("dtype", "") == "f64" && e.value("threads", 0) == threads)) entries.push_back(e);
  entries.push_back({{"dtype", "f64"}, {"threads", threads}, {"units_measured", units_measured}, {"calibration", cj}});
  write_machine_section(path, "rtamm_calibration",
                        {{"calibrations", entries},
                         {"method", "a scale per formula term fitted to the units of the same dtype and threads in "
                                    "machine.rtamm.json (revision in fitted_on)"}},
                        {"rtamm"});
  if (o.has("--out")) {  // the training sweep itself, for analysis (docs/json.md#rtamm)
    json tr = {{"schema", "rooflab.rtamm_training/1"}, {"created", utc_timestamp()}, {"machine", fs::absolute(path).string()},
               {"calibration", cj}, {"plans", json::array()}, {"shapes", json::array()}};
    for (const Plan& p : plans) tr["plans"].push_back(plan_id(p));
    for (size_t i = 0; i < shapes.size(); ++i)
      tr["shapes"].push_back({{"category", shapes[i].category}, {"dims", dims[i]}, {"measured_ns", t[i]}});
    ensure_writable_dir(o.path("--out"));
    write_json_atomic(o.path("--out") / "rtamm_training.json", tr);
  }
  std::printf("rtamm calibrate: %zu shapes x %zu plans; scales load_a %.3f load_b %.3f load_c %.3f load_c_ahead %.3f "
              "store_c %.3f sync %.3f overlap %.3f kernel",
              shapes.size(), plans.size(), cj["load_a"].get<double>(), cj["load_b"].get<double>(),
              cj["load_c"].get<double>(), cj["load_c_ahead"].get<double>(), cj["store_c"].get<double>(),
              cj["sync"].get<double>(), cj["overlap"].get<double>());
  for (double k : uc.calib.kernel) std::printf(" %.3f", k);
  const json& dr = uc.calib.provenance["decision_refinement"];
  std::printf("\n  training set: median |pred/meas - 1| %.1f%% -> %.1f%%, sweep accuracy %.1f%% -> %.1f%% "
              "(least squares alone %.1f%%; refined from the %s)\n",
              100 * before.first, 100 * after.first, 100 * before.second, 100 * after.second,
              100 * dr["least_squares"]["training_within_5pct"].get<double>(),
              dr["refined"]["started_from"].get<std::string>().c_str());
  std::printf("  wrote %s\n", machine_section_path(path, "rtamm_calibration").string().c_str());
  return 0;
}

int cmd_rescore(const Values& o) {
  // No plan runs here: the units and the sweep times are compared where they were measured.
  const fs::path path = o.path("--machine");
  const json in = read_json_file(o.path("--in"));
  require_schema(in, "rooflab.rtamm", 1, o.path("--in"));
  const int threads = in.contains("config") ? in["config"].value("threads", 2) : 2;
  Units u = load_units(path, "f64", threads, true, false);
  const std::vector<Block> pool = pool_of(u);
  const json out = rescore(Engine(plans_of(pool), u), in);
  ensure_writable_dir(o.path("--out"));
  write_json_atomic(o.path("--out") / "rtamm_rescored.json", out);
  const json& s = out["summary"];
  std::printf("rtamm rescore: %zu shapes, accuracy %.2f%% (quiet shapes %s), median loss %.2f%%, mean gain over "
              "static %.2f%%\n", out["shapes"].size(), 100 * s["decision_accuracy"].get<double>(),
              s["decision_accuracy_quiet_shapes"].dump().c_str(), 100 * s["median_loss_vs_oracle"].get<double>(),
              100 * s["mean_gain_over_static"].get<double>());
  return 0;
}
}  // namespace

namespace {
// The options every subcommand shares, declared once.
args::Spec with_machine(args::Spec s) {
  return s.path("--machine", args::PathKind::input_file, "FILE", "machine.json (from `rooflab characterize`)")
      .required()
      .hint("; run `rooflab characterize` first (--out DIR)");
}
args::Spec& timed(args::Spec& s) {
  return s.profile("shapes, pool size and quiet budget (below)", "paper")
      .threads("OpenMP threads", 2)
      .real("--quiet-budget", "S", "seconds this command waits in all for a quiet machine", 0, 86400);
}

std::vector<args::Command> table() {
  using args::PathKind;
  using args::Spec;
  return {
      {"pool", "print the blocking-factor pool derived from machine.json's measured caches",
       [] {
         return with_machine(Spec("rooflab rtamm pool", "the blocking-factor pool of machine.json's measured caches"))
             .choice("--dtype", {"f64", "f32"}, "element type", "f64")
             .integer("--pool-size", "P", "triples in the pool (default 6)", 1, 64);
       },
       cmd_pool, nullptr, false},
      {"units", "measure the unit costs OP_load / OP_store / OP_kernel of every pool triple -> machine.json \"rtamm\"",
       [] {
         Spec s = with_machine(Spec("rooflab rtamm units", "measure the unit costs OP_load / OP_store / OP_kernel of "
                                                           "every pool triple into machine.json's \"rtamm\" section"));
         timed(s).choice("--dtype", {"f64", "f32"}, "element type", "f64")
             .integer("--pool-size", "P", "triples in the derived pool (default: by profile)", 1, 64)
             .string("--pool", "MxNxK,...", "this pool instead of the derived one")
             .epilog(kProfiles);
         return s;
       },
       cmd_units, nullptr, false},
      {"evaluate", "adaptive vs static vs oracle (every plan timed) -> DIR/rtamm.json (f64)",
       [] {
         Spec s = with_machine(Spec("rooflab rtamm evaluate", "adaptive vs static vs oracle, every plan timed -> "
                                                              "DIR/rtamm.json (f64)"));
         timed(s).integer("--shapes", "N", "evaluation shapes (default: by profile)", 1, 1000000)
             .integer("--first", "I", "start at shape I of the evaluation's sequence (run it in parts)", 0, 1000000, 0)
             .path("--out", PathKind::output_dir, "DIR", "where rtamm.json goes", ".")
             .integer("--samples", "S", "timed samples per plan and shape", 1, 100, 3)
             .integer("--remeasure-rounds", "R",
                      "where chosen and oracle differ, re-time both in R ABBA rounds before counting a miss (0: off)",
                      0, 1000, 24)
             .string("--base", "S,M,B", "the shape generator's base sizes (default 48,128,256)")
             .epilog(kProfiles);
         return s;
       },
       cmd_evaluate, nullptr, false},
      {"calibrate", "fit a scale per formula term to every plan timed on training shapes -> machine.rtamm_calibration.json",
       [] {
         Spec s = with_machine(Spec(
             "rooflab rtamm calibrate",
             "time every plan on a training set of shapes (the evaluation's generator with another seed, the "
             "evaluation's shapes excluded) and fit a scale per formula term into machine.rtamm_calibration.json, "
             "tied to the units it was fitted on (after `units` it is stale and not applied: rerun it)"));
         timed(s).integer("--shapes", "N", "training shapes (default: by profile)", 6, 100000)
             .integer("--seed", "S", "the training set's seed (1 is the evaluation's)", 2, int64_t(1) << 40, 2)
             .integer("--samples", "S", "timed samples per plan and shape", 1, 100, 3)
             .string("--base", "S,M,B", "the shape generator's base sizes (default 48,128,256)")
             .path("--out", PathKind::output_dir, "DIR", "also write the training sweep to DIR/rtamm_training.json")
             .path("--training-in", PathKind::input_file, "FILE",
                   "fit on this earlier training sweep (rtamm_training.json, same pool) instead of timing one")
             .epilog(kProfiles);
         return s;
       },
       cmd_calibrate, nullptr, false},
      {"rescore", "an evaluation's decisions recomputed with machine.json's unit costs (no timing)",
       [] {
         return with_machine(Spec("rooflab rtamm rescore", "an evaluation's decisions recomputed with the machine's "
                                                           "(re-measured) unit costs, scored against its sweep times"))
             .path("--in", PathKind::input_file, "FILE", "the evaluation (rtamm.json)")
             .required()
             .hint("; run `rooflab rtamm evaluate` first")
             .path("--out", PathKind::output_dir, "DIR", "where rtamm_rescored.json goes")
             .required();
       },
       cmd_rescore, nullptr, false},
  };
}
}  // namespace

int rtamm_main(const std::vector<std::string>& argv) {
  return args::dispatch("rooflab rtamm", "RTAMM: blocking pool, unit costs, calibration, adaptive-vs-oracle evaluation",
                        table(), argv);
}

}  // namespace rooflab::rtamm

// `rooflab rtamm`: pool | units | evaluate (see kUsage).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "harness/diagnostics.hpp"
#include "apps/commands.hpp"
#include "apps/rtamm/units.hpp"
#include "harness/error.hpp"
#include "apps/rtamm/evaluate.hpp"

namespace rooflab::rtamm {
namespace {
namespace fs = std::filesystem;

const char* kUsage = R"(usage: rooflab rtamm <pool|units|evaluate|calibrate|rescore> [options]
  pool      print the blocking-factor pool derived from machine.json's measured caches
            --machine FILE [--dtype f64|f32] [--pool-size P]
  units     measure the unit costs OP_load / OP_store / OP_kernel of every pool triple and store
            them in machine.json's "rtamm" section
            --machine FILE [--profile P] [--threads T] [--dtype f64|f32] [--pool-size P]
            [--pool MxNxK,...] [--quiet-budget S]
  evaluate  adaptive vs static vs oracle (every plan timed) -> DIR/rtamm.json (f64)
            --machine FILE [--profile P] [--shapes N] [--threads T] [--out DIR]
            [--samples S] [--base S,M,B] [--quiet-budget S]
  calibrate time every plan on a TRAINING set of shapes (the evaluation's generator with another
            seed; any shape of the evaluation set excluded) and fit a scale per formula term
            (per triple for the kernel) to those times; stored with the units it was fitted to
            (rerun it after `units`, which drops it)
            --machine FILE [--profile P] [--shapes N] [--seed S] [--threads T] [--samples S]
            [--base S,M,B] [--quiet-budget S] [--out FILE]  (the training sweep, rooflab.rtamm_training/1)
  rescore   an evaluation's decisions recomputed with the machine's (re-measured) unit costs,
            scored against its sweep times (no timing)   --machine FILE --in RTAMM.json --out FILE
profiles (--profile; paper = full, the default):
            units --pool-size   calibrate --shapes   evaluate --shapes   --quiet-budget
  smoke           3                  12                   6                 5 s
  quick           6                  24                  48                20 s
  full            6                 150                1000               300 s
  (the options override); evaluate's base sizes 48,128,256. --quiet-budget S: the most this
  command waits in all for a quiet machine before its samples; when spent it measures on and
  marks the output ("quiet_budget": {"exhausted": true, ...}).
)";

struct Usage : Error {
  using Error::Error;
};

struct Opts {
  std::map<std::string, std::string> kv;
  Opts(const std::vector<std::string>& a, size_t from, const std::vector<std::string>& known) {
    for (size_t i = from; i < a.size(); ++i) {
      std::string k = a[i], v;
      const size_t eq = k.find('=');
      if (eq != std::string::npos) v = k.substr(eq + 1), k = k.substr(0, eq);
      else if (i + 1 < a.size()) v = a[++i];
      else throw Usage(k + " needs a value");
      if (std::find(known.begin(), known.end(), k) == known.end()) throw Usage("unknown option '" + k + "'");
      kv[k] = v;
    }
  }
  std::string get(const std::string& k, const std::string& def = "") const {
    const auto it = kv.find(k);
    return it == kv.end() ? def : it->second;
  }
  int64_t integer(const std::string& k, int64_t def, int64_t lo, int64_t hi) const {
    const std::string s = get(k);
    if (s.empty()) return def;
    size_t pos = 0;
    int64_t v = 0;
    try {
      v = std::stoll(s, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    if (pos != s.size() || pos == 0) throw Usage(k + " must be an integer, got '" + s + "'");
    if (v < lo || v > hi)
      throw Usage(k + " must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " + s);
    return v;
  }
};

// smoke | quick | full (paper: full, so that run_all.sh passes its profile through).
std::string profile_of(const Opts& o) {
  const std::string p = o.get("--profile", "full");
  if (p == "smoke" || p == "quick" || p == "full") return p;
  if (p == "paper") return "full";
  throw Usage("--profile must be quick or full (or smoke; paper = full), got '" + p + "'");
}
int64_t by_profile(const std::string& p, int64_t smoke, int64_t quick, int64_t full) {
  return p == "smoke" ? smoke : p == "quick" ? quick : full;
}
// The command's total wait for a quiet machine (diag::QuietBudget): --quiet-budget or the
// profile's default. Every diag::wait_quiet of the command draws from it.
void set_budget(const Opts& o, const std::string& profile) {
  const std::string s = o.get("--quiet-budget");
  double b = diag::default_quiet_budget_s(profile);
  if (!s.empty()) {
    size_t pos = 0;
    try {
      b = std::stod(s, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    if (pos != s.size() || pos == 0 || !(b >= 0) || b > 86400)
      throw Usage("--quiet-budget must be seconds in [0, 86400], got '" + s + "'");
  }
  diag::set_quiet_budget(b);
}

fs::path machine_path(const Opts& o) {
  std::string m = o.get("--machine");
  if (m.empty()) throw Usage("needs --machine FILE (a machine.json from `rooflab characterize`)");
  return m;
}

DType dtype_of(const Opts& o) {
  const auto d = parse_dtype(o.get("--dtype", "f64"));
  if (!d) throw Usage("--dtype must be f64 or f32, got '" + o.get("--dtype") + "'");
  return *d;
}

PoolRules rules_for(const json& machine, const fs::path& path, DType dt) {
  const gemm::Ukernel<double> u64 = gemm::ukernel<double>(best_isa());
  const gemm::Ukernel<float> u32 = gemm::ukernel<float>(best_isa());
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
  for (const Block& b : pool)
    s += (s.empty() ? "" : ",") + std::to_string(b.mcg) + "x" + std::to_string(b.ncg) + "x" + std::to_string(b.kcg);
  return s;
}

int cmd_pool(const Opts& o) {
  const fs::path path = machine_path(o);
  const json m = read_machine_json(path);
  const PoolRules r = rules_for(m, path, dtype_of(o));
  const auto pool = derive_pool(r, size_t(o.integer("--pool-size", 6, 1, 64)));
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

int cmd_units(const Opts& o) {
  const fs::path path = machine_path(o);
  const json m = read_machine_json(path);
  const DType dt = dtype_of(o);
  const PoolRules r = rules_for(m, path, dt);
  const int threads = int(o.integer("--threads", 2, 1, 1024));
  const std::string profile = profile_of(o);
  set_budget(o, profile);
  const auto pool = o.get("--pool").empty()
                        ? derive_pool(r, size_t(o.integer("--pool-size", by_profile(profile, 3, 6, 6), 1, 64)))
                        : parse_pool(o.get("--pool"));
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
  return 0;
}

// The evaluation's shape generator (seed 1) with --base.
ShapeConfig shape_config(const Opts& o) {
  ShapeConfig sc;
  if (!o.get("--base").empty()) {
    std::stringstream ss(o.get("--base"));
    char c1 = 0, c2 = 0;
    if (!(ss >> sc.base[0] >> c1 >> sc.base[1] >> c2 >> sc.base[2]) || c1 != ',' || c2 != ',' || sc.base[0] < 1 ||
        sc.base[1] < 1 || sc.base[2] < 1 || sc.base[2] > 4096)
      throw Usage("--base must be three sizes S,M,B in [1, 4096], got '" + o.get("--base") + "'");
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

int cmd_evaluate(const Opts& o) {
  const fs::path path = machine_path(o);
  const std::string profile = profile_of(o);
  const size_t nshapes = size_t(o.integer("--shapes", by_profile(profile, 6, 48, 1000), 1, 1000000));
  set_budget(o, profile);
  const int threads = int(o.integer("--threads", 2, 1, 1024));
  const fs::path out_dir = o.get("--out", ".");
  const ShapeConfig sc = shape_config(o);
  const json m = read_machine_json(path);
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
  eo.samples = int(o.integer("--samples", 3, 1, 100));
  eo.out_file = out_dir / "rtamm.json";
  eo.config = {{"machine", fs::absolute(path).string()}, {"profile", profile}, {"shapes", nshapes},
               {"threads", threads}, {"dtype", "f64"}, {"isa", u.isa}, {"samples", eo.samples},
               {"min_sample_s", eo.min_sample_s}, {"base_sizes", {sc.base[0], sc.base[1], sc.base[2]}},
               {"ratios", "1..10 on one of M, N, K"}, {"jitter", "[0.8, 1.25) per dimension"},
               {"accuracy_threshold", 1.05}, {"pool", pool_string(pool)}, {"static_plan", plan_id(stat)},
               {"plans", engine.plans().size()}, {"calibrated", u.calib.present}};
  const auto shapes = make_shapes(nshapes, sc);
  const json out = evaluate(engine, stat, shapes, eo);
  write_json_atomic(eo.out_file, out);
  const json& s = out["summary"];
  auto pct = [](const json& x) { return x.is_number() ? 100.0 * x.get<double>() : NAN; };
  std::printf("rtamm evaluate: %zu shapes x %zu plans, %d threads, %.0f s\n", shapes.size(), engine.plans().size(),
              threads, out["wall_seconds"].get<double>());
  std::printf("  decision accuracy (within 5%% of the oracle): %.2f%%\n", pct(s["decision_accuracy"]));
  std::printf("  noise-aware (within max(5%%, the shape's repeatability)): %.2f%%; repeatability median %.2f%%, "
              "p90 %.2f%%; %s engine\n", pct(s["decision_accuracy_noise_aware"]), pct(s["median_repeatability"]),
              pct(s["p90_repeatability"]), u.calib.present ? "calibrated" : "uncalibrated");
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

int cmd_calibrate(const Opts& o) {
  const fs::path path = machine_path(o);
  const int threads = int(o.integer("--threads", 2, 1, 1024));
  const std::string profile = profile_of(o);
  const size_t n = size_t(o.integer("--shapes", by_profile(profile, 12, 24, 150), 6, 100000));
  set_budget(o, profile);
  const uint64_t seed = uint64_t(o.integer("--seed", 2, 2, int64_t(1) << 40));
  const ShapeConfig ev = shape_config(o);
  json m = read_machine_json(path);
  Units u = load_units(path, "f64", threads);
  u.calib = Calibration{};
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
  for (const Shape& s : make_shapes(2 * n, tc)) {
    const std::vector<int64_t> key = {s.d.m, s.d.n, s.d.k, s.d.lda, s.d.ldb, s.d.ldc};
    if (std::find(eval_keys.begin(), eval_keys.end(), key) != eval_keys.end()) {
      ++excluded;
      continue;
    }
    if (shapes.size() < n) shapes.push_back(s), dims.push_back(key);
  }
  const std::vector<Plan> plans = plans_of(pool);
  EvalOptions eo;
  eo.samples = int(o.integer("--samples", 3, 1, 100));
  std::fprintf(stderr, "rtamm calibrate: %zu training shapes (seed %llu; %zu of the evaluation's excluded) x %zu plans\n",
               shapes.size(), (unsigned long long)seed, excluded, plans.size());
  json failures = json::array();
  const auto t = sweep(plans, shapes, eo, failures);
  if (!failures.empty()) throw Error("rtamm calibrate: plan runs FAILED verification: " + failures.dump());
  std::vector<gemm::Dims> ds;
  for (const Shape& s : shapes) ds.push_back(s.d);
  const auto before = fit_quality(Engine(plans, u), shapes, t);
  Units uc = u;
  uc.calib = fit_calibration(u, plans, ds, t);
  const auto after = fit_quality(Engine(plans, uc), shapes, t);
  json sec = m["rtamm"];
  std::string units_measured;
  for (json& e : sec["units"])
    if (e.value("dtype", "") == "f64" && e.value("threads", 0) == threads) units_measured = e.value("measured", "");
  uc.calib.provenance = {
      {"method", "rooflab rtamm calibrate: non-negative least squares of the relative error over every plan x "
                 "training shape, features = the uncalibrated formula terms (kernels/rtamm/cost.cpp calib_features); "
                 "the unit costs themselves stay the micro-benchmark's"},
      {"created", utc_timestamp()}, {"units_measured", units_measured}, {"training_seed", seed},
      {"evaluation_seed", ev.seed}, {"base_sizes", {ev.base[0], ev.base[1], ev.base[2]}},
      {"training_shapes", shapes.size()}, {"excluded_evaluation_shapes", excluded}, {"samples", eo.samples},
      {"threads", threads}, {"profile", profile}, {"quiet_budget", diag::quiet_budget().to_json()},
      {"training_median_abs_error", {{"uncalibrated", before.first}, {"calibrated", after.first}}},
      {"training_sweep_accuracy", {{"uncalibrated", before.second}, {"calibrated", after.second}}},
      {"training_dims", dims}};
  const json cj = to_json(uc)["calibration"];
  for (json& e : sec["units"])
    if (e.value("dtype", "") == "f64" && e.value("threads", 0) == threads) e["calibration"] = cj;
  write_machine_section(path, "rtamm", sec);
  if (!o.get("--out").empty()) {  // the training sweep itself, for analysis (docs/json.md#rtamm)
    json tr = {{"schema", "rooflab.rtamm_training/1"}, {"created", utc_timestamp()}, {"machine", fs::absolute(path).string()},
               {"calibration", cj}, {"plans", json::array()}, {"shapes", json::array()}};
    for (const Plan& p : plans) tr["plans"].push_back(plan_id(p));
    for (size_t i = 0; i < shapes.size(); ++i)
      tr["shapes"].push_back({{"category", shapes[i].category}, {"dims", dims[i]}, {"measured_ns", t[i]}});
    write_json_atomic(o.get("--out"), tr);
  }
  std::printf("rtamm calibrate: %zu shapes x %zu plans; scales load_a %.3f load_b %.3f load_c %.3f load_c_ahead %.3f "
              "store_c %.3f sync %.3f overlap %.3f kernel",
              shapes.size(), plans.size(), cj["load_a"].get<double>(), cj["load_b"].get<double>(),
              cj["load_c"].get<double>(), cj["load_c_ahead"].get<double>(), cj["store_c"].get<double>(),
              cj["sync"].get<double>(), cj["overlap"].get<double>());
  for (double k : uc.calib.kernel) std::printf(" %.3f", k);
  std::printf("\n  training set: median |pred/meas - 1| %.1f%% -> %.1f%%, sweep accuracy %.1f%% -> %.1f%%\n",
              100 * before.first, 100 * after.first, 100 * before.second, 100 * after.second);
  std::printf("  wrote the calibration into the \"rtamm\" section of %s\n", path.string().c_str());
  return 0;
}

int cmd_rescore(const Opts& o) {
  const fs::path path = machine_path(o);
  if (o.get("--in").empty() || o.get("--out").empty()) throw Usage("rescore needs --in RTAMM.json and --out FILE");
  const json in = read_json_file(o.get("--in"));
  require_schema(in, "rooflab.rtamm", 1, o.get("--in"));
  const int threads = in.contains("config") ? in["config"].value("threads", 2) : 2;
  Units u = load_units(path, "f64", threads);
  const std::vector<Block> pool = pool_of(u);
  const json out = rescore(Engine(plans_of(pool), u), in);
  write_json_atomic(o.get("--out"), out);
  const json& s = out["summary"];
  std::printf("rtamm rescore: %zu shapes, accuracy %.2f%% (quiet shapes %s), median loss %.2f%%, mean gain over "
              "static %.2f%%\n", out["shapes"].size(), 100 * s["decision_accuracy"].get<double>(),
              s["decision_accuracy_quiet_shapes"].dump().c_str(), 100 * s["median_loss_vs_oracle"].get<double>(),
              100 * s["mean_gain_over_static"].get<double>());
  return 0;
}
}  // namespace

int rtamm_main(const std::vector<std::string>& args) {
  try {
    if (args.empty() || args[0] == "help" || args[0] == "--help") {
      std::fputs(kUsage, args.empty() ? stderr : stdout);
      return args.empty() ? 2 : 0;
    }
    const std::string& sub = args[0];
    if (sub == "pool") return cmd_pool(Opts(args, 1, {"--machine", "--dtype", "--pool-size"}));
    if (sub == "units")
      return cmd_units(Opts(args, 1,
                            {"--machine", "--profile", "--threads", "--dtype", "--pool-size", "--pool", "--quiet-budget"}));
    if (sub == "evaluate")
      return cmd_evaluate(Opts(args, 1, {"--machine", "--profile", "--shapes", "--threads", "--out", "--samples",
                                         "--base", "--quiet-budget"}));
    if (sub == "calibrate")
      return cmd_calibrate(Opts(args, 1, {"--machine", "--profile", "--shapes", "--seed", "--threads", "--samples",
                                          "--base", "--quiet-budget", "--out"}));
    if (sub == "rescore") return cmd_rescore(Opts(args, 1, {"--machine", "--in", "--out"}));
    throw Usage("unknown rtamm command '" + sub + "' (pool, units, evaluate, calibrate, rescore)");
  } catch (const Usage& e) {
    std::fprintf(stderr, "rooflab rtamm: %s\n%s", e.what(), kUsage);
    return 2;
  }
}

}  // namespace rooflab::rtamm

// `rooflab rtamm`: pool | units | evaluate (see kUsage).
#include <omp.h>

#include <cstdio>
#include <filesystem>
#include <sstream>

#include "harness/error.hpp"
#include "kernels/rtamm/evaluate.hpp"

namespace rooflab::rtamm {
namespace {
namespace fs = std::filesystem;

const char* kUsage = R"(usage: rooflab rtamm <pool|units|evaluate> [options]
  pool      print the blocking-factor pool derived from machine.json's measured caches
            --machine FILE [--dtype f64|f32] [--pool-size P]
  units     measure the unit costs OP_load / OP_store / OP_kernel of every pool triple and store
            them in machine.json's "rtamm" section
            --machine FILE [--threads T] [--dtype f64|f32] [--pool-size P] [--pool MxNxK,...]
  evaluate  adaptive vs static vs oracle (every plan timed) -> DIR/rtamm.json (f64)
            --machine FILE [--profile quick|full] [--shapes N] [--threads T] [--out DIR]
            [--samples S] [--base S,M,B]
  rescore   an evaluation's decisions recomputed with the machine's (re-measured) unit costs,
            scored against its sweep times (no timing)   --machine FILE --in RTAMM.json --out FILE
profiles: quick = 48 shapes, full = 1000 shapes (--shapes overrides); base sizes 48,128,256
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
  const json m = read_json_file(path);
  require_schema(m, "rooflab.machine", 1, path);
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
    "rooflab rtamm units: the executor's own phases timed on one block shape at a time (kernels/rtamm/units.cpp); "
    "op_load_a/b/c and op_store_c: ns per element packing / copying every block-sized tile of a source region of "
    "L2/2 (l2), L3/2 (l3) or 4 x L3 (dram) bytes after a warm-up pass; op_kernel_ns_per_flop: the kernel phase on "
    "packed blocks at Kcg; kernel_call_ns + kernel_k_ns * kc: per micro-kernel call, fitted from Kcg and Kcg/4; "
    "overlap_rho: share of the shorter of kernel and A+B packing hidden when packed ahead between the tiles; "
    "sync_ns: one empty OpenMP phase. Best of 9 samples of >= 1 ms each, taken round robin over all quantities of all blocks (sync: 200 samples of >= 20 us).";

int cmd_units(const Opts& o) {
  const fs::path path = machine_path(o);
  const json m = read_json_file(path);
  require_schema(m, "rooflab.machine", 1, path);
  const DType dt = dtype_of(o);
  const PoolRules r = rules_for(m, path, dt);
  const int threads = int(o.integer("--threads", 2, 1, 1024));
  const auto pool = o.get("--pool").empty() ? derive_pool(r, size_t(o.integer("--pool-size", 6, 1, 64)))
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
  entries.push_back(ju);
  sec["units"] = entries;
  sec["method"] = kUnitsMethod;
  sec["pool_rules"] =
      "Mcg % MR == 0, Ncg % NR == 0, Kcg % 8 == 0; (c1) Kcg*NR*s <= L1/2; (c2) Mcg*Kcg*s <= L2/2; (c3) "
      "2(Mcg*Kcg + Kcg*Ncg + Mcg*Ncg)*s <= L3/2 with caches.measured; candidates Kcg in 64..(c1) step 64, Mcg the "
      "largest within (c2) and its half, Ncg in {128, 256, 512, 1024, largest within (c3)}; thinned by farthest-"
      "point selection in log space from the static triple";
  merge_machine_section(path, "rtamm", sec);
  std::printf("%-16s %8s %8s %8s %8s %10s %7s\n", "block", "ldA l3", "ldB l3", "ldC l3", "stC l3", "kern ns/f", "rho l3");
  for (const BlockUnits& b : u.blocks)
    std::printf("%-16s %8.3f %8.3f %8.3f %8.3f %10.5f %7.2f\n",
                (std::to_string(b.b.mcg) + "x" + std::to_string(b.b.ncg) + "x" + std::to_string(b.b.kcg)).c_str(),
                b.load_a[kL3], b.load_b[kL3], b.load_c[kL3], b.store_c[kL3], b.op_kernel, b.rho[kL3]);
  std::printf("sync %.0f ns; wrote the \"rtamm\" section of %s\n", u.sync_ns, path.string().c_str());
  return 0;
}

int cmd_evaluate(const Opts& o) {
  const fs::path path = machine_path(o);
  const std::string profile = o.get("--profile", "full");
  if (profile != "quick" && profile != "full") throw Usage("--profile must be quick or full, got '" + profile + "'");
  const size_t nshapes = size_t(o.integer("--shapes", profile == "quick" ? 48 : 1000, 1, 1000000));
  const int threads = int(o.integer("--threads", 2, 1, 1024));
  const fs::path out_dir = o.get("--out", ".");
  ShapeConfig sc;
  if (!o.get("--base").empty()) {
    std::stringstream ss(o.get("--base"));
    char c1 = 0, c2 = 0;
    if (!(ss >> sc.base[0] >> c1 >> sc.base[1] >> c2 >> sc.base[2]) || c1 != ',' || c2 != ',' || sc.base[0] < 1 ||
        sc.base[1] < 1 || sc.base[2] < 1 || sc.base[2] > 4096)
      throw Usage("--base must be three sizes S,M,B in [1, 4096], got '" + o.get("--base") + "'");
  }
  const json m = read_json_file(path);
  require_schema(m, "rooflab.machine", 1, path);
  Units u = load_units(path, "f64", threads);
  std::vector<Block> pool;
  for (const auto& b : u.blocks) pool.push_back(b.b);
  // The pool must still satisfy the constraints of the caches it was derived from and of the
  // caches machine.json reports now.
  check_pool(pool, {8, u.mr, u.nr, u.caches});
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
               {"plans", engine.plans().size()}};
  const auto shapes = make_shapes(nshapes, sc);
  const json out = evaluate(engine, stat, shapes, eo);
  write_json_atomic(eo.out_file, out);
  const json& s = out["summary"];
  auto pct = [](const json& x) { return x.is_number() ? 100.0 * x.get<double>() : NAN; };
  std::printf("rtamm evaluate: %zu shapes x %zu plans, %d threads, %.0f s\n", shapes.size(), engine.plans().size(),
              threads, out["wall_seconds"].get<double>());
  std::printf("  decision accuracy (within 5%% of the oracle): %.2f%%\n", pct(s["decision_accuracy"]));
  std::printf("  gain over static: mean %.2f%%, max %.2f%% (oracle: mean %.2f%%)\n", pct(s["mean_gain_over_static"]),
              pct(s["max_gain_over_static"]), pct(s["mean_oracle_gain_over_static"]));
  std::printf("  loss vs oracle: mean %.2f%%, max %.2f%%\n", pct(s["mean_loss_vs_oracle"]), pct(s["max_loss_vs_oracle"]));
  std::printf("  decision overhead: mean %.4f%% (shapes >= 256^3: mean %.4f%%, max %.4f%%)\n",
              pct(s["mean_decision_overhead"]), pct(s["mean_decision_overhead_ge_256cubed"]),
              pct(s["max_decision_overhead_ge_256cubed"]));
  std::printf("  wrote %s\n", eo.out_file.string().c_str());
  if (!out["failures"].empty()) {
    std::fprintf(stderr, "rtamm evaluate: %zu plan runs FAILED verification (see \"failures\" in %s)\n",
                 out["failures"].size(), eo.out_file.string().c_str());
    return 3;
  }
  return 0;
}
int cmd_rescore(const Opts& o) {
  const fs::path path = machine_path(o);
  if (o.get("--in").empty() || o.get("--out").empty()) throw Usage("rescore needs --in RTAMM.json and --out FILE");
  const json in = read_json_file(o.get("--in"));
  require_schema(in, "rooflab.rtamm", 1, o.get("--in"));
  const int threads = in.contains("config") ? in["config"].value("threads", 2) : 2;
  Units u = load_units(path, "f64", threads);
  std::vector<Block> pool;
  for (const auto& b : u.blocks) pool.push_back(b.b);
  check_pool(pool, {8, u.mr, u.nr, u.caches});
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
      return cmd_units(Opts(args, 1, {"--machine", "--threads", "--dtype", "--pool-size", "--pool"}));
    if (sub == "evaluate")
      return cmd_evaluate(
          Opts(args, 1, {"--machine", "--profile", "--shapes", "--threads", "--out", "--samples", "--base"}));
    if (sub == "rescore") return cmd_rescore(Opts(args, 1, {"--machine", "--in", "--out"}));
    throw Usage("unknown rtamm command '" + sub + "' (pool, units, evaluate, rescore)");
  } catch (const Usage& e) {
    std::fprintf(stderr, "rooflab rtamm: %s\n%s", e.what(), kUsage);
    return 2;
  }
}

}  // namespace rooflab::rtamm

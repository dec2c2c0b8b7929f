// sfc_ca knobs: the grid, autotuning, the rooflab.gemm_knobs/1 file, nearest neighbour and
// `knobs:<method>` resolution (the analytic model is knobs_model.cpp, the CLI apps/gemm_knobs.cpp).
#include "kernels/gemm/knobs.hpp"

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <set>
#include <tuple>

#include "harness/diagnostics.hpp"
#include "harness/error.hpp"
#include "harness/json_io.hpp"
#include "harness/measure.hpp"
#include "roofline/machine.hpp"

namespace rooflab::gemm::knobs {
namespace {
constexpr const char* kSchema = "rooflab.gemm_knobs";

int64_t parse_int(const std::string& s, const std::string& what, int64_t lo, int64_t hi) {
  size_t pos = 0;
  int64_t v = 0;
  try {
    v = std::stoll(s, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (s.empty() || pos != s.size() || v < lo || v > hi)
    throw Error(what + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" +
                s + "'");
  return v;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t b = 0;
  for (size_t e; (e = s.find(sep, b)) != std::string::npos; b = e + 1) out.push_back(s.substr(b, e - b));
  out.push_back(s.substr(b));
  return out;
}

std::string join(const std::vector<int64_t>& v) {
  std::string s;
  for (int64_t x : v) {
    if (!s.empty()) s += ',';
    s += std::to_string(x);
  }
  return s;
}
}  // namespace

std::string to_string(const Knob& k) {
  return "k_layers:" + std::to_string(k.k_layers) + "/kbf:" + std::to_string(k.kbf) + "/bk:" + std::to_string(k.bk);
}

std::string to_string(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k) + " " +
         std::string(rooflab::to_string(s.dtype)) + " " + std::string(rooflab::to_string(s.isa)) +
         " threads:" + std::to_string(s.threads);
}

Shape parse_shape(const std::string& text, DType dt, int threads, Isa isa) {
  const auto parts = split(text, 'x');
  if (parts.size() != 3) throw Error("shape must be MxNxK, got '" + text + "'");
  Shape s;
  s.m = parse_int(parts[0], "M of '" + text + "'", 1, 1 << 20);
  s.n = parse_int(parts[1], "N of '" + text + "'", 1, 1 << 20);
  s.k = parse_int(parts[2], "K of '" + text + "'", 1, 1 << 20);
  s.dtype = dt, s.threads = threads, s.isa = isa;
  if (threads < 1) throw Error("threads must be >= 1, got " + std::to_string(threads));
  return s;
}

Grid parse_grid(const std::string& spec) {
  Grid g;
  std::set<std::string> seen;
  for (const std::string& item : split(spec, '/')) {
    const size_t colon = item.find(':');
    const std::string key = item.substr(0, colon);
    if (colon == std::string::npos || (key != "k_layers" && key != "kbf" && key != "bk"))
      throw Error("knob grid '" + spec + "': expected key:v1,v2,... with key k_layers, kbf or bk, got '" + item + "'");
    if (!seen.insert(key).second) throw Error("knob grid '" + spec + "': " + key + " given twice");
    std::vector<int64_t> vals;
    for (const std::string& v : split(item.substr(colon + 1), ',')) {
      const int64_t x = parse_int(v, "knob grid " + key + " value", 1, 4096);
      if (std::find(vals.begin(), vals.end(), x) != vals.end())
        throw Error("knob grid '" + spec + "': " + key + " lists " + v + " twice");
      vals.push_back(x);
    }
    (key == "k_layers" ? g.k_layers : key == "kbf" ? g.kbf : g.bk) = vals;
  }
  return g;
}

std::string to_string(const Grid& g) {
  return "k_layers:" + join(g.k_layers) + "/kbf:" + join(g.kbf) + "/bk:" + join(g.bk);
}

std::vector<Knob> candidates(const Grid& g, const Shape& s) {
  std::vector<Knob> out;
  const Dims d{s.m, s.n, s.k, s.k, s.n, s.n};
  for (int64_t bk : g.bk)
    for (int64_t l : g.k_layers)
      for (int64_t f : g.kbf) {
        SfcPlan p = kSfcDefault;
        p.bk = bk, p.k_layers = l, p.kbf = f;
        try {
          check_sfc_plan(p, d);
        } catch (const Error&) {
          continue;
        }
        out.push_back({l, f, bk});
      }
  if (out.empty())
    throw Error("knob grid " + to_string(g) + ": no valid sfc_ca knob for " + to_string(s) +
                " (k_layers and kbf must fit the K blocks; include k_layers 1 and kbf 1)");
  return out;
}

Case sfc_case(const Shape& s, const Knob& k) {
  Case c;
  c.family = "gemm";
  c.variant = "sfc_ca";
  c.isa = s.isa;
  c.dtype = s.dtype;
  c.dims = {s.m, s.n, s.k};
  c.params = {{"k_layers", std::to_string(k.k_layers)}, {"kbf", std::to_string(k.kbf)}};
  if (k.bk != kSfcDefault.bk) c.params.emplace_back("bk", std::to_string(k.bk));
  c.threads = s.threads;
  return c;
}

// ---- Autotuning ----------------------------------------------------------------------------
const Timing& Tuned::best() const {
  if (timings.empty()) throw Error("no timings for " + to_string(shape));
  return *std::min_element(timings.begin(), timings.end(),
                           [](const Timing& a, const Timing& b) { return a.seconds < b.seconds; });
}

const Timing* Tuned::find(const Knob& k) const {
  for (const Timing& t : timings)
    if (t.knob == k) return &t;
  return nullptr;
}

const Timing* Tuned::best_among(const std::vector<Knob>& ks) const {
  const Timing* best = nullptr;
  for (const Knob& k : ks)
    if (const Timing* t = find(k); t && (!best || t->seconds < best->seconds)) best = t;
  return best;
}


Timing time_knob(const Shape& s, const Knob& k, int reps, double wait_s) {
  if (reps < 1) throw Error("gemm knobs: reps must be >= 1, got " + std::to_string(reps));
  const Case c = sfc_case(s, k);
  check_case(gemm_family(), c);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(s.threads);
  Timing t{k, std::numeric_limits<double>::infinity(), 0};
  try {
    auto inst = gemm_family().at(c.variant).make(c);
    const Verification v = inst->verify();
    if (!v.ok) throw Error(c.name() + " failed verification: " + v.detail);
    // A repetition is "quiet" when nothing else was runnable just before and just after it;
    // the fastest quiet one counts (the fastest of all when none was quiet, up to 3 x reps).
    // One run per sample from a reset instance; the verification run was the warm-up.
    measure::Policy p;
    p.repetitions = reps;
    p.max_samples = 3 * reps;
    p.runs_per_sample = 1;
    p.warmup = 0;
    p.quiet.threads = s.threads;
    p.quiet.wait_s = wait_s;        // each wait until the knob's common deadline:
    p.quiet.wait_total_s = wait_s;  // wait_s in all for this knob
    const measure::Result r = measure::measure([&] { inst->run(); }, p, [&] { inst->reset(); });
    t.seconds = r.best();
    t.quiet_reps = int(r.quiet_count());
  } catch (...) {
    omp_set_num_threads(saved);
    throw;
  }
  omp_set_num_threads(saved);
  return t;
}

Tuned autotune(const Shape& s, const Grid& g, const TuneOptions& o, const Tuned* known) {
  Tuned t;
  t.shape = s;
  if (known) t.timings = known->timings;
  for (const Knob& k : candidates(g, s)) {
    if (t.find(k)) continue;
    const Timing x = time_knob(s, k, o.reps, o.wait_quiet_s);
    const double sec = x.seconds;
    t.timings.push_back(x);
    if (o.progress) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "  %-26s %9.3f ms  %6.1f GFLOP/s%s", to_string(k).c_str(), sec * 1e3,
                    2.0 * double(s.m) * double(s.n) * double(s.k) / sec * 1e-9, x.quiet_reps ? "" : "  (noisy)");
      o.progress(buf);
    }
  }
  return t;
}

// ---- The file ------------------------------------------------------------------------------
nlohmann::json to_json(const Tuned& t) {
  nlohmann::json j = {{"m", t.shape.m},
                      {"n", t.shape.n},
                      {"k", t.shape.k},
                      {"dtype", rooflab::to_string(t.shape.dtype)},
                      {"threads", t.shape.threads},
                      {"isa", rooflab::to_string(t.shape.isa)}};
  nlohmann::json ts = nlohmann::json::array();
  for (const Timing& x : t.timings)
    ts.push_back({{"k_layers", x.knob.k_layers}, {"kbf", x.knob.kbf}, {"bk", x.knob.bk}, {"seconds", x.seconds},
                  {"quiet_reps", x.quiet_reps}});
  j["timings"] = ts;
  if (!t.timings.empty()) {
    const Timing& b = t.best();
    j["best"] = {{"k_layers", b.knob.k_layers}, {"kbf", b.knob.kbf}, {"bk", b.knob.bk}, {"seconds", b.seconds}};
  }
  return j;
}

Tuned tuned_from_json(const nlohmann::json& j) {
  try {
    Tuned t;
    t.shape.m = j.at("m").get<int64_t>();
    t.shape.n = j.at("n").get<int64_t>();
    t.shape.k = j.at("k").get<int64_t>();
    const auto dt = parse_dtype(j.at("dtype").get<std::string>());
    const auto isa = parse_isa(j.at("isa").get<std::string>());
    if (!dt || !isa) throw Error("unknown dtype or isa");
    t.shape.dtype = *dt, t.shape.isa = *isa;
    t.shape.threads = j.at("threads").get<int>();
    if (t.shape.m < 1 || t.shape.n < 1 || t.shape.k < 1 || t.shape.threads < 1) throw Error("non-positive size");
    for (const auto& x : j.at("timings")) {
      Timing tm{{x.at("k_layers").get<int64_t>(), x.at("kbf").get<int64_t>(), x.at("bk").get<int64_t>()},
                x.at("seconds").get<double>(), x.value("quiet_reps", 0)};
      if (!(tm.seconds > 0)) throw Error("non-positive time");
      t.timings.push_back(tm);
    }
    return t;
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("malformed entry: ") + e.what());
  }
}

KnobFile KnobFile::load(const std::filesystem::path& p, bool allow_missing) {
  KnobFile f;
  if (!std::filesystem::exists(p)) {
    if (allow_missing) return f;
    throw Error("knob file " + p.string() + " not found (made by `rooflab gemm-knobs tune --cache FILE` or `build-nn`)");
  }
  nlohmann::json j = read_json_file(p);
  require_schema(j, kSchema, 1, p);
  if (!j.contains("entries") || !j["entries"].is_array()) throw Error(p.string() + ": no \"entries\" array");
  size_t i = 0;
  for (const auto& e : j["entries"]) {
    try {
      f.entries.push_back(tuned_from_json(e));
    } catch (const Error& err) {
      throw Error(p.string() + ": entries[" + std::to_string(i) + "]: " + err.what());
    }
    ++i;
  }
  j.erase("entries");
  j.erase("schema");
  f.extra = j;
  return f;
}

void KnobFile::save(const std::filesystem::path& p) const {
  nlohmann::json j = extra;
  j["schema"] = std::string(kSchema) + "/1";
  nlohmann::json es = nlohmann::json::array();
  for (const Tuned& t : entries) es.push_back(to_json(t));
  j["entries"] = es;
  write_json_atomic(p, j);
}

const Tuned* KnobFile::find(const Shape& s) const {
  for (const Tuned& t : entries)
    if (t.shape == s) return &t;
  return nullptr;
}

void KnobFile::put(const Tuned& t) {
  for (Tuned& e : entries)
    if (e.shape == t.shape) {
      e = t;
      return;
    }
  entries.push_back(t);
}

// ---- Nearest neighbour ---------------------------------------------------------------------
NnChoice nn_choice(const std::vector<Tuned>& set, const Shape& s, const Grid& g) {
  const std::vector<Knob> cands = candidates(g, s);
  NnChoice best;
  // Order: the query's thread count first (k_layers splits the work among the threads), then
  // the nearest thread count in log2; the query's ISA, then the ISA nearest in width (the wider
  // on a tie); then the shape distance.
  auto key = [&](const Tuned& t, double dist) {
    return std::tuple(std::abs(std::log2(double(t.shape.threads) / double(s.threads))),
                      std::abs(int(t.shape.isa) - int(s.isa)), -int(t.shape.isa), dist);
  };
  std::optional<std::tuple<double, int, int, double>> best_key;
  for (const Tuned& t : set) {
    if (t.shape.dtype != s.dtype) continue;
    const Timing* pick = t.best_among(cands);
    if (!pick) continue;  // none of its timed knobs is valid here
    const double dm = std::log2(double(t.shape.m) / double(s.m)), dn = std::log2(double(t.shape.n) / double(s.n)),
                 dk = std::log2(double(t.shape.k) / double(s.k));
    const double dist = std::sqrt(dm * dm + dn * dn + dk * dk);
    if (!best_key || key(t, dist) < *best_key) best = {pick->knob, &t, dist, ""}, best_key = key(t, dist);
  }
  if (!best.neighbour)
    throw Error("nearest-neighbour set has no autotuned shape for " + std::string(rooflab::to_string(s.dtype)) +
                " (any ISA, any thread count) with a knob valid for " + to_string(s) +
                " (build one with `rooflab gemm-knobs build-nn`)");
  const Shape& got = best.neighbour->shape;
  std::string missing, fix;
  if (got.isa != s.isa) {
    missing = std::string(rooflab::to_string(s.isa));
    fix = " --isa " + missing;
  }
  if (got.threads != s.threads) {
    missing += (missing.empty() ? "threads:" : " threads:") + std::to_string(s.threads);
    fix += " --threads " + std::to_string(s.threads);
  }
  if (!missing.empty())
    best.note = "no " + missing + " entry with a valid knob in the nearest-neighbour set: knobs of the nearest " +
                std::string(rooflab::to_string(got.isa)) + " entry (" + to_string(got) + "), autotuned with another micro-kernel or thread count " +
                "(`rooflab gemm-knobs build-nn" + fix + "` makes such entries)";
  return best;
}

// ---- knobs:<method> ------------------------------------------------------------------------
Knob resolve_method(const std::string& method, const Shape& s, std::string* note) {
  auto env_or = [](const char* var, const std::string& fallback) {
    const char* v = std::getenv(var);
    return std::filesystem::path(v && *v ? v : fallback);
  };
  const Grid g;
  if (method == "nn") {
    // Loaded once per process (names are parsed many times: list, model, make).
    static std::mutex mu;
    static std::optional<std::pair<std::filesystem::path, KnobFile>> cached;
    const auto path = env_or("ROOFLAB_GEMM_KNOBS_NN", std::string(ROOFLAB_SOURCE_DIR) + "/results/gemm/knobs_nn.json");
    static std::set<std::string> warned;  // one warning per set and dtype / ISA / threads
    std::lock_guard lock(mu);
    if (!cached || cached->first != path) cached.emplace(path, KnobFile::load(path, false));
    const NnChoice c = nn_choice(cached->second.entries, s, g);
    if (!c.note.empty()) {
      const std::string what = std::string(rooflab::to_string(s.dtype)) + " " + std::string(rooflab::to_string(s.isa)) +
                               " threads:" + std::to_string(s.threads);
      if (warned.insert(path.string() + " " + what).second)
        std::fprintf(stderr, "warning: knobs:nn for %s (%s): %s\n", what.c_str(), path.string().c_str(),
                     c.note.c_str());
    }
    if (note) *note = c.note;
    return c.knob;
  }
  if (method == "analytic") {
    static std::mutex mu;
    static std::optional<roofline::Machine> cached;
    const auto path = env_or("ROOFLAB_MACHINE", std::string(ROOFLAB_SOURCE_DIR) + "/results/latest/machine.json");
    std::lock_guard lock(mu);
    if (!cached || cached->path != path) cached = roofline::load_machine(path);
    if (note) note->clear();
    return analytic_choice(s, g, machine_params(*cached, s)).knob;
  }
  throw Error("knobs must be 'nn' or 'analytic', got '" + method + "'");
}

}  // namespace rooflab::gemm::knobs

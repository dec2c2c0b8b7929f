#include "roofline/mpi_model.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "harness/error.hpp"
#include "harness/json_io.hpp"

namespace rooflab::roofline::mpi {

const char* const kMpiModelFormula =
    "with c CPUs and k = ceil(P / c) ranks on the busiest core:\n"
    "  comm     = alpha-beta-gamma time of the design's algorithm (rooflab_mpi's predicted_comm_s)\n"
    "             + rounds x (k - 1) x spin_gap_s      when P > c and MPI busy-polls (--wait spin):\n"
    "               each message round waits for the partner's turn on a shared core\n"
    "             + rounds x (k - 1) x yield_round_s  when P > c and ranks yield (--wait yield)\n"
    "  compute  = compute_1rank_s x ceil(M / P) / M x k   (k ranks take turns on a core)\n"
    "  iteration = compute + comm - hidden, hidden (coffee with overlap only) = the part of the\n"
    "             allreduce of chunks 2..C that fits under the column scale of the previous chunk,\n"
    "             min(comm, compute / 3) x (C - 1) / C (the column scale is one of the three passes\n"
    "             over the matrix).";

namespace {
// run.get(key, def) as the sweep's readers mean it: a key that is present (even null) wins.
json get(const json& j, const char* key, const json& def = nullptr) {
  const auto it = j.find(key);
  return it == j.end() ? def : *it;
}

// A number that may be missing or null (then the model has no value for it).
std::optional<double> num(const json& j, const char* key) {
  const json v = get(j, key);
  if (v.is_null()) return std::nullopt;
  if (!v.is_number()) throw Error(std::string("\"") + key + "\" must be a number, got " + v.dump());
  return v.get<double>();
}

json opt(std::optional<double> v) { return v ? json(*v) : json(nullptr); }

bool truthy(const json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>() != 0;
  if (v.is_string() || v.is_array() || v.is_object()) return !v.empty();
  return false;
}

json ratio(const json& a, const json& b) {
  if (a.is_null() || b.is_null() || b.get<double>() <= 0) return nullptr;
  return a.get<double>() / b.get<double>();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

json kernel_of(const json& r) { return get(r, "kernel", "microkernel"); }

// What a run and its --comm-only twin share (every design parameter).
std::string twin_key(const json& r) {
  return json::array({r.at("design"), r.at("ranks"), r.at("ranks_per_node"), get(r, "chunks", 1), get(r, "node_reduce"),
                      get(r, "overlap"), get(r, "wait", "spin"), kernel_of(r), get(r, "dtype"),
                      get(r, "dims", json::array())})
      .dump();
}
}  // namespace

json constants(const json& sweep) {
  const json pp = truthy(get(sweep, "pingpong")) ? sweep.at("pingpong") : json::object();
  const json ts = truthy(get(sweep, "timeslice")) ? sweep.at("timeslice") : json::object();
  json comp = json::array();
  for (const auto& r : get(sweep, "runs", json::array())) {
    if (get(r, "ranks") != 1 || truthy(get(r, "comm_only")) || get(r, "compute_time_per_iter_s").is_null()) continue;
    const json kernel = kernel_of(r), dtype = get(r, "dtype"), dims = get(r, "dims", json::array());
    const double t = r.at("compute_time_per_iter_s").get<double>();
    // The P = 1 runs of every design do the same work; keep the fastest (least disturbed).
    auto same = std::find_if(comp.begin(), comp.end(), [&](const json& e) {
      return e.at("kernel") == kernel && e.at("dtype") == dtype && e.at("dims") == dims;
    });
    if (same == comp.end())
      comp.push_back({{"kernel", kernel}, {"dtype", dtype}, {"dims", dims}, {"seconds", t}});
    else
      (*same)["seconds"] = std::min(same->at("seconds").get<double>(), t);
  }
  return {{"cpus", get(sweep, "cpus", 0).get<int>()}, {"alpha_s", get(pp, "alpha_s")},
          {"beta_bytes_per_s", get(pp, "beta_bytes_per_s")}, {"gamma_s_per_byte", get(pp, "gamma_s_per_byte")},
          {"spin_gap_s", get(ts, "spin_gap_s")}, {"yield_round_s", get(ts, "yield_round_s")},
          {"compute_1rank_s", comp}};
}

std::string regime(const json& run, int cpus) {
  if (run.at("ranks").get<int>() <= cpus) return kUnshared;
  return get(run, "wait") == "yield" ? kSharedYield : kSharedSpin;
}

json predict(const json& run, const json& k) {
  const int64_t P = run.at("ranks").get<int64_t>();
  const int cpus = k.at("cpus").get<int>();
  const int64_t share = cpus ? (P + cpus - 1) / cpus : 1;
  const std::string reg = regime(run, cpus);
  const auto ab = num(run, "predicted_comm_s");
  const json rounds = get(run, "allreduce_rounds");
  const std::optional<double> per_round = reg == kUnshared ? std::optional<double>(0.0)
                                          : reg == kSharedSpin ? num(k, "spin_gap_s")
                                                               : num(k, "yield_round_s");
  std::optional<double> sharing, comm, compute, it;
  if (per_round && !rounds.is_null()) sharing = rounds.get<double>() * double(share - 1) * *per_round;
  if (ab && sharing) comm = *ab + *sharing;
  const json& dims = run.at("dims");
  const int64_t M = dims.at(0).get<int64_t>();
  std::optional<double> c1;
  for (const auto& e : k.at("compute_1rank_s"))
    if (e.at("kernel") == kernel_of(run) && e.at("dtype") == get(run, "dtype") && e.at("dims") == dims)
      c1 = e.at("seconds").get<double>();
  const bool comm_only = truthy(get(run, "comm_only"));
  if (comm_only)
    compute = 0.0;
  else if (c1)
    compute = *c1 * double((M + P - 1) / P) / double(M) * double(share);
  double hidden = 0;
  const int64_t C = get(run, "chunks", 1).get<int64_t>();
  if (comm && compute && get(run, "design") == "coffee" && truthy(get(run, "overlap")) && C > 1 && !comm_only)
    hidden = std::min(*comm, *compute / 3) * double(C - 1) / double(C);
  if (comm && compute) it = *compute + *comm - hidden;
  return {{"regime", reg},          {"ranks_per_core", share},          {"rounds", rounds},
          {"alpha_beta_comm_s", opt(ab)}, {"sharing_comm_s", opt(sharing)}, {"predicted_comm_s", opt(comm)},
          {"predicted_compute_s", opt(compute)}, {"hidden_by_overlap_s", hidden}, {"predicted_iter_s", opt(it)}};
}

json table(const json& sweep) {
  const json k = constants(sweep);
  const json runs = get(sweep, "runs", json::array());
  std::map<std::string, const json*> comm_only;
  for (const auto& r : runs)
    if (truthy(get(r, "comm_only"))) comm_only[twin_key(r)] = &r;
  std::vector<json> rows;
  for (const auto& r : runs) {
    if (truthy(get(r, "comm_only")) || r.at("ranks").get<int64_t>() < 2) continue;
    const json p = predict(r, k);
    const auto twin_it = comm_only.find(twin_key(r));
    const json* twin = twin_it == comm_only.end() ? nullptr : twin_it->second;
    const json pred_comm = twin ? predict(*twin, k).at("predicted_comm_s") : json(nullptr);
    const json measured_comm = twin ? twin->at("comm_time_per_iter_s") : json(nullptr);
    const json measured_iter = r.at("time_per_iter_s");
    rows.push_back({{"id", get(r, "id", "")},
                    {"design", r.at("design")},
                    {"ranks", r.at("ranks")},
                    {"ranks_per_node", r.at("ranks_per_node")},
                    {"chunks", get(r, "chunks", 1)},
                    {"node_reduce", get(r, "node_reduce")},
                    {"overlap", get(r, "overlap")},
                    {"wait", get(r, "wait", "spin")},
                    {"kernel", kernel_of(r)},
                    {"regime", p.at("regime")},
                    {"ranks_per_core", p.at("ranks_per_core")},
                    {"rounds", p.at("rounds")},
                    {"comm_only_id", twin ? get(*twin, "id") : json(nullptr)},
                    {"predicted_comm_s", pred_comm},
                    {"measured_comm_s", measured_comm},
                    {"comm_ratio", ratio(measured_comm, pred_comm)},
                    {"alpha_beta_comm_s", p.at("alpha_beta_comm_s")},
                    {"sharing_comm_s", p.at("sharing_comm_s")},
                    {"predicted_compute_s", p.at("predicted_compute_s")},
                    {"hidden_by_overlap_s", p.at("hidden_by_overlap_s")},
                    {"predicted_iter_s", p.at("predicted_iter_s")},
                    {"measured_iter_s", measured_iter},
                    {"iter_ratio", ratio(measured_iter, p.at("predicted_iter_s"))}});
  }
  auto order = [](const json& x) {
    return std::make_tuple(x.at("regime") != kUnshared, x.at("wait"), x.at("design"), x.at("ranks"),
                           x.at("ranks_per_node"), x.at("id"));
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const json& a, const json& b) { return order(a) < order(b); });
  return json(rows);
}

json summary(const json& rows) {
  json out = json::object();
  for (const char* reg : {kUnshared, kSharedSpin, kSharedYield}) {
    json s = {{"rows", 0}};
    std::map<std::string, std::vector<double>> v;
    for (const auto& x : rows) {
      if (x.at("regime") != reg) continue;
      s["rows"] = s["rows"].get<int>() + 1;
      for (const char* q : {"comm_ratio", "iter_ratio"})
        if (!x.at(q).is_null()) v[q].push_back(x.at(q).get<double>());
    }
    for (auto& [q, vals] : v)
      s[q] = {{"min", *std::min_element(vals.begin(), vals.end())}, {"median", median(vals)},
              {"max", *std::max_element(vals.begin(), vals.end())}};
    out[reg] = s;
  }
  return out;
}

json claims(const json& sweep) {
  // (P, repetition) -> what ("ring", "ringtypical", "coffee") -> run
  std::map<std::pair<int64_t, std::string>, std::map<std::string, json>> reps;
  for (const auto& r : get(sweep, "claim_runs", json::array())) {
    if (r.is_null()) continue;
    // ids: claim_<what>_p<P>_rep<k>
    const std::string id = r.at("id").get<std::string>();
    std::vector<std::string> parts;
    for (size_t a = 0, b; a <= id.size(); a = b + 1) {
      b = std::min(id.find('_', a), id.size());
      parts.push_back(id.substr(a, b - a));
    }
    if (parts.size() < 4 || parts[2].size() < 2) throw Error("claim run id '" + id + "' is not claim_<what>_p<P>_rep<k>");
    reps[{std::stoll(parts[2].substr(1)), parts[3]}][parts[1]] = r;
  }
  const std::string source = reps.empty() ? "runs" : "claim_runs";
  if (reps.empty()) {  // one "repetition" from the sweep's runs
    std::vector<json> runs;
    for (const auto& r : get(sweep, "runs", json::array()))
      if (!truthy(get(r, "comm_only")) && get(r, "wait", "spin") == "spin") runs.push_back(r);
    auto find = [&](const json& want) -> std::optional<json> {
      for (const auto& r : runs) {
        bool all = true;
        for (const auto& [a, b] : want.items()) all = all && get(r, a.c_str()) == b;
        if (all) return r;
      }
      return std::nullopt;
    };
    std::vector<int64_t> ps;
    for (const auto& r : runs) ps.push_back(r.at("ranks").get<int64_t>());
    std::sort(ps.begin(), ps.end());
    ps.erase(std::unique(ps.begin(), ps.end()), ps.end());
    for (int64_t P : ps) {
      auto& g = reps[{P, "rep1"}];
      if (auto r = find({{"design", "ring"}, {"ranks", P}, {"kernel", "microkernel"}})) g["ring"] = *r;
      if (auto r = find({{"design", "ring"}, {"ranks", P}, {"kernel", "typical"}})) g["ringtypical"] = *r;
      if (auto r = find({{"design", "coffee"}, {"ranks", P}, {"ranks_per_node", P}, {"node_reduce", "balanced"},
                         {"overlap", true}, {"kernel", "microkernel"}}))
        g["coffee"] = *r;
    }
  }
  using Group = std::vector<const std::map<std::string, json>*>;
  // Median times of `slow` and `fast` over the repetitions that have both, and of their ratio.
  auto row = [](int64_t P, const Group& group, const std::string& slow, const std::string& fast,
                const char* slow_name, const char* fast_name) -> std::optional<json> {
    Group pairs;
    for (const auto* g : group)
      if (g->count(slow) && g->count(fast)) pairs.push_back(g);
    if (pairs.empty()) return std::nullopt;
    auto t = [](const std::map<std::string, json>* g, const std::string& w) {
      return g->at(w).at("time_per_iter_s").get<double>();
    };
    std::vector<double> ratios, ts, tf;
    json ids = json::array();
    for (const auto* g : pairs) {
      ratios.push_back(t(g, slow) / t(g, fast));
      ts.push_back(t(g, slow));
      tf.push_back(t(g, fast));
      ids.push_back({get(g->at(slow), "id"), get(g->at(fast), "id")});
    }
    const json& ref = pairs.front()->at(fast);
    return json{{"ranks", P},
                {"dims", ref.at("dims")},
                {"dtype", ref.at("dtype")},
                {"oversubscribed", ref.at("oversubscribed")},
                {"repetitions", pairs.size()},
                {slow_name, median(ts)},
                {fast_name, median(tf)},
                {"speedup", median(ratios)},
                {"speedup_range", {*std::min_element(ratios.begin(), ratios.end()),
                                   *std::max_element(ratios.begin(), ratios.end())}},
                {"ids", ids}};
  };
  json cpu = json::array(), mpi = json::array();
  std::map<int64_t, Group> by_p;  // in (P, repetition) order
  for (const auto& [key, g] : reps) by_p[key.first].push_back(&g);
  for (const auto& [P, group] : by_p) {
    if (auto r = row(P, group, "ringtypical", "ring", "ring_typical_s", "ring_microkernel_s")) cpu.push_back(*r);
    auto r = row(P, group, "ring", "coffee", "ring_s", "coffee_s");
    if (r && P > 1) {
      for (const auto* g : group)
        if (g->count("coffee")) {
          (*r)["chunks"] = g->at("coffee").at("chunks");
          break;
        }
      mpi.push_back(*r);
    }
  }
  return {{"source", source},
          {"coffee_cpu_vs_ring_one_node", cpu},
          {"coffee_mpi_vs_ring_one_node", mpi},
          {"paper", "COFFEE Sec. VI-B2 / Fig. 10: COFFEE-CPU over raw MPICH-Ring on one node 1.14-7.5x (avg 2.0x)"}};
}

void add_model(json& sweep, const std::string& source) {
  try {
    json model = {{"constants", constants(sweep)}, {"formula", kMpiModelFormula}};
    json rows = table(sweep);
    json sum = summary(rows);
    json cl = claims(sweep);
    sweep["model"] = std::move(model);
    sweep["model_table"] = std::move(rows);
    sweep["model_summary"] = std::move(sum);
    sweep["claims"] = std::move(cl);
    sweep.erase("model_error");
  } catch (const std::exception& e) {
    const size_t failed = get(sweep, "failed_runs", json::array()).size();
    if (failed == 0) throw Error(source + ": the MPI model: " + e.what());
    sweep["model"] = nullptr;
    sweep["model_table"] = json::array();
    sweep["model_summary"] = json::object();
    sweep["claims"] = json::object();
    sweep["model_error"] = "not computed (" + std::to_string(failed) + " runs failed): " + e.what();
  }
}

int mpi_sweep_main(const std::filesystem::path& run_dir) {
  const std::filesystem::path path = run_dir / "mpi_sweep.json";
  if (!std::filesystem::exists(path))
    throw Error(path.string() + " not found; run `scripts/mpi_sweep.sh --run " + run_dir.string() + "` first");
  json doc = read_json_file(path);
  require_schema(doc, "rooflab.mpi_sweep", 1, path);
  if (!doc.is_object() || !get(doc, "runs", json::array()).is_array())
    throw Error(path.string() + ": \"runs\" must be a list");
  add_model(doc, path.string());
  write_json_atomic(path, doc);
  if (doc.contains("model_error"))
    std::fprintf(stderr, "rooflab model: %s: %s\n", path.c_str(), doc["model_error"].get<std::string>().c_str());
  for (const char* reg : {kUnshared, kSharedSpin, kSharedYield}) {
    if (!doc["model_summary"].contains(reg)) continue;
    const json& s = doc["model_summary"][reg];
    std::printf("%-13s %3d rows", reg, s.at("rows").get<int>());
    for (const char* q : {"comm_ratio", "iter_ratio"})
      if (s.contains(q))
        std::printf("  %s (measured / predicted) median %.3g [%.3g, %.3g]", q, s.at(q).at("median").get<double>(),
                    s.at(q).at("min").get<double>(), s.at(q).at("max").get<double>());
    std::printf("\n");
  }
  std::printf("%s\n", path.c_str());
  return 0;
}
}  // namespace rooflab::roofline::mpi

#include "microbench/characterize.hpp"

#include <gnu/libc-version.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <thread>

#include "harness/buffer.hpp"
#include "harness/diagnostics.hpp"
#include "harness/error.hpp"
#include "harness/isa.hpp"
#include "microbench/capacity.hpp"
#include "microbench/kernels.hpp"
#include "microbench/levels.hpp"
#include "microbench/overlap.hpp"
#include "microbench/likwid.hpp"
#include "microbench/measure.hpp"
#include "microbench/sysinfo.hpp"

#ifndef ROOFLAB_VERSION
#define ROOFLAB_VERSION "unknown"
#endif
#ifndef ROOFLAB_BUILD_TYPE
#define ROOFLAB_BUILD_TYPE "unknown"
#endif

namespace rooflab::microbench {
namespace {
using json = nlohmann::json;
using Curve = std::vector<std::pair<double, double>>;

struct ProfileParams {
  int per_octave;
  Timing bw, lat, compute, clock;
  size_t max_bytes;  // 0 = derived from the caches
  double likwid_seconds;
  int likwid_timeout_s;
  // Derived sweep end = dram_factor x max(largest reported cache, 32 MiB): >= 4 reaches the
  // DRAM range (>= 4x the largest cache), 8 gives it several points.
  double dram_factor = 8;
  bool likwid_light = false;  // likwid-bench: load only, 1 thread (each run costs ~1 s of startup)
  // Thread counts 1, 2, 4, ... and all cores instead of every count 1..cores (a 16-core
  // machine: 6 curves per kernel instead of 16). The roofline takes a ceiling at the largest
  // measured count <= the case's threads.
  bool pow2_threads = false;
  int likwid_runs = 3;  // likwid-bench runs per point, the best compared (run_likwid)
  // The S-stream sweeps: the smallest N of the 1-stream DRAM sizes (0: all of them).
  size_t stream_sizes = 0;
};

// Many short samples rather than a few long ones: on a shared machine interference comes in
// scheduler-tick sized chunks (ms), so a short sample has a fair chance of being undisturbed
// and the best of many finds it (measured on a loaded 2-core VM: 0.2-0.5 ms x 15-25 samples
// is far steadier than 2 ms x 5).
ProfileParams profile_params(const std::string& p) {
  if (p == "quick") return {2, {5e-4, 15}, {1e-3, 5}, {2e-3, 15}, {2e-3, 15}, 0, 0.2, 60};
  if (p == "paper") return {4, {1e-3, 31}, {2e-3, 11}, {5e-3, 31}, {5e-3, 31}, 0, 1.0, 120};
  // smoke: every field quick fills, measured the same way, with fewer points (thread counts
  // 1, 2, 4, .., all), fewer and shorter samples, the sweep ending just past the DRAM floor
  // (4x the largest cache; 4.5x so that the 3-array kernels, whose working set rounds down per
  // thread, have a point there too) and one likwid-bench kernel: a complete but rougher
  // machine.json in seconds. Its S-stream ceilings come from the 3 smallest DRAM sizes (on a
  // 2-vCPU Xeon with a big L3 the sweep reaches 1 GiB: 6 sizes x 12 curves took 24 s of 68).
  if (p == "smoke") return {2, {3e-4, 5}, {5e-4, 3}, {1e-3, 5}, {1e-3, 5}, 0, 0.05, 30, 4.5, true, true, 1, 3};
  if (p == "tiny") return {1, {2e-4, 3}, {2e-4, 3}, {1e-3, 2}, {1e-3, 2}, 1 << 20, 0.02, 30};
  throw Error("characterize: unknown profile '" + p + "' (expected smoke, quick, paper or tiny)");
}

constexpr size_t kMinBytes = 4096;
constexpr double kInCacheSpread = 0.08;  // has_spread_point: a per-ISA in-cache sweep to repeat
constexpr size_t kSweepCap = size_t(1) << 30;
constexpr size_t kAssumedLlc = size_t(32) << 20;

}  // namespace

std::vector<size_t> sweep_sizes(size_t max_ws, int per_octave) {
  std::vector<size_t> s;
  for (int k = 0;; ++k) {
    const double b = double(kMinBytes) * std::exp2(double(k) / per_octave);
    if (b > double(max_ws) * 1.0001) break;
    const size_t v = (size_t(std::llround(b)) + 32) / 64 * 64;
    if (s.empty() || v > s.back()) s.push_back(v);
  }
  if (double(s.back()) * 1.01 < double(max_ws)) s.push_back(max_ws / 64 * 64);
  return s;
}

namespace {

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string fmt(double v, int digits = 3) {
  std::ostringstream o;
  o.precision(digits);
  o << v;
  return o.str();
}

Curve best_curve(const BwCurve& c) {
  Curve out;
  for (const auto& p : c.points) out.emplace_back(double(p.bytes), p.gbps.best);
  return out;
}

const BwCurve& find_curve(const std::vector<BwCurve>& curves, BwKernel k, int threads) {
  for (const auto& c : curves)
    if (c.kernel == k && c.threads == threads) return c;
  throw Error("characterize: internal error: missing curve");
}

// How many distinct caches of each level `threads` pinned threads use; without hwloc data
// L1/L2 are assumed private and L3 shared.
std::map<std::string, int> cache_instances(const Topology& topo, int threads) {
  std::map<std::string, int> out;
  for (const auto& lvl : kCacheLevels) {
    auto it = topo.caches.find(lvl);
    if (it != topo.caches.end() && int(it->second.instances.size()) >= threads)
      out[lvl] = it->second.instances[size_t(threads - 1)];
    else
      out[lvl] = lvl == "L3" ? 1 : threads;
  }
  return out;
}

double largest_aggregate(const std::map<std::string, size_t>& caps,
                         const std::map<std::string, int>& inst) {
  double m = 0;
  for (const auto& [lvl, c] : caps) m = std::max(m, double(c) * inst.at(lvl));
  return m;
}

// Smallest working set counted as DRAM for `threads`: 4x the largest cache, measured or
// reported. When the sweep does not reach that: if it went at least 2x past the largest
// reported cache without seeing it (a VM reporting an implausible L3), 4x the largest
// measured cache, else the largest point if it is 2x beyond it; if the sweep stopped inside
// a reported cache, nothing is DRAM (infinity).
double dram_floor(const std::map<std::string, size_t>& measured,
                  const std::map<std::string, size_t>& reported,
                  const std::map<std::string, int>& inst, double largest_point) {
  const double meas = largest_aggregate(measured, inst);
  const double rep = largest_aggregate(reported, inst);
  const double base = std::max(meas, rep) > 0 ? std::max(meas, rep) : double(kAssumedLlc);
  const double none = std::numeric_limits<double>::infinity();
  if (largest_point >= 4 * base) return 4 * base;
  if (meas <= 0 || (rep > meas && largest_point < 2 * rep)) return none;
  if (largest_point >= 4 * meas) return 4 * meas;
  if (largest_point >= 2 * meas) return largest_point;
  return none;
}

std::string isa_list(const std::vector<Isa>& isas) {
  std::string s;
  for (Isa i : isas) s += (s.empty() ? "" : ", ") + std::string(to_string(i));
  return s;
}

// A point more than this below both neighbours is a dip (plateau_dips).
constexpr double kDipTolerance = 0.10;
// Compute ceilings at T threads below this fraction of T x the 1-thread one are measured again,
// at most kComputeRetries times (see the compute loop).
constexpr double kComputeScalingFloor = 0.75;
constexpr int kComputeRetries = 3;

// The curve's dips as machine.json lists them (bytes, best GB/s, its neighbours'), each also
// a line in `warnings`.
json curve_dips(const BwCurve& c, const Curve& xy, json& warnings) {
  json out = json::array();
  for (size_t i : plateau_dips(xy, kDipTolerance)) {
    out.push_back({{"bytes", xy[i].first},
                   {"gbps", xy[i].second},
                   {"neighbours_gbps", {xy[i - 1].second, xy[i + 1].second}}});
    warnings.push_back(curve_name(c.kernel, c.streams) + " " + std::to_string(c.threads) +
                       (c.threads == 1 ? " thread" : " threads") + ": " +
                       format_bytes(xy[i].first) + " at " + fmt(xy[i].second) +
                       " GB/s is more than " + fmt(kDipTolerance * 100) +
                       "% below both neighbours (" + fmt(xy[i - 1].second) + ", " +
                       fmt(xy[i + 1].second) + " GB/s): a loop-shape artefact or a disturbed sample");
  }
  return out;
}

// A point's likwid-bench runs, "a, b, c" (and the small size's after "; " where it has one).
std::string runs_text(const json& pt) {
  auto list = [](const json& runs) {
    std::string s;
    for (const auto& v : runs) s += (s.empty() ? "" : ", ") + fmt(v.get<double>());
    return s;
  };
  std::string s = list(pt.at("runs_gbps"));
  if (pt.contains("per_byte_gbps")) s += "; " + list(pt.at("small").at("runs_gbps"));
  return s;
}

std::string likwid_test(const std::string& base, Isa isa) {
  if (isa == Isa::avx512) return base + "_avx512";
  if (isa == Isa::avx2) return base + "_avx";
  return base;
}

// likwid-bench's load/copy at the top of the L1 and L2 ranges and in DRAM, each compared with
// rooflab's ceiling of the same kernel, level and thread count (`levels`, as in
// bandwidth.levels) and with our curve at likwid's working set.
json run_likwid(const CharacterizeOptions& opt, const ProfileParams& prof, Isa isa,
                const KernelTable& kt, const std::vector<int>& cpus, const std::vector<BwCurve>& curves, const std::vector<int>& thread_counts,
                const std::map<int, std::map<std::string, Range>>& ranges, size_t largest_ws,
                const json& levels) {
  if (!opt.likwid) return {{"available", false}, {"reason", "disabled by the caller"}};
  auto exe = find_on_path("likwid-bench");
  if (!exe) return {{"available", false}, {"reason", "likwid-bench not found on PATH"}};
  json points = json::array(), errors = json::array(), disagreements = json::array();
  std::string first_error;
  // likwid-bench allocates its own buffers: huge pages only where THP is "always" unless its
  // malloc is told to advise them (likwid_huge_page_env), while rooflab's from one huge page up
  // are advised MADV_HUGEPAGE (harness/buffer.hpp). Out of cache that alone separates the two
  // (TLB misses on 4 KiB pages), so where they still differ it is said beside a DRAM disagreement.
  const std::string policy = page_policy(), thp = thp_mode();
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const std::string env = likwid_huge_page_env(thp, gnu_get_libc_version(), tunables ? tunables : "");
  const bool same_pages = thp == "always" || thp == "never" || !env.empty();
  const std::string pages =
      thp == "always"  ? "both on huge pages (THP always)"
      : thp == "never" ? "both on 4 KiB pages (THP never)"
      : !env.empty()   ? "both on huge pages (likwid-bench run with " + env + ": glibc " + gnu_get_libc_version() +
                             " advises its malloc'd buffers MADV_HUGEPAGE; " + policy + ")"
                       : "likwid-bench on 4 KiB pages, rooflab on huge pages (" + policy +
                             "; glibc " + gnu_get_libc_version() + " has no glibc.malloc.hugetlb tunable)";
  const std::string pages_differ = " (likwid-bench's buffers get 4 KiB pages here, rooflab's huge pages: " + policy + ")";
  // likwid's figure is the mean of one run, rooflab's the best of many short samples: on a
  // shared or virtual host one run can lose a slice to another task (2 threads in L1 on a KVM
  // Zen 4: 372-397 GB/s from three runs). The best of prof.likwid_runs runs is compared.
  // `after` runs right after each run (our kernel at its working set: see rooflab_now_gbps).
  auto best_run = [&](const std::string& test, size_t bytes, int t, uint64_t iters,
                      const std::function<void(const LikwidResult&)>& after) {
    LikwidResult best;
    std::vector<double> all;
    for (int i = 0; i < prof.likwid_runs; ++i) {
      LikwidResult r = run_likwid_bench(*exe, test, bytes, t, iters, prof.likwid_timeout_s, env);
      if (!r.ok) return r;  // a failure is reported, not hidden behind another run
      all.push_back(r.gbps);
      if (after) after(r);
      if (!best.ok || r.gbps > best.gbps) best = r;
    }
    best.runs_gbps = all;
    return best;
  };
  for (int t : thread_counts) {
    if (prof.likwid_light && t > 1) continue;
    std::vector<std::pair<std::string, double>> sizes;
    for (const char* lvl : {"L1", "L2"})
      if (ranges.at(t).count(lvl)) sizes.emplace_back(lvl, ranges.at(t).at(lvl).hi);
    const double l1_small = ranges.at(t).count("L1") ? ranges.at(t).at("L1").lo : 0;
    if (std::isfinite(ranges.at(t).at("DRAM").lo) && double(largest_ws) >= ranges.at(t).at("DRAM").lo)
      sizes.emplace_back("DRAM", double(largest_ws));
    for (auto [kname, kernel] : {std::pair{"load", BwKernel::read}, {"copy", BwKernel::copy}}) {
      if (prof.likwid_light && kernel != BwKernel::read) continue;
      const Curve ours = best_curve(find_curve(curves, kernel, t));
      for (const auto& [lvl, bytes] : sizes) {
        const std::string test = likwid_test(kname, isa);
        // Iterations for ~likwid_seconds at the bandwidth we measured at this size.
        const double est = interpolate(ours, bytes) * 1e9;
        const auto iters = static_cast<uint64_t>(
            std::max(10.0, std::ceil(prof.likwid_seconds * est / std::max(bytes, 1.0))));
        if (opt.progress)
          opt.progress("likwid-bench " + test + " " + format_bytes(bytes) + " " +
                       std::to_string(t) + (t == 1 ? " thread" : " threads"));
        // Our kernel at likwid's working set right after each of its runs, the best kept: a host
        // whose speed changes within seconds (a Xeon guest's L1 read: ~245 or ~311 GB/s, flipping
        // from one second to the next) then meets likwid-bench's states, and a ceiling measured in
        // another state is named as such below instead of as a kernel that reads slower.
        double now_gbps = 0;
        const auto time_ours = [&](const LikwidResult& x) {
          const auto now = measure_bandwidth(kt, cpus, t, {kernel}, {size_t(x.bytes)}, prof.bw, nullptr);
          now_gbps = std::max(now_gbps, now.at(0).points.at(0).gbps.best);
        };
        LikwidResult r = best_run(test, size_t(bytes), t, iters, time_ours);
        if (!r.ok) {
          if (first_error.empty()) first_error = r.command + ": " + r.error;
          errors.push_back(r.command + ": " + r.error);
          continue;
        }
        json pt = {{"kernel", kname},
                   {"test", test},
                   {"level", lvl},
                   {"bytes", r.bytes},
                   {"threads", t},
                   {"gbps", r.gbps},
                   {"runs_gbps", r.runs_gbps},
                   {"rooflab_gbps", interpolate(ours, double(r.bytes))},
                   {"command", r.command}};
        std::string what = "likwid-bench " + test + " " + format_bytes(double(r.bytes)) + " " +
                           std::to_string(t) + (t == 1 ? " thread" : " threads") + ": " +
                           fmt(r.gbps) + " GB/s";
        // In L1 a likwid-bench pass is short enough for its fixed cost per pass (per_byte_gbps)
        // to show: a second run at the range's smallest size removes it, and that figure is
        // the one compared.
        double compared = r.gbps;
        if (lvl == "L1" && l1_small > 0 && l1_small < bytes) {
          const auto iters_small = static_cast<uint64_t>(
              std::max(10.0, std::ceil(prof.likwid_seconds * interpolate(ours, l1_small) * 1e9 / l1_small)));
          LikwidResult s = best_run(test, size_t(l1_small), t, iters_small, nullptr);
          if (s.ok) {
            pt["small"] = {{"bytes", s.bytes}, {"gbps", s.gbps}, {"runs_gbps", s.runs_gbps}, {"command", s.command}};
            if (auto pb = per_byte_gbps(double(s.bytes), s.gbps, double(r.bytes), r.gbps)) {
              compared = *pb;
              pt["per_byte_gbps"] = *pb;
              what += " (" + fmt(*pb) + " GB/s per byte, with " + fmt(s.gbps) + " GB/s at " +
                      format_bytes(double(s.bytes)) + ")";
            }
          } else {
            errors.push_back(s.command + ": " + s.error);
          }
        }
        pt["compared_gbps"] = compared;
        // The compared figure is as uncertain as likwid-bench's runs (both sizes' where the
        // per-byte figure is compared).
        double spread = run_spread(r.runs_gbps);
        if (pt.contains("per_byte_gbps"))
          spread = std::max(spread, run_spread(pt["small"]["runs_gbps"].get<std::vector<double>>()));
        pt["runs_spread"] = spread;
        // The sweep ran minutes before likwid-bench, and a host can change the bandwidth in
        // between (2 threads at DRAM on a KVM Zen 4: 33 or 63 GB/s from one run to the next, as
        // the vCPUs shared a CCD or not). A ceiling that disagrees while our kernel timed beside
        // likwid-bench's runs (now_gbps) agrees names a machine that changed.
        const Agreement an = agreement(now_gbps, compared);
        pt["rooflab_now_gbps"] = now_gbps;
        pt["now_ratio"] = an.ratio;
        pt["now_agrees"] = an.agrees;
        const std::string ours_name(name(kernel)), tkey = std::to_string(t);
        if (levels.contains(lvl) && levels[lvl].contains(ours_name) &&
            levels[lvl][ours_name].contains(tkey)) {
          const double ceiling = levels[lvl][ours_name][tkey].get<double>();
          const Agreement a = agreement(ceiling, compared);
          pt["rooflab_ceiling_gbps"] = ceiling;
          pt["ratio"] = a.ratio;
          pt["agrees"] = a.agrees;
          const bool in_spread = !a.agrees && within_run_spread(a.ratio, spread);
          if (!a.agrees) pt["within_run_spread"] = in_spread;
          const std::string cmp = what + ", rooflab " + lvl + " " + ours_name + " ceiling " +
                                  fmt(ceiling) + " GB/s (ratio " + fmt(a.ratio) + ")";
          if (opt.progress)
            opt.progress(cmp + (a.agrees ? ", agrees within " : ", DISAGREES by more than ") +
                         fmt(kLikwidTolerance * 100) + "%");
          if (!a.agrees)
            disagreements.push_back(
                cmp + " differ by more than " + fmt(kLikwidTolerance * 100) + "%" +
                (lvl == "DRAM" && !same_pages ? pages_differ : "") +
                (an.agrees ? "; rooflab's " + ours_name + " timed right after likwid-bench's runs gives " + fmt(now_gbps) +
                                 " GB/s (ratio " + fmt(an.ratio) + "): the machine's bandwidth changed between the sweep and this run"
                           : "") +
                (in_spread ? "; likwid-bench's own runs differ by " + fmt(spread) + "x (" + runs_text(pt) +
                                 " GB/s): the ratio is within that spread, no evidence that the two differ"
                           : ""));
        } else if (opt.progress) {
          opt.progress(what + " (no rooflab " + lvl + " " + ours_name + " ceiling to compare)");
        }
        points.push_back(pt);
      }
    }
  }
  if (points.empty())
    return {{"available", false},
            {"reason", first_error.empty() ? "no L1, L2 or DRAM range to run it at" : first_error}};
  json out = {{"available", true},
              {"version", likwid_bench_version(*exe)},
              {"pages", pages},
              {"runs", prof.likwid_runs},
              {"tolerance", kLikwidTolerance},
              {"points", points},
              {"disagreements", disagreements}};
  if (!errors.empty()) out["errors"] = errors;
  return out;
}

// The FP ceiling whose issue rate is known on every x86-64 core this project targets (Haswell
// and Zen 2 on): two FMA pipes at full AVX2 width, so avx2 fma_f64 = 2 x 4 lanes x 2 flops per
// cycle. AVX-512 is left out (one or two pipes, depending on the part). Without AVX2: scalar
// mul_f64 (SSE2 mulpd, 2 lanes), which issues on two pipes on every such core (addpd does not:
// one port on Haswell and Sandy Bridge).
FpClockSource fp_clock_source(const json& by_isa) {
  FpClockSource s;
  const bool avx2 = by_isa.contains("avx2");
  const char* isa = avx2 ? "avx2" : "scalar";
  const char* key = avx2 ? "fma_f64" : "mul_f64";
  s.kernel = std::string(isa) + " " + key;
  s.pipes = 2;
  s.lanes = avx2 ? 4 : 2;
  s.flops_per_op = avx2 ? 2 : 1;
  s.gflops = by_isa.at(isa).at("ceilings").at(key).value("1", 0.0);
  return s;
}

}  // namespace

json characterize(const CharacterizeOptions& opt) {
  const auto t_start = std::chrono::steady_clock::now();
  const ProfileParams prof = profile_params(opt.profile);
  auto say = [&](const std::string& s) {
    if (opt.progress) opt.progress(s);
  };

  const Topology topo = read_topology();
  const HostInfo host = read_host_info();
  const int ncores = int(topo.core_cpu.size());
  if (opt.max_threads < 0 || opt.max_threads > ncores)
    throw Error("characterize: max_threads " + std::to_string(opt.max_threads) +
                " is outside 0.." + std::to_string(ncores) + " (this process may run on " +
                std::to_string(ncores) + " cores; 0 = all)");
  const int max_t = opt.max_threads ? opt.max_threads : ncores;
  std::vector<int> thread_counts;
  for (int t = 1; t <= max_t; ++t)
    if (!prof.pow2_threads || (t & (t - 1)) == 0 || t == max_t) thread_counts.push_back(t);
  const Isa isa = best_isa();
  const KernelTable& kt = kernels_for(isa);

  // Self-diagnosis (as nanobench does): conditions that make the numbers unreliable.
  json diagnostics = diag::environment(ncores);
  if (topo.machine_cores > ncores)
    diagnostics.push_back("measured on the " + std::to_string(ncores) + " of " + std::to_string(topo.machine_cores) +
                          " cores this process may run on (its CPUs: taskset, srun's binding, a cpuset): "
                          "ceilings at 1.." + std::to_string(ncores) + " threads, this share of the machine's");

  std::map<std::string, size_t> reported;
  size_t largest_reported = 0;
  for (const auto& [lvl, c] : topo.caches) {
    reported[lvl] = c.size;
    largest_reported = std::max(largest_reported, c.size);
  }

  // --- sweep range ---
  const size_t avail = available_memory();
  // The bandwidth sweep holds 3 arrays of the largest working set (latency: 1).
  const size_t mem_cap = avail / 6 / 64 * 64;
  size_t max_ws;
  std::string sweep_note;
  if (opt.max_bytes) {
    if (opt.max_bytes < 4 * kMinBytes)
      throw Error("characterize: max_bytes must be at least " + format_bytes(4 * kMinBytes));
    if (opt.max_bytes > mem_cap)
      throw Error("characterize: max_bytes " + format_bytes(double(opt.max_bytes)) +
                  " needs about 4x that in memory; " + format_bytes(double(avail)) +
                  " available");
    max_ws = opt.max_bytes;
    sweep_note = "largest size set by the caller";
  } else if (prof.max_bytes) {
    max_ws = std::min(prof.max_bytes, mem_cap);
    sweep_note = "largest size fixed by the '" + opt.profile + "' profile";
  } else {
    // 8x so several points lie in the DRAM range (>= 4x the last cache); smoke: just past it.
    max_ws = size_t(prof.dram_factor * double(std::max(largest_reported, kAssumedLlc)));
    sweep_note = "largest size " + fmt(prof.dram_factor) + "x max(largest reported cache " +
                 format_bytes(double(largest_reported)) + ", 32 MiB), '" + opt.profile + "' profile";
    if (max_ws > kSweepCap) {
      max_ws = kSweepCap;
      sweep_note += ", capped at 1 GiB (a VM may report an implausible L3)";
    }
    if (max_ws > mem_cap) {
      max_ws = mem_cap;
      sweep_note += ", capped at 1/6 of available memory";
    }
  }
  const std::vector<size_t> sizes = sweep_sizes(max_ws, prof.per_octave);

  // --- measurements ---
  say("clock estimate (dependent integer adds on core 0)");
  const double ghz = estimate_clock_ghz(topo.core_cpu[0], prof.clock);

  say("latency: pointer chase over " + std::to_string(sizes.size()) + " sizes, " +
      format_bytes(double(sizes.front())) + " .. " + format_bytes(double(sizes.back())));
  const auto lat = measure_latency(topo.core_cpu[0], sizes, prof.lat);

  const std::vector<BwKernel> kernels(std::begin(kAllBwKernels), std::end(kAllBwKernels));
  std::vector<BwCurve> curves;
  for (int t : thread_counts) {
    auto c = measure_bandwidth(kt, topo.core_cpu, t, kernels, sizes, prof.bw, opt.progress);
    curves.insert(curves.end(), c.begin(), c.end());
  }

  // Every ISA the CPU has (ROOFLAB_MAX_ISA caps it): the model prices each kernel against the
  // ceilings of its own ISA. The best one's tables are also compute.ceilings.
  const std::vector<Isa> compute_isas = supported_isas({Isa::scalar, Isa::avx2, Isa::avx512});
  json by_isa = json::object();
  json compute_warnings = json::array();
  for (Isa ci : compute_isas) {
    const KernelTable& ck_t = kernels_for(ci);
    json ceil = json::object(), med = json::object();
    for (const auto& ck : compute_kernels(ck_t)) {
      say("compute " + std::string(ck.name) + " (" + std::string(to_string(ci)) + "), threads 1.." +
          std::to_string(max_t));
      double one = 0;
      for (int t : thread_counts) {
        auto measure = [&] {
          return measure_compute(ck.fn, ck.flops_per_lane * ck.lanes, topo.core_cpu, t, prof.compute);
        };
        // Each thread has a core of its own (topo.core_cpu); far below t x the 1-thread rate they
        // shared one (seen on a Zen 4 KVM guest: the 2-thread AVX-512 FMA rate flipped between
        // 2x and 1x from one run to the next).
        const ScalingCheck sc = remeasure_if_shared(measure, measure(), one, t, kComputeScalingFloor, kComputeRetries);
        const Stat s = sc.stat;
        if (sc.still_low || sc.retries > 0) {
          const std::string what = std::string(to_string(ci)) + " " + ck.name + " at " + std::to_string(t) + " threads: ";
          compute_warnings.push_back(
              what + (sc.still_low
                          ? fmt(s.best) + " GFLOP/s, " + fmt(s.best / one) + "x the 1-thread " + fmt(one) + " after " +
                                std::to_string(sc.retries) + " re-measurements (threads on separate cores give ~" +
                                std::to_string(t) + "x): the host shares a core between them; kept as measured"
                          : "measured again " + std::to_string(sc.retries) + " time(s) (below " +
                                fmt(kComputeScalingFloor * t) + "x the 1-thread rate at first: a core shared for a while)"));
        }
        if (t == 1) one = s.best;
        ceil[ck.name][std::to_string(t)] = s.best;
        med[ck.name][std::to_string(t)] = s.median;
      }
    }
    by_isa[std::string(to_string(ci))] = {{"ceilings", ceil}, {"ceilings_median", med}};
  }
  for (const auto& w : compute_warnings) say("warning: compute " + w.get<std::string>());
  const json& ceilings = by_isa.at(std::string(to_string(isa))).at("ceilings");
  const json& ceilings_median = by_isa.at(std::string(to_string(isa))).at("ceilings_median");

  // --- clock cross-check: the clock the 1-thread FP ceiling implies with the ISA's pipes ---
  const ClockCheck clock = check_clock(ghz, fp_clock_source(by_isa));

  // --- capacities ---
  const Curve read1 = best_curve(find_curve(curves, BwKernel::read, 1));
  Curve lat_curve;
  for (const auto& p : lat) lat_curve.emplace_back(double(p.bytes), p.ns.best);
  const auto bw_caps = detect_capacities(read1);
  CapacityOptions lat_opt;
  lat_opt.higher_is_better = false;
  const auto lat_caps = detect_capacities(lat_curve, lat_opt);
  const Labeled labeled = label_levels(bw_caps, reported);

  json warnings = json::array();
  for (const auto& lvl : kCacheLevels) {
    auto r = reported.find(lvl);
    auto m = labeled.levels.find(lvl);
    if (r != reported.end() && m == labeled.levels.end()) {
      warnings.push_back(lvl + ": reported " + format_bytes(double(r->second)) +
                         ", not detected in the read-bandwidth curve (sweep " +
                         format_bytes(double(sizes.front())) + " .. " +
                         format_bytes(double(sizes.back())) + ")");
    } else if (r == reported.end() && m != labeled.levels.end()) {
      warnings.push_back(lvl + ": measured " + format_bytes(double(m->second)) +
                         ", not reported by hwloc");
    } else if (r != reported.end()) {
      const double ratio = double(r->second) / double(m->second);
      if (ratio > 2 || ratio < 0.5)
        warnings.push_back(lvl + ": reported " + format_bytes(double(r->second)) + ", measured " +
                           format_bytes(double(m->second)) + " (differ by more than 2x)");
    }
    if (m != labeled.levels.end()) {
      bool confirmed = std::any_of(lat_caps.begin(), lat_caps.end(), [&](size_t c) {
        const double q = double(c) / double(m->second);
        return q >= 0.5 && q <= 2;
      });
      if (!confirmed)
        warnings.push_back(lvl + ": no matching jump in the pointer-chase latency curve "
                                 "within 2x of " + format_bytes(double(m->second)));
    }
  }
  for (size_t c : labeled.unlabeled)
    warnings.push_back("extra read-bandwidth transition at " + format_bytes(double(c)) +
                       " not mapped to a cache level");
  const RangeCapacities range_caps = range_capacities(labeled, reported);

  // --- levels ---
  std::map<int, std::map<std::string, Range>> ranges;
  for (int t : thread_counts) {
    const auto inst = cache_instances(topo, t);
    ranges[t] = level_ranges(range_caps.levels, inst,
                             dram_floor(range_caps.levels, reported, inst, double(sizes.back())));
  }
  json levels = json::object();
  json curves_json = json::array();
  json bw_warnings = json::array();
  for (const auto& c : curves) {
    const Curve xy = best_curve(c);
    json pts = json::array();
    for (const auto& p : c.points)
      pts.push_back({{"bytes", p.bytes}, {"gbps", p.gbps.best}, {"gbps_median", p.gbps.median}});
    curves_json.push_back({{"kernel", name(c.kernel)},
                           {"threads", c.threads},
                           {"nontemporal", nontemporal(c.kernel)},
                           {"points", pts},
                           {"dips", curve_dips(c, xy, bw_warnings)}});
    const Curve sized = at_sweep_sizes(xy, sizes);
    for (const auto& [lvl, r] : ranges[c.threads])
      if (auto v = lvl == "DRAM" ? dram_plateau(sized, r) : median_in(sized, r))
        levels[lvl][std::string(name(c.kernel))][std::to_string(c.threads)] = *v;
  }
  for (const auto& lvl : range_caps.filled)  // those the sweep reached
    if (levels.contains(lvl))
      warnings.push_back(lvl + ": its bandwidth (bandwidth.levels." + lvl + ") is measured at working sets up to "
                         "the reported " + format_bytes(double(range_caps.levels.at(lvl))) +
                         ", the capacity the model places working sets against; the curve shows no step there "
                         "(its plateau is the next level's, or DRAM's past the last)");
  // --- in-cache bandwidth of every other ISA: what a kernel of that ISA can reach (16- or
  // 32-byte accesses get a fraction of L1's 64-byte one), at the sweep sizes inside the cache
  // levels' ranges only; DRAM is measured with the widest ISA only (see method.bandwidth_by_isa). The widest ISA's
  // levels are those above. ---
  const std::vector<BwKernel> isa_kernels = {BwKernel::read, BwKernel::copy, BwKernel::update,
                                             BwKernel::triad};
  json bw_by_isa = json::object();
  for (Isa bi : compute_isas) {
    json lv = json::object(), cj = json::array();
    if (bi == isa) {
      for (const auto& lvl : kCacheLevels)
        if (levels.contains(lvl)) lv[lvl] = levels[lvl];
      bw_by_isa[std::string(to_string(bi))] = {{"levels", lv}};
      continue;
    }
    for (int t : thread_counts) {
      // At most 3 sizes per level (its smallest, middle and largest): a plateau's median
      // needs no more, and it keeps the extra ISAs cheap.
      std::vector<size_t> in_cache;
      for (const auto& lvl : kCacheLevels) {
        if (!ranges[t].count(lvl)) continue;
        std::vector<size_t> in;
        for (size_t ws : sizes)
          if (double(ws) >= ranges[t].at(lvl).lo && double(ws) <= ranges[t].at(lvl).hi) in.push_back(ws);
        if (in.size() > 3) in = {in.front(), in[in.size() / 2], in.back()};
        in_cache.insert(in_cache.end(), in.begin(), in.end());
      }
      std::sort(in_cache.begin(), in_cache.end());
      in_cache.erase(std::unique(in_cache.begin(), in_cache.end()), in_cache.end());
      if (in_cache.empty()) continue;
      say("bandwidth (" + std::string(to_string(bi)) + ") in cache, " + std::to_string(t) +
          (t == 1 ? " thread" : " threads"));
      // Three points per level make the ceiling: one disturbed sweep moves it (a Xeon guest's
      // avx2 L1 triad came out 165-215 or 255-266 GB/s run by run, the slow runs' samples 8-25%
      // apart, the fast ones' within 3%). A sweep with spread samples is repeated (up to twice,
      // a second apart) and each point keeps its faster measurement.
      const auto sweep = [&] { return measure_bandwidth(kernels_for(bi), topo.core_cpu, t, isa_kernels, in_cache, prof.bw, nullptr); };
      auto isa_curves = sweep();
      int repeats = 0;
      for (; repeats < 2 && has_spread_point(isa_curves, kInCacheSpread); ++repeats) {
        std::this_thread::sleep_for(std::chrono::seconds(1));
        keep_faster(isa_curves, sweep());
      }
      if (repeats > 0)
        say("bandwidth (" + std::string(to_string(bi)) + ") in cache: samples spread more than " +
            std::to_string(int(kInCacheSpread * 100)) + "%, repeated " + std::to_string(repeats) + "x" +
            (has_spread_point(isa_curves, kInCacheSpread) ? " (still spread)" : ""));
      for (const auto& c : isa_curves) {
        json pts = json::array();
        for (const auto& p : c.points)
          pts.push_back({{"bytes", p.bytes}, {"gbps", p.gbps.best}, {"gbps_median", p.gbps.median}});
        cj.push_back({{"kernel", name(c.kernel)}, {"threads", c.threads}, {"points", pts}, {"repeats", repeats}});
        const Curve xy = at_sweep_sizes(best_curve(c), sizes);
        for (const auto& lvl : kCacheLevels)
          if (ranges[t].count(lvl))
            if (auto v = median_in(xy, ranges[t].at(lvl)))
              lv[lvl][std::string(name(c.kernel))][std::to_string(t)] = *v;
      }
    }
    bw_by_isa[std::string(to_string(bi))] = {{"levels", lv}, {"curves", cj}};
  }

  json lat_points = json::array(), lat_levels = json::object();
  for (const auto& p : lat)
    lat_points.push_back({{"bytes", p.bytes}, {"ns", p.ns.best}, {"ns_median", p.ns.median}});
  for (const auto& [lvl, r] : ranges[1])
    if (auto v = median_in(lat_curve, r)) lat_levels[lvl] = *v;

  // --- S concurrent streams per thread, DRAM only: the ceilings of kernels that stream S
  // rows of a matrix at once (Sinkhorn's fused and micro-kernel variants), measured at the
  // sweep sizes the 1-stream DRAM level uses so the two compare directly. ---
  json streams_json = {{"counts", json::array()}, {"kernels", json::array()},
                       {"curves", json::array()}, {"levels", json::object()}};
  std::vector<int> stream_counts;
  for (int S : kStreamCounts)
    if (S > 1) stream_counts.push_back(S);
  const std::vector<BwKernel> stream_kernels = {BwKernel::read, BwKernel::update};
  for (int S : stream_counts) streams_json["counts"].push_back(S);
  streams_json["gaps"] = kStreamGaps;
  for (BwKernel k : stream_kernels) streams_json["kernels"].push_back(name(k));
  for (int t : thread_counts) {
    const Range dram = ranges[t].at("DRAM");
    std::vector<size_t> dram_sizes;
    for (size_t ws : sizes)
      if (double(ws) >= dram.lo) dram_sizes.push_back(ws);
    if (dram_sizes.empty()) continue;
    if (prof.stream_sizes > 0 && dram_sizes.size() > prof.stream_sizes)
      dram_sizes.resize(prof.stream_sizes);
    for (const auto& c : measure_bandwidth_streams(kt, topo.core_cpu, t, stream_kernels,
                                                   stream_counts, dram_sizes, prof.bw,
                                                   opt.progress)) {
      json pts = json::array();
      for (const auto& p : c.points)
        pts.push_back({{"bytes", p.bytes}, {"gbps", p.gbps.best}, {"gbps_median", p.gbps.median},
                       {"placements_gbps", p.placements_gbps}});
      const std::string key = curve_name(c.kernel, c.streams);
      const Curve xy = best_curve(c);
      streams_json["curves"].push_back({{"kernel", key},
                                        {"base", name(c.kernel)},
                                        {"streams", c.streams},
                                        {"threads", c.threads},
                                        {"points", pts},
                                        {"dips", curve_dips(c, xy, bw_warnings)}});
      // Every point is a DRAM size (the S-array rounding may shave a few bytes off the floor).
      if (auto v = dram_plateau(xy, {0, std::numeric_limits<double>::infinity()}))
        streams_json["levels"]["DRAM"][key][std::to_string(t)] = *v;
    }
  }
  if (streams_json["levels"].empty())
    streams_json["reason"] = "no sweep point in the DRAM range (sweep " +
                             format_bytes(double(sizes.front())) + " .. " +
                             format_bytes(double(sizes.back())) + ")";

  if (bw_warnings.empty())
    say("bandwidth curves: no point more than " + fmt(kDipTolerance * 100) +
        "% below both neighbours");  // else `rooflab characterize` prints each at the end

  // --- ECM overlap rule (microbench/overlap.hpp): measured capacities first, hwloc's else ---
  std::map<std::string, size_t> overlap_caps = reported;
  for (const auto& [lvl, c] : labeled.levels) overlap_caps[lvl] = c;
  const auto overlap_ws = overlap_working_sets(overlap_caps);
  say("ECM overlap rule: read with 1..8 loads per vector in " + std::to_string(overlap_ws.size()) + " levels");
  const auto overlap_points = measure_overlap(kt, topo.core_cpu[0], overlap_ws, prof.bw);
  const OverlapDecision overlap = decide_overlap(overlap_points);
  say("ECM overlap rule: " + overlap.overlap + " (" + overlap.reason + ")");
  const json ecm_json = overlap_json(overlap_points, overlap, std::string(to_string(isa)),
                                     "a quarter of each level's capacity (caches.measured, else caches.reported)");

  std::vector<int> likwid_threads = {1};
  if (max_t > 1) likwid_threads.push_back(max_t);
  json likwid = run_likwid(opt, prof, isa, kt, topo.core_cpu, curves, likwid_threads, ranges, sizes.back(), levels);

  // --- the document ---
  json isas = json::array();
  for (Isa i : compute_isas) isas.push_back(to_string(i));
  json reported_json = {{"source", "hwloc"}};
  for (const auto& [lvl, c] : reported) reported_json[lvl] = c;
  json measured_json = {{"source", "read-bandwidth + pointer-chase curves"}};
  for (const auto& [lvl, c] : labeled.levels) measured_json[lvl] = c;

  const std::string ms_bw = fmt(prof.bw.target_s * 1e3);
  const std::string sweep_desc = format_bytes(double(sizes.front())) + " .. " +
                                 format_bytes(double(sizes.back())) + ", " +
                                 std::to_string(prof.per_octave) + " sizes per octave (" +
                                 sweep_note + ")";
  json method = {
      {"sweep", "Working sets " + sweep_desc + "; the same sizes for bandwidth and latency. Thread counts " +
                    std::string(prof.pow2_threads ? "1, 2, 4, ... and all cores" : "1 .. all cores") + "."},
      {"bandwidth",
       "Per point the kernel makes reps passes over its working set in one call (so the call "
       "and a read's final reduction are paid once per sample, not once per pass), reps "
       "calibrated until one sample lasts >= " + ms_bw +
           " ms (the calibration runs also warm the caches), then " +
           std::to_string(prof.bw.samples) +
           " samples are timed barrier to barrier; `gbps` is the best sample (least disturbed), "
           "`gbps_median` the median. OpenMP threads are pinned one per core "
           "(sched_setaffinity to host.cpus[t], the first allowed PU of the t-th core this process may "
           "run on); the working set is split "
           "evenly and each thread allocates and first-touches its own slice (2 MiB aligned, "
           "transparent huge pages requested). `bytes` is the whole working set (all arrays, "
           "all threads, rounded to cache lines per thread). Traffic counted: read 1, copy 2, "
           "update 2, triad 3 arrays; write-allocate not counted. Kernels: " +
           std::string(to_string(isa)) +
           " vector code (read with 8 independent sums; every whole vector goes through the "
           "vector code, the last ones into independent sums too, so sizes that are not a "
           "multiple of the unrolled step pay no scalar tail); copy_nt/triad_nt use non-temporal "
           "stores (_mm512_stream_pd / _mm256_stream_pd / _mm_stream_pd) and sfence. `dips`: points "
           "more than " + fmt(kDipTolerance * 100) + "% below both neighbours, except the "
           "first point after a step down (a cache thrashing just past its capacity); a cache "
           "hierarchy makes no other such tooth. Each is also a line in bandwidth.warnings."},
      {"streams",
       "bandwidth.streams: read and update with S = 2, 4, 8 concurrent streams per thread "
       "(each thread's share of the working set split into S arrays walked in lockstep, the "
       "same vector instructions per step as the 1-stream kernel), timed as above at the "
       "sweep sizes of the DRAM range only. Stream q starts q x (G + gap) bytes into the "
       "thread's buffer, G = one stream's share of the largest working set rounded up to a huge "
       "page; each point is timed at every gap of `gaps` (their relative 4 KiB and huge-page "
       "phases: the one that suits read can slow update and the other way round) and keeps the "
       "best (points[].placements_gbps: the best sample per gap). levels.DRAM[\"read_s4\"][T] "
       "is their DRAM plateau, as bandwidth.levels.DRAM.read is for S = 1. No levels (a reason "
       "instead) when the sweep has no DRAM range."},
      {"bandwidth_by_isa",
       "bandwidth.by_isa[ISA].levels: L1, L2 and L3 as bandwidth.levels, with that ISA's read, "
       "copy, update and triad kernels (scalar: SSE2, 16-byte accesses; avx2: 32-byte; avx512: "
       "64-byte), timed as above at up to 3 sweep sizes inside each level's range (the smallest, "
       "middle and largest; by_isa[ISA].curves), "
       "for every ISA the CPU has (" + isa_list(compute_isas) + "; ROOFLAB_MAX_ISA caps it). The "
       "widest ISA's (bandwidth.isa) are bandwidth.levels' own. DRAM and the S-stream ceilings are "
       "measured with the widest ISA only (not per ISA: 16-byte SSE2 reads on one core can draw less "
       "DRAM bandwidth than wider ones, so scalar DRAM traffic is priced optimistically). The model "
       "prices a kernel's in-cache traffic against the table of the ISA that prices its compute."},
      {"levels",
       "bandwidth.levels[L][kernel][T] = median of the curve points (best samples) whose "
       "sweep size (the working set asked for: a 3-array kernel's is a little off it) "
       "lies in [max(2x previous level, C/8), C/2], C = aggregate capacity for T "
       "threads = measured capacity x distinct caches of that level the T pinned cores use "
       "(a level the curve shows no step for whose reported size lies between two measured "
       "levels: its reported capacity, named in caches.warnings) "
       "(hwloc sharing: private L1/L2 give T x, a shared L3 1 x). DRAM: the median of the points >= 4x the "
       "largest aggregate cache (measured or reported) that are no more than 10% above the point "
       "at the largest working set (a curve still falling there has a cache holding part of it); when the sweep went 2x past a reported "
       "cache that was not detected (an implausible VM L3), 4x the largest measured one; no "
       "DRAM level when the sweep stops inside a reported cache. A level with no point in its range is absent. latency.levels: the same "
       "ranges for 1 thread."},
      {"capacities",
       "caches.measured from the 1-thread read-bandwidth curve (detect_capacities): "
       "median-of-3 smoothing in log space; a transition is a run of points each more than "
       "15% below the point at most one octave smaller; a level's capacity is the largest "
       "working set before the transition (last point on the plateau, so quantized to the "
       "sweep grid). Transitions are labeled L1/L2/L3 by matching hwloc's sizes within 2x, "
       "otherwise in ascending order. The same rule on the latency curve (jumps up) gives "
       "caches.detected.latency, the cross-check behind the latency warnings."},
      {"latency",
       "Pointer chase over a random single-cycle permutation (Sattolo) of the 64-byte lines "
       "of a buffer of `bytes`, 1 thread pinned to core 0, huge pages requested; warmed by "
       "min(lines, 2^20) loads; ns per dependent load, best of " +
           std::to_string(prof.lat.samples) + " samples of >= " +
           fmt(prof.lat.target_s * 1e3) + " ms."},
      {"compute",
       "Each pinned thread advances " + std::to_string(kComputeAccumulators) +
           " independent accumulator chains (covers latency x throughput) for a calibrated "
           "iteration count; GFLOP/s = threads x iterations x accumulators x lanes x flops per "
           "op / time, best of " + std::to_string(prof.compute.samples) + " samples of >= " +
           fmt(prof.compute.target_s * 1e3) +
           " ms (ceilings_median: the median). Flops per op: fma 2, add 1, mul 1, addmin 2 "
           "(add then min: the Floyd-Warshall relaxation). Measured for every ISA the CPU has "
           "(by_isa: " + isa_list(compute_isas) + "; ROOFLAB_MAX_ISA caps it), each with the same "
           "samples and thread counts; compute.ceilings / ceilings_median repeat the widest "
           "(compute.isa, avx512 > avx2 > scalar). scalar is the baseline x86-64 target at its full "
           "SSE2 width (2 doubles / 4 floats per register; no FMA instruction, so fma = mul + "
           "add): what code built for that target can reach. The model prices a "
           "kernel against its own ISA's table: a case with an ISA by_isa[isa], a vendor "
           "baseline without one the widest (libraries dispatch to their best code), rooflab's "
           "own code without one (built for baseline x86-64) scalar."},
      {"clock",
       "host.clock.integer_chain_ghz: chains of 64 dependent register-register 64-bit integer "
       "adds (1 cycle latency on x86-64; no immediate adds, which recent cores fold at rename) "
       "on core 0, best of " + std::to_string(prof.clock.samples) +
           " samples: the clock with one core busy. host.clock.fp_implied_ghz: the 1-thread " +
           clock.source.kernel + " ceiling / (" + fmt(clock.source.pipes) + " pipes x " +
           fmt(clock.source.lanes) + " lanes x " + fmt(clock.source.flops_per_op) +
           " flops) per cycle (x86-64 cores since Haswell and Zen 2 issue two full-width AVX2 "
           "FMAs, or two SSE2 multiplies, per cycle). host.clock_ghz_estimate is the integer-chain "
           "clock when the two agree within " + fmt(clock.tolerance * 100) +
           "%, else null with host.clock_ghz_dropped_reason."},
      {"likwid_bench",
       "likwid-bench -t load/copy (_avx or _avx512 when available) -w N:SIZE:T -i ITERS at the "
       "top of the L1 and L2 ranges and the largest sweep size, for 1 and all threads (" +
           std::string(prof.likwid_light ? "this profile: load at 1 thread only" : "both kernels, every point") +
           "); each point is run " + std::to_string(prof.likwid_runs) + " time(s) (runs_gbps) "
           "and gbps is the best, as rooflab's figures are best samples; under THP madvise its "
           "process gets GLIBC_TUNABLES=glibc.malloc.hugetlb=1 (glibc >= 2.35) so its malloc'd "
           "buffers get huge pages as rooflab's do (`pages`). gbps "
       "= its MByte/s / 1000 (no write-allocate). likwid-bench calls its kernel once per pass, "
       "and in L1 a pass is short enough for that fixed cost to show (several percent at the "
       "top of the L1 range): there it also runs at the range's smallest size (small) and "
       "per_byte_gbps = extra bytes / extra time between the two runs removes it. compared_gbps "
       "is per_byte_gbps where there is one, else gbps; rooflab_ceiling_gbps = "
       "bandwidth.levels[level][read|copy][threads], ratio = rooflab_ceiling_gbps / compared_gbps, "
       "agrees = |ratio - 1| <= tolerance (" + fmt(kLikwidTolerance) + "), each disagreement "
       "a line in disagreements; rooflab_gbps = our read/copy curve "
       "log-log interpolated at likwid's actual working set; rooflab_now_gbps = our kernel timed "
       "again at that working set right after each of likwid-bench's runs (the best), now_ratio = it / compared_gbps, "
       "now_agrees likewise (a disagreement of the ceiling whose now_agrees is true names a machine "
       "whose bandwidth changed between the sweep and likwid-bench's runs); runs_spread = max / min "
       "of likwid-bench's runs (both sizes' where per_byte_gbps is compared), and a disagreement "
       "whose max(ratio, 1/ratio) <= (1 + tolerance) x runs_spread is within_run_spread (its line "
       "says so: no evidence of a difference); ITERS aims at " +
           fmt(prof.likwid_seconds) + " s; each run is killed after " +
           std::to_string(prof.likwid_timeout_s) + " s."}};

  json host_json = {{"hostname", host.hostname},
                    {"cpu", host.cpu_model},
                    {"cpu_signature", cpu_signature()},  // what refuses its measurements on another CPU
                    {"cores", ncores},
                    {"threads", topo.pus},
                    {"machine_cores", topo.machine_cores},
                    {"cpus", topo.core_cpu},
                    {"isa", isas},
                    {"virtualized", host.virtualized},
                    {"hypervisor", host.hypervisor.empty() ? json(nullptr) : json(host.hypervisor)},
                    {"clock_ghz_estimate", clock.estimate_ghz ? json(*clock.estimate_ghz) : json(nullptr)},
                    {"clock",
                     {{"integer_chain_ghz", clock.integer_chain_ghz},
                      {"fp_implied_ghz", clock.fp_implied_ghz ? json(*clock.fp_implied_ghz) : json(nullptr)},
                      {"fp_kernel", clock.source.kernel},
                      {"fp_gflops", clock.source.gflops},
                      {"pipes_assumed", clock.source.pipes},
                      {"lanes", clock.source.lanes},
                      {"flops_per_op", clock.source.flops_per_op},
                      {"tolerance", clock.tolerance},
                      {"agree", clock.agree}}}};
  if (!clock.estimate_ghz) host_json["clock_ghz_dropped_reason"] = clock.dropped_reason;
  if (host.cpu_mhz_reported) host_json["cpu_mhz_reported"] = *host.cpu_mhz_reported;
  host_json["omp_wait_policy"] = diag::omp_wait_policy();  // the OpenMP policy the ceilings were measured under
  host_json["omp_affinity"] = diag::omp_affinity();
  host_json["pages"] = page_policy();  // the pages the ceilings were measured on (the kernels' too)

  if (const auto load_after = diag::load_average(); load_after && *load_after > ncores + 0.5)
    diagnostics.push_back("load average " + fmt(*load_after) + " after the run exceeds the " +
                          std::to_string(ncores) + " cores this run used: it was not alone");
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  return {{"schema", "rooflab.machine/1"},
          {"created", utc_now()},
          {"rooflab_version", ROOFLAB_VERSION},
          {"build_type", ROOFLAB_BUILD_TYPE},
          {"profile", opt.profile},
          {"wall_seconds", wall},
          {"diagnostics", diagnostics},
          {"host", host_json},
          {"caches",
           {{"reported", reported_json},
            {"measured", measured_json},
            {"detected", {{"read_bandwidth", bw_caps}, {"latency", lat_caps}}},
            {"warnings", warnings}}},
          {"bandwidth",
           {{"write_allocate_counted", false},
            {"isa", to_string(isa)},
            {"threads", thread_counts},
            {"curves", curves_json},
            {"levels", levels},
            {"streams", streams_json},
            {"by_isa", bw_by_isa},
            {"warnings", bw_warnings}}},
          {"compute",
           {{"isa", to_string(isa)},
            {"accumulators", kComputeAccumulators},
            {"ceilings", ceilings},
            {"ceilings_median", ceilings_median},
            {"by_isa", by_isa},
            {"warnings", compute_warnings}}},
          {"latency", {{"threads", 1}, {"points", lat_points}, {"levels", lat_levels}}},
          {"ecm", ecm_json},
          {"likwid_bench", likwid},
          {"method", method}};
}

}  // namespace rooflab::microbench

#include <gnu/libc-version.h>
#include <sched.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "harness/error.hpp"
#include "harness/env.hpp"
#include "harness/isa.hpp"
#include "harness/json_io.hpp"
#include "harness/machine_cpu.hpp"
#include "harness/buffer.hpp"
#include "harness/diagnostics.hpp"
#include "microbench/characterize.hpp"
#include "microbench/likwid.hpp"
#include "microbench/measure.hpp"
#include "microbench/sysinfo.hpp"

using nlohmann::json;
using rooflab::microbench::characterize;
using rooflab::microbench::CharacterizeOptions;
using rooflab::microbench::likwid_huge_page_env;

namespace {
// One tiny run shared by the schema tests (about a second; likwid off for determinism).
const json& tiny_machine(std::vector<std::string>* lines = nullptr) {
  static std::vector<std::string> progress;
  static const json j = [] {
    CharacterizeOptions o;
    o.profile = "tiny";
    o.likwid = false;
    o.progress = [](const std::string& s) { progress.push_back(s); };
    return characterize(o);
  }();
  if (lines) *lines = progress;
  return j;
}

bool positive_finite(const json& v) {
  return v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() > 0;
}
}  // namespace

TEST(Characterize, TopLevelAndHostKeys) {
  const json& m = tiny_machine();
  EXPECT_EQ(m.at("schema"), "rooflab.machine/1");
  for (const char* k : {"created", "rooflab_version", "build_type"})
    EXPECT_TRUE(m.at(k).is_string()) << k;
  const json& h = m.at("host");
  for (const char* k : {"hostname", "cpu"}) EXPECT_TRUE(h.at(k).is_string()) << k;
  // The one record of which CPU the file (and what is measured beside it) belongs to.
  EXPECT_EQ(h.at("cpu_signature"), rooflab::cpu_signature());
  EXPECT_EQ(rooflab::machine_cpu(m), rooflab::cpu_signature());
  EXPECT_GE(h.at("cores").get<int>(), 1);
  EXPECT_GE(h.at("threads").get<int>(), h.at("cores").get<int>());
  // One CPU per measured core, each one this process may run on.
  EXPECT_GE(h.at("machine_cores").get<int>(), h.at("cores").get<int>());
  ASSERT_EQ(h.at("cpus").size(), h.at("cores").get<size_t>());
  const std::vector<int> allowed = rooflab::diag::process_cpus();
  for (const auto& c : h.at("cpus"))
    EXPECT_TRUE(std::count(allowed.begin(), allowed.end(), c.get<int>())) << c;
  EXPECT_EQ(h.at("isa").at(0), "scalar");
  EXPECT_TRUE(h.at("virtualized").is_boolean());
  EXPECT_TRUE(h.at("hypervisor").is_string() || h.at("hypervisor").is_null());
  // The clock: an estimate when the integer chain and the FP ceiling agree, else null with why.
  const json& ck = h.at("clock");
  EXPECT_TRUE(positive_finite(ck.at("integer_chain_ghz")));
  EXPECT_TRUE(positive_finite(ck.at("fp_implied_ghz")));
  EXPECT_EQ(ck.at("pipes_assumed"), 2);
  EXPECT_TRUE(ck.at("fp_kernel") == "avx2 fma_f64" || ck.at("fp_kernel") == "scalar mul_f64") << ck.at("fp_kernel");
  const double ratio = ck.at("integer_chain_ghz").get<double>() / ck.at("fp_implied_ghz").get<double>();
  EXPECT_EQ(ck.at("agree").get<bool>(), std::fabs(ratio - 1) <= 0.10) << ratio;
  if (ck.at("agree").get<bool>()) {
    EXPECT_TRUE(positive_finite(h.at("clock_ghz_estimate")));
    EXPECT_EQ(h.at("clock_ghz_estimate"), ck.at("integer_chain_ghz"));
    EXPECT_FALSE(h.contains("clock_ghz_dropped_reason"));
  } else {
    EXPECT_TRUE(h.at("clock_ghz_estimate").is_null());
    EXPECT_TRUE(h.at("clock_ghz_dropped_reason").is_string());
  }
  for (const char* k : {"sweep", "bandwidth", "levels", "capacities", "latency", "compute",
                        "clock", "likwid_bench"})
    EXPECT_TRUE(m.at("method").at(k).is_string()) << k;
}

TEST(Characterize, CachesHaveSourcesAndOnlyKnownLevels) {
  const json& c = tiny_machine().at("caches");
  EXPECT_EQ(c.at("reported").at("source"), "hwloc");
  EXPECT_TRUE(c.at("measured").at("source").is_string());
  for (const char* part : {"reported", "measured"})
    for (const auto& [k, v] : c.at(part).items())
      if (k != "source") {
        EXPECT_TRUE(k == "L1" || k == "L2" || k == "L3") << k;
        EXPECT_TRUE(positive_finite(v)) << k;
      }
  EXPECT_TRUE(c.at("warnings").is_array());
  EXPECT_TRUE(c.at("detected").at("read_bandwidth").is_array());
  EXPECT_TRUE(c.at("detected").at("latency").is_array());
}

TEST(Characterize, EveryKernelHasACurvePerThreadCount) {
  const json& m = tiny_machine();
  const json& bw = m.at("bandwidth");
  EXPECT_EQ(bw.at("write_allocate_counted"), false);
  const int cores = m.at("host").at("cores");
  std::set<std::pair<std::string, int>> seen;
  for (const auto& c : bw.at("curves")) {
    const std::string k = c.at("kernel");
    seen.insert({k, c.at("threads").get<int>()});
    EXPECT_EQ(c.at("nontemporal").get<bool>(), k == "copy_nt" || k == "triad_nt");
    ASSERT_GE(c.at("points").size(), 5u);
    double prev = 0;
    for (const auto& p : c.at("points")) {
      EXPECT_GT(p.at("bytes").get<double>(), prev);  // strictly increasing sizes
      prev = p.at("bytes");
      EXPECT_TRUE(positive_finite(p.at("gbps")));
      EXPECT_GE(p.at("gbps").get<double>(), p.at("gbps_median").get<double>());
    }
  }
  EXPECT_EQ(seen.size(), 6u * size_t(cores));
  for (const char* k : {"read", "copy", "update", "triad", "copy_nt", "triad_nt"})
    for (int t = 1; t <= cores; ++t) EXPECT_TRUE(seen.count({k, t})) << k << " " << t;
}

// The tiny sweep (1 MiB) has no DRAM range, so no S-stream ceilings: the section says why.
TEST(Characterize, StreamsSectionNamesCountsAndExplainsAbsentLevels) {
  const json& st = tiny_machine().at("bandwidth").at("streams");
  EXPECT_EQ(st.at("counts"), json({2, 4, 8}));
  EXPECT_EQ(st.at("kernels"), json({"read", "update"}));
  EXPECT_TRUE(st.at("levels").empty());
  EXPECT_TRUE(st.at("curves").empty());
  EXPECT_NE(st.at("reason").get<std::string>().find("DRAM"), std::string::npos);
  EXPECT_TRUE(tiny_machine().at("method").contains("streams"));
}

TEST(Characterize, LevelsUseKnownNamesKernelsAndThreadKeys) {
  const json& m = tiny_machine();
  const int cores = m.at("host").at("cores");
  for (const auto& [lvl, kernels] : m.at("bandwidth").at("levels").items()) {
    EXPECT_TRUE(lvl == "L1" || lvl == "L2" || lvl == "L3" || lvl == "DRAM") << lvl;
    if (lvl != "DRAM" && !m.at("caches").at("measured").contains(lvl)) {
      // A reported level without a step in the curve (range_capacities) says so.
      EXPECT_TRUE(m.at("caches").at("reported").contains(lvl)) << lvl;
      const std::string filled = lvl + ": its bandwidth (bandwidth.levels." + lvl + ") is measured";
      bool said = false;
      for (const auto& w : m.at("caches").at("warnings")) said |= w.get<std::string>().rfind(filled, 0) == 0;
      EXPECT_TRUE(said) << lvl;
    }
    for (const auto& [k, per_t] : kernels.items())
      for (const auto& [t, v] : per_t.items()) {
        EXPECT_GE(std::stoi(t), 1);
        EXPECT_LE(std::stoi(t), cores);
        EXPECT_TRUE(positive_finite(v)) << lvl << " " << k << " " << t;
      }
  }
}

TEST(Characterize, ComputeCeilingsForEveryOpAndThreadCount) {
  const json& m = tiny_machine();
  const int cores = m.at("host").at("cores");
  const json& comp = m.at("compute");
  EXPECT_EQ(comp.at("isa"), m.at("host").at("isa").back());
  for (const char* op : {"fma_f64", "fma_f32", "add_f64", "add_f32", "addmin_f32", "addmin_f64",
                         "mul_f64", "mul_f32"})
    for (int t = 1; t <= cores; ++t)
      EXPECT_TRUE(positive_finite(comp.at("ceilings").at(op).at(std::to_string(t))))
          << op << " " << t;
}

// compute.by_isa: every ISA the CPU has (host.isa, capped by ROOFLAB_MAX_ISA), every op and
// thread count, positive; compute.ceilings is the widest one's table.
static void expect_by_isa(const json& m, const std::vector<int>& threads) {
  const json& comp = m.at("compute");
  const json& by_isa = comp.at("by_isa");
  std::vector<std::string> isas;
  for (const auto& [k, v] : by_isa.items()) isas.push_back(k);
  std::vector<std::string> host = m.at("host").at("isa").get<std::vector<std::string>>();
  std::sort(isas.begin(), isas.end());
  std::sort(host.begin(), host.end());
  EXPECT_EQ(isas, host);
  for (const auto& [isa, t] : by_isa.items()) {
    for (const char* op : {"fma_f64", "fma_f32", "add_f64", "add_f32", "addmin_f32", "addmin_f64",
                           "mul_f64", "mul_f32"})
      for (int n : threads)
        for (const char* part : {"ceilings", "ceilings_median"})
          EXPECT_TRUE(positive_finite(t.at(part).at(op).at(std::to_string(n)))) << isa << " " << part << " " << op << " " << n;
  }
  EXPECT_EQ(comp.at("ceilings"), by_isa.at(comp.at("isa").get<std::string>()).at("ceilings"));
  EXPECT_EQ(comp.at("ceilings_median"), by_isa.at(comp.at("isa").get<std::string>()).at("ceilings_median"));
}

TEST(Characterize, ComputeCeilingsForEveryIsa) {
  const json& m = tiny_machine();
  std::vector<int> threads;
  for (int t = 1; t <= m.at("host").at("cores").get<int>(); ++t) threads.push_back(t);
  expect_by_isa(m, threads);
  for (const std::string isa : {"scalar", "avx2", "avx512"})
    EXPECT_EQ(m.at("compute").at("by_isa").contains(isa), rooflab::isa_supported(*rooflab::parse_isa(isa))) << isa;
}

// The clock rule on numbers: kept within 10% of the FP-implied clock, else dropped with both.
TEST(Characterize, ClockCheckKeepsOrDropsWithTheReason) {
  using rooflab::microbench::check_clock;
  using rooflab::microbench::FpClockSource;
  const FpClockSource avx2{"avx2 fma_f64", 48.0, 2, 4, 2};  // 48 / 16 = 3 GHz
  const auto ok = check_clock(3.2, avx2);
  ASSERT_TRUE(ok.fp_implied_ghz);
  EXPECT_DOUBLE_EQ(*ok.fp_implied_ghz, 3.0);
  EXPECT_TRUE(ok.agree);
  EXPECT_EQ(ok.estimate_ghz.value_or(0), 3.2);
  const auto folded = check_clock(15.3, {"avx2 fma_f64", 43.2, 2, 4, 2});  // 2.7 GHz implied
  EXPECT_FALSE(folded.agree);
  EXPECT_FALSE(folded.estimate_ghz);
  EXPECT_NE(folded.dropped_reason.find("15.3 GHz"), std::string::npos) << folded.dropped_reason;
  EXPECT_NE(folded.dropped_reason.find("2.7 GHz"), std::string::npos) << folded.dropped_reason;
  EXPECT_FALSE(check_clock(2.6, avx2).agree);  // 13% below
  EXPECT_TRUE(check_clock(2.75, avx2).agree);
  const auto none = check_clock(3.0, {"avx2 fma_f64", 0, 2, 4, 2});
  EXPECT_FALSE(none.estimate_ghz);
  EXPECT_FALSE(none.dropped_reason.empty());
}

TEST(Characterize, LatencyCurveAndDisabledLikwid) {
  const json& m = tiny_machine();
  const json& pts = m.at("latency").at("points");
  ASSERT_GE(pts.size(), 5u);
  for (const auto& p : pts) EXPECT_TRUE(positive_finite(p.at("ns")));
  EXPECT_EQ(m.at("likwid_bench").at("available"), false);
  EXPECT_FALSE(m.at("likwid_bench").at("reason").get<std::string>().empty());
}

// Dips are recomputed from the points: each listed one lies more than 10% below both
// neighbours (not after a step down), every such point is listed, and each has its line in
// bandwidth.warnings.
TEST(Characterize, CurvesListTheirDipsAndEachIsAWarning) {
  const json& bw = tiny_machine().at("bandwidth");
  size_t dips = 0;
  for (const auto& c : bw.at("curves")) {
    const json& pts = c.at("points");
    std::vector<double> want;
    for (size_t i = 1; i + 1 < pts.size(); ++i) {
      const double v = pts[i].at("gbps"), l = pts[i - 1].at("gbps"), r = pts[i + 1].at("gbps");
      if (v < 0.9 * std::min(l, r) && r >= 0.9 * l) want.push_back(pts[i].at("bytes").get<double>());
    }
    std::vector<double> got;
    for (const auto& d : c.at("dips")) {
      got.push_back(d.at("bytes").get<double>());
      EXPECT_EQ(d.at("neighbours_gbps").size(), 2u);
    }
    EXPECT_EQ(got, want) << c.at("kernel") << " " << c.at("threads");
    dips += got.size();
  }
  EXPECT_EQ(bw.at("warnings").size(), dips);
}

// A stand-in likwid-bench whose runs report 1e6, 2e6, 3e6 GB/s in turn: each point is the best
// of 3 runs (the tiny profile's), so 3e6; every comparison with a rooflab ceiling must then
// disagree, with ratio = ceiling / likwid's figure, and be listed in disagreements. It logs the
// GLIBC_TUNABLES it was given.
TEST(Characterize, LikwidPointsCompareWithTheLevelCeilingOfTheirKernel) {
  const std::string dir = ::testing::TempDir() + "/fake_likwid";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string exe = dir + "/likwid-bench";
  {
    std::ofstream f(exe);
    f << R"(#!/bin/sh
d=$(dirname "$0")
case "$1" in -h) echo 'likwid-bench -- Version 9.9';; *)
n=$(cat "$d/count" 2>/dev/null || echo 0); echo $((n + 1)) > "$d/count"
echo "tunables=$GLIBC_TUNABLES" >> "$d/env.log"
printf 'Size (Byte):\t\t24000\nMByte/s:\t\t%d000000000.0\n' $((n % 3 + 1));; esac
)";
  }
  std::filesystem::permissions(exe, std::filesystem::perms::owner_all);
  CharacterizeOptions o;
  o.profile = "tiny";
  json m;
  {
    const rooflab::ScopedEnv path("PATH", dir + ":" + rooflab::env("PATH").value_or(""));
    m = characterize(o);
  }
  const json& lb = m.at("likwid_bench");
  // Nowhere to run it (no L1, L2 or DRAM range detected: an unoptimized build): says so. A range
  // missing under load (the tiny profile in a parallel ctest lost its L1 once) leaves the others:
  // likwid-bench must then have run, its points checked against the levels that were detected.
  const json& levels = m.at("bandwidth").at("levels");
  if (!levels.contains("L1") && !levels.contains("L2") && !levels.contains("DRAM")) {
    EXPECT_EQ(lb.at("available"), false);
    EXPECT_FALSE(lb.at("reason").get<std::string>().empty());
    GTEST_SKIP() << "no L1, L2 or DRAM range detected (unoptimized build?)";
  }
  ASSERT_EQ(lb.at("available"), true) << lb.dump();
  EXPECT_EQ(lb.at("version"), "9.9");
  EXPECT_DOUBLE_EQ(lb.at("tolerance").get<double>(), 0.10);
  size_t compared = 0;
  EXPECT_EQ(lb.at("runs"), 3);
  for (const auto& p : lb.at("points")) {
    EXPECT_DOUBLE_EQ(p.at("gbps").get<double>(), 3e6);
    std::vector<double> runs = p.at("runs_gbps").get<std::vector<double>>();
    std::sort(runs.begin(), runs.end());
    EXPECT_EQ(runs, (std::vector<double>{1e6, 2e6, 3e6}));
    const std::string lvl = p.at("level"), t = std::to_string(p.at("threads").get<int>());
    const std::string k = p.at("kernel") == "load" ? "read" : "copy";
    if (!levels.contains(lvl) || !levels[lvl].contains(k) || !levels[lvl][k].contains(t)) {
      EXPECT_FALSE(p.contains("ratio"));
      continue;
    }
    ++compared;
    EXPECT_DOUBLE_EQ(p.at("rooflab_ceiling_gbps").get<double>(), levels[lvl][k][t].get<double>());
    EXPECT_DOUBLE_EQ(p.at("ratio").get<double>(), levels[lvl][k][t].get<double>() / 3e6);
    EXPECT_EQ(p.at("agrees"), false);
    // The fake's runs spread 3x; ratios of ~1e-4 are far outside it.
    EXPECT_DOUBLE_EQ(p.at("runs_spread").get<double>(), 3.0);
    EXPECT_EQ(p.at("within_run_spread"), false);
    EXPECT_TRUE(positive_finite(p.at("rooflab_gbps")));
    // Our kernel timed again at likwid's size: far below the fake's 3e6 GB/s, so no agreement.
    EXPECT_TRUE(positive_finite(p.at("rooflab_now_gbps")));
    EXPECT_DOUBLE_EQ(p.at("now_ratio").get<double>(), p.at("rooflab_now_gbps").get<double>() / 3e6);
    EXPECT_EQ(p.at("now_agrees"), false);
  }
  EXPECT_GE(compared, 1u);
  EXPECT_EQ(lb.at("disagreements").size(), compared);
  // likwid-bench gets the pages rooflab's buffers get: THP "always" and "never" alike for
  // both, under "madvise" through the glibc tunable in its environment (and its command);
  // only where the glibc lacks it do they differ, said once and beside each DRAM disagreement.
  const std::string thp = rooflab::thp_mode();
  const char* tun = std::getenv("GLIBC_TUNABLES");
  const std::string env = likwid_huge_page_env(thp, gnu_get_libc_version(), tun ? tun : "");
  const bool same = thp == "always" || thp == "never" || !env.empty();
  EXPECT_EQ(lb.at("pages").get<std::string>().rfind(same ? "both on" : "likwid-bench on 4 KiB pages", 0), 0u)
      << lb.at("pages");
  for (const auto& p : lb.at("points"))
    EXPECT_EQ(p.at("command").get<std::string>().rfind(env.empty() ? "likwid-bench " : env + " likwid-bench ", 0), 0u)
        << p.at("command");
  std::ifstream log(dir + "/env.log");
  size_t runs = 0;
  for (std::string line; std::getline(log, line); ++runs)
    EXPECT_EQ(line.find("glibc.malloc.hugetlb=1") != std::string::npos, !env.empty()) << line;
  EXPECT_GE(runs, 3 * lb.at("points").size());
  for (const auto& d : lb.at("disagreements")) {
    const std::string s = d.get<std::string>();
    EXPECT_NE(s.find("differ by more than 10%"), std::string::npos) << s;
    const bool dram = s.find("DRAM") != std::string::npos;
    EXPECT_EQ(s.find("4 KiB pages here") != std::string::npos, dram && !same) << s;
    EXPECT_EQ(s.find("bandwidth changed"), std::string::npos) << s;  // now_agrees is false
    EXPECT_EQ(s.find("within that spread"), std::string::npos) << s;
  }
}

TEST(Characterize, ReportsProgress) {
  std::vector<std::string> lines;
  tiny_machine(&lines);
  ASSERT_FALSE(lines.empty());
  bool bandwidth = false;
  for (const auto& l : lines) bandwidth = bandwidth || l.rfind("bandwidth read 1 thread", 0) == 0;
  EXPECT_TRUE(bandwidth);
}

TEST(Characterize, RejectsBadOptions) {
  CharacterizeOptions o;
  o.profile = "fast";
  EXPECT_THROW(characterize(o), rooflab::Error);
  o.profile = "tiny";
  o.max_threads = 100000;
  EXPECT_THROW(characterize(o), rooflab::Error);
  o.max_threads = -1;
  EXPECT_THROW(characterize(o), rooflab::Error);
  o.max_threads = 1;
  o.max_bytes = 1000;
  EXPECT_THROW(characterize(o), rooflab::Error);
}

// Run under an affinity mask (taskset, srun --cpu-bind), characterize pins its threads to the
// CPUs of that mask only, not to every core hwloc lists (hwloc leaves out only what a cgroup
// cpuset forbids), measures 1..(cores in the mask) threads and says so.
TEST(Characterize, StaysOnTheCpusOfItsAffinityMask) {
  cpu_set_t saved;
  ASSERT_EQ(sched_getaffinity(0, sizeof saved, &saved), 0);
  const std::vector<int> cpus = rooflab::diag::process_cpus();
  ASSERT_EQ(int(cpus.size()), CPU_COUNT(&saved)) << "no OpenMP places here: the affinity mask";
  if (cpus.size() < 2) GTEST_SKIP() << "one CPU: no mask narrower than the machine to test";
  const int last = cpus.back();
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(last, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
  struct Restore {
    cpu_set_t s;
    ~Restore() { sched_setaffinity(0, sizeof s, &s); }
  } restore{saved};
  EXPECT_EQ(rooflab::diag::process_cpus(), std::vector<int>{last});
  const rooflab::microbench::Topology t = rooflab::microbench::read_topology();
  EXPECT_EQ(t.cores, 1);
  EXPECT_EQ(t.pus, 1);
  EXPECT_EQ(t.core_cpu, std::vector<int>{last});
  EXPECT_GE(t.machine_cores, 2);
  for (const auto& [level, c] : t.caches) EXPECT_EQ(c.instances, std::vector<int>{1}) << level;

  CharacterizeOptions o;
  o.profile = "tiny";
  o.likwid = false;
  const json m = characterize(o);
  const json& h = m.at("host");
  EXPECT_EQ(h.at("cores"), 1);
  EXPECT_EQ(h.at("cpus"), json::array({last}));
  EXPECT_EQ(h.at("machine_cores"), t.machine_cores);
  EXPECT_EQ(m.at("bandwidth").at("threads"), json::array({1}));
  for (const auto& [op, by_t] : m.at("compute").at("ceilings").items()) EXPECT_FALSE(by_t.contains("2")) << op;
  bool said = false;
  for (const auto& d : m.at("diagnostics")) said = said || d.get<std::string>().find("measured on the 1 of") != std::string::npos;
  EXPECT_TRUE(said) << m.at("diagnostics").dump();
  // Outside the mask: refused by name, never measured on a CPU not given.
  o.max_threads = 2;
  EXPECT_THROW(characterize(o), rooflab::Error);
}

// The smoke profile (`run_all.sh --profile smoke`): cheaper, but every section machine.json's
// readers use is filled: the sweep reaches the DRAM range whenever the memory allows it (4x
// the largest reported cache), so DRAM, its multi-stream ceilings and every compute ceiling are
// there for every thread count, and the file says which profile measured it. Seconds.
TEST(Characterize, SmokeProfileFillsWhatReadersNeed) {
  CharacterizeOptions o;
  o.profile = "smoke";
  o.likwid = false;
  const json m = characterize(o);
  EXPECT_EQ(m.at("profile"), "smoke");
  // The ECM overlap rule's measurement, with its points (microbench/overlap.hpp).
  ASSERT_TRUE(m.contains("ecm"));
  EXPECT_FALSE(m.at("ecm").at("evidence").at("points").empty()) << m.at("caches").dump();
  // Thread counts 1, 2, 4, .. and all cores.
  const int cores = m.at("host").at("cores");
  std::vector<int> expect_threads;
  for (int t = 1; t <= cores; ++t)
    if ((t & (t - 1)) == 0 || t == cores) expect_threads.push_back(t);
  EXPECT_EQ(m.at("bandwidth").at("threads").get<std::vector<int>>(), expect_threads);
  EXPECT_NE(m.at("method").at("sweep").get<std::string>().find("'smoke' profile"), std::string::npos);
  double largest_reported = 0, largest_point = 0;
  for (const auto& [k, v] : m.at("caches").at("reported").items())
    if (k != "source") largest_reported = std::max(largest_reported, v.get<double>());
  for (const auto& c : m.at("bandwidth").at("curves"))
    largest_point = std::max(largest_point, c.at("points").back().at("bytes").get<double>());
  const json& lv = m.at("bandwidth").at("levels");
  // Each cache level the curves detected, and DRAM.
  std::vector<std::string> levels;
  for (const char* l : {"L1", "L2", "L3"})
    if (m.at("caches").at("measured").contains(l)) levels.push_back(l);
#ifdef NDEBUG
  EXPECT_FALSE(levels.empty()) << "no cache level detected";
#else
  // Unoptimized (sanitizer) builds: the kernels are too slow for the curves to show the caches.
  if (levels.empty()) GTEST_LOG_(INFO) << "no cache level detected (unoptimized build)";
#endif
  // The sweep's end follows the machine: DRAM is expected where the sweep reached 4x its
  // largest reported cache (it stops short only when 1/6 of the free memory is smaller).
  if (largest_point >= 4 * std::max(largest_reported, double(32 << 20)) * 0.99) {
    levels.push_back("DRAM");
  } else {
    GTEST_LOG_(INFO) << "sweep ends at " << largest_point << " B: no DRAM range on this machine";
  }
  for (const std::string& l : levels) {
    ASSERT_TRUE(lv.contains(l)) << l;
    // Every kernel at 1 thread. More threads move a level's range up by the private caches
    // they add (and a 3-array kernel's working set rounds down), so only L1, whose range the
    // sweep always covers, is required at every count; the roofline falls back to the
    // largest measured count below.
    for (const char* k : {"read", "copy", "update", "triad"})
      EXPECT_TRUE(positive_finite(lv.at(l).at(k).value("1", json()))) << l << " " << k;
    for (int t : expect_threads)
      if (l == "L1") {
        EXPECT_TRUE(positive_finite(lv.at(l).at("read").value(std::to_string(t), json()))) << l << " " << t;
      }
    if (l != "DRAM") {
      EXPECT_TRUE(positive_finite(m.at("latency").at("levels").value(l, json()))) << l;
    }
  }
  if (lv.contains("DRAM")) {
    for (const char* k : {"read_s2", "read_s4", "read_s8", "update_s2", "update_s4", "update_s8"})
      EXPECT_TRUE(positive_finite(m.at("bandwidth").at("streams").at("levels").at("DRAM").at(k).at("1"))) << k;
  }
  for (const char* k : {"fma_f64", "fma_f32", "add_f64", "add_f32", "mul_f64", "mul_f32", "addmin_f64", "addmin_f32"})
    for (int t : expect_threads)
      EXPECT_TRUE(positive_finite(m.at("compute").at("ceilings").at(k).at(std::to_string(t)))) << k << " " << t;
  expect_by_isa(m, expect_threads);
  EXPECT_TRUE(positive_finite(m.at("host").at("clock").at("integer_chain_ghz")));
  EXPECT_TRUE(positive_finite(m.at("host").at("clock").at("fp_implied_ghz")));
  EXPECT_TRUE(positive_finite(m.at("host").at("clock_ghz_estimate")) ||
              m.at("host").at("clock_ghz_dropped_reason").is_string());
}

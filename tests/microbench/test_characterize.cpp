#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "harness/error.hpp"
#include "microbench/characterize.hpp"

using nlohmann::json;
using rooflab::microbench::characterize;
using rooflab::microbench::CharacterizeOptions;

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
  EXPECT_GE(h.at("cores").get<int>(), 1);
  EXPECT_GE(h.at("threads").get<int>(), h.at("cores").get<int>());
  EXPECT_EQ(h.at("isa").at(0), "scalar");
  EXPECT_TRUE(h.at("virtualized").is_boolean());
  EXPECT_TRUE(h.at("hypervisor").is_string() || h.at("hypervisor").is_null());
  EXPECT_TRUE(positive_finite(h.at("clock_ghz_estimate")));
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
    if (lvl != "DRAM") {
      EXPECT_TRUE(m.at("caches").at("measured").contains(lvl)) << lvl;
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

TEST(Characterize, LatencyCurveAndDisabledLikwid) {
  const json& m = tiny_machine();
  const json& pts = m.at("latency").at("points");
  ASSERT_GE(pts.size(), 5u);
  for (const auto& p : pts) EXPECT_TRUE(positive_finite(p.at("ns")));
  EXPECT_EQ(m.at("likwid_bench").at("available"), false);
  EXPECT_FALSE(m.at("likwid_bench").at("reason").get<std::string>().empty());
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

// The ECM overlap-rule decision (microbench/overlap.hpp) on synthetic points of both kinds and
// ambiguous ones (deterministic), the working sets per level, the read_reload kernels' results,
// and the "ecm" section characterize writes.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "harness/isa.hpp"
#include "microbench/characterize.hpp"
#include "microbench/overlap.hpp"

using namespace rooflab;
using namespace rooflab::microbench;

namespace {
// t_L1(L) = 0.5 L ns per line; the outer levels from `outer(level, t1)`.
template <class F>
std::vector<OverlapPoint> synthetic(F outer) {
  std::vector<OverlapPoint> pts;
  for (int L : kReloadCounts) {
    const double t1 = 0.5 * L;
    pts.push_back({"L1", L, 12 << 10, t1, t1});
    for (const char* lvl : {"L2", "L3"}) {
      const double t = outer(std::string(lvl), t1);
      pts.push_back({lvl, L, size_t(lvl[1] == '2' ? 256 << 10 : 8 << 20), t, t});
    }
  }
  return pts;
}
double c_of(const std::string& lvl) { return lvl == "L2" ? 2.0 : 5.0; }
}  // namespace

// Serial: t_X = t_L1 + c_X exactly; the serial fit recovers c and wins by far.
TEST(EcmOverlap, SerialPointsDecideSerial) {
  const OverlapDecision d = decide_overlap(synthetic([](const std::string& l, double t1) { return t1 + c_of(l); }));
  EXPECT_EQ(d.overlap, "serial");
  EXPECT_EQ(d.winner, "serial");
  EXPECT_NEAR(d.serial.rms_rel_error, 0, 1e-12);
  EXPECT_NEAR(d.serial.transfer_ns.at("L2"), 2, 1e-9);
  EXPECT_NEAR(d.serial.transfer_ns.at("L3"), 5, 1e-9);
  EXPECT_GT(d.overlapping.rms_rel_error, 0.05);
  EXPECT_GE(d.margin, 1.5);
}

// Overlapping: t_X = max(t_L1, c_X); L2's transfer (2 ns) is hidden once 0.5 L exceeds it.
TEST(EcmOverlap, OverlappingPointsDecideOverlapping) {
  const OverlapDecision d =
      decide_overlap(synthetic([](const std::string& l, double t1) { return std::max(t1, c_of(l)); }));
  EXPECT_EQ(d.overlap, "overlapping");
  EXPECT_NEAR(d.overlapping.rms_rel_error, 0, 1e-9);
  EXPECT_NEAR(d.overlapping.transfer_ns.at("L2"), 2, 2e-3);
  EXPECT_GT(d.serial.rms_rel_error, 0.05);
  EXPECT_GE(d.margin, 1.5);
}

// Loads that cost nothing (t_L1 flat): both rules predict the same points, nothing is decided,
// and the reason says why.
TEST(EcmOverlap, IndistinguishablePointsAreUndecided) {
  std::vector<OverlapPoint> pts;
  for (int L : kReloadCounts) {
    pts.push_back({"L1", L, 12 << 10, 1.0, 1.0});
    const double wobble = (L % 2 ? 1.01 : 0.99);  // deterministic noise
    pts.push_back({"L2", L, 256 << 10, 3.0 * wobble, 3.0});
  }
  const OverlapDecision d = decide_overlap(pts);
  EXPECT_EQ(d.overlap, "undecided");
  EXPECT_FALSE(d.winner.empty());
  EXPECT_LT(d.margin, 1.5);
  EXPECT_NE(d.reason.find("do not tell the rules apart"), std::string::npos);
}

// Half-way between the rules (t_X = t_L1 / 2 + max(t_L1 / 2, c)): neither fits 1.5x better.
TEST(EcmOverlap, PartialOverlapWithinTheMarginIsUndecided) {
  const OverlapDecision d = decide_overlap(
      synthetic([](const std::string& l, double t1) { return 0.5 * (t1 + c_of(l)) + 0.5 * std::max(t1, c_of(l)); }));
  EXPECT_EQ(d.overlap, "undecided") << d.reason;
}

TEST(EcmOverlap, TooFewPointsAreUndecided) {
  std::vector<OverlapPoint> pts = {{"L1", 1, 4096, 1, 1}, {"L1", 2, 4096, 2, 2}, {"L2", 1, 1 << 18, 3, 3},
                                   {"L2", 2, 1 << 18, 4, 4}, {"L3", 4, 1 << 23, 9, 9}};
  const OverlapDecision d = decide_overlap(pts);
  EXPECT_EQ(d.overlap, "undecided");
  EXPECT_TRUE(d.winner.empty());
  EXPECT_NE(d.reason.find("3 or more loads counts"), std::string::npos);
  const auto j = overlap_json(pts, d, "avx2", "test");
  EXPECT_FALSE(j.at("measured").get<bool>());
  EXPECT_TRUE(j.at("evidence").at("winner").is_null());
}

TEST(EcmOverlap, WorkingSetsAQuarterOfEachLevelThatLiesBeyondTheOneAbove) {
  const auto ws = overlap_working_sets({{"L1", 48 << 10}, {"L2", 1 << 20}, {"L3", 32 << 20}});
  ASSERT_EQ(ws.size(), 3u);
  EXPECT_EQ(ws.at("L1"), 12u << 10);
  EXPECT_EQ(ws.at("L2"), 256u << 10);
  EXPECT_EQ(ws.at("L3"), 8u << 20);
  // An L2 whose quarter is not 2x L1: it and everything beyond are left out.
  const auto small = overlap_working_sets({{"L1", 48 << 10}, {"L2", 256 << 10}, {"L3", 32 << 20}});
  EXPECT_EQ(small.size(), 1u);
  EXPECT_TRUE(overlap_working_sets({}).empty());
  // A small L1 (measured under load) still gets a working set: a quarter, in whole lines.
  const auto tiny = overlap_working_sets({{"L1", 11 << 10}, {"L2", 1 << 20}});
  ASSERT_EQ(tiny.count("L1"), 1u);
  EXPECT_EQ(tiny.at("L1"), (11u << 10) / 4 / 64 * 64);
}

// Every reload kernel returns the plain read's sum (the extra loads change no result), with a
// ragged tail and several passes.
TEST(EcmOverlap, ReloadKernelsSumLikeRead) {
  std::vector<double> a(1003);
  for (size_t i = 0; i < a.size(); ++i) a[i] = double(i % 7) + 0.25;
  for (Isa isa : {Isa::scalar, Isa::avx2, Isa::avx512}) {
    if (!isa_supported(isa)) continue;
    const KernelTable& kt = kernels_for(isa);
    const double want = kt.read(a.data(), a.size(), 3);
    for (size_t li = 0; li < std::size(kReloadCounts); ++li)
      EXPECT_DOUBLE_EQ(kt.read_reload[li](a.data(), a.size(), 3), want) << to_string(isa) << " L=" << kReloadCounts[li];
  }
}

// characterize writes the section with its evidence: every point's time positive, both fits,
// and an overlap value a reader accepts.
TEST(EcmOverlap, CharacterizeWritesTheSection) {
  CharacterizeOptions o;
  o.profile = "tiny";
  o.likwid = false;
  const nlohmann::json m = characterize(o);
  ASSERT_TRUE(m.contains("ecm"));
  const auto& e = m.at("ecm");
  const std::string rule = e.at("overlap");
  EXPECT_TRUE(rule == "serial" || rule == "overlapping" || rule == "undecided") << rule;
  EXPECT_EQ(e.at("measured").get<bool>(), rule != "undecided");
  EXPECT_NE(e.at("source").get<std::string>().find("measured by rooflab characterize"), std::string::npos);
  const auto& ev = e.at("evidence");
  ASSERT_FALSE(ev.at("points").empty());
  for (const auto& p : ev.at("points")) {
    EXPECT_GT(p.at("ns_per_line").get<double>(), 0);
    EXPECT_GE(p.at("ns_per_line_median").get<double>(), p.at("ns_per_line").get<double>());
  }
  EXPECT_TRUE(ev.at("fits").contains("serial"));
  EXPECT_TRUE(ev.at("fits").contains("overlapping"));
  EXPECT_TRUE(ev.contains("margin"));
}

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "harness/error.hpp"
#include "microbench/capacity.hpp"
#include "microbench/measure.hpp"

using rooflab::microbench::CapacityOptions;
using rooflab::microbench::detect_capacities;
using Curve = std::vector<std::pair<double, double>>;

namespace {
constexpr double KiB = 1024, MiB = 1024 * KiB;

// Geometric sweep 4 KiB .. max with `per_octave` points; value(bytes) gives the curve.
template <class F>
Curve sweep(double max, int per_octave, F value) {
  Curve c;
  for (int k = 0;; ++k) {
    double b = 4 * KiB * std::exp2(double(k) / per_octave);
    if (b > max * 1.0001) break;
    c.emplace_back(b, value(b));
  }
  return c;
}

// L1 32 KiB, L2 512 KiB, L3 16 MiB, then memory: four plateaus, three capacities.
double staircase(double b) {
  if (b <= 32 * KiB) return 120;
  if (b <= 512 * KiB) return 60;
  if (b <= 16 * MiB) return 30;
  return 12;
}
}  // namespace

TEST(DetectCapacities, FourPlateausGiveThreeCapacitiesAtTheLastPlateauPoint) {
  auto caps = detect_capacities(sweep(256 * MiB, 2, staircase));
  ASSERT_EQ(caps.size(), 3u);
  EXPECT_EQ(caps[0], size_t(32 * KiB));
  EXPECT_EQ(caps[1], size_t(512 * KiB));
  EXPECT_EQ(caps[2], size_t(16 * MiB));
}

TEST(DetectCapacities, InputOrderDoesNotMatter) {
  auto c = sweep(256 * MiB, 2, staircase);
  std::reverse(c.begin(), c.end());
  EXPECT_EQ(detect_capacities(c).size(), 3u);
}

TEST(DetectCapacities, ToleratesFivePercentNoise) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> noise(0.95, 1.05);
  for (int trial = 0; trial < 20; ++trial) {
    auto c = sweep(256 * MiB, 4, [&](double b) { return staircase(b) * noise(rng); });
    auto caps = detect_capacities(c);
    ASSERT_EQ(caps.size(), 3u) << "trial " << trial;
    const double want[] = {32 * KiB, 512 * KiB, 16 * MiB};
    for (int i = 0; i < 3; ++i) {
      EXPECT_LE(double(caps[i]), want[i] * 1.001) << "trial " << trial << " level " << i;
      EXPECT_GE(double(caps[i]), want[i] / 1.5) << "trial " << trial << " level " << i;
    }
  }
}

TEST(DetectCapacities, OneOutlierDoesNotMakeALevel) {
  auto c = sweep(64 * MiB, 2, [](double b) { return b == 128 * KiB ? 50.0 : 100.0; });
  EXPECT_TRUE(detect_capacities(c).empty());
}

TEST(DetectCapacities, FlatAndGentlySlopedCurvesHaveNoLevels) {
  EXPECT_TRUE(detect_capacities(sweep(64 * MiB, 2, [](double) { return 42.0; })).empty());
  // 8% lower per octave: a slope, not a transition.
  auto slope = sweep(64 * MiB, 4, [](double b) { return 100 * std::pow(0.92, std::log2(b / 4096)); });
  EXPECT_TRUE(detect_capacities(slope).empty());
}

TEST(DetectCapacities, SingleDrop) {
  auto caps = detect_capacities(sweep(64 * MiB, 2, [](double b) { return b <= 1 * MiB ? 80.0 : 20.0; }));
  ASSERT_EQ(caps.size(), 1u);
  EXPECT_EQ(caps[0], size_t(1 * MiB));
}

TEST(DetectCapacities, GradualTransitionEndsTheLevelWhereTheDeclineStarts) {
  // 100 up to 2 MiB, then falling linearly in log2(size) to 25 at 8 MiB, flat after.
  auto f = [](double b) {
    double o = std::log2(b / (2 * MiB));
    return o <= 0 ? 100.0 : o >= 2 ? 25.0 : 100.0 * std::pow(0.25, o / 2);
  };
  auto caps = detect_capacities(sweep(256 * MiB, 4, f));
  ASSERT_EQ(caps.size(), 1u);
  EXPECT_GE(double(caps[0]), 2 * MiB);
  EXPECT_LE(double(caps[0]), 2 * MiB * std::exp2(0.5));
}

TEST(DetectCapacities, ShallowGradualL2ToL3DropOfARealCurveIsFound) {
  // 1-thread read bandwidth (GB/s) measured on the 2-core Zen 3 VM (L1 32 KiB, L2 512 KiB,
  // L3 32 MiB shared with other tenants): L2 -> L3 loses only ~22%, spread over 1.5 octaves.
  const Curve zen3 = {{4096, 123.0}, {5824, 116.9}, {8192, 154.8}, {11584, 162.5},
                      {16384, 172.6}, {23168, 180.2}, {32768, 180.2}, {46336, 99.9},
                      {65536, 100.8}, {92672, 101.6}, {131072, 101.9}, {185344, 98.4},
                      {262144, 99.6}, {370752, 94.1}, {524288, 88.0}, {741440, 81.6},
                      {1048576, 74.8}, {1482880, 78.1}, {2097152, 78.9}, {2965824, 79.2},
                      {4194304, 79.2}, {5931648, 79.1}, {8388608, 79.0}, {11863296, 74.3},
                      {16777216, 66.9}, {23726592, 35.1}, {33554432, 26.1}, {47453120, 25.2},
                      {67108864, 21.9}, {94906240, 21.6}, {134217728, 21.2}, {189812544, 20.3},
                      {268435456, 19.8}};
  auto caps = detect_capacities(zen3);
  ASSERT_EQ(caps.size(), 3u);
  EXPECT_EQ(caps[0], 32768u);
  EXPECT_GE(caps[1], 256 * 1024u);
  EXPECT_LE(caps[1], 512 * 1024u);
  EXPECT_GE(caps[2], 8 * 1024 * 1024u);
  EXPECT_LE(caps[2], 32 * 1024 * 1024u);
}

TEST(DetectCapacities, LatencyOrientationDetectsJumpsUp) {
  auto ns = sweep(256 * MiB, 2, [](double b) { return 120.0 / staircase(b); });
  CapacityOptions o;
  o.higher_is_better = false;
  auto caps = detect_capacities(ns, o);
  ASSERT_EQ(caps.size(), 3u);
  EXPECT_EQ(caps[1], size_t(512 * KiB));
  // The same curve read as bandwidth only rises: no level.
  EXPECT_TRUE(detect_capacities(ns).empty());
}

TEST(DetectCapacities, ADropAtTheVeryStartIsNotALevel) {
  // Only one point before the drop: below min_plateau_points.
  auto c = sweep(16 * MiB, 1, [](double b) { return b <= 4 * KiB ? 100.0 : 40.0; });
  EXPECT_TRUE(detect_capacities(c).empty());
}

TEST(DetectCapacities, RejectsBadInput) {
  EXPECT_THROW(detect_capacities({{4096, 1.0}, {8192, -1.0}, {16384, 1.0}}), rooflab::Error);
  EXPECT_THROW(detect_capacities({{0, 1.0}, {8192, 1.0}, {16384, 1.0}}), rooflab::Error);
  CapacityOptions o;
  o.drop = 1.5;
  EXPECT_THROW(detect_capacities(sweep(1 * MiB, 1, staircase), o), rooflab::Error);
  EXPECT_TRUE(detect_capacities({{4096, 1.0}, {8192, 0.1}}).empty());  // too few points
}

// A 2-thread ceiling at the 1-thread rate (the threads shared a core) is measured again until it
// scales, the best kept; one that stays low is kept and flagged; 1 thread and a scaling first
// measurement are never re-measured.
TEST(RemeasureIfShared, RetriesUntilTheThreadsScaleAndFlagsWhatStaysLow) {
  using rooflab::microbench::remeasure_if_shared;
  using rooflab::microbench::Stat;
  std::vector<double> next = {60, 118};  // what the re-measurements return, in order
  int calls = 0;
  auto measure = [&] { return Stat{next[size_t(calls++)], 0}; };
  auto c = remeasure_if_shared(measure, Stat{59, 0}, 59, 2);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(c.retries, 2);
  EXPECT_DOUBLE_EQ(c.stat.best, 118);
  EXPECT_FALSE(c.still_low);

  calls = 0;
  next = {61, 58, 60};
  c = remeasure_if_shared(measure, Stat{59, 0}, 59, 2);
  EXPECT_EQ(calls, 3);  // max_retries
  EXPECT_DOUBLE_EQ(c.stat.best, 61);
  EXPECT_TRUE(c.still_low);

  calls = 0;
  EXPECT_EQ(remeasure_if_shared(measure, Stat{100, 0}, 59, 2).retries, 0);  // 1.7x: scales
  EXPECT_EQ(remeasure_if_shared(measure, Stat{59, 0}, 0, 1).retries, 0);    // the 1-thread one
  EXPECT_EQ(calls, 0);
}

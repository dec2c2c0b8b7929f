// measure_bandwidth_streams: one curve per kernel and S, working sets as requested, errors
// for what has no S-stream form. Tiny sizes and samples: this checks the plumbing, not speed.
#include <gtest/gtest.h>

#include <algorithm>

#include "harness/error.hpp"
#include "microbench/kernels.hpp"
#include "microbench/measure.hpp"
#include "microbench/sysinfo.hpp"

using namespace rooflab::microbench;

namespace {
const Timing kFast{5e-5, 2};
const std::vector<int>& cpus() {
  static const std::vector<int> c = read_topology().core_cpu;
  return c;
}
}  // namespace

TEST(Streams, CurveNamesAndWhichKernelsHaveThem) {
  EXPECT_EQ(curve_name(BwKernel::read, 1), "read");
  EXPECT_EQ(curve_name(BwKernel::update, 4), "update_s4");
  EXPECT_TRUE(has_streams(BwKernel::read));
  EXPECT_TRUE(has_streams(BwKernel::update));
  EXPECT_FALSE(has_streams(BwKernel::copy));
  EXPECT_FALSE(has_streams(BwKernel::triad_nt));
}

TEST(Streams, OneCurvePerKernelAndStreamCountAtTheRequestedSizes) {
  const KernelTable& kt = kernels_for(rooflab::best_isa());
  const std::vector<size_t> sizes = {64 << 10, 256 << 10};
  const std::vector<int> streams = {1, 2, 8};
  std::vector<std::string> lines;
  const auto curves = measure_bandwidth_streams(kt, cpus(), 1, {BwKernel::read, BwKernel::update},
                                                streams, sizes, kFast,
                                                [&](const std::string& s) { lines.push_back(s); });
  ASSERT_EQ(curves.size(), 6u);
  for (size_t i = 0; i < curves.size(); ++i) {
    const BwCurve& c = curves[i];
    EXPECT_EQ(c.kernel, i < 3 ? BwKernel::read : BwKernel::update);
    EXPECT_EQ(c.streams, streams[i % 3]);
    EXPECT_EQ(c.threads, 1);
    ASSERT_EQ(c.points.size(), sizes.size()) << curve_name(c.kernel, c.streams);
    for (size_t j = 0; j < sizes.size(); ++j) {
      // S arrays of whole lines: at most S lines below the request, never above it.
      EXPECT_LE(c.points[j].bytes, sizes[j]);
      EXPECT_GE(c.points[j].bytes + size_t(c.streams) * 64, sizes[j]);
      EXPECT_GT(c.points[j].gbps.best, 0);
      EXPECT_GE(c.points[j].gbps.best, c.points[j].gbps.median);
    }
  }
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_NE(lines[1].find("bandwidth read_s2 1 thread"), std::string::npos) << lines[1];
}

TEST(Streams, AllThreadsSplitTheWorkingSet) {
  if (cpus().size() < 2) GTEST_SKIP() << "one core";
  const KernelTable& kt = kernels_for(rooflab::best_isa());
  const auto curves = measure_bandwidth_streams(kt, cpus(), 2, {BwKernel::read}, {4},
                                                {size_t(512) << 10}, kFast, nullptr);
  ASSERT_EQ(curves.size(), 1u);
  ASSERT_EQ(curves[0].points.size(), 1u);
  EXPECT_EQ(curves[0].points[0].bytes, size_t(512) << 10);  // 2 x 4 arrays of 64 KiB
}

TEST(Streams, RefusesKernelsWithoutStreamsAndUnprovidedCounts) {
  const KernelTable& kt = kernels_for(rooflab::Isa::scalar);
  auto why = [&](BwKernel k, int s) {
    try {
      measure_bandwidth_streams(kt, cpus(), 1, {k}, {s}, {size_t(64) << 10}, kFast, nullptr);
    } catch (const rooflab::Error& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(why(BwKernel::copy, 2).find("'copy' has no S-stream form"), std::string::npos);
  EXPECT_NE(why(BwKernel::read, 3).find("3 streams requested"), std::string::npos);
  EXPECT_EQ(why(BwKernel::read, 4), "");
}

// Stream q starts q x (G + gap) in: G a whole number of huge pages of at least one stream, so
// the streams never overlap and only the gap sets their 4 KiB and huge-page phases.
TEST(Streams, PlacementsAreHugePageStridesPlusTheGap) {
  const size_t huge = size_t(2) << 20;
  for (size_t gap : kStreamGaps)
    for (size_t sb : {size_t(64), size_t(3) << 20, size_t(64) << 20}) {
      EXPECT_EQ(stream_offset(0, sb, gap, huge), 0u);
      for (int q = 1; q < 8; ++q) {
        const size_t o = stream_offset(q, sb, gap, huge), prev = stream_offset(q - 1, sb, gap, huge);
        EXPECT_GE(o - prev, sb) << "streams overlap, gap " << gap;
        EXPECT_EQ(o % huge, (size_t(q) * gap) % huge) << "gap " << gap << " q " << q;
      }
    }
  // Two placements whose 4 KiB phases differ: the one that suits read can slow update.
  ASSERT_GE(std::size(kStreamGaps), 2u);
  EXPECT_NE(kStreamGaps[0] % 4096, kStreamGaps[1] % 4096);
  EXPECT_NE(kStreamGaps[0] % huge / 4096, kStreamGaps[1] % huge / 4096);
}

// Every S-stream point is timed at each placement and keeps the best; S = 1 has one placement.
TEST(Streams, EachPointKeepsItsBestPlacement) {
  const KernelTable& kt = kernels_for(rooflab::best_isa());
  const auto curves = measure_bandwidth_streams(kt, cpus(), 1, {BwKernel::read, BwKernel::update},
                                                {1, 4}, {size_t(256) << 10}, kFast, nullptr);
  ASSERT_EQ(curves.size(), 4u);
  for (const BwCurve& c : curves) {
    ASSERT_EQ(c.points.size(), 1u);
    const BwPoint& p = c.points[0];
    if (c.streams == 1) {
      EXPECT_TRUE(p.placements_gbps.empty());
      continue;
    }
    ASSERT_EQ(p.placements_gbps.size(), std::size(kStreamGaps)) << curve_name(c.kernel, c.streams);
    for (double g : p.placements_gbps) EXPECT_GT(g, 0);
    EXPECT_DOUBLE_EQ(p.gbps.best, *std::max_element(p.placements_gbps.begin(), p.placements_gbps.end()));
  }
}

// A repeated sweep (characterize's per-ISA in-cache points) keeps each point's faster
// measurement; spread samples (best far above the median) are what triggers the repeat.
TEST(Streams, RepeatedSweepKeepsTheFasterPointAndSpreadIsDetected) {
  auto curve = [](double best0, double med0, double best1, double med1) {
    BwCurve c{BwKernel::triad, 1, {}, 1};
    c.points.push_back({4096, {best0, med0}, {}});
    c.points.push_back({8192, {best1, med1}, {}});
    return std::vector<BwCurve>{c};
  };
  std::vector<BwCurve> a = curve(179, 158, 261, 260);
  EXPECT_TRUE(has_spread_point(a, 0.08));  // 179 / 158: 13% apart
  EXPECT_FALSE(has_spread_point(curve(255, 253, 261, 260), 0.08));
  keep_faster(a, curve(255, 253, 250, 249));
  EXPECT_DOUBLE_EQ(a[0].points[0].gbps.best, 255);
  EXPECT_DOUBLE_EQ(a[0].points[0].gbps.median, 253);  // the whole point, not just its best
  EXPECT_DOUBLE_EQ(a[0].points[1].gbps.best, 261);
  EXPECT_FALSE(has_spread_point(a, 0.08));
  std::vector<BwCurve> other = curve(1, 1, 1, 1);
  other[0].points[1].bytes = 16384;
  EXPECT_THROW(keep_faster(a, other), rooflab::Error);
  EXPECT_THROW(keep_faster(a, {}), rooflab::Error);
}

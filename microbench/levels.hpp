#pragma once
// From detected capacities to named levels and per-level plateau values. Pure functions.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rooflab::microbench {

inline const std::vector<std::string> kCacheLevels = {"L1", "L2", "L3"};

struct Labeled {
  std::map<std::string, size_t> levels;  // "L1".."L3" -> bytes
  std::vector<size_t> unlabeled;         // detected transitions with no level left for them
};
// Each reported level takes the detected capacity nearest to it within 2x; each remaining
// detection takes, among the free levels where sizes stay increasing, the one whose reported
// size is nearest (the first one if none is reported). Without reported sizes this is
// simply L1, L2, L3 in order.
Labeled label_levels(const std::vector<size_t>& detected,
                     const std::map<std::string, size_t>& reported);

// The capacities the level ranges (and so bandwidth.levels) are built from: the labeled ones,
// plus each reported level the read-bandwidth curve showed no transition for whose reported
// size lies between its labeled neighbours, or above the largest labeled one (a level whose
// plateau equals the next one's, e.g. an L2 as fast as the L3 for one core, or an L3 whose step
// a VM's curve does not show). The model places working sets against the reported
// size of such a level (roofline/machine.cpp takes caches.reported where caches.measured
// lacks a level), so it needs that level's bandwidth too. `filled` names the levels added.
struct RangeCapacities {
  std::map<std::string, size_t> levels;
  std::vector<std::string> filled;
};
RangeCapacities range_capacities(const Labeled& labeled, const std::map<std::string, size_t>& reported);

struct Range {
  double lo, hi;  // inclusive working-set bounds, bytes
};
// Working-set ranges "well inside" each level for a run on `threads` threads, from per-level
// capacities and instances(level) = how many separate caches of that level the threads use
// (T for private caches, 1 for a shared L3). Cache level: [max(2 x previous level, C/8), C/2]
// of its aggregate capacity C (or (previous, C] when that is empty). DRAM: >= dram_floor.
std::map<std::string, Range> level_ranges(const std::map<std::string, size_t>& capacity,
                                          const std::map<std::string, int>& instances,
                                          double dram_floor);

// The points with each size replaced by the sweep size (of `sizes`) it is within `tolerance`
// (relative) of: a 3-array kernel's working set is a whole number of 3-line groups per thread, a
// little off the size it was asked for (triad at 64 KiB: 65,472 B), and a level's range bound at
// exactly that size (2x the level below) must not drop it while keeping the other kernels' point.
std::vector<std::pair<double, double>> at_sweep_sizes(std::vector<std::pair<double, double>> points,
                                                      const std::vector<size_t>& sizes, double tolerance = 0.03);

// Median value of the points whose size lies in r; nullopt if none does.
std::optional<double> median_in(const std::vector<std::pair<double, double>>& points, Range r);

// The DRAM plateau: the median of the points in r (the DRAM range) no more than `tolerance`
// above the point at the largest working set. A curve still falling past the DRAM floor has a
// cache still holding part of the working set (a replacement policy that keeps some of a
// cyclic walk, or threads whose vCPUs sit on separate L3s that the VM reports as one); those
// points are not DRAM. nullopt if no point is in r.
std::optional<double> dram_plateau(const std::vector<std::pair<double, double>>& points, Range r,
                                   double tolerance = 0.10);

// Indices of the interior points (sorted by size) more than `tolerance` below both
// neighbours, v < (1 - tolerance) x min(left, right), on a plateau or a rising stretch
// (right >= (1 - tolerance) x left). Past a cache's capacity the first point may undershoot
// the next level's plateau (an LRU cache thrashes on a cyclic walk a little larger than
// itself): that is the memory system's, and the step down before it excludes it. Anywhere
// else the memory system makes no such tooth, so a dip is the measurement's (a loop tail, an
// alignment, a disturbed sample).
std::vector<size_t> plateau_dips(const std::vector<std::pair<double, double>>& points,
                                 double tolerance = 0.10);

// Log-log interpolation of value at `bytes` (clamped to the curve's ends); points sorted.
double interpolate(const std::vector<std::pair<double, double>>& points, double bytes);

}  // namespace rooflab::microbench

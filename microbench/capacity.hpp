#pragma once
// Cache-capacity detection from a performance-vs-working-set curve. Pure functions, so they
// are unit-tested on synthetic curves.
#include <cstddef>
#include <utility>
#include <vector>

namespace rooflab::microbench {

struct CapacityOptions {
  // A transition is a decline of more than `drop` (fraction) over at most one octave of
  // working-set size; gentler slopes stay part of the plateau.
  double drop = 0.15;
  // Points a plateau needs before a transition counts as the end of a cache level.
  size_t min_plateau_points = 2;
  // true for bandwidth (drops when a level overflows); false for latency (jumps up).
  bool higher_is_better = true;
};

// curve: (working-set bytes, value) points, any order. Returns one capacity per detected
// cache level, ascending; the last plateau (memory) yields none.
//
// The rule: values are smoothed with a running median of 3 (one outlier cannot make or hide
// a level). Point j is "steep" when the value has declined by more than `drop` since the
// first point at most one octave smaller, or (a gradual transition) by more than 1.25 x drop
// over at most two octaves while still falling by more than drop/2 over the last octave; a
// gentle slope (under ~9% per octave for drop = 0.15) is never steep. Each maximal run of
// steep points is a transition; the plateau before it has as level its median, and the
// level's capacity is the largest working set before the run still within drop/2 of that
// median, i.e. the largest working set still on the plateau. A flat curve has no levels.
std::vector<size_t> detect_capacities(const std::vector<std::pair<double, double>>& curve,
                                      const CapacityOptions& opt = {});

}  // namespace rooflab::microbench

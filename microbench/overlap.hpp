#pragma once
// Which ECM overlap rule (roofline/ecm.hpp) this core follows, measured rather than assumed by
// vendor. The test kernel streams a read over a working set placed in L1, L2 and L3, with each
// vector loaded L times (KernelTable::read_reload, L in kReloadCounts): the extra loads hit L1
// and add in-core load work (T_nOL) without arithmetic. Per cache line, t_X(L) in level X:
//   serial      (Intel-like, transfers do not overlap the core's loads): t_X(L) = t_L1(L) + c_X
//   overlapping (AMD-like):                                              t_X(L) = max(t_L1(L), c_X)
// Arithmetic work would not tell the two apart: it overlaps the transfers under both rules.
// Both one-parameter-per-level models are fitted (least relative squares) and the one with
// the smaller RMS relative error wins when the other's is at least `min_margin` times larger
// and above `min_error` (differences within timing noise decide nothing): else "undecided".
#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "microbench/kernels.hpp"
#include "microbench/measure.hpp"

namespace rooflab::microbench {

struct OverlapPoint {
  std::string level;  // "L1", "L2", "L3"
  int loads = 1;      // loads per vector
  size_t bytes = 0;   // working set
  double ns_per_line = 0;         // best sample
  double ns_per_line_median = 0;
};

struct OverlapFit {
  double rms_rel_error = 0;
  std::map<std::string, double> transfer_ns;  // fitted c_X per outer level, ns per line
};

struct OverlapDecision {
  std::string overlap;  // "serial" | "overlapping" | "undecided"
  std::string winner;   // the better fit ("" when none could be made)
  OverlapFit serial, overlapping;
  double margin = 0;    // loser's error / winner's error
  double min_margin = 1.5, min_error = 0.05;
  std::string reason;
};

// Pure: decides from points (L1 points and at least one outer level at >= 3 common loads
// counts, else "undecided" with the reason).
OverlapDecision decide_overlap(const std::vector<OverlapPoint>& points, double min_margin = 1.5,
                               double min_error = 0.05);

// Times read_reload of `kt` on one thread pinned to `cpu`, at each level's working set
// (level -> bytes), for every loads count.
std::vector<OverlapPoint> measure_overlap(const KernelTable& kt, int cpu,
                                          const std::map<std::string, size_t>& working_sets,
                                          const Timing& timing);

// Working set per level from the capacities (level -> bytes): a quarter of each, kept only
// where it is at least 2x the level above's capacity (so it lives in that level).
std::map<std::string, size_t> overlap_working_sets(const std::map<std::string, size_t>& capacities);

// machine.json's "ecm" section (docs/json.md).
nlohmann::json overlap_json(const std::vector<OverlapPoint>& points, const OverlapDecision& d,
                            const std::string& isa, const std::string& capacity_source);

}  // namespace rooflab::microbench

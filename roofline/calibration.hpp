#pragma once
// The ECM's in-core time from the kernel itself (issue 18, docs/model.md "In-core calibration"):
// `rooflab bench` times each case's calibration shapes (Family::calibration_cases: the same
// variant, ISA, dtype, params and threads at small cache-resident shapes, marked "calibration"
// in bench.json); the model fits one cost per unit of the case's in-core work
// (Model::core_work: flops, or Sinkhorn's elements, rows, columns and calls) to their measured
// times, and prices the case's in-core time as the sum of its units times those costs.
//
// The fit is a non-negative least squares over relative residuals (each shape weighs alike,
// whatever its time): every subset of the units is solved exactly or in the least-squares
// sense, the subsets with a negative cost are dropped, and the one with the smallest residual
// wins (a unit the shapes cannot separate, or whose cost the noise makes negative, costs 0).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rooflab::roofline {

using WorkUnits = std::map<std::string, double>;  // unit -> count (bench.json "core_work")

struct CalibrationSample {
  std::string name;  // the calibration case
  WorkUnits work;
  double time_s = 0;  // its median time
  double working_set = 0;  // its bytes (where it lived: CoreFit::level)
  bool probe = false;      // an overlap probe (Family::overlap_probes): not fitted, see CoreFit::overlap
};

struct CoreFit {
  double time_s = 0;                     // the evaluated case's in-core time
  std::map<std::string, double> cost_s;  // seconds per unit (units the fit dropped: 0)
  std::vector<std::string> cases;        // the calibration cases used
  double max_rel_residual = 0;           // worst |fit / measured - 1| over the shapes
  // Where the calibration shapes lived (the deepest of their levels, Machine::level_for): the
  // transfers from beyond it are not in their time (ecm.hpp). Set by the caller; "" = L1.
  std::string level;
  // The share of the transfers from beyond `level` that the kernel does not hide behind its
  // in-core work (ecm.hpp), measured on an overlap probe of the same case one level deeper:
  //   overlap = max(0, (t_probe - T_core(probe)) / T_beyond(probe)); above 1 where the kernel
  //   streams slower than the ceilings (typical's column walk: page walks)
  // 1 (added in full) without a probe; `overlap_probe` names the probe, "" when none was used.
  double overlap = 1;
  double overlap_measured = 1;  // the probe's ratio before the clamp (1 without a probe)
  std::string overlap_probe;
  std::string overlap_level;  // where the probe lived

  // The in-core time of `work` at the fitted costs (a unit the fit has no cost for: 0).
  double price(const WorkUnits& work) const {
    double t = 0;
    for (const auto& [u, cost] : cost_s)
      if (auto it = work.find(u); it != work.end()) t += cost * it->second;
    return t;
  }
};

// nullopt when no sample has every unit of `work`, or none of the fits is non-negative with a
// positive time. Samples lacking a unit of `work`, and probes, are skipped.
std::optional<CoreFit> fit_core(const WorkUnits& work, const std::vector<CalibrationSample>& samples);

nlohmann::json to_json(const CoreFit& f);

}  // namespace rooflab::roofline

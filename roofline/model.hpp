#pragma once
// What a variant declares about one timed unit (one Instance::run()): its work and its traffic.
// The roofline predictor (roofline/predict.hpp) turns a Model into a time with the measured
// ceilings of machine.json:
//   t = max(flops / compute ceiling, sum_i traffic[i].bytes / bandwidth(level, traffic[i].kernel))
// Several traffic terms let a kernel with passes of different kinds (a read-only sum pass and
// an in-place scaling pass) be predicted with the bandwidth each kind really gets.
// In namespace rooflab (not rooflab::roofline): every family table builds these.
#include <string>
#include <vector>

namespace rooflab {

struct Traffic {
  double bytes = 0;            // bytes moved from the level the working set lives in
  std::string kernel;          // machine.json bandwidth kernel: "read", "update", "copy", "triad"
};

// The ECM prediction's inputs (roofline/ecm.hpp) for one phase of a run (phases run one after
// another, e.g. packing then the micro-kernel, and their times add up), in the same convention:
// the bytes the core's own loads and stores move in L1, and the bytes crossing each cache
// boundary. A boundary's terms count what crosses it when the working set lives beyond it;
// the ECM drops the boundaries inside the level the working set lives in, so one declaration
// serves every machine. A broadcast load counts as a full vector (it takes a load slot).
struct LevelTraffic {
  std::vector<Traffic> l1;   // core loads/stores in L1 (T_nOL)
  std::vector<Traffic> l2;   // L1 <- L2 (fills and write-backs)
  std::vector<Traffic> l3;   // L2 <- L3
  std::vector<Traffic> mem;  // L3 <- DRAM
  std::string note;          // where the formulas come from
  // In-core work as the compute ceiling counts it (T_OL): the phase's flops, times W where a
  // loop the compiler leaves scalar uses 1 of the ceiling's W lanes; 0 for a copy phase.
  double flops = 0;
  std::string name = "main";
};

// One unit of in-core work a calibration fits a cost to (roofline/calibration.hpp): e.g.
// {"flop", 2MNK}, or Sinkhorn's {"element", M*N}, {"row", M}, {"col", N}, {"call", 1}.
struct WorkUnit {
  std::string name;
  double count = 0;
};

struct Model {
  double flops = 0;            // operations as the family counts them (FW: 2 per update)
  std::vector<Traffic> traffic;
  double working_set = 0;      // bytes touched by one run(); selects the memory level
  std::string compute_ceiling; // machine.json compute key, e.g. "fma_f64", "add_f64", "addmin_f32"
  std::string note;            // where the traffic formula comes from
  std::vector<LevelTraffic> phases;  // per-level traffic for the ECM (none: it falls back)
  // The units the in-core time is linear in (empty: {"flop", flops}); a case's calibration
  // shapes fit one cost per unit.
  std::vector<WorkUnit> core_work;
  // What a case shares with its calibration shapes beyond variant, ISA, dtype, params and
  // threads (bench.json "calibration_group"; "" = nothing): Floyd-Warshall's row stride, which
  // its calibration shapes keep so that they see the same cache-set and 4K-aliasing pattern.
  std::string calibration_group;
  double bytes() const {
    double b = 0;
    for (const auto& t : traffic) b += t.bytes;
    return b;
  }
};

}  // namespace rooflab

#pragma once
// Execution-Cache-Memory (ECM) prediction (Hager, Treibig, Wellein; as in kerncraft) of one
// timed unit, beside the roofline bound (predict.hpp), from the model's per-level traffic
// (Model::phases) and machine.json's measured ceilings. Per phase:
//   T_OL     = the phase's in-core flops / compute ceiling of the kernel's ISA
//   T_nOL    = sum of l1 terms: bytes / L1 bandwidth of that kernel and ISA (loads/stores)
//   T_L1L2   = sum of l2 terms: bytes x c(L2, kernel), T_L2L3 (l3 terms, L3), T_L3Mem (mem, DRAM)
// combined by the machine's overlap rule:
//   serial      (Intel-like): T = max(T_OL, T_nOL + T_L1L2 + T_L2L3 + T_L3Mem)
//   overlapping (AMD-like):   T = max(T_OL, T_nOL, T_L1L2, T_L2L3, T_L3Mem)
// and the phases' times summed (they run one after another).
// c(X, k), the seconds per byte of a transfer into the level above X, comes from the measured
// in-level bandwidths bw(X, k) of the same kernel k (per ISA in L1..L3, the widest at DRAM,
// where an S-stream kernel such as "update_s4" uses its own ceiling when measured),
// chosen so that the ECM of a pure stream from level X reproduces bw(X, k):
//   serial:      c(X) = 1/bw(X) - 1/bw(level above X)   (clamped at 0, with a note)
//   overlapping: c(X) = 1/bw(X)
// Only the boundaries outside the level the working set lives in are priced (Machine::level_for,
// measured capacities first); `level` names it. A model without per-level traffic falls back to
// the roofline's terms (T = max(T_OL, its memory time)) and says so.
//
// In-core time from the kernel itself (roofline/calibration.hpp): with a calibration fit the
// in-core time is T_core = max(fit, T_OL at the ceiling) instead of T_OL, for the whole run.
// The calibration shapes lived in level C (L2 for sinkhorn, L3 for gemm), so their time holds
// the core's work and every transfer inside C; of the transfers from beyond C the share the
// kernel does not hide is added:
//   T = T_core + overlap x T_beyond
//   T_beyond = per phase, the boundaries beyond C combined by the rule (overlapping: max,
//              serial: sum), summed over the phases (fallback: the roofline memory time when
//              the working set lies beyond C, else 0)
//   overlap  = CoreFit::overlap, measured on an overlap probe of the same kernel one level
//              deeper (Family::overlap_probes); 1 without one (on Zen 4 the L3-resident 1023 x
//              517 Sinkhorn cases ran at T_core + T_L2L3, docs/model.md)
// No floor from the rule's data term: its in-cache terms are in the calibration's time.
// `in_core` says which source priced each case.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "roofline/machine.hpp"
#include "roofline/model.hpp"

namespace rooflab::roofline {

// machine.json "ecm": {"overlap": "serial" | "overlapping" | "undecided", "source": "..."},
// measured by characterize (microbench/overlap.hpp). Without it, or "undecided", the rule is
// assumed from the CPU's vendor (host.cpu) and `source` says so; unknown vendor: serial.
struct OverlapRule {
  std::string rule;    // "serial" | "overlapping"
  bool measured = false;  // taken from machine.json's ecm.overlap (not assumed)
  std::string source;  // what decided it
};
OverlapRule overlap_rule(const Machine& machine);

struct EcmPhase {
  std::string name;
  double time_s = 0;
  double t_ol = 0, t_nol = 0, t_l1l2 = 0, t_l2l3 = 0, t_l3mem = 0;
  std::string note;  // the model's note on this phase's traffic (what it assumed: caches, L1 sets)
};

struct CoreFit;

struct Ecm {
  double time_s = 0;           // sum of the phases' times (with a calibration: see above)
  double t_ol = 0, t_nol = 0, t_l1l2 = 0, t_l2l3 = 0, t_l3mem = 0;  // sums over the phases
  std::vector<EcmPhase> phases;
  bool fallback = false;       // no per-level traffic: T = max(T_OL, roofline memory time)
  double t_mem_fallback = 0;   // that memory time
  OverlapRule overlap;
  std::string level;           // where the working set lives (the level priced)
  double working_set = 0;
  double capacity_bytes = 0;   // capacity of that level (aggregate over private caches; 0 at DRAM)
  std::string capacity_source; // "measured" | "reported" | ""
  bool straddles = false;      // working set within 2x of a capacity it is placed against
  std::string compute_isa, bandwidth_isa;  // the tables used (bandwidth: the in-cache one)
  std::vector<std::string> notes;
  std::string in_core = "peak";  // "peak" (T_OL at the compute ceiling) | "calibration"
  double t_ol_peak = 0;          // T_OL at the compute ceiling (= t_ol with in_core "peak")
  double t_core_fit = 0;         // the calibration fit's in-core time (in_core "calibration")
  double t_beyond = 0;           // the transfers beyond the calibration's level (ecm.hpp)
};

// Throws Error when the machine lacks a ceiling the model names (as predict()).
// `core`: the case's calibration fit (nullptr: priced against the compute ceiling).
// 0..3 for "L1", "L2", "L3", "DRAM" (anything else: 3), the order the ECM prices levels in.
int level_index(const std::string& level);
Ecm ecm(const Model& m, const Machine& machine, int threads, Isa isa = Isa::none, const CoreFit* core = nullptr);
nlohmann::json to_json(const Ecm& e);

}  // namespace rooflab::roofline

#pragma once
// The MPI sweep's machine model: what an iteration of each allreduce design should cost on THIS
// machine, from measured constants only (never fitted to the sweep), and the one-node claim rows.
// Input and output are the documents of scripts/mpi_sweep.sh (rooflab.mpi_sweep/1, docs/json.md);
// `rooflab model --mpi-sweep DIR` stores what this computes into DIR/mpi_sweep.json.
//
// Constants (all measured by rooflab_mpi, see docs/families/sinkhorn_mpi.md):
//   alpha, beta, gamma  --pingpong over 2 ranks (one core each): per message, per byte, per added byte
//   spin_gap_s          --timeslice over 2 x CPUs ranks: how long a busy-polling rank waits for its
//                       core while the other rank on it runs (the scheduler's slice)
//   yield_round_s       --timeslice: one MPI_Test + sched_yield turn of two ranks sharing a core
//   compute_1rank_s     the P = 1 run of the sweep (same kernel, dtype and size): one rank's
//                       row rescale + column sums + column scale, no communication
// The model itself: kMpiModelFormula (also stored in the sweep's "model").
#include <filesystem>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace rooflab::roofline::mpi {
using json = nlohmann::json;

inline constexpr const char* kUnshared = "unshared";
inline constexpr const char* kSharedSpin = "shared-spin";
inline constexpr const char* kSharedYield = "shared-yield";

extern const char* const kMpiModelFormula;

// The model's constants from a sweep document (runs included). compute_1rank_s: one entry
// {kernel, dtype, dims, seconds} per (kernel, dtype, dims), the fastest P = 1 run.
json constants(const json& sweep);
// "unshared" up to one rank per CPU; beyond, "shared-yield" for --wait yield, else "shared-spin".
std::string regime(const json& run, int cpus);
// Predicted comm and iteration seconds of one run (null where a constant is missing): regime,
// ranks_per_core, rounds, alpha_beta_comm_s, sharing_comm_s, predicted_comm_s,
// predicted_compute_s, hidden_by_overlap_s, predicted_iter_s.
json predict(const json& run, const json& constants);
// One row per full-iteration run with P >= 2: predicted vs measured iteration time, and the
// comm time of its --comm-only twin (the allreduce alone) where there is one.
json table(const json& sweep);
// Per regime: rows, and {min, median, max} of comm_ratio and iter_ratio (measured / predicted).
json summary(const json& table);
// The one-node claim rows (COFFEE Sec. VI-B2 / Fig. 10): ring with the optimized vs the typical
// kernel per P, and COFFEE on one emulated node vs ring, from the interleaved claim runs where
// the sweep has them (medians over the repetitions), else from the sweep's own runs.
json claims(const json& sweep);

// Adds model, model_table, model_summary and claims to the sweep document. When the model
// cannot be computed and runs failed (they may have taken the P = 1 runs), the runs are kept
// with an empty model and model_error saying why; otherwise the error is thrown.
void add_model(json& sweep, const std::string& source);
// `rooflab model --mpi-sweep DIR`: DIR/mpi_sweep.json rewritten (atomically) with the model,
// a per-regime summary on stdout. Returns the exit code.
int mpi_sweep_main(const std::filesystem::path& run_dir);
}  // namespace rooflab::roofline::mpi

#pragma once
// The entry points of rooflab's subcommands that live in their own files (apps/*.cpp); each
// returns the process exit code (0 ok, 1 error, 2 usage, 3 verification, 4 regression) and may
// throw rooflab::Error for an error. apps/main.cpp maps names to them.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/args.hpp"

namespace rooflab {
// `rooflab list --json`'s "isa_order" and "families" (apps/list.cpp, docs/json.md#list).
nlohmann::json families_json();
namespace counters {
// `rooflab run-case NAME [--runs K] [--backend none|papi|likwid]`: verify, then count K runs.
// Exit codes: 0 ok, 2 the back end is unavailable, 3 verification failed (message on stderr).
args::Spec run_case_spec();
int run_case_run(const args::Values& v);
// `rooflab counters ...` (counters_spec's help). Exit codes: 0 every row ok, 2 the requested
// back end (or, for "all", every back end) is unavailable, 3 some case failed (its row says why).
args::Spec counters_spec();
int counters_run(const args::Values& v);
}  // namespace counters
namespace sinkhorn {
// `rooflab sinkhorn ...`: a full solve (usage: `rooflab sinkhorn --help`).
int solve_main(const std::vector<std::string>& args);  // usage 2, errors 1 (message printed)
args::Spec solve_spec();
int solve_run(const args::Values& v);
}  // namespace sinkhorn
namespace sinkhorn_cuda {
// `rooflab gpu-characterize [--out DIR] [--reps K] [--optional]`: measures and merges the
// "gpu" section into DIR/machine.json.
// Usage errors: message on stderr, exit 2; other errors throw rooflab::Error.
int gpu_characterize_main(const std::vector<std::string>& args);
args::Spec gpu_characterize_spec();
int gpu_characterize_run(const args::Values& v);
}  // namespace sinkhorn_cuda
namespace rtamm {
// `rooflab rtamm ...`: pool, unit costs, calibration, adaptive-vs-oracle evaluation.
int rtamm_main(const std::vector<std::string>& args);
}  // namespace rtamm
namespace gemm::knobs {
// `rooflab gemm-knobs ...`: sfc_ca's k_layers / kbf autotuning, analytic model, nearest neighbour.
int knobs_main(const std::vector<std::string>& args);
}  // namespace gemm::knobs
namespace cli {
// `rooflab isa-calibrate --machine F ...`: times each ISA of every ISA-specific variant and
// stores the choice as F's "isa_choice" section. Exit 3 when some ISA failed verification.
args::Spec isa_calibrate_spec();
int isa_calibrate_run(const args::Values& v);
// Installs machine.json's ISA calibration for the profiles' default ISAs (preferred_isa); one that
// cannot be used (malformed, measured on another CPU) is refused with a warning on stderr, and
// the widest ISAs are the defaults. A machine.json that cannot be read at all is left to the
// caller to report when it reads it itself (report_unreadable false), else warned about here.
void use_machine_isa_choice(const std::string& machine_json, bool report_unreadable = true);
// The same for a machine.json already read (read_machine_json of the file machine_json).
void use_machine_isa_choice(const nlohmann::json& machine, const std::string& machine_json);
// `rooflab mpi --np P [rooflab_mpi options]`: replaces the process with mpiexec running this
// build's rooflab_mpi. Returns 0 after --help / --dry-run, 2 (message printed) on a usage error;
// throws rooflab::Error when this build has no MPI or rooflab_mpi is missing.
int mpi_main(const std::vector<std::string>& args, const char* argv0);
}  // namespace cli
}  // namespace rooflab

#pragma once
// `rooflab mpi --np P [rooflab_mpi options]`: runs mpiexec with the rooflab_mpi of this build.
#include <string>
#include <vector>

namespace rooflab::cli {
// Replaces the process with mpiexec (returns only with --dry-run or by throwing rooflab::Error
// when this build has no MPI or its rooflab_mpi is missing; Usage errors are Error too).
// Replaces the process with mpiexec. Returns 0 after --help / --dry-run, 2 (message printed)
// on a usage error; throws rooflab::Error when this build has no MPI or rooflab_mpi is missing.
int mpi_main(const std::vector<std::string>& args, const char* argv0);
}  // namespace rooflab::cli

// `rooflab mpi`: a thin launcher, so users need not know where the build put rooflab_mpi nor
// which mpiexec CMake found. Every argument it does not declare goes to rooflab_mpi unchanged.
#include "apps/commands.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/args.hpp"
#include "harness/error.hpp"
#include "harness/json_io.hpp"

namespace fs = std::filesystem;

namespace rooflab::cli {
namespace {
bool executable(const fs::path& p) { return !p.empty() && fs::is_regular_file(p) && access(p.c_str(), X_OK) == 0; }

// rooflab_mpi, searched where a build or an install puts it relative to this executable (so a
// moved build tree still works), then at the path the build recorded.
fs::path find_rooflab_mpi(const char* argv0) {
  if (const char* env = std::getenv("ROOFLAB_MPI_BIN")) {
    if (!executable(env)) throw Error(std::string("ROOFLAB_MPI_BIN=") + env + " is not an executable file");
    return env;
  }
#ifndef ROOFLAB_MPI_EXE
  (void)argv0;
  throw Error("this rooflab was built without MPI (CMake found no MPI CXX): install mpich and libmpich-dev "
              "(scripts/install_deps.sh), then reconfigure and build the rooflab_mpi target");
#else
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) self = fs::absolute(argv0);
  const fs::path dir = self.parent_path();
  const std::vector<fs::path> tried = {(dir / ROOFLAB_MPI_EXE_REL).lexically_normal(), dir / "rooflab_mpi",
                                       fs::path(ROOFLAB_MPI_EXE)};
  for (const auto& p : tried)
    if (executable(p)) return p;
  std::string where;
  for (const auto& p : tried) where += "\n  " + p.string();
  throw Error("rooflab_mpi is not built; looked for:" + where +
              "\nbuild it with `cmake --build <build dir> --target rooflab_mpi`");
#endif
}

std::string mpiexec() {
  if (const char* env = std::getenv("ROOFLAB_MPIEXEC")) return env;
#ifdef ROOFLAB_MPIEXEC
  if (executable(ROOFLAB_MPIEXEC)) return ROOFLAB_MPIEXEC;
#endif
  return "mpiexec";  // from PATH
}

// --simulate DIR: rooflab_smpi under SimGrid's smpirun on the platform scripts/smpi_platform.py
// wrote into DIR (platform.xml, hostfile, and platform.json with the smpirun options).
fs::path find_rooflab_smpi(const char* argv0) {
  const char* env = std::getenv("ROOFLAB_SMPI_BIN");
  std::vector<fs::path> tried;
  if (env) tried = {env};
#ifdef ROOFLAB_SMPI_EXE
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!env) tried = {(ec ? fs::absolute(argv0) : self).parent_path() / "rooflab_smpi", ROOFLAB_SMPI_EXE};
#else
  (void)argv0;
#endif
  for (const auto& p : tried)
    if (fs::is_regular_file(p)) return p;  // a shared module smpirun loads, not an executable
  if (env) throw Error(std::string("ROOFLAB_SMPI_BIN=") + env + " is not a file");
  throw Error(tried.empty() ? "this rooflab was built without SimGrid SMPI: install libsimgrid-dev "
                              "(scripts/install_deps.sh), then reconfigure and build the rooflab_smpi target"
                            : "rooflab_smpi is not built: `cmake --build <build dir> --target rooflab_smpi`");
}

std::vector<std::string> smpirun_command(const fs::path& dir, int np, const char* argv0) {
  const json meta = read_json_file(dir / "platform.json");
  require_schema(meta, "rooflab.smpi_platform", 1, (dir / "platform.json").string());
  const int ranks = meta.at("ranks").get<int>();
  if (np > ranks)
    throw Error("--np " + std::to_string(np) + " but the platform in " + dir.string() + " has " +
                std::to_string(ranks) + " rank slots (scripts/smpi_platform.py --nodes / --ranks-per-node)");
  const char* env = std::getenv("ROOFLAB_SMPIRUN");
  std::vector<std::string> cmd = {env ? env : ROOFLAB_SMPIRUN_DEFAULT, "-platform", (dir / "platform.xml").string(),
                                  "-hostfile", (dir / "hostfile").string(), "-np", std::to_string(np)};
  for (const auto& c : meta.at("smpirun_cfg")) cmd.push_back(c.get<std::string>());
  cmd.push_back("--log=root.thresh:warning");  // SimGrid's configuration banner off; warnings stay
  cmd.push_back(find_rooflab_smpi(argv0).string());
  return cmd;
}

// scripts/hosts.sh of the source tree this rooflab was built from (--hosts).
std::string hosts_sh() {
  if (const char* env = std::getenv("ROOFLAB_HOSTS_SH")) return env;
#ifdef ROOFLAB_HOSTS_SH
  return ROOFLAB_HOSTS_SH;
#else
  return "scripts/hosts.sh";
#endif
}

args::Spec spec() {
  return args::Spec("rooflab mpi", "runs `mpiexec -n P rooflab_mpi OPTIONS` with the rooflab_mpi built beside this rooflab")
      .integer("--np", "P", "MPI ranks (required without --hosts)", 1, 4096)
      .alias("-n")
      .integer("--hosts", "N", "run on the first N emulated hosts of `scripts/hosts.sh up` (needs root)", 1, 64)
      .integer("--ranks-per-host", "R", "--hosts: ranks per host (default 1)", 1, 4096)
      .flag("--dry-run", "print the command instead of running it")
      .path("--simulate", args::PathKind::input_dir, "DIR",
            "run rooflab_smpi under SimGrid's smpirun on the platform in DIR (scripts/smpi_platform.py)")
      .rest("OPTIONS", "rooflab_mpi's options, passed on (`--out DIR` writes DIR/sinkhorn_mpi.json; "
                       "`rooflab mpi --np 1 -- --help` lists them)")
      .epilog("ROOFLAB_MPI_BIN, ROOFLAB_MPIEXEC and ROOFLAB_HOSTS_SH override the paths of rooflab_mpi, mpiexec "
              "and scripts/hosts.sh (ROOFLAB_SMPI_BIN and ROOFLAB_SMPIRUN those of rooflab_smpi and smpirun).");
}

int launch(const args::Values& v, const char* argv0) {
  std::vector<std::string> cmd;
  if (v.has("--hosts") && v.has("--simulate"))
    throw args::UsageError("--hosts runs real ranks, --simulate simulated ones: one of them");
  if (v.has("--hosts")) {  // hydra starts the ranks inside the hosts' namespaces (scripts/hosts.sh)
    const int64_t n = v.integer("--hosts"), r = v.has("--ranks-per-host") ? v.integer("--ranks-per-host") : 1;
    if (v.has("--np") && v.integer("--np") != n * r)
      throw args::UsageError("--np " + std::to_string(v.integer("--np")) + " is not --hosts x --ranks-per-host = " +
                             std::to_string(n * r) + " (leave --np out with --hosts)");
    cmd = {hosts_sh(), "mpiexec", "--mpiexec", mpiexec(), "--hosts", std::to_string(n), "--ranks-per-host",
           std::to_string(r), "--", find_rooflab_mpi(argv0).string()};
  } else {
    if (!v.has("--np")) throw args::UsageError("needs --np P (or --hosts N)");
    if (v.has("--ranks-per-host")) throw args::UsageError("--ranks-per-host applies to --hosts");
    cmd = v.has("--simulate") ? smpirun_command(v.str("--simulate"), int(v.integer("--np")), argv0)
                              : std::vector<std::string>{mpiexec(), "-n", std::to_string(v.integer("--np")),
                                                         find_rooflab_mpi(argv0).string()};
  }
  cmd.insert(cmd.end(), v.passthrough().begin(), v.passthrough().end());
  if (v.flag("--dry-run")) {
    for (size_t i = 0; i < cmd.size(); ++i) std::printf("%s%s", i ? " " : "", cmd[i].c_str());
    std::printf("\n");
    return 0;
  }
  std::vector<char*> cargv;
  for (auto& s : cmd) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  std::fflush(nullptr);
  execvp(cargv[0], cargv.data());
  throw Error("cannot run " + cmd[0] +
              (v.has("--simulate") ? " (is SimGrid's smpirun installed? set ROOFLAB_SMPIRUN)"
               : v.has("--hosts")  ? " (set ROOFLAB_HOSTS_SH)"
                                   : " (is MPICH's mpiexec installed? set ROOFLAB_MPIEXEC)"));
}
}  // namespace

int mpi_main(const std::vector<std::string>& argv, const char* argv0) {
  return args::run_single(spec(), argv, [argv0](const args::Values& v) { return launch(v, argv0); });
}
}  // namespace rooflab::cli

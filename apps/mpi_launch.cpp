// `rooflab mpi`: a thin launcher, so users need not know where the build put rooflab_mpi nor
// which mpiexec CMake found. Everything after --np P goes to rooflab_mpi unchanged.
#include "apps/commands.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/error.hpp"

namespace fs = std::filesystem;

namespace rooflab::cli {
namespace {
constexpr const char* kUsage =
    "usage: rooflab mpi --np P [--dry-run] [rooflab_mpi options]\n"
    "  runs `mpiexec -n P rooflab_mpi OPTIONS` with the rooflab_mpi built beside this rooflab\n"
    "  (ROOFLAB_MPI_BIN and ROOFLAB_MPIEXEC override the paths); `rooflab mpi --np 1 --help` lists\n"
    "  rooflab_mpi's options. --dry-run prints the command instead of running it.";

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

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "rooflab mpi: %s\n%s\n", msg.c_str(), kUsage);
  return 2;
}
}  // namespace

int mpi_main(const std::vector<std::string>& args, const char* argv0) {
  std::vector<std::string> pass;
  long np = 0;
  bool dry = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    std::string v;
    if (a == "--np" || a == "-n") {
      if (i + 1 >= args.size()) return usage_error(a + " needs a value");
      v = args[++i];
    } else if (a.rfind("--np=", 0) == 0) {
      v = a.substr(5);
    } else if (a == "--dry-run") {
      dry = true;
      continue;
    } else if (a == "-h" || a == "--help") {
      std::puts(kUsage);
      return 0;
    } else {
      pass.push_back(a);
      continue;
    }
    char* end = nullptr;
    np = std::strtol(v.c_str(), &end, 10);
    if (v.empty() || *end || np < 1 || np > 4096)
      return usage_error("--np takes a number of ranks in [1, 4096], got '" + v + "'");
  }
  if (np == 0) return usage_error("needs --np P");

  std::vector<std::string> cmd = {mpiexec(), "-n", std::to_string(np), find_rooflab_mpi(argv0).string()};
  cmd.insert(cmd.end(), pass.begin(), pass.end());
  if (dry) {
    for (size_t i = 0; i < cmd.size(); ++i) std::printf("%s%s", i ? " " : "", cmd[i].c_str());
    std::printf("\n");
    return 0;
  }
  std::vector<char*> cargv;
  for (auto& s : cmd) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  std::fflush(nullptr);
  execvp(cargv[0], cargv.data());
  throw Error("cannot run " + cmd[0] + " (is MPICH's mpiexec installed? set ROOFLAB_MPIEXEC)");
}
}  // namespace rooflab::cli

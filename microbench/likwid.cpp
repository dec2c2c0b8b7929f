#include "microbench/likwid.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <regex>
#include <sstream>

namespace rooflab::microbench {

namespace {
// Runs a shell command, returning (exit status or -1, combined output).
std::pair<int, std::string> run_command(const std::string& cmd) {
  std::string out;
  FILE* f = popen((cmd + " 2>&1").c_str(), "r");
  if (!f) return {-1, "popen failed"};
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), f)) > 0) out.append(buf.data(), n);
  int st = pclose(f);
  return {WIFEXITED(st) ? WEXITSTATUS(st) : -1, out};
}

std::string last_line(const std::string& s) {
  std::istringstream in(s);
  std::string line, last;
  while (std::getline(in, line))
    if (line.find_first_not_of(" \t-\r") != std::string::npos) last = line;
  return last;
}
}  // namespace

std::optional<LikwidParsed> parse_likwid_bench(const std::string& output) {
  static const std::regex mbs(R"(MByte/s:\s*([0-9.eE+-]+))");
  static const std::regex size(R"(Size \(Byte\):\s*([0-9]+))");
  std::smatch m;
  if (!std::regex_search(output, m, mbs)) return std::nullopt;
  LikwidParsed p{std::strtod(m[1].str().c_str(), nullptr), std::nullopt};
  if (std::regex_search(output, m, size)) p.size_bytes = std::stoull(m[1].str());
  return p;
}

Agreement agreement(double rooflab_gbps, double likwid_gbps, double tolerance) {
  const double ratio = rooflab_gbps / likwid_gbps;
  // A hair of slack so that a ratio of exactly 1 +- tolerance agrees despite rounding.
  return {ratio, std::fabs(ratio - 1) <= tolerance + 1e-12};
}

double run_spread(const std::vector<double>& runs_gbps) {
  if (runs_gbps.size() < 2) return 1;
  const auto [lo, hi] = std::minmax_element(runs_gbps.begin(), runs_gbps.end());
  return *lo > 0 ? *hi / *lo : 1;
}

bool within_run_spread(double ratio, double spread, double tolerance) {
  if (!(ratio > 0) || !(spread >= 1)) return false;
  return std::max(ratio, 1 / ratio) <= (1 + tolerance) * spread + 1e-12;
}

std::optional<double> per_byte_gbps(double small, double small_gbps, double large, double large_gbps) {
  if (!(small > 0 && large > small && small_gbps > 0 && large_gbps > 0)) return std::nullopt;
  const double dt = large / large_gbps - small / small_gbps;  // ns per pass, x 1e9 / 1e9
  if (!(dt > 0)) return std::nullopt;
  return (large - small) / dt;
}

std::optional<std::string> find_on_path(const std::string& program) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::istringstream in(path);
  for (std::string dir; std::getline(in, dir, ':');) {
    std::string full = (dir.empty() ? "." : dir) + "/" + program;
    if (access(full.c_str(), X_OK) == 0) return full;
  }
  return std::nullopt;
}

std::string likwid_bench_version(const std::string& exe) {
  auto [rc, out] = run_command("timeout 10 '" + exe + "' -h");
  static const std::regex ver(R"(Version\s+([0-9][0-9.]*))");
  std::smatch m;
  return std::regex_search(out, m, ver) ? m[1].str() : "";
}

std::string likwid_huge_page_env(const std::string& thp_mode, const std::string& glibc,
                                 const std::string& tunables) {
  if (thp_mode != "madvise") return "";
  int major = 0, minor = 0;
  if (std::sscanf(glibc.c_str(), "%d.%d", &major, &minor) != 2 || major < 2 || (major == 2 && minor < 35))
    return "";
  return "GLIBC_TUNABLES=" + (tunables.empty() ? "" : tunables + ":") + "glibc.malloc.hugetlb=1";
}

LikwidResult run_likwid_bench(const std::string& exe, const std::string& test, size_t bytes,
                              int threads, uint64_t iters, int timeout_s, const std::string& env) {
  LikwidResult r;
  // likwid sizes are decimal (kB = 1000 bytes) and cover all streams of all threads.
  const size_t kb = std::max<size_t>(1, (bytes + 500) / 1000);
  const std::string args = " -t " + test + " -w N:" + std::to_string(kb) + "kB:" +
                           std::to_string(threads) + " -i " + std::to_string(iters);
  r.command = (env.empty() ? "" : env + " ") + "likwid-bench" + args;
  auto [rc, out] = run_command((env.empty() ? "" : "env '" + env + "' ") + "timeout " +
                               std::to_string(timeout_s) + " '" + exe + "'" + args);
  auto parsed = parse_likwid_bench(out);
  if (rc == 124) {
    r.error = "timed out after " + std::to_string(timeout_s) + " s";
  } else if (rc != 0 || !parsed) {
    std::string why = last_line(out);
    r.error = "exit status " + std::to_string(rc) + (why.empty() ? "" : ": " + why);
  } else if (!(parsed->mbyte_per_s > 0)) {
    r.error = "reported " + std::to_string(parsed->mbyte_per_s) + " MByte/s";
  } else {
    r.ok = true;
    r.gbps = parsed->mbyte_per_s * 1e-3;
    r.bytes = parsed->size_bytes.value_or(kb * 1000);
  }
  return r;
}

}  // namespace rooflab::microbench

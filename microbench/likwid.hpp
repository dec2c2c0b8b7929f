#pragma once
// Cross-check against likwid-bench (if installed): run one of its kernels and parse the
// result. Runs are time-limited; every failure becomes a message, never an exception.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace rooflab::microbench {

struct LikwidResult {
  bool ok = false;
  double gbps = 0;       // likwid's "MByte/s" / 1000 (it counts 1e6 bytes, no write-allocate)
  size_t bytes = 0;      // likwid's "Size (Byte)": the working set it actually used
  std::string error;     // why not ok: the tool's own last message when it has one
  std::string command;
  std::vector<double> runs_gbps;  // every run's gbps where several were made (characterize)
};

// Parses likwid-bench's report; nullopt when it has no "MByte/s:" line.
struct LikwidParsed {
  double mbyte_per_s;
  std::optional<size_t> size_bytes;
};
std::optional<LikwidParsed> parse_likwid_bench(const std::string& output);

std::optional<std::string> find_on_path(const std::string& program);
std::string likwid_bench_version(const std::string& exe);  // "5.2" or "" if unknown

// rooflab's ceiling against likwid-bench's figure for the same kernel, level and threads:
// ratio = rooflab / likwid-bench; they agree when |ratio - 1| <= tolerance.
inline constexpr double kLikwidTolerance = 0.10;
struct Agreement {
  double ratio;
  bool agrees;
};
Agreement agreement(double rooflab_gbps, double likwid_gbps, double tolerance = kLikwidTolerance);

// The spread of likwid-bench's runs at one point, max / min (1 for fewer than two runs or a run
// that is not positive). Each run is a new process on new physical pages: on a KVM Zen 4 one
// thread's DRAM copy ran at 24.6-30.7 GB/s from run to run, rooflab's kernel in the same job
// (the same 21-pass runs, best of 3) at 28.2-32.0 (docs/measuring.md#likwid-spread).
double run_spread(const std::vector<double>& runs_gbps);
// A ratio that misses the tolerance but lies within (1 + tolerance) x `spread` is no evidence
// that the two differ: likwid-bench's best run could as well have been the one `spread` below
// or above. The point stays a disagreement; its line says so (within_run_spread).
bool within_run_spread(double ratio, double spread, double tolerance = kLikwidTolerance);

// likwid-bench times one kernel call per pass over the working set, so each pass pays a fixed
// cost (the call, the loop setup, the loop's exit); rooflab's kernels make all passes of a
// sample in one call. In L1 a pass is a few hundred cycles and that cost is several percent.
// The bandwidth without it, from two runs of `small` and `large` bytes at `small_gbps` and
// `large_gbps`: the extra bytes over the extra time. nullopt when the larger run did not take
// longer per pass (noise), or the sizes are not increasing.
std::optional<double> per_byte_gbps(double small, double small_gbps, double large, double large_gbps);

// `exe -t test -w N:<bytes>:<threads> -i iters`, killed after timeout_s seconds; `env`
// (e.g. from likwid_huge_page_env) is set for that process only.
LikwidResult run_likwid_bench(const std::string& exe, const std::string& test, size_t bytes,
                              int threads, uint64_t iters, int timeout_s, const std::string& env = "");

// likwid-bench takes its buffers from malloc, which under THP "madvise" leaves them on 4 KiB
// pages while rooflab's are advised MADV_HUGEPAGE (harness/buffer.hpp): on a KVM Zen 4 its DRAM
// load read 18 GB/s against 26 with huge pages. glibc >= 2.35's tunable glibc.malloc.hugetlb=1
// makes malloc advise its large chunks MADV_HUGEPAGE, in that process only. The environment
// assignment that gives likwid-bench the pages rooflab's buffers get: for THP `thp_mode`
// "madvise" and a glibc of version `glibc` ("2.36") that has the tunable, GLIBC_TUNABLES with
// `tunables` (the caller's GLIBC_TUNABLES, kept) and hugetlb=1; else "" (THP "always": both
// already get huge pages; "never": neither does; an older glibc: it cannot).
std::string likwid_huge_page_env(const std::string& thp_mode, const std::string& glibc,
                                 const std::string& tunables);

}  // namespace rooflab::microbench

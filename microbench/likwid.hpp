#pragma once
// Cross-check against likwid-bench (if installed): run one of its kernels and parse the
// result. Runs are time-limited; every failure becomes a message, never an exception.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace rooflab::microbench {

struct LikwidResult {
  bool ok = false;
  double gbps = 0;       // likwid's "MByte/s" / 1000 (it counts 1e6 bytes, no write-allocate)
  size_t bytes = 0;      // likwid's "Size (Byte)": the working set it actually used
  std::string error;     // why not ok: the tool's own last message when it has one
  std::string command;
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

// `exe -t test -w N:<bytes>:<threads> -i iters`, killed after timeout_s seconds.
LikwidResult run_likwid_bench(const std::string& exe, const std::string& test, size_t bytes,
                              int threads, uint64_t iters, int timeout_s);

}  // namespace rooflab::microbench

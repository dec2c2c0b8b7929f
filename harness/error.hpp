#pragma once
// One exception type for bad input and unavailable resources: the CLI prints its message
// once and exits non-zero; the benchmark driver turns it into a skipped/failed benchmark.
#include <stdexcept>
#include <string>

namespace rooflab {
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// Bad command-line input (exit 2), found below the command line (e.g. bench's --benchmark_*).
struct UsageError : Error {
  using Error::Error;
};
}  // namespace rooflab

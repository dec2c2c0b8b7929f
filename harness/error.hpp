#pragma once
// One exception type for bad input and unavailable resources: the CLI prints its message
// once and exits non-zero; the benchmark driver turns it into a skipped/failed benchmark.
#include <stdexcept>
#include <string>

namespace rooflab {
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
// An Error in what the user typed (e.g. a --filter that is not a regex): a usage error, which
// the command line reports with exit code 2.
struct UsageError : Error {
  using Error::Error;
};
}  // namespace rooflab

#pragma once
// One exception type for bad input and unavailable resources: the CLI prints its message
// once and exits non-zero; the benchmark driver turns it into a skipped/failed benchmark.
#include <stdexcept>
#include <string>

namespace rooflab {
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
}  // namespace rooflab

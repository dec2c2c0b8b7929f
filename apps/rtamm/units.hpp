#pragma once
// The paper's MicroBenchmark behind `rooflab rtamm units`: the unit costs of every pool triple,
// measured with the executor's own phase code.
#include <vector>

#include "kernels/rtamm/rtamm.hpp"

namespace rooflab::rtamm {
// Progress lines on stderr.
Units measure_units(const std::vector<Block>& pool, const Caches& caches, DType dt, int threads);
}  // namespace rooflab::rtamm

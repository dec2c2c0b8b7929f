#pragma once
// Classic roofline prediction for one timed unit of a variant:
//   t = max(flops / compute ceiling, sum_i bytes_i / bandwidth(level, kernel_i))
// with the level chosen from the working set and the machine's capacities.
// A model naming "gpu:" ceilings is predicted from machine.json's "gpu" section instead.
#include <string>

#include <nlohmann/json.hpp>

#include "harness/registry.hpp"
#include "roofline/machine.hpp"

namespace rooflab::roofline {

struct Prediction {
  std::string level;          // L1 | L2 | L3 | DRAM
  std::string bound;          // "compute" | "memory"
  double time_s = 0;
  double compute_time_s = 0;
  double memory_time_s = 0;
  double compute_gflops = 0;  // the compute ceiling used
  double bandwidth_gbps = 0;  // effective bandwidth over the traffic terms (bytes / memory time)
};

// Throws Error when the machine lacks a ceiling the model names.
Prediction predict(const Model& m, const Machine& machine, int threads);
nlohmann::json to_json(const Prediction& p);

}  // namespace rooflab::roofline

#pragma once
// What a variant declares about one timed unit (one Instance::run()): its work and its traffic.
// The roofline predictor (roofline/predict.hpp) turns a Model into a time with the measured
// ceilings of machine.json:
//   t = max(flops / compute ceiling, sum_i traffic[i].bytes / bandwidth(level, traffic[i].kernel))
// Several traffic terms let a kernel with passes of different kinds (a read-only sum pass and
// an in-place scaling pass) be predicted with the bandwidth each kind really gets.
// In namespace rooflab (not rooflab::roofline): every family table builds these.
#include <string>
#include <vector>

namespace rooflab {

struct Traffic {
  double bytes = 0;            // bytes moved from the level the working set lives in
  std::string kernel;          // machine.json bandwidth kernel: "read", "update", "copy", "triad"
};

struct Model {
  double flops = 0;            // operations as the family counts them (FW: 2 per update)
  std::vector<Traffic> traffic;
  double working_set = 0;      // bytes touched by one run(); selects the memory level
  std::string compute_ceiling; // machine.json compute key, e.g. "fma_f64", "add_f64", "addmin_f32"
  std::string note;            // where the traffic formula comes from
  double bytes() const {
    double b = 0;
    for (const auto& t : traffic) b += t.bytes;
    return b;
  }
};

}  // namespace rooflab

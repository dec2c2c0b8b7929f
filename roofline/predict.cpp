#include "roofline/predict.hpp"

#include <algorithm>

#include "harness/error.hpp"

namespace rooflab::roofline {

Prediction predict(const Model& m, const Machine& machine, int threads) {
  Prediction p;
  p.level = machine.level_for(m.working_set, threads);
  if (m.flops > 0) {
    if (m.compute_ceiling.empty()) throw Error("model has flops but names no compute ceiling");
    p.compute_gflops = machine.compute(m.compute_ceiling, threads);
    p.compute_time_s = m.flops / (p.compute_gflops * 1e9);
  }
  for (const auto& t : m.traffic) {
    if (t.bytes <= 0) continue;
    p.memory_time_s += t.bytes / (machine.bandwidth(p.level, t.kernel, threads) * 1e9);
  }
  if (p.memory_time_s > 0) p.bandwidth_gbps = m.bytes() / p.memory_time_s / 1e9;
  p.time_s = std::max(p.compute_time_s, p.memory_time_s);
  if (p.time_s <= 0) throw Error("model predicts zero time (no flops and no traffic)");
  p.bound = p.memory_time_s >= p.compute_time_s ? "memory" : "compute";
  return p;
}

nlohmann::json to_json(const Prediction& p) {
  return {{"level", p.level},           {"bound", p.bound},
          {"time_s", p.time_s},         {"compute_time_s", p.compute_time_s},
          {"memory_time_s", p.memory_time_s}, {"compute_gflops", p.compute_gflops},
          {"bandwidth_gbps", p.bandwidth_gbps}};
}
}  // namespace rooflab::roofline

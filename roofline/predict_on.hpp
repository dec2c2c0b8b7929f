#pragma once
// `rooflab model --predict-on B.json RUN_A`: every kernel of machine A's run predicted on
// machine B (docs/json.md#predict-on). Two predictions per kernel and model (roofline, ECM):
//   model    the model's own time on B: A's bench.json flops / traffic against B's ceilings
//            (roofline::evaluate with B's machine.json, exactly what `rooflab model` does on A)
//   carried  A's measured time x (B's predicted / A's predicted): A's efficiency against the
//            model, carried to B
// With B's measured times (a bench.json beside B.json, or --measured), each prediction's error
// per family: median |predicted / measured - 1| and the share within 20%.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "roofline/evaluate.hpp"

namespace rooflab::roofline {

struct PredictOnInput {
  std::filesystem::path bench_a, machine_a;  // RUN_A's files
  std::filesystem::path machine_b;
  std::filesystem::path bench_b;  // B's measured times; empty: none
};

// The predict_on document (schema rooflab.predict_on/1). Throws Error on unusable input.
nlohmann::json predict_on(const PredictOnInput& in, const ExtraPredictions& extra = {});
// Writes `out` (atomically) and prints the table and the per-family errors. Returns exit code.
int predict_on_main(const PredictOnInput& in, const std::filesystem::path& out, const ExtraPredictions& extra = {});

}  // namespace rooflab::roofline

#pragma once
// `rooflab model`: joins bench.json (measured times + each case's flops/traffic model) with
// a machine.json (ceilings) into model.json, one row per case (docs/json.md). The model is
// re-evaluated from the stored flops/traffic, so one bench.json can be judged against
// another machine's ceilings.
#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "roofline/machine.hpp"

namespace rooflab::roofline {
// A variant's own models beside the classic roofline (e.g. gemm's tight per-BRGEMM roofline):
// {name: object} for the case named, or an empty object. Given by the caller, which knows the
// registry (roofline/ does not); it throws Error when a model cannot price the case.
using ExtraPredictions = std::function<nlohmann::json(const std::string& case_name, const Machine&)>;
// `rooflab model --remodel`: a case's model fields (flops, traffic, ecm_traffic, working_set, ...,
// as `rooflab bench` records them) re-derived by this build's family table, which replace the
// recorded ones; throws Error for a case this build cannot model (its recorded fields are kept,
// with a note). Given by the caller, which knows the registry and sets the machine's caches.
using Remodel = std::function<nlohmann::json(const std::string& case_name)>;

nlohmann::json evaluate(const nlohmann::json& bench, const nlohmann::json* machine,
                        const std::filesystem::path& bench_path,
                        const std::filesystem::path& machine_path, const ExtraPredictions& extra = {},
                        const Remodel& remodel = {});
// model.json's "accuracy": per family and "all", the ok rows' share within 10% / 20% of the
// roofline prediction and of the ECM one (|median / predicted - 1| <= 0.1, 0.2).
nlohmann::json accuracy(const nlohmann::json& rows);
// Reads the files, writes out (atomically), prints a table to stdout. Returns exit code.
int model_main(const std::filesystem::path& bench, const std::filesystem::path& machine,
               const std::filesystem::path& out, const ExtraPredictions& extra = {}, const Remodel& remodel = {});
}  // namespace rooflab::roofline

#pragma once
// `rooflab model`: joins bench.json (measured times + each case's flops/traffic model) with
// a machine.json (ceilings) into model.json, one row per case (docs/json.md). The model is
// re-evaluated from the stored flops/traffic, so one bench.json can be judged against
// another machine's ceilings.
#include <filesystem>

#include <nlohmann/json.hpp>

namespace rooflab::roofline {
nlohmann::json evaluate(const nlohmann::json& bench, const nlohmann::json* machine,
                        const std::filesystem::path& bench_path,
                        const std::filesystem::path& machine_path);
// Reads the files, writes out (atomically), prints a table to stdout. Returns exit code.
int model_main(const std::filesystem::path& bench, const std::filesystem::path& machine,
               const std::filesystem::path& out);
}  // namespace rooflab::roofline

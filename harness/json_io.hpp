#pragma once
// JSON files are rooflab's interface between C++ and Python. Writes are atomic (temp file in
// the same directory + rename) so an interrupted run never corrupts an earlier result.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace rooflab {
using json = nlohmann::json;

void write_json_atomic(const std::filesystem::path& path, const json& j);
void write_text_atomic(const std::filesystem::path& path, const std::string& text);
// Throws rooflab::Error naming the file on a missing file or a parse error.
json read_json_file(const std::filesystem::path& path);
// Checks `"schema": "<kind>/<major>"`; throws Error naming the file otherwise.
void require_schema(const json& j, const std::string& kind, int major,
                    const std::filesystem::path& path);
// Sets machine.json's top-level `section` (e.g. "mpi", "gpu", "rtamm") to `value`, keeping
// everything else, atomically. Sections measured by other commands than `rooflab
// characterize` live there. Throws Error naming the file when it is missing or not a
// rooflab.machine/1 file (run `rooflab characterize` first).
void merge_machine_section(const std::filesystem::path& machine_json, const std::string& section,
                           const json& value);
// Creates the directory (and parents) and checks it is writable; throws Error otherwise.
void ensure_writable_dir(const std::filesystem::path& dir);
std::string utc_timestamp();  // 2026-11-22T07:00:00Z
}  // namespace rooflab

#pragma once
// JSON files are rooflab's interface between C++ and Python. Writes are atomic (temp file in
// the same directory + rename) so an interrupted run never corrupts an earlier result.
#include <filesystem>
#include <string>
#include <vector>

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
// machine.json is written once, by `rooflab characterize`. What other commands measure about
// the machine (the "rtamm" unit costs, the "mpi" ping-pong, the "gpu" ceilings) is written
// beside it as machine.<section>.json and joined when read, so no command edits another's file
// and the order they run in does not matter.
std::filesystem::path machine_section_path(const std::filesystem::path& machine_json, const std::string& section);
// Writes `value` as the section (replacing an earlier one), atomically, with a "revision" unique
// to this write. `fitted_on` names sections this one was derived from (the "rtamm_calibration"
// from the "rtamm" units): their present revisions are recorded. Throws Error naming the file
// when machine.json is missing or not a rooflab.machine/1 file (run `rooflab characterize`), or
// a section it is fitted on is missing.
void write_machine_section(const std::filesystem::path& machine_json, const std::string& section,
                           const json& value, const std::vector<std::string>& fitted_on = {});
// machine.json with every machine.<section>.json beside it joined as its top-level `section`.
// A section measured for an earlier machine.json (another "created"), or fitted on a section
// that was rewritten since or is not joined itself, is not joined; it is named under
// "stale_sections" with the reason. Throws Error naming a malformed file.
json read_machine_json(const std::filesystem::path& machine_json);
// Creates the directory (and parents) and checks it is writable; throws Error otherwise.
void ensure_writable_dir(const std::filesystem::path& dir);
std::string utc_timestamp();  // 2026-11-22T07:00:00Z
}  // namespace rooflab

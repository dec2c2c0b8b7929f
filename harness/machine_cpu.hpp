#pragma once
// Which CPU a machine.json belongs to. `rooflab characterize` records it once, as
// host.cpu_signature; everything measured for that file (the ceilings, the ISA choice, the RTAMM
// unit costs and calibration) holds on that CPU only, and every reader that uses it on this CPU
// asks foreign_cpu.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

namespace rooflab {
using json = nlohmann::json;

// The CPU machine.json was characterized on: its host.cpu_signature (a cpu_signature(), written
// by `rooflab characterize`); `older` for a file written before it was recorded (what a section
// recorded itself, e.g. an older "isa_choice"'s "cpu"), else "" (unknown).
std::string machine_cpu(const json& machine, const std::string& older = "");
// Whether what was measured for machine.json (file `path`) holds on this CPU: "" when it does,
// else why not ("measured on \"X\", this CPU is \"Y\""). A file naming no
// CPU (machine_cpu "") is accepted with one warning on stderr per file and process.
std::string foreign_cpu(const json& machine, const std::filesystem::path& path, const std::string& older = "");
}  // namespace rooflab

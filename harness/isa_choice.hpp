#pragma once
// The ISA a family's variant runs by default: the one that ran fastest on this machine in the
// ISA calibration (`rooflab isa-calibrate`, machine.json's "isa_choice" section), not simply the
// widest. A wider ISA can lose (a lower AVX-512 clock on a memory-bound kernel), and only a
// measurement on the machine at hand says where. Every ISA stays registered and runnable by
// name; this only decides which one a profile's "default ISA" cases and the solvers use.
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/isa.hpp"
#include "harness/registry.hpp"

namespace rooflab {

// A narrower ISA is chosen only when it beats the widest supported one by more than this
// fraction of the widest's median time: above a quick sample's noise, so that a tie does not
// flip the choice (and the case names that carry it) from one run to the next.
inline constexpr double kIsaTieMargin = 0.03;

// "family/variant/dtype": the key of one calibrated choice.
std::string isa_choice_key(std::string_view family, std::string_view variant, DType dt);

// The choice among the ISAs of one calibration entry ({"isas": {"<isa>": {"median_s": ...}}})
// that this process may run (isa_supported): the widest, unless a narrower one is faster by
// more than kIsaTieMargin. Isa::none when no timed ISA is supported here.
Isa choose_isa(const nlohmann::json& entry);

// Installs the calibration of a joined machine.json (read_machine_json; file `path` for
// messages) for preferred_isa(); a machine without an "isa_choice" section clears it. Throws
// Error naming the key when the section is malformed, or when it was measured on another CPU
// (foreign_cpu: host.cpu_signature, or an older section's own "cpu") — then nothing is
// installed. Returns how many variant/dtype choices it holds.
size_t use_isa_choice(const nlohmann::json& machine, const std::filesystem::path& path = "machine.json");

// The calibrated ISA of family/variant/dtype when one is installed and supported here, else
// best_isa() (the widest: what a machine without a calibration runs).
Isa preferred_isa(std::string_view family, std::string_view variant, DType dt);
// Every installed choice, "family/variant/dtype" -> ISA (for `rooflab list --verbose`).
const std::map<std::string, Isa>& isa_choices();

// Tuning knobs (Family::knobs) are calibrated with the ISA: each ISA at every setting of its
// knobs (every combination of their values), and the ISA's time is that of its chosen setting.
// An ISA's entry records it: "isas": {"<isa>": {..., "knobs": {"<key>": "<value>"}}}.
// choose_setting: from the medians of an ISA's settings (index 0: every knob at its default;
// NaN: not timed), the default unless another is faster by more than kIsaTieMargin (the ISA
// rule and margin); the fastest timed one when the default was not timed; SIZE_MAX when none was.
size_t choose_setting(const std::vector<double>& medians);
// The calibrated value of knob `key` for family/variant/dtype at `isa` (the ISA the case runs),
// else "" (the case's own default).
std::string preferred_value(std::string_view family, std::string_view variant, DType dt, std::string_view key, Isa isa);
// Every installed knob value, "family/variant/dtype/isa/key" -> value.
const std::map<std::string, std::string>& knob_choices();

}  // namespace rooflab

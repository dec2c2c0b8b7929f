#include "harness/isa_choice.hpp"

#include <cmath>

#include "harness/error.hpp"
#include "harness/json_io.hpp"
#include "harness/machine_cpu.hpp"

namespace rooflab {
namespace {
std::map<std::string, Isa>& table() {
  static std::map<std::string, Isa> t;
  return t;
}
std::map<std::string, KnobChoice>& knob_table() {
  static std::map<std::string, KnobChoice> t;
  return t;
}
std::string knob_key(std::string_view family, std::string_view variant, DType dt, std::string_view key) {
  return isa_choice_key(family, variant, dt) + "/" + std::string(key);
}
bool positive_median(const nlohmann::json& v) {
  return v.is_object() && v.contains("median_s") && v["median_s"].is_number() && v["median_s"].get<double>() > 0 &&
         std::isfinite(v["median_s"].get<double>());
}
}  // namespace

std::string isa_choice_key(std::string_view family, std::string_view variant, DType dt) {
  return std::string(family) + "/" + std::string(variant) + "/" + std::string(to_string(dt));
}

Isa choose_isa(const nlohmann::json& entry) {
  const auto& isas = entry.at("isas");
  Isa widest = Isa::none, fastest = Isa::none;
  double t_widest = 0, t_fastest = 0;
  for (Isa i : {Isa::scalar, Isa::avx2, Isa::avx512}) {
    const std::string k(to_string(i));
    if (!isas.contains(k) || !isa_supported(i)) continue;
    const double t = isas[k].at("median_s").get<double>();
    widest = i, t_widest = t;  // ascending order: the last supported one is the widest
    if (fastest == Isa::none || t < t_fastest) fastest = i, t_fastest = t;
  }
  if (widest == Isa::none) return Isa::none;
  return t_fastest < t_widest * (1 - kIsaTieMargin) ? fastest : widest;
}

std::string choose_value(const nlohmann::json& knob) {
  const std::string def = knob.at("default").get<std::string>();
  const auto& vals = knob.at("values");
  const double t_def = vals.at(def).at("median_s").get<double>();
  std::string fastest = def;
  double t_fastest = t_def;
  for (const auto& [k, v] : vals.items())
    if (const double t = v.at("median_s").get<double>(); t < t_fastest) fastest = k, t_fastest = t;
  return t_fastest < t_def * (1 - kIsaTieMargin) ? fastest : def;
}

size_t use_isa_choice(const nlohmann::json& machine, const std::filesystem::path& path) {
  std::map<std::string, Isa> t;
  std::map<std::string, KnobChoice> kt;
  table().clear();
  knob_table().clear();
  if (machine.contains("isa_choice")) {
    const auto& sec = machine["isa_choice"];
    auto bad = [](const std::string& where, const std::string& what) {
      return Error("machine.json \"isa_choice\"" + where + ": " + what + " (run `rooflab isa-calibrate` again)");
    };
    if (!sec.is_object() || !sec.contains("entries") || !sec["entries"].is_array())
      throw bad("", "no \"entries\" array");
    if (const std::string why = foreign_cpu(machine, path, sec.value("cpu", "")); !why.empty())
      throw bad("", why + "; a choice is never carried to another CPU");
    for (size_t n = 0; n < sec["entries"].size(); ++n) {
      const auto& e = sec["entries"][n];
      const std::string where = ".entries[" + std::to_string(n) + "]";
      for (const char* k : {"family", "variant", "dtype"})
        if (!e.is_object() || !e.contains(k) || !e[k].is_string()) throw bad(where, std::string("no \"") + k + "\" string");
      const auto dt = parse_dtype(e["dtype"].get<std::string>());
      if (!dt) throw bad(where, "dtype must be f32 or f64");
      if (!e.contains("isas") || !e["isas"].is_object()) throw bad(where, "no \"isas\" object");
      for (const auto& [k, v] : e["isas"].items()) {
        if (!parse_isa(k)) throw bad(where + ".isas", "unknown ISA \"" + k + "\"");
        if (!positive_median(v)) throw bad(where + ".isas." + k, "no positive \"median_s\"");
      }
      const std::string fam = e["family"].get<std::string>(), var = e["variant"].get<std::string>();
      if (const Isa i = choose_isa(e); i != Isa::none) t[isa_choice_key(fam, var, *dt)] = i;
      if (!e.contains("knobs")) continue;
      if (!e["knobs"].is_object()) throw bad(where + ".knobs", "not an object");
      for (const auto& [key, k] : e["knobs"].items()) {
        const std::string kw = where + ".knobs." + key;
        if (!k.is_object() || !k.contains("isa") || !k["isa"].is_string() || !parse_isa(k["isa"].get<std::string>()))
          throw bad(kw, "no \"isa\" naming an ISA");
        if (!k.contains("default") || !k["default"].is_string()) throw bad(kw, "no \"default\" string");
        if (!k.contains("values") || !k["values"].is_object() || !k["values"].contains(k["default"].get<std::string>()))
          throw bad(kw, "no \"values\" object holding the default's time");
        for (const auto& [val, tv] : k["values"].items())
          if (!positive_median(tv)) throw bad(kw + ".values." + val, "no positive \"median_s\"");
        // The family checks the value where it uses it (a case parameter like any other).
        const Isa at = *parse_isa(k["isa"].get<std::string>());
        kt[knob_key(fam, var, *dt, key)] = {at, choose_value(k)};
      }
    }
  }
  table() = std::move(t);
  knob_table() = std::move(kt);
  return table().size();
}

std::string preferred_value(std::string_view family, std::string_view variant, DType dt, std::string_view key, Isa isa) {
  const auto it = knob_table().find(knob_key(family, variant, dt, key));
  return it != knob_table().end() && it->second.isa == isa ? it->second.value : "";
}

const std::map<std::string, KnobChoice>& knob_choices() { return knob_table(); }

Isa preferred_isa(std::string_view family, std::string_view variant, DType dt) {
  const auto it = table().find(isa_choice_key(family, variant, dt));
  return it != table().end() ? it->second : best_isa();
}

const std::map<std::string, Isa>& isa_choices() { return table(); }

}  // namespace rooflab

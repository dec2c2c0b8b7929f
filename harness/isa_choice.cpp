#include "harness/isa_choice.hpp"

#include <cmath>
#include <cstdint>

#include "harness/error.hpp"
#include "harness/json_io.hpp"
#include "harness/machine_cpu.hpp"

namespace rooflab {
namespace {
std::map<std::string, Isa>& table() {
  static std::map<std::string, Isa> t;
  return t;
}
std::map<std::string, std::string>& knob_table() {
  static std::map<std::string, std::string> t;
  return t;
}
std::string knob_key(std::string_view family, std::string_view variant, DType dt, Isa isa, std::string_view key) {
  return isa_choice_key(family, variant, dt) + "/" + std::string(to_string(isa)) + "/" + std::string(key);
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

size_t choose_setting(const std::vector<double>& medians) {
  size_t fastest = SIZE_MAX;
  for (size_t i = 0; i < medians.size(); ++i)
    if (!std::isnan(medians[i]) && (fastest == SIZE_MAX || medians[i] < medians[fastest])) fastest = i;
  if (fastest == SIZE_MAX || medians.empty() || std::isnan(medians[0])) return fastest;
  return medians[fastest] < medians[0] * (1 - kIsaTieMargin) ? fastest : 0;
}

size_t use_isa_choice(const nlohmann::json& machine, const std::filesystem::path& path) {
  std::map<std::string, Isa> t;
  std::map<std::string, std::string> kt;
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
      const std::string fam = e["family"].get<std::string>(), var = e["variant"].get<std::string>();
      for (const auto& [k, v] : e["isas"].items()) {
        const auto isa = parse_isa(k);
        if (!isa) throw bad(where + ".isas", "unknown ISA \"" + k + "\"");
        const std::string iw = where + ".isas." + k;
        if (!positive_median(v)) throw bad(iw, "no positive \"median_s\"");
        if (v.contains("knobs")) {
          if (!v["knobs"].is_object()) throw bad(iw + ".knobs", "not an object");
          for (const auto& [key, val] : v["knobs"].items()) {
            if (!val.is_string()) throw bad(iw + ".knobs." + key, "not a string");
            // The family checks the value where it uses it (a case parameter like any other).
            kt[knob_key(fam, var, *dt, *isa, key)] = val.get<std::string>();
          }
        }
        if (v.contains("settings")) {
          if (!v["settings"].is_array()) throw bad(iw + ".settings", "not an array");
          for (size_t m = 0; m < v["settings"].size(); ++m)
            if (const auto& st = v["settings"][m]; !positive_median(st) || !st.contains("knobs") || !st["knobs"].is_object())
              throw bad(iw + ".settings[" + std::to_string(m) + "]", "no positive \"median_s\" and \"knobs\" object");
        }
      }
      if (const Isa i = choose_isa(e); i != Isa::none) t[isa_choice_key(fam, var, *dt)] = i;
    }
  }
  table() = std::move(t);
  knob_table() = std::move(kt);
  return table().size();
}

std::string preferred_value(std::string_view family, std::string_view variant, DType dt, std::string_view key, Isa isa) {
  const auto it = knob_table().find(knob_key(family, variant, dt, isa, key));
  return it != knob_table().end() ? it->second : "";
}

const std::map<std::string, std::string>& knob_choices() { return knob_table(); }

Isa preferred_isa(std::string_view family, std::string_view variant, DType dt) {
  const auto it = table().find(isa_choice_key(family, variant, dt));
  return it != table().end() ? it->second : best_isa();
}

const std::map<std::string, Isa>& isa_choices() { return table(); }

}  // namespace rooflab

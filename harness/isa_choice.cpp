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

size_t use_isa_choice(const nlohmann::json& machine, const std::filesystem::path& path) {
  std::map<std::string, Isa> t;
  table().clear();
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
        if (!v.is_object() || !v.contains("median_s") || !v["median_s"].is_number() ||
            !(v["median_s"].get<double>() > 0) || !std::isfinite(v["median_s"].get<double>()))
          throw bad(where + ".isas." + k, "no positive \"median_s\"");
      }
      if (const Isa i = choose_isa(e); i != Isa::none)
        t[isa_choice_key(e["family"].get<std::string>(), e["variant"].get<std::string>(), *dt)] = i;
    }
  }
  table() = std::move(t);
  return table().size();
}

Isa preferred_isa(std::string_view family, std::string_view variant, DType dt) {
  const auto it = table().find(isa_choice_key(family, variant, dt));
  return it != table().end() ? it->second : best_isa();
}

const std::map<std::string, Isa>& isa_choices() { return table(); }

}  // namespace rooflab

// `rooflab list --json`'s families block (docs/json.md#list): the registry as data.
#include <string>

#include <nlohmann/json.hpp>

#include "apps/commands.hpp"
#include "harness/families.hpp"

namespace rooflab {

// The registry's facts a figure needs beyond the cases: each family's variants in table order,
// own kernel or vendor baseline (and which library), their ISAs, and the ISA order itself.
nlohmann::json families_json() {
  nlohmann::json isa_order = nlohmann::json::array();
  for (Isa i : all_isas()) isa_order.push_back(std::string(to_string(i)));
  nlohmann::json fams = nlohmann::json::array();
  for (const auto& f : families()) {
    nlohmann::json vars = nlohmann::json::array();
    for (const auto& var : f.variants) {
      nlohmann::json isas = nlohmann::json::array(), dtypes = nlohmann::json::array();
      for (Isa i : var.isas) isas.push_back(std::string(to_string(i)));
      for (DType d : var.dtypes) dtypes.push_back(std::string(to_string(d)));
      vars.push_back({{"name", var.name},
                      {"kind", var.is_baseline() ? "baseline" : "own"},
                      {"library", var.is_baseline() ? nlohmann::json(var.library) : nlohmann::json(nullptr)},
                      {"isas", isas},
                      {"dtypes", dtypes},
                      {"description", var.description},
                      {"code_path", var.code_path ? var.code_path() : nlohmann::json(nullptr)}});
    }
    fams.push_back({{"name", f.name}, {"description", f.description}, {"variants", vars}});
  }
  return {{"isa_order", isa_order}, {"families", fams}};
}

}  // namespace rooflab

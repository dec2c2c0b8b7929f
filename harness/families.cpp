// The registry with its families: lookup, profiles, validation. families() itself is generated
// by CMake (families_list.cpp.in) from the one list of families; the filters are filter.cpp.
#include "harness/families.hpp"

#include <algorithm>

#include "harness/error.hpp"

namespace rooflab {

const Family* find_family(std::string_view name) {
  for (const auto& f : families())
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> known_profiles() { return {"smoke", "quick", "paper"}; }

std::string known_profiles_string() {
  std::string s;
  for (const auto& p : known_profiles()) s += (s.empty() ? "" : ", ") + p;
  return s;
}

std::vector<Case> expand_cases(std::string_view profile) {
  const auto profiles = known_profiles();
  if (std::find(profiles.begin(), profiles.end(), profile) == profiles.end())
    throw Error("unknown profile '" + std::string(profile) + "' (known: " + known_profiles_string() + ")");
  std::vector<Case> out;
  for (const auto& fam : families()) {
    for (Case c : fam.cases(profile)) {
      c.family = fam.name;
      const Variant* v = fam.find(c.variant);
      if (!v) throw Error("family " + fam.name + " lists a case for unknown variant " + c.variant);
      if (c.isa == Isa::none && !v->isas.empty()) {
        // Each ISA the variant declares and this CPU runs; the others are not registered.
        for (Isa isa : supported_isas(v->isas)) {
          c.isa = isa;
          out.push_back(c);
        }
      } else {
        out.push_back(c);
      }
    }
  }
  return out;
}

const Variant& variant_of(const Case& c) {
  const Family* fam = find_family(c.family);
  if (!fam) {
    std::string known;
    for (const auto& f : families()) known += (known.empty() ? "" : ", ") + f.name;
    throw Error("unknown family '" + c.family + "' (known: " + known + ")");
  }
  return fam->at(c.variant);
}

void validate_case(const Case& c) {
  variant_of(c);  // an unknown family, with the known ones
  check_case(*find_family(c.family), c);
}

Isa runs_isa(const Case& c) {
  const Variant& v = variant_of(c);
  return c.isa == Isa::none && v.runs_isa ? v.runs_isa(c) : c.isa;
}

nlohmann::json case_fields(const Case& c) {
  using json = nlohmann::json;
  json j;
  j["name"] = c.name();
  j["family"] = c.family;
  j["variant"] = c.variant;
  j["isa"] = c.isa == Isa::none ? json(nullptr) : json(std::string(to_string(c.isa)));
  j["dtype"] = std::string(to_string(c.dtype));
  j["dims"] = c.dims;
  json params = json::object();
  for (const auto& [k, v] : c.params) params[k] = v;
  j["params"] = params;
  j["threads"] = c.threads;
  const Variant& v = variant_of(c);
  // The model prices vendor code (a baseline, or a back end: "code_path") with the widest ISA's
  // ceilings (roofline::pricing_isa).
  j["library"] = v.library.empty() ? json(nullptr) : json(v.library);
  if (const Isa r = runs_isa(c); r != c.isa) j["runs_isa"] = std::string(to_string(r));
  const Model m = v.model(c);
  j["flops"] = m.flops;
  j["bytes"] = m.bytes();
  j["working_set"] = m.working_set;
  j["intensity"] = m.bytes() > 0 ? json(m.flops / m.bytes()) : json(nullptr);
  j["compute_ceiling"] = m.compute_ceiling;
  j["model_note"] = m.note;
  if (v.code_path) j["code_path"] = v.code_path();
  auto terms = [](const std::vector<Traffic>& v) {
    json a = json::array();
    for (const auto& t : v) a.push_back({{"bytes", t.bytes}, {"kernel", t.kernel}});
    return a;
  };
  j["traffic"] = terms(m.traffic);
  json work = json::object();
  for (const auto& u : m.core_work) work[u.name] = u.count;
  if (work.empty()) work["flop"] = m.flops;
  j["core_work"] = work;
  j["calibration_group"] = m.calibration_group.empty() ? json(nullptr) : json(m.calibration_group);
  // The ECM's per-level traffic per phase (roofline/ecm.hpp), null when the variant declares none.
  j["ecm_traffic"] = nullptr;
  for (const auto& ph : m.phases)
    j["ecm_traffic"].push_back({{"name", ph.name}, {"flops", ph.flops}, {"l1", terms(ph.l1)}, {"l2", terms(ph.l2)},
                                {"l3", terms(ph.l3)}, {"mem", terms(ph.mem)}, {"note", ph.note}});
  return j;
}

}  // namespace rooflab

// `rooflab list --json`'s families block (apps/list.cpp): the registry as data, so figures
// read variant order, own kernel vs library baseline and ISAs instead of restating them.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include "apps/commands.hpp"
#include "harness/families.hpp"

using namespace rooflab;
using nlohmann::json;

TEST(ListJson, IsaOrderIsTheRegistrys) {
  const json j = families_json();
  ASSERT_TRUE(j.at("isa_order").is_array());
  const auto isas = all_isas();
  ASSERT_EQ(j["isa_order"].size(), isas.size());
  for (size_t i = 0; i < isas.size(); ++i) EXPECT_EQ(j["isa_order"][i], std::string(to_string(isas[i])));
}

TEST(ListJson, EveryFamilyAndVariantInTableOrder) {
  const json j = families_json();
  const auto& fams = families();
  ASSERT_EQ(j.at("families").size(), fams.size());
  for (size_t f = 0; f < fams.size(); ++f) {
    const json& jf = j["families"][f];
    EXPECT_EQ(jf.at("name"), fams[f].name);
    EXPECT_EQ(jf.at("description"), fams[f].description);
    ASSERT_EQ(jf.at("variants").size(), fams[f].variants.size()) << fams[f].name;
    for (size_t v = 0; v < fams[f].variants.size(); ++v) {
      const Variant& var = fams[f].variants[v];
      const json& jv = jf["variants"][v];
      EXPECT_EQ(jv.at("name"), var.name);
      EXPECT_EQ(jv.at("description"), var.description);
      EXPECT_EQ(jv.at("isas").size(), var.isas.size());
      for (size_t i = 0; i < var.isas.size(); ++i) EXPECT_EQ(jv["isas"][i], std::string(to_string(var.isas[i])));
      EXPECT_EQ(jv.at("dtypes").size(), var.dtypes.size());
      if (var.library.empty()) {
        EXPECT_EQ(jv.at("kind"), "own") << var.name;
        EXPECT_TRUE(jv.at("library").is_null()) << var.name;
      } else {
        EXPECT_EQ(jv.at("kind"), "baseline") << var.name;
        EXPECT_EQ(jv.at("library"), var.library) << var.name;
      }
    }
  }
}

// The variant's ISAs come in the registry's ISA order (figures sort bars by it).
TEST(ListJson, VariantIsasFollowTheIsaOrder) {
  const json j = families_json();
  std::vector<std::string> order = j["isa_order"].get<std::vector<std::string>>();
  for (const auto& f : j["families"])
    for (const auto& v : f["variants"]) {
      size_t last = 0;
      for (const auto& i : v["isas"]) {
        const auto it = std::find(order.begin(), order.end(), i.get<std::string>());
        ASSERT_NE(it, order.end()) << v["name"];
        EXPECT_GE(size_t(it - order.begin()), last) << v["name"];
        last = size_t(it - order.begin());
      }
    }
}

// gemm: the library rows are baselines named by their library; the own kernels are not.
TEST(ListJson, GemmBaselinesAreMarkedByTheirRows) {
  const Family* g = find_family("gemm");
  ASSERT_NE(g, nullptr);
  for (const char* own : {"ijk", "blocked", "sfc_ca"}) {
    const Variant* v = g->find(own);
    ASSERT_NE(v, nullptr) << own;
    EXPECT_FALSE(v->is_baseline()) << own;
  }
  if (const Variant* lx = g->find("sfc_ca_libxsmm")) {
    EXPECT_FALSE(lx->is_baseline());  // own kernel, libxsmm tiles
  }
  for (const char* lib : {"openblas", "blis", "onednn"})
    if (const Variant* v = g->find(lib)) {  // present where the library was found at build time
      EXPECT_TRUE(v->is_baseline()) << lib;
      EXPECT_EQ(v->library, lib);
    }
  for (const auto& f : families())
    if (f.name != "gemm") {
      for (const auto& v : f.variants) EXPECT_FALSE(v.is_baseline()) << f.name << "/" << v.name;
    }
}

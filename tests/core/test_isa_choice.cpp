// The default ISA by measurement (harness/isa_choice): the choice rule, the section's checks, a
// calibration from another CPU refused, and the profiles' default-ISA cases following it; the
// tuning knobs chosen with it likewise.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/error.hpp"
#include "harness/families.hpp"
#include "harness/isa_choice.hpp"
#include "harness/json_io.hpp"
#include "harness/machine_cpu.hpp"

namespace rooflab {
namespace {
using nlohmann::json;

json entry(const std::string& family, const std::string& variant, const std::string& dtype,
           const std::vector<std::pair<Isa, double>>& times) {
  json e = {{"family", family}, {"variant", variant}, {"dtype", dtype}, {"isas", json::object()}};
  for (auto [isa, t] : times) e["isas"][std::string(to_string(isa))] = {{"median_s", t}};
  return e;
}
json machine_with(const std::vector<json>& entries, const std::string& cpu = cpu_signature()) {
  return {{"isa_choice", {{"cpu", cpu}, {"entries", json(entries)}}}};
}
// An entry whose `isa` ran with knob `key` at `value` (what isa-calibrate records as chosen).
json& with_knob(json& e, Isa isa, const std::string& key, const std::string& value) {
  e["isas"][std::string(to_string(isa))]["knobs"][key] = value;
  return e;
}
// Restores "no calibration" whatever a test installed.
struct Clear {
  ~Clear() { use_isa_choice(json::object()); }
};

TEST(IsaChoice, WidestUnlessANarrowerIsFasterBeyondTheTieMargin) {
  const Isa w = best_isa();
  if (w == Isa::scalar) GTEST_SKIP() << "this CPU (or ROOFLAB_MAX_ISA) runs scalar only: no narrower ISA to choose";
  // Within the margin: the widest stays (a tie must not flip the choice between runs).
  EXPECT_EQ(choose_isa(entry("f", "v", "f64", {{Isa::scalar, 0.99}, {w, 1.0}})), w);
  EXPECT_EQ(choose_isa(entry("f", "v", "f64", {{Isa::scalar, 1.0 - kIsaTieMargin * 0.9}, {w, 1.0}})), w);
  // Beyond it: the faster narrower ISA.
  EXPECT_EQ(choose_isa(entry("f", "v", "f64", {{Isa::scalar, 1.0 - kIsaTieMargin * 1.1}, {w, 1.0}})), Isa::scalar);
  // The wider being faster is the plain case.
  EXPECT_EQ(choose_isa(entry("f", "v", "f64", {{Isa::scalar, 2.0}, {w, 1.0}})), w);
  // Only ISAs this process runs take part: one timed elsewhere (unsupported here) is ignored.
  if (!isa_supported(Isa::avx512)) {
    EXPECT_EQ(choose_isa(entry("f", "v", "f64", {{Isa::scalar, 2.0}, {Isa::avx512, 0.5}})), Isa::scalar);
    EXPECT_EQ(choose_isa(entry("f", "v", "f64", {{Isa::avx512, 0.5}})), Isa::none);
  }
}

TEST(IsaChoice, PreferredIsaIsTheCalibratedOneElseTheWidest) {
  Clear clear;
  EXPECT_EQ(preferred_isa("gemm", "blocked", DType::f64), best_isa());
  if (best_isa() == Isa::scalar) GTEST_SKIP() << "scalar only: every choice is scalar";
  EXPECT_EQ(use_isa_choice(machine_with({entry("gemm", "blocked", "f64", {{Isa::scalar, 0.5}, {best_isa(), 1.0}})})), 1u);
  EXPECT_EQ(preferred_isa("gemm", "blocked", DType::f64), Isa::scalar);
  EXPECT_EQ(preferred_isa("gemm", "blocked", DType::f32), best_isa());  // no entry for f32
  EXPECT_EQ(isa_choices().at("gemm/blocked/f64"), Isa::scalar);
  // A machine without the section clears the choice.
  EXPECT_EQ(use_isa_choice(json::object()), 0u);
  EXPECT_EQ(preferred_isa("gemm", "blocked", DType::f64), best_isa());
}

TEST(IsaChoice, ProfilesDefaultCasesFollowTheChoice) {
  Clear clear;
  if (best_isa() == Isa::scalar) GTEST_SKIP() << "scalar only: every choice is scalar";
  const std::string w(to_string(best_isa()));
  auto has = [](const std::vector<Case>& cs, const std::string& name) {
    return std::any_of(cs.begin(), cs.end(), [&](const Case& c) { return c.name() == name; });
  };
  const std::string gemm_default = "gemm/blocked/%s/f64/2048x2048x2048/threads:2";
  auto named = [](std::string pat, const std::string& isa) { return pat.replace(pat.find("%s"), 2, isa); };
  EXPECT_TRUE(has(expand_cases("quick"), named(gemm_default, w)));
  use_isa_choice(machine_with({entry("gemm", "blocked", "f64", {{Isa::scalar, 0.1}, {best_isa(), 1.0}}),
                               entry("sinkhorn", "mapuot", "f32", {{Isa::scalar, 0.1}, {best_isa(), 1.0}})}));
  const std::vector<Case> quick = expand_cases("quick");
  EXPECT_TRUE(has(quick, named(gemm_default, "scalar")));
  EXPECT_FALSE(has(quick, named(gemm_default, w)));
  EXPECT_TRUE(has(quick, "sinkhorn/mapuot/scalar/f32/4096x4096/threads:1"));
  EXPECT_FALSE(has(quick, "sinkhorn/mapuot/" + w + "/f32/4096x4096/threads:1"));
  // Every ISA stays registered: the all-ISA cases are still there.
  EXPECT_TRUE(has(quick, "gemm/blocked/" + w + "/f64/512x512x512/threads:2"));
}

TEST(IsaChoice, KnobSettingIsTheDefaultUnlessAnotherIsFasterBeyondTheTieMargin) {
  const double nan = std::nan("");
  EXPECT_EQ(choose_setting({1.0, 1.0 - kIsaTieMargin * 0.9}), 0u);  // a tie keeps the default (and the names)
  EXPECT_EQ(choose_setting({1.0, 1.0 - kIsaTieMargin * 1.1}), 1u);
  EXPECT_EQ(choose_setting({1.0, 1.5}), 0u);
  EXPECT_EQ(choose_setting({1.0, 0.9, 0.8}), 2u);    // the fastest of those beyond the margin
  EXPECT_EQ(choose_setting({1.0, nan, 0.9}), 2u);    // one that failed verification takes no part
  EXPECT_EQ(choose_setting({nan, 1.2, 1.1}), 2u);    // without the default: the fastest
  EXPECT_EQ(choose_setting({nan, nan}), SIZE_MAX);
  EXPECT_EQ(choose_setting({2.0}), 0u);
}

// The fused Sinkhorn kernels' prefetch target: a profile's default-ISA case names pf:l1 where the
// calibration chose it at that ISA, and nothing where it kept l2, or chose at another ISA.
TEST(IsaChoice, ProfilesDefaultCasesNameTheChosenKnobValueAtTheirIsa) {
  Clear clear;
  const Isa w = best_isa();
  if (w == Isa::scalar) GTEST_SKIP() << "scalar only: the fused kernels issue no prefetch, no knob";
  const std::string W(to_string(w));
  auto has = [](const std::vector<Case>& cs, const std::string& name) {
    return std::any_of(cs.begin(), cs.end(), [&](const Case& c) { return c.name() == name; });
  };
  json uv32 = entry("sinkhorn", "fused_uv", "f32", {{w, 1.0}});
  json uv64 = entry("sinkhorn", "fused_uv", "f64", {{w, 1.0}});
  json map64 = entry("sinkhorn", "mapuot", "f64", {{Isa::scalar, 2.0}, {w, 1.0}});
  with_knob(uv32, w, "pf", "l1");
  with_knob(uv64, w, "pf", "l2");             // the default won: nothing to name
  with_knob(map64, Isa::scalar, "pf", "l1");  // chosen at another ISA than the one that runs
  EXPECT_EQ(use_isa_choice(machine_with({uv32, uv64, map64})), 3u);
  EXPECT_EQ(preferred_value("sinkhorn", "fused_uv", DType::f32, "pf", w), "l1");
  EXPECT_EQ(preferred_value("sinkhorn", "fused_uv", DType::f32, "pf", Isa::scalar), "");
  EXPECT_EQ(preferred_value("sinkhorn", "fused_uv", DType::f64, "pf", w), "l2");
  EXPECT_EQ(preferred_value("sinkhorn", "mapuot", DType::f64, "pf", w), "");
  EXPECT_EQ(preferred_value("sinkhorn", "mapuot", DType::f64, "pf", Isa::scalar), "l1");
  EXPECT_EQ(knob_choices().size(), 3u);
  const std::vector<Case> quick = expand_cases("quick");
  EXPECT_TRUE(has(quick, "sinkhorn/fused_uv/" + W + "/f32/4096x4096/pf:l1/threads:1"));
  EXPECT_FALSE(has(quick, "sinkhorn/fused_uv/" + W + "/f32/4096x4096/threads:1"));
  EXPECT_TRUE(has(quick, "sinkhorn/fused_uv/" + W + "/f64/4096x4096/threads:2"));
  EXPECT_TRUE(has(quick, "sinkhorn/mapuot/" + W + "/f64/4096x4096/threads:2"));
  // The all-ISA cases keep the default: they compare ISAs, not prefetch targets.
  EXPECT_TRUE(has(quick, "sinkhorn/fused_uv/" + W + "/f64/4096x4096/threads:1"));
  for (const Case& c : quick) EXPECT_NO_THROW(validate_case(c)) << c.name();
  use_isa_choice(json::object());
  EXPECT_TRUE(knob_choices().empty());
  EXPECT_TRUE(has(expand_cases("quick"), "sinkhorn/fused_uv/" + W + "/f32/4096x4096/threads:1"));
}

TEST(IsaChoice, EveryFamilysKnobsAreValidParametersOfItsCalibrationCases) {
  size_t n = 0;
  for (const Family& f : families()) {
    if (!f.isa_cases || !f.knobs) continue;
    for (Case c : f.isa_cases())
      for (Isa i : supported_isas(variant_of(c).isas)) {
        c.isa = i;
        for (const Knob& k : f.knobs(c)) {
          ++n;
          EXPECT_EQ(c.param(k.key), nullptr) << c.name() << ": a calibration case names its knob " << k.key;
          ASSERT_GE(k.values.size(), 2u) << c.name() << " " << k.key;
          for (const std::string& v : k.values) {
            Case kc = c;
            kc.params.emplace_back(k.key, v);
            EXPECT_NO_THROW(validate_case(kc)) << kc.name();
          }
          Case bad = c;
          bad.params.emplace_back(k.key, "no-such-value");
          EXPECT_THROW(validate_case(bad), Error) << bad.name();
        }
      }
  }
  if (best_isa() != Isa::scalar) {
    EXPECT_GT(n, 0u) << "sinkhorn's fused variants have a prefetch knob";
  }
}

TEST(IsaChoice, MalformedSectionsAndOtherCpusAreRefusedNamingTheKey) {
  Clear clear;
  auto error_of = [](const json& m) {
    try {
      use_isa_choice(m);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const json good = entry("gemm", "blocked", "f64", {{Isa::scalar, 1.0}});
  EXPECT_NE(error_of(json{{"isa_choice", 5}}).find("no \"entries\" array"), std::string::npos);
  json e = good;
  e.erase("variant");
  EXPECT_NE(error_of(machine_with({e})).find("entries[0]: no \"variant\" string"), std::string::npos);
  e = good, e["dtype"] = "f16";
  EXPECT_NE(error_of(machine_with({e})).find("dtype must be f32 or f64"), std::string::npos);
  e = good, e["isas"]["neon"] = {{"median_s", 1.0}};
  EXPECT_NE(error_of(machine_with({e})).find("unknown ISA \"neon\""), std::string::npos);
  e = good, e["isas"]["scalar"]["median_s"] = 0;
  EXPECT_NE(error_of(machine_with({e})).find("isas.scalar: no positive \"median_s\""), std::string::npos);
  e = good, e["isas"]["scalar"]["knobs"] = 3;
  EXPECT_NE(error_of(machine_with({e})).find("entries[0].isas.scalar.knobs: not an object"), std::string::npos);
  e = good, e["isas"]["scalar"]["knobs"]["pf"] = 1;
  EXPECT_NE(error_of(machine_with({e})).find("isas.scalar.knobs.pf: not a string"), std::string::npos);
  e = good, e["isas"]["scalar"]["settings"] = {{{"knobs", {{"pf", "l1"}}}, {"median_s", -1.0}}};
  EXPECT_NE(error_of(machine_with({e})).find("isas.scalar.settings[0]: no positive \"median_s\" and \"knobs\" object"),
            std::string::npos);
  EXPECT_TRUE(knob_choices().empty());
  // Measured on another CPU: refused, and nothing of it stays installed.
  use_isa_choice(machine_with({entry("gemm", "blocked", "f64", {{Isa::scalar, 0.1}, {best_isa(), 1.0}})}));
  const std::string other = error_of(machine_with({good}, "GenuineIntel family 6 model 1 stepping 0 (not this one)"));
  EXPECT_NE(other.find("measured on \"GenuineIntel family 6 model 1"), std::string::npos) << other;
  EXPECT_NE(other.find("never carried to another CPU"), std::string::npos) << other;
  EXPECT_TRUE(isa_choices().empty());
  EXPECT_EQ(preferred_isa("gemm", "blocked", DType::f64), best_isa());
}

// machine.json's host.cpu_signature is the one record of the CPU: it decides over a section's own
// "cpu" (what an older isa_choice carried); with neither the choice is used with one warning.
TEST(IsaChoice, MachinesCpuSignatureDecides) {
  Clear clear;
  const json e = entry("gemm", "blocked", "f64", {{Isa::scalar, 0.5}, {best_isa(), 1.0}});
  json m = {{"host", {{"cpu_signature", "GenuineIntel family 6 model 1 stepping 0 (not this one)"}}},
            {"isa_choice", {{"entries", json::array({e})}}}};
  try {
    use_isa_choice(m, "elsewhere/machine.json");
    FAIL() << "a choice of another CPU was installed";
  } catch (const Error& x) {
    EXPECT_NE(std::string(x.what()).find("measured on \"GenuineIntel family 6 model 1"), std::string::npos) << x.what();
  }
  EXPECT_TRUE(isa_choices().empty());
  m["host"]["cpu_signature"] = cpu_signature();
  m["isa_choice"]["cpu"] = "stale copy of another CPU";  // host decides
  EXPECT_EQ(use_isa_choice(m, "here/machine.json"), 1u);
  m.erase("host"), m["isa_choice"].erase("cpu");
  testing::internal::CaptureStderr();
  EXPECT_EQ(use_isa_choice(m, "old/machine.json"), 1u);
  EXPECT_EQ(use_isa_choice(m, "old/machine.json"), 1u);
  const std::string w = testing::internal::GetCapturedStderr();
  EXPECT_NE(w.find("old/machine.json names no CPU"), std::string::npos) << w;
  EXPECT_EQ(std::count(w.begin(), w.end(), '\n'), 1) << w;
  EXPECT_EQ(machine_cpu(m), "");
  EXPECT_EQ(machine_cpu(m, "older"), "older");
}

TEST(IsaChoice, CpuSignatureNamesVendorFamilyModel) {
  const std::string s = cpu_signature();
  EXPECT_TRUE(s.rfind("GenuineIntel family ", 0) == 0 || s.rfind("AuthenticAMD family ", 0) == 0 ||
              s.find(" family ") != std::string::npos)
      << s;
  EXPECT_NE(s.find(" model "), std::string::npos) << s;
  EXPECT_EQ(s, cpu_signature());  // stable within a process
}

TEST(IsaChoice, EveryFamilysCalibrationCasesNameNoIsaAndAreValidAtEachSupportedIsa) {
  size_t n = 0;
  for (const Family& f : families()) {
    if (!f.isa_cases) continue;
    for (Case c : f.isa_cases()) {
      ++n;
      EXPECT_EQ(c.isa, Isa::none) << c.name();
      const Variant& v = variant_of(c);
      EXPECT_FALSE(v.isas.empty()) << c.name() << ": a calibration case of a variant without ISAs";
      for (Isa i : supported_isas(v.isas)) {
        c.isa = i;
        EXPECT_NO_THROW(validate_case(c)) << c.name();
      }
    }
  }
  EXPECT_GT(n, 0u);
}

}  // namespace
}  // namespace rooflab

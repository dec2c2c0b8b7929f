// The vendor libraries themselves (run by tests/gemm.cmake with a controlled environment, not
// discovered): ROOFLAB_TEST_CORETYPE is what the test's environment sets OPENBLAS_CORETYPE to
// ("" = unset). The code path each baseline reports, and OPENBLAS_CORETYPE / BLIS_ARCH_TYPE
// left as the user had them after rooflab's selection.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "harness/families.hpp"
#include "kernels/gemm/code_path.hpp"
#include "kernels/gemm/detail.hpp"

namespace rooflab {
namespace {

const Variant* baseline(const char* name) {
  const Family* f = find_family("gemm");
  return f ? f->find(name) : nullptr;
}

std::string expected_coretype() {
  const char* e = std::getenv("ROOFLAB_TEST_CORETYPE");
  if (!e) {
    ADD_FAILURE() << "run through CTest (ROOFLAB_TEST_CORETYPE names the OPENBLAS_CORETYPE it set)";
    return "";
  }
  return e;
}

TEST(CodePathLibs, OpenblasRunsItsBestCoreUnlessTheUserChose) {
  const std::string user = expected_coretype();
  const Variant* v = baseline("openblas");
  if (!v) GTEST_SKIP() << "OpenBLAS was not found at configure time";
  ASSERT_TRUE(v->code_path);
  const nlohmann::json f = v->code_path();
  const char* after = std::getenv("OPENBLAS_CORETYPE");
  if (user.empty()) {
    EXPECT_EQ(after, nullptr) << "rooflab left OPENBLAS_CORETYPE=" << after << " in the process";
    // Representative, or flagged with the reason (a build without DYNAMIC_ARCH, or without
    // kernels of this CPU's tier).
    EXPECT_TRUE(f["representative"] == true || (f["reason"].is_string() && !f["reason"].get<std::string>().empty()))
        << f.dump();
#ifdef ROOFLAB_HAVE_OPENBLAS
    // Where this build proves it can switch to its best core, rooflab's selection must have:
    // then it is representative.
    const std::string best = f["best"].get<std::string>().substr(5), ran = f["ran"].get<std::string>().substr(5);
    const bool can_switch = gemm::detail::openblas_select_core(best) == best;
    gemm::detail::openblas_select_core(ran);  // back to rooflab's choice
    if (can_switch) {
      EXPECT_EQ(f["representative"], true) << f.dump();
      EXPECT_TRUE(f["reason"].is_null()) << f.dump();
    }
#endif
  } else {
    ASSERT_NE(after, nullptr);
    EXPECT_EQ(std::string(after), user);
    EXPECT_NE(f["selected_by"].get<std::string>().find("set by the user"), std::string::npos) << f.dump();
    EXPECT_EQ(f["ran"], "core " + user) << f.dump();
    // Prescott (SSE3) on an AVX2 or AVX-512 CPU: run as asked, flagged with the reason.
    if (user == "Prescott" && host_isa() != Isa::scalar) {
      EXPECT_EQ(f["representative"], false) << f.dump();
      EXPECT_NE(f["reason"].get<std::string>().find("Prescott"), std::string::npos) << f.dump();
    }
  }
}

// The selection itself (taken whenever OpenBLAS's detection is below the CPU's tier, which
// this CPU may not show): the core changes, the variable does not outlive the call.
TEST(CodePathLibs, OpenblasCoreSelectionSetsTheVariableForThatCallOnly) {
#ifndef ROOFLAB_HAVE_OPENBLAS
  GTEST_SKIP() << "OpenBLAS was not found at configure time";
#else
  const std::string user = expected_coretype();
  const std::string ran = gemm::detail::openblas.facts().ran;  // "core <name>", selection done
  ASSERT_EQ(ran.rfind("core ", 0), 0u) << ran;
  auto env_is_as_the_user_left_it = [&] {
    const char* now = std::getenv("OPENBLAS_CORETYPE");
    if (user.empty()) {
      EXPECT_EQ(now, nullptr) << now;
    } else {
      EXPECT_EQ(std::string(now ? now : "(unset)"), user);
    }
  };
  const std::string got = gemm::detail::openblas_select_core("Prescott");  // SSE3: any x86-64 runs it
  if (got.empty()) GTEST_SKIP() << "not a DYNAMIC_ARCH OpenBLAS: its core is fixed at build time";
  EXPECT_EQ(got, "Prescott");
  env_is_as_the_user_left_it();
  EXPECT_EQ(gemm::detail::openblas_select_core(ran.substr(5)), ran.substr(5));
  env_is_as_the_user_left_it();
#endif
}

TEST(CodePathLibs, BlisReportsItsConfigurationAndRestoresTheEnvironment) {
  const Variant* v = baseline("blis");
  if (!v) GTEST_SKIP() << "BLIS was not found at configure time";
  ASSERT_TRUE(v->code_path);
  const nlohmann::json f = v->code_path();
  EXPECT_EQ(std::getenv("BLIS_ARCH_TYPE"), nullptr);
  EXPECT_EQ(f["ran"].get<std::string>().rfind("config ", 0), 0u) << f.dump();
  // Representative, or flagged because the build lacks a configuration of this CPU's tier.
  if (f["representative"] != true) {
    EXPECT_NE(f["reason"].get<std::string>().find("no configuration"), std::string::npos) << f.dump();
  }
}

TEST(CodePathLibs, EveryVendorVariantCarriesTheFacts) {
  const Family* fam = find_family("gemm");
  ASSERT_NE(fam, nullptr);
  int n = 0;
  for (const Variant& v : fam->variants) {
    if (!v.is_baseline()) continue;
    ASSERT_TRUE(v.code_path) << v.name;
    const nlohmann::json f = v.code_path();
    for (const char* k : {"library", "ran", "best", "selected_by"})
      EXPECT_TRUE(f.contains(k) && f[k].is_string() && !f[k].get<std::string>().empty()) << v.name << ": " << k;
    EXPECT_TRUE(f["representative"].is_boolean()) << v.name;
    EXPECT_EQ(f["reason"].is_null(), f["representative"] == true) << v.name << ": " << f.dump();
    ++n;
  }
  if (n == 0) GTEST_SKIP() << "no vendor library was found at configure time";
}

}  // namespace
}  // namespace rooflab

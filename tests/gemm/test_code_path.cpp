// Honest baselines (kernels/gemm/code_path.hpp): which core / configuration rooflab runs a
// vendor library with, from synthetic CPU feature sets, and the environment restored after a
// library's selection variable was set for its choice only.
#include <gtest/gtest.h>

#include <cstdlib>

#include "kernels/gemm/code_path.hpp"

namespace rooflab::gemm::code_path {
namespace {

CpuFeatures avx512(bool bf16 = false) { return {true, true, true, true, true, true, bf16}; }
CpuFeatures avx2() { return {true, true}; }
CpuFeatures sse() { return {}; }
// AVX-512F without BW/DQ (Xeon Phi): not the AVX-512 tier rooflab's kernels or SkylakeX need.
CpuFeatures avx512f_only() { return {true, true, true, false, false, false, false}; }

// What rooflab switches the library to when the user did not set its variable (openblas.cpp,
// blis.cpp): the best, when it is of a higher tier than the library's own pick; "" for none.
std::string openblas_switch(const CpuFeatures& f, const std::string& detected) {
  const std::string best = openblas_best_core(f, detected);
  return openblas_core_tier(best) > openblas_core_tier(detected) ? best : "";
}
std::string blis_switch(const CpuFeatures& f, const std::vector<std::string>& built, const std::string& detected) {
  const std::string best = blis_best_config(f, built, detected);
  return blis_config_tier(best) > blis_config_tier(detected) ? best : "";
}

TEST(CodePath, CpuTier) {
  EXPECT_EQ(cpu_tier(avx512()), Tier::avx512);
  EXPECT_EQ(cpu_tier(avx2()), Tier::avx2);
  EXPECT_EQ(cpu_tier(avx512f_only()), Tier::avx2);
  EXPECT_EQ(cpu_tier(sse()), Tier::older);
  EXPECT_EQ(cpu_tier({true, false}), Tier::older);  // AVX2 without FMA
}

TEST(CodePath, OpenblasBestCore) {
  // The Xeon: Prescott detected on an AVX-512 CPU -> SkylakeX.
  EXPECT_EQ(openblas_best_core(avx512(), "Prescott"), "SkylakeX");
  EXPECT_EQ(openblas_best_core(avx512(true), "Haswell"), "SkylakeX");
  // OpenBLAS's own AVX-512 pick stands (Cooperlake = SkylakeX's f32/f64 GEMM kernels).
  EXPECT_EQ(openblas_best_core(avx512(true), "Cooperlake"), "Cooperlake");
  EXPECT_EQ(openblas_best_core(avx512(), "SkylakeX"), "SkylakeX");
  EXPECT_EQ(openblas_best_core(avx2(), "Prescott"), "Haswell");
  EXPECT_EQ(openblas_best_core(avx2(), "Zen"), "Zen");  // Zen runs the Haswell GEMM kernels
  EXPECT_EQ(openblas_best_core(avx512f_only(), "Sandybridge"), "Haswell");
  EXPECT_EQ(openblas_best_core(sse(), "Nehalem"), "Nehalem");

  EXPECT_EQ(openblas_switch(avx512(), "Prescott"), "SkylakeX");
  EXPECT_EQ(openblas_switch(avx512(), "Haswell"), "SkylakeX");
  EXPECT_EQ(openblas_switch(avx512(true), "Cooperlake"), "");
  EXPECT_EQ(openblas_switch(avx2(), "Haswell"), "");
  EXPECT_EQ(openblas_switch(avx2(), "Zen"), "");
  EXPECT_EQ(openblas_switch(avx2(), "Prescott"), "Haswell");
  EXPECT_EQ(openblas_switch(sse(), "Prescott"), "");
}

TEST(CodePath, BlisBestConfig) {
  const std::vector<std::string> debian = {"skx", "haswell", "zen3", "zen2", "zen"};
  const std::vector<std::string> no_skx = {"haswell", "zen3", "zen2", "zen"};
  // Zen 5 under BLIS 0.9.0: "generic" (reference C kernels) -> skx.
  EXPECT_EQ(blis_best_config(avx512(), debian, "generic"), "skx");
  EXPECT_EQ(blis_switch(avx512(), debian, "generic"), "skx");
  // An AVX-512 Xeon where BLIS picked haswell.
  EXPECT_EQ(blis_switch(avx512(), debian, "haswell"), "skx");
  // No skx in the build: the best it has is AVX2, which stays not representative (judge()).
  EXPECT_EQ(blis_best_config(avx512(), no_skx, "generic"), "haswell");
  EXPECT_EQ(blis_switch(avx512(), no_skx, "haswell"), "");
  // Zen 3 (AVX2): BLIS's own zen3 stands.
  EXPECT_EQ(blis_switch(avx2(), debian, "zen3"), "");
  EXPECT_EQ(blis_switch(avx2(), debian, "generic"), "haswell");
  // BLIS's own choice unknown (the user's BLIS_ARCH_TYPE, or the probe failed): the best of the build.
  EXPECT_EQ(blis_best_config(avx512(), debian, ""), "skx");
  EXPECT_EQ(blis_switch(sse(), debian, "penryn"), "");
}

TEST(CodePath, OtherLibrariesTiers) {
  EXPECT_EQ(onednn_isa_tier("avx512_core_bf16"), Tier::avx512);
  EXPECT_EQ(onednn_isa_tier("avx2_vnni"), Tier::avx2);
  EXPECT_EQ(onednn_isa_tier("avx512_mic"), Tier::older);
  EXPECT_EQ(libxsmm_target_tier("cpx"), Tier::avx512);
  EXPECT_EQ(libxsmm_target_tier("hsw"), Tier::avx2);
  EXPECT_EQ(libxsmm_target_tier("knl"), Tier::older);
}

TEST(CodePath, JudgeFlagsALowerTierWithTheReason) {
  Facts f{"OpenBLAS 0.3.21", "core Prescott", "core SkylakeX", true, "OpenBLAS's own detection", ""};
  const Facts bad = judge(f, Tier::older, Tier::avx512, "this CPU has AVX-512");
  EXPECT_FALSE(bad.representative);
  EXPECT_NE(bad.reason.find("core Prescott"), std::string::npos) << bad.reason;
  EXPECT_NE(bad.reason.find("core SkylakeX"), std::string::npos) << bad.reason;
  EXPECT_EQ(bad.to_json()["representative"], false);
  EXPECT_EQ(bad.to_json()["reason"], bad.reason);
  const Facts good = judge(f, Tier::avx512, Tier::avx512, "this CPU has AVX-512");
  EXPECT_TRUE(good.representative);
  EXPECT_TRUE(good.reason.empty());
  EXPECT_TRUE(good.to_json()["reason"].is_null());
}

TEST(CodePath, ScopedEnvRestoresAbsenceAndValue) {
  const char* v = "ROOFLAB_TEST_CODE_PATH_VAR";
  ::unsetenv(v);
  {
    const ScopedEnv s(v, "SkylakeX");
    ASSERT_NE(std::getenv(v), nullptr);
    EXPECT_STREQ(std::getenv(v), "SkylakeX");
  }
  EXPECT_EQ(std::getenv(v), nullptr);
  ::setenv(v, "Haswell", 1);
  {
    const ScopedEnv s(v, "SkylakeX");
    EXPECT_STREQ(std::getenv(v), "SkylakeX");
  }
  EXPECT_STREQ(std::getenv(v), "Haswell");
  ::unsetenv(v);
}

}  // namespace
}  // namespace rooflab::gemm::code_path

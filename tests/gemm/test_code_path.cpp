// Honest baselines (kernels/gemm/code_path.hpp): which core / configuration rooflab runs a
// vendor library with, from synthetic CPUs (their widest Isa), and that building the registry
// probes no library.
#include <gtest/gtest.h>

#include <cstdlib>

#include "harness/env.hpp"
#include "harness/families.hpp"
#include "kernels/gemm/code_path.hpp"

namespace rooflab::gemm::code_path {
namespace {

// A CPU with AVX-512F but not BW/DQ (Xeon Phi) is of the avx2 tier: cpu_has(Isa::avx512) needs
// F/VL/BW/DQ, as rooflab's kernels and OpenBLAS's SkylakeX do.
constexpr Isa avx512f_only = Isa::avx2;

// What rooflab switches the library to when the user did not set its variable (openblas.cpp,
// blis.cpp): the best, when it is of a higher tier than the library's own pick; "" for none.
std::string openblas_switch(Isa cpu, const std::string& detected) {
  const std::string best = openblas_best_core(cpu, detected);
  return openblas_core_tier(best) > openblas_core_tier(detected) ? best : "";
}
std::string blis_switch(Isa cpu, const std::vector<std::string>& built, const std::string& detected) {
  const std::string best = blis_best_config(cpu, built, detected);
  return blis_config_tier(best) > blis_config_tier(detected) ? best : "";
}

// The CPU's tier baselines are judged against: its widest ISA, whatever ROOFLAB_MAX_ISA caps
// (tests/gemm.cmake also runs this with ROOFLAB_MAX_ISA=scalar).
TEST(CodePath, HostIsaIsTheCpusWidestUncapped) {
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");  // AVX2 without FMA: older
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
  EXPECT_EQ(cpu_has(Isa::avx2), avx2);
  EXPECT_EQ(cpu_has(Isa::avx512), avx512);
  EXPECT_EQ(host_isa(), avx512 ? Isa::avx512 : avx2 ? Isa::avx2 : Isa::scalar);
  const auto cap = isa_cap();
  EXPECT_EQ(best_isa(), cap && int(*cap) < int(host_isa()) ? *cap : host_isa());
}

TEST(CodePath, OpenblasBestCore) {
  // The Xeon: Prescott detected on an AVX-512 CPU -> SkylakeX.
  EXPECT_EQ(openblas_best_core(Isa::avx512, "Prescott"), "SkylakeX");
  EXPECT_EQ(openblas_best_core(Isa::avx512, "Haswell"), "SkylakeX");
  // OpenBLAS's own AVX-512 pick stands (Cooperlake = SkylakeX's f32/f64 GEMM kernels).
  EXPECT_EQ(openblas_best_core(Isa::avx512, "Cooperlake"), "Cooperlake");
  EXPECT_EQ(openblas_best_core(Isa::avx512, "SkylakeX"), "SkylakeX");
  EXPECT_EQ(openblas_best_core(Isa::avx2, "Prescott"), "Haswell");
  EXPECT_EQ(openblas_best_core(Isa::avx2, "Zen"), "Zen");  // Zen runs the Haswell GEMM kernels
  EXPECT_EQ(openblas_best_core(avx512f_only, "Sandybridge"), "Haswell");
  EXPECT_EQ(openblas_best_core(Isa::scalar, "Nehalem"), "Nehalem");

  EXPECT_EQ(openblas_switch(Isa::avx512, "Prescott"), "SkylakeX");
  EXPECT_EQ(openblas_switch(Isa::avx512, "Haswell"), "SkylakeX");
  EXPECT_EQ(openblas_switch(Isa::avx512, "Cooperlake"), "");
  EXPECT_EQ(openblas_switch(Isa::avx2, "Haswell"), "");
  EXPECT_EQ(openblas_switch(Isa::avx2, "Zen"), "");
  EXPECT_EQ(openblas_switch(Isa::avx2, "Prescott"), "Haswell");
  EXPECT_EQ(openblas_switch(Isa::scalar, "Prescott"), "");
}

TEST(CodePath, BlisBestConfig) {
  const std::vector<std::string> debian = {"skx", "haswell", "zen3", "zen2", "zen"};
  const std::vector<std::string> no_skx = {"haswell", "zen3", "zen2", "zen"};
  // Zen 5 under BLIS 0.9.0: "generic" (reference C kernels) -> skx.
  EXPECT_EQ(blis_best_config(Isa::avx512, debian, "generic"), "skx");
  EXPECT_EQ(blis_switch(Isa::avx512, debian, "generic"), "skx");
  // An AVX-512 Xeon where BLIS picked haswell.
  EXPECT_EQ(blis_switch(Isa::avx512, debian, "haswell"), "skx");
  // No skx in the build: the best it has is AVX2, which stays not representative (judge()).
  EXPECT_EQ(blis_best_config(Isa::avx512, no_skx, "generic"), "haswell");
  EXPECT_EQ(blis_switch(Isa::avx512, no_skx, "haswell"), "");
  // Zen 3 (AVX2): BLIS's own zen3 stands.
  EXPECT_EQ(blis_switch(Isa::avx2, debian, "zen3"), "");
  EXPECT_EQ(blis_switch(Isa::avx2, debian, "generic"), "haswell");
  // BLIS's own choice unknown (the user's BLIS_ARCH_TYPE, or the probe failed): the best of the build.
  EXPECT_EQ(blis_best_config(Isa::avx512, debian, ""), "skx");
  EXPECT_EQ(blis_switch(Isa::scalar, debian, "penryn"), "");
}

TEST(CodePath, OtherLibrariesTiers) {
  EXPECT_EQ(onednn_isa_tier("avx512_core_bf16"), Isa::avx512);
  EXPECT_EQ(onednn_isa_tier("avx2_vnni"), Isa::avx2);
  EXPECT_EQ(onednn_isa_tier("avx512_mic"), Isa::scalar);
  EXPECT_EQ(libxsmm_target_tier("cpx"), Isa::avx512);
  EXPECT_EQ(libxsmm_target_tier("hsw"), Isa::avx2);
  EXPECT_EQ(libxsmm_target_tier("knl"), Isa::scalar);
}

TEST(CodePath, JudgeFlagsALowerTierWithTheReason) {
  Facts f{"OpenBLAS 0.3.21", "core Prescott", "core SkylakeX", true, "OpenBLAS's own detection", ""};
  const Facts bad = judge(f, Isa::scalar, Isa::avx512, "this CPU has AVX-512");
  EXPECT_FALSE(bad.representative);
  EXPECT_NE(bad.reason.find("core Prescott"), std::string::npos) << bad.reason;
  EXPECT_NE(bad.reason.find("core SkylakeX"), std::string::npos) << bad.reason;
  EXPECT_EQ(bad.to_json()["representative"], false);
  EXPECT_EQ(bad.to_json()["reason"], bad.reason);
  const Facts good = judge(f, Isa::avx512, Isa::avx512, "this CPU has AVX-512");
  EXPECT_TRUE(good.representative);
  EXPECT_TRUE(good.reason.empty());
  EXPECT_TRUE(good.to_json()["reason"].is_null());
}

// What `rooflab list`, `model` and every run-case do before a baseline runs: the registry with
// every variant's description and the baselines' models. None of it may probe a library;
// the first code_path() call does (the counter counts).
TEST(CodePath, BuildingTheRegistryProbesNoLibrary) {
  size_t described = 0, modelled = 0;
  for (const Family& f : families())
    for (const Variant& v : f.variants) described += !v.description.empty();
  EXPECT_GT(described, 0u);
  const Family* gemm = find_family("gemm");
  ASSERT_NE(gemm, nullptr);
  for (const Case& c : gemm->cases("smoke"))
    if (variant_of(c).is_baseline()) modelled += variant_of(c).model(c).flops > 0;
  EXPECT_EQ(probes_run(), 0);
  int baselines = 0;
  for (const Variant& v : gemm->variants)
    if (v.is_baseline() && v.code_path) {
      v.code_path();
      ++baselines;
    }
  if (baselines == 0) GTEST_SKIP() << "no vendor library was found at configure time";
  EXPECT_GT(modelled, 0u);
  EXPECT_EQ(probes_run(), baselines);
}

// oneDNN takes its ISA cap from ONEDNN_MAX_CPU_ISA or DNNL_MAX_CPU_ISA: selected_by names the
// variable the user set.
TEST(CodePath, OnednnNamesTheCapVariableTheUserSet) {
  const Family* gemm = find_family("gemm");
  ASSERT_NE(gemm, nullptr);
  const Variant* v = gemm->find("onednn");
  if (!v) GTEST_SKIP() << "oneDNN was not found at configure time";
  // oneDNN and its facts are read once per process (CTest runs each test in its own).
  if (probes_run() > 0) GTEST_SKIP() << "a library was probed before this test: run it alone";
  ::unsetenv("ONEDNN_MAX_CPU_ISA");
  const ScopedEnv cap("DNNL_MAX_CPU_ISA", "avx2");
  const nlohmann::json f = v->code_path();
  EXPECT_EQ(f["selected_by"].get<std::string>().rfind("DNNL_MAX_CPU_ISA=avx2 set by the user", 0), 0u) << f.dump();
}

}  // namespace
}  // namespace rooflab::gemm::code_path

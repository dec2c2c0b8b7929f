#pragma once
// Which code path a vendor library runs, and whether it is the best one the library has for
// this CPU (issue 16, "honest baselines"). One record for every library rooflab calls
// (OpenBLAS, BLIS, oneDNN, LIBXSMM): bench.json rows carry it as "code_path", `rooflab list
// --json` per variant, and the GEMM summary / claims label a ratio against a library whose
// record says representative: false ("baseline not representative (<reason>)").
//
// "Best" is judged by the vector ISA tier of the library's kernels against the CPU's widest
// tier (AVX-512 F/VL/BW/DQ > AVX2+FMA > older). The CPU's tier comes from CPUID, not from
// ROOFLAB_MAX_ISA: that cap selects rooflab's own kernels, while a baseline stands for what the
// library does on this CPU.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace rooflab::gemm::code_path {

struct CpuFeatures {
  bool avx2 = false, fma = false;
  bool avx512f = false, avx512vl = false, avx512bw = false, avx512dq = false, avx512_bf16 = false;
};
CpuFeatures host_cpu_features();  // CPUID + OS state (__builtin_cpu_supports), never capped

enum class Tier { older = 0, avx2 = 1, avx512 = 2 };
std::string_view to_string(Tier);
Tier cpu_tier(const CpuFeatures&);

struct Facts {
  std::string library;          // "OpenBLAS 0.3.21"
  std::string ran;              // the code path that runs: "core SkylakeX", "config haswell", "ISA avx512_core"
  std::string best;             // the best the library has for this CPU, same vocabulary
  bool representative = true;   // ran is as good as best (same ISA tier)
  std::string selected_by;      // how ran was chosen (auto-detected / set by rooflab / set by the user)
  std::string reason;           // why not representative; "" when it is
  nlohmann::json to_json() const;
};

// Fills representative and reason from the two tiers: ran below best is not representative.
Facts judge(Facts f, Tier ran, Tier best, const std::string& cpu_note);

// ---- OpenBLAS (DYNAMIC_ARCH core names as openblas_get_corename() spells them) -------------
Tier openblas_core_tier(std::string_view core);
// The core to run on a CPU with these features: SkylakeX for AVX-512 F/VL/BW/DQ (Cooperlake,
// what OpenBLAS picks with AVX512_BF16, differs from it only in the bf16 kernels, so either
// counts as best for f32/f64 GEMM), Haswell for AVX2+FMA (OpenBLAS's Zen core uses the same
// GEMM kernels), else the detected core. detected: openblas_get_corename() at load. rooflab
// sets OPENBLAS_CORETYPE to it (for OpenBLAS's core selection only) when it is of a higher tier
// than the detected core and the user did not set the variable.
std::string openblas_best_core(const CpuFeatures&, const std::string& detected);

// ---- BLIS (sub-configuration names as bli_arch_string() spells them) ----------------------
Tier blis_config_tier(std::string_view config);
// The best configuration among `built` for this CPU: skx for AVX-512, else zen3 / zen2 / zen /
// haswell for AVX2 (the detected one when it is of that tier), else the detected one. rooflab
// sets BLIS_ARCH_TYPE to it likewise, and not when BLIS's own choice is unknown (detected "").
std::string blis_best_config(const CpuFeatures&, const std::vector<std::string>& built, const std::string& detected);

// ---- oneDNN (dnnl_cpu_isa_t names without the prefix) / LIBXSMM (target arch names) --------
Tier onednn_isa_tier(std::string_view isa);
Tier libxsmm_target_tier(std::string_view target);

// Sets an environment variable for the lifetime of the object and restores the previous state
// (value or absence) after: a library's selection variable for that library's choice only.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value);
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};
// The variable's value when set and not empty.
std::optional<std::string> env(const char* name);

}  // namespace rooflab::gemm::code_path

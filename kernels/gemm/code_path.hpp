#pragma once
// Which code path a vendor library runs, and whether it is the best one the library has for
// this CPU (issue 16, "honest baselines"). One record for every library rooflab calls
// (OpenBLAS, BLIS, oneDNN, LIBXSMM): bench.json rows carry it as "code_path", `rooflab list
// --json` per variant, and the GEMM summary / claims label a ratio against a library whose
// record says representative: false ("baseline not representative (<reason>)").
//
// "Best" is judged by the vector ISA tier of the library's kernels (a rooflab::Isa: avx512 =
// AVX-512 F/VL/BW/DQ > avx2 = AVX2+FMA > scalar = older) against the CPU's widest, host_isa()
// (harness/isa.hpp), not best_isa(): ROOFLAB_MAX_ISA caps rooflab's own kernels, while a
// baseline stands for what the library does on this CPU.
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/isa.hpp"

namespace rooflab::gemm::code_path {

// The tier names reasons use: "AVX-512", "AVX2", "pre-AVX2" (Isa::scalar stands for every
// older x86 path, SSE kernels included).
std::string_view tier_name(Isa);

struct Facts {
  std::string library;          // "OpenBLAS 0.3.21"
  std::string ran;              // the code path that runs: "core SkylakeX", "config haswell", "ISA avx512_core"
  std::string best;             // the best the library has for this CPU, same vocabulary
  bool representative = true;   // ran is as good as best (same ISA tier)
  std::string selected_by;      // how ran was chosen (auto-detected / set by rooflab / set by the user)
  std::string reason;           // why not representative; "" when it is
  nlohmann::json to_json() const;
};

// Probing a library (OpenBLAS's core selection, BLIS's child process, oneDNN's / LIBXSMM's ISA
// queries) happens once, at a baseline's first make() or Variant::code_path() call, never while
// the registry is built (`rooflab list`, `model`, every run-case would pay it). Each probe counts
// itself here, so tests can check that.
void count_probe();
int probes_run();

// Fills representative and reason from the two tiers: ran below best is not representative.
Facts judge(Facts f, Isa ran, Isa best, const std::string& cpu_note);

// ---- OpenBLAS (DYNAMIC_ARCH core names as openblas_get_corename() spells them) -------------
Isa openblas_core_tier(std::string_view core);
// The core to run on a CPU whose widest ISA is cpu: SkylakeX for AVX-512 (Cooperlake, what
// OpenBLAS picks with AVX512_BF16, differs from it only in the bf16 kernels, so either
// counts as best for f32/f64 GEMM), Haswell for AVX2+FMA (OpenBLAS's Zen core uses the same
// GEMM kernels), else the detected core. detected: openblas_get_corename() at load. rooflab
// sets OPENBLAS_CORETYPE to it (for OpenBLAS's core selection only) when it is of a higher tier
// than the detected core and the user did not set the variable.
std::string openblas_best_core(Isa cpu, const std::string& detected);

// ---- BLIS (sub-configuration names as bli_arch_string() spells them) ----------------------
Isa blis_config_tier(std::string_view config);
// The best configuration among `built` for this CPU: skx for AVX-512, else zen3 / zen2 / zen /
// haswell for AVX2 (the detected one when it is of that tier), else the detected one. rooflab
// sets BLIS_ARCH_TYPE to it likewise, and not when BLIS's own choice is unknown (detected "").
std::string blis_best_config(Isa cpu, const std::vector<std::string>& built, const std::string& detected);

// ---- oneDNN (dnnl_cpu_isa_t names without the prefix) / LIBXSMM (target arch names) --------
Isa onednn_isa_tier(std::string_view isa);
Isa libxsmm_target_tier(std::string_view target);

}  // namespace rooflab::gemm::code_path

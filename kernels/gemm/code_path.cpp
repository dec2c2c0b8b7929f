#include "kernels/gemm/code_path.hpp"

#include <algorithm>
#include <atomic>

namespace rooflab::gemm::code_path {

std::string_view tier_name(Isa isa) {
  switch (isa) {
    case Isa::avx512: return "AVX-512";
    case Isa::avx2: return "AVX2";
    case Isa::none:
    case Isa::scalar: break;
  }
  return "pre-AVX2";
}

namespace {
std::atomic<int> g_probes{0};
}  // namespace
void count_probe() { ++g_probes; }
int probes_run() { return g_probes.load(); }

nlohmann::json Facts::to_json() const {
  return {{"library", library},         {"ran", ran},
          {"best", best},               {"representative", representative},
          {"selected_by", selected_by}, {"reason", reason.empty() ? nlohmann::json(nullptr) : nlohmann::json(reason)}};
}

Facts judge(Facts f, Isa ran, Isa best, const std::string& cpu_note) {
  f.representative = int(ran) >= int(best);
  f.reason.clear();
  if (!f.representative)
    f.reason = f.library + " runs its " + f.ran + " (" + std::string(tier_name(ran)) + ") kernels; " + cpu_note +
               " and its best here is " + f.best + " (" + std::string(tier_name(best)) + "); " + f.selected_by;
  return f;
}

namespace {
bool in(std::string_view s, std::initializer_list<std::string_view> set) {
  return std::find(set.begin(), set.end(), s) != set.end();
}
}  // namespace

Isa openblas_core_tier(std::string_view core) {
  if (in(core, {"SkylakeX", "Cooperlake", "SapphireRapids"})) return Isa::avx512;
  if (in(core, {"Haswell", "Zen"})) return Isa::avx2;
  return Isa::scalar;
}

std::string openblas_best_core(Isa cpu, const std::string& detected) {
  const Isa det = openblas_core_tier(detected);
  if (int(det) >= int(cpu)) return detected;  // OpenBLAS's own pick is already of the CPU's tier
  if (cpu == Isa::avx512) return "SkylakeX";
  if (cpu == Isa::avx2) return "Haswell";
  return detected;
}

Isa blis_config_tier(std::string_view config) {
  if (in(config, {"skx", "zen4", "zen5"})) return Isa::avx512;
  if (in(config, {"haswell", "zen", "zen2", "zen3"})) return Isa::avx2;
  return Isa::scalar;  // sandybridge, penryn, the AMD FMA4 / AVX cores, generic (reference C)
}

std::string blis_best_config(Isa cpu, const std::vector<std::string>& built, const std::string& detected) {
  if (int(blis_config_tier(detected)) >= int(cpu)) return detected;
  auto has = [&](std::string_view c) { return std::find(built.begin(), built.end(), c) != built.end(); };
  // BLIS's knl configuration needs Xeon Phi's AVX-512ER/PF: never a pick for a core CPU.
  if (cpu == Isa::avx512)
    for (const char* c : {"skx", "zen4", "zen5"})
      if (has(c)) return c;
  // With BLIS's detection at a lower tier (a CPU it does not know): haswell, its
  // vendor-neutral AVX2 configuration, before the AMD ones.
  if (int(cpu) >= int(Isa::avx2))
    for (const char* c : {"haswell", "zen3", "zen2", "zen"})
      if (has(c)) return c;
  return detected;
}

Isa onednn_isa_tier(std::string_view isa) {
  if (isa.rfind("avx512_core", 0) == 0) return Isa::avx512;
  if (isa.rfind("avx2", 0) == 0) return Isa::avx2;
  return Isa::scalar;  // sse41, avx, avx512_mic (Xeon Phi)
}

Isa libxsmm_target_tier(std::string_view target) {
  if (in(target, {"skx", "clx", "cpx", "spr"})) return Isa::avx512;
  if (target == "hsw") return Isa::avx2;
  return Isa::scalar;  // generic, wsm, snb, knl / knm (Xeon Phi)
}

}  // namespace rooflab::gemm::code_path

#include "harness/isa.hpp"

namespace rooflab {

std::string_view to_string(Isa isa) {
  switch (isa) {
    case Isa::none: return "none";
    case Isa::scalar: return "scalar";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
  }
  return "?";
}

std::optional<Isa> parse_isa(std::string_view s) {
  for (Isa i : {Isa::scalar, Isa::avx2, Isa::avx512})
    if (s == to_string(i)) return i;
  return std::nullopt;
}

bool isa_supported(Isa isa) {
  // __builtin_cpu_supports checks CPUID and the OS's XSAVE state support.
  switch (isa) {
    case Isa::none:
    case Isa::scalar: return true;
    case Isa::avx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::avx512:
      return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
  }
  return false;
}

Isa best_isa() {
  for (Isa i : {Isa::avx512, Isa::avx2})
    if (isa_supported(i)) return i;
  return Isa::scalar;
}

std::vector<Isa> supported_isas(const std::vector<Isa>& wanted) {
  std::vector<Isa> out;
  for (Isa i : wanted)
    if (isa_supported(i)) out.push_back(i);
  return out;
}
}  // namespace rooflab

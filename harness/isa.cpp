#include "harness/isa.hpp"

#include <cpuid.h>

#include <cstdio>
#include <cstring>
#include <cstdlib>
#include <string>

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

std::optional<Isa> isa_cap() {
  // Read once: every caller must see the same answer for the whole run.
  static const std::optional<Isa> cap = []() -> std::optional<Isa> {
    const char* v = std::getenv("ROOFLAB_MAX_ISA");
    if (!v || !*v) return std::nullopt;
    if (auto i = parse_isa(v)) return i;
    std::fprintf(stderr, "rooflab: ROOFLAB_MAX_ISA must be scalar, avx2 or avx512, got '%s'\n", v);
    std::exit(2);
  }();
  return cap;
}

bool cpu_has(Isa isa) {
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

Isa host_isa() {
  for (Isa i : {Isa::avx512, Isa::avx2})
    if (cpu_has(i)) return i;
  return Isa::scalar;
}

std::string cpu_signature() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(0, &a, &b, &c, &d)) return "unknown";
  char vendor[13] = {};
  std::memcpy(vendor, &b, 4), std::memcpy(vendor + 4, &d, 4), std::memcpy(vendor + 8, &c, 4);
  if (!__get_cpuid(1, &a, &b, &c, &d)) return vendor;
  // The displayed family and model fold in the extended fields (Intel SDM / AMD APM, CPUID 1).
  const unsigned base_family = (a >> 8) & 0xf, ext_family = (a >> 20) & 0xff;
  const unsigned family = base_family == 0xf ? base_family + ext_family : base_family;
  const unsigned model = (base_family == 0xf || base_family == 0x6) ? (((a >> 16) & 0xf) << 4) | ((a >> 4) & 0xf)
                                                                    : (a >> 4) & 0xf;
  return std::string(vendor) + " family " + std::to_string(family) + " model " + std::to_string(model) +
         " stepping " + std::to_string(a & 0xf);
}

bool isa_supported(Isa isa) {
  // ROOFLAB_MAX_ISA hides wider ISAs, so one machine can run what a narrower CPU would.
  if (const auto cap = isa_cap(); cap && int(isa) > int(*cap)) return false;
  return cpu_has(isa);
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

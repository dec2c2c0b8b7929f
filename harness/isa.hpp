#pragma once
// Runtime ISA selection: kernels ship scalar, AVX2 and AVX-512 translation units and the
// harness asks the CPU (CPUID + OS XSAVE support) which of them may run.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rooflab {
enum class Isa { none, scalar, avx2, avx512 };

std::string_view to_string(Isa);
std::optional<Isa> parse_isa(std::string_view);
// ROOFLAB_MAX_ISA=scalar|avx2|avx512 caps what isa_supported() reports (as OpenBLAS's
// OPENBLAS_CORETYPE or oneDNN's ONEDNN_MAX_CPU_ISA do): an AVX-512 machine can then run the
// AVX2-only machine's paths and tests. isa_cap() is that cap, if set.
std::optional<Isa> isa_cap();
// The CPU's own facts, never capped: what a vendor library may run here (AVX2 = AVX2 + FMA,
// AVX-512 = F/VL/BW/DQ; none/scalar: always true).
bool cpu_has(Isa);
Isa host_isa();               // widest cpu_has of avx512 > avx2 > scalar
// CPUID's vendor, family, model and stepping ("AuthenticAMD family 26 model 2 stepping 1"): tells
// CPU models apart where the model name does not (a VM may say only "AMD EPYC").
std::string cpu_signature();
bool isa_supported(Isa);      // cpu_has within the ROOFLAB_MAX_ISA cap: what rooflab's kernels run
Isa best_isa();               // widest supported of avx512 > avx2 > scalar
std::vector<Isa> supported_isas(const std::vector<Isa>& wanted);
}  // namespace rooflab

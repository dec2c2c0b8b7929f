// `simd` / `regblock` built with AVX-512 (register block: config.hpp). Edges use native mask
// registers; min is vminps/vminpd (simd_kernels.hpp). Compiled always, run only where CPUID says so.
#include "kernels/simd/avx512.hpp"
#include "kernels/floyd_warshall/simd_kernels.hpp"

namespace rooflab::fw {
constinit const ::rooflab::simd::Tables<Kernels> detail::simd_avx512 =
    ::rooflab::simd::tables<Kernels, simd::Body, ::rooflab::simd::Avx512, kRegblockShapes.avx512>();
}

// `simd` / `regblock` built with AVX2 (vminps/vminpd; register block: config.hpp). Edges use
// vmaskmov loads/stores.
#include "kernels/simd/avx2.hpp"
#include "kernels/floyd_warshall/simd_kernels.hpp"

namespace rooflab::fw {
constinit const ::rooflab::simd::Tables<Kernels> detail::simd_avx2 =
    ::rooflab::simd::tables<Kernels, simd::Body, ::rooflab::simd::Avx2, kRegblockShapes.avx2>();
}

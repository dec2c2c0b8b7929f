// `microkernel`, mapuot and fused_uv built with AVX-512 (tiles: config.hpp). Edges use native
// mask registers. Compiled always, run only where CPUID says so.
#include "kernels/simd/avx512.hpp"
#include "kernels/sinkhorn/detail.hpp"
#include "kernels/sinkhorn/fused_simd.hpp"
#include "kernels/sinkhorn/microkernel_simd.hpp"

namespace rooflab::sinkhorn {
constexpr simd::Shape k512 = kMicrokernelShapes.avx512;
constinit const simd::Tables<SkKernels> detail::microkernel_avx512 = simd::tables<SkKernels, mk::Body, simd::Avx512, k512>();
constinit const simd::Tables<detail::FusedByPrefetch> detail::fused_avx512 =
    simd::tables<detail::FusedByPrefetch, fused::Body, simd::Avx512, k512>();
}  // namespace rooflab::sinkhorn

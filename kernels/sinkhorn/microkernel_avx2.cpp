// `microkernel`, mapuot and fused_uv built with AVX2 (tiles: config.hpp). Edges use vmaskmov
// loads/stores.
#include "kernels/simd/avx2.hpp"
#include "kernels/sinkhorn/detail.hpp"
#include "kernels/sinkhorn/fused_simd.hpp"
#include "kernels/sinkhorn/microkernel_simd.hpp"

namespace rooflab::sinkhorn {
constexpr simd::Shape kAvx2 = kMicrokernelShapes.avx2;
constinit const simd::Tables<SkKernels> detail::microkernel_avx2 = simd::tables<SkKernels, mk::Body, simd::Avx2, kAvx2>();
constinit const simd::Tables<detail::FusedByPrefetch> detail::fused_avx2 = simd::tables<detail::FusedByPrefetch, fused::Body, simd::Avx2, kAvx2>();
}  // namespace rooflab::sinkhorn

// The micro-kernel built with AVX2 + FMA (its register block: config.hpp).
#include "kernels/simd/avx2.hpp"
#include "kernels/gemm/ukernel_impl.hpp"

namespace rooflab::gemm {
constinit const simd::Tables<Ukernel> detail::ukernel_avx2 =
    simd::tables<Ukernel, uk::Body, simd::Avx2, kUkernelShapes.avx2>();
}

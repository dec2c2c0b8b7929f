// The micro-kernel built with AVX-512 (its register block: config.hpp). Compiled always, run
// only where CPUID says so.
#include "kernels/simd/avx512.hpp"
#include "kernels/gemm/ukernel_impl.hpp"

namespace rooflab::gemm {
constinit const simd::Tables<Ukernel> detail::ukernel_avx512 =
    simd::tables<Ukernel, uk::Body, simd::Avx512, kUkernelShapes.avx512>();
}

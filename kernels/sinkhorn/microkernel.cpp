// `microkernel` (COFFEE-CPU) and the fused kernels: dispatch to the per-ISA tables and the
// portable (scalar) one: no explicit SIMD, baseline x86-64 code (the compiler may still use
// SSE2 on it). Tiles: config.hpp.
#include <string>
#include <type_traits>

#include "harness/error.hpp"
#include "kernels/sinkhorn/detail.hpp"
#include "kernels/sinkhorn/fused_simd.hpp"
#include "kernels/sinkhorn/microkernel_simd.hpp"
#include "kernels/simd/scalar.hpp"

namespace rooflab::sinkhorn {

constexpr simd::Shape kScalar = kMicrokernelShapes.scalar;

template <class T>
SkKernels<T> microkernel_kernels(Isa isa) {
  return simd::dispatch<T, mk::Body, simd::Scalar, kScalar>(isa, detail::microkernel_avx2, detail::microkernel_avx512,
                                                             "sinkhorn/microkernel");
}
template <class T>
FusedKernels<T> fused_kernels(Isa isa, FusedPrefetch pf) {
  const detail::FusedByPrefetch<T> t = simd::dispatch<T, fused::Body, simd::Scalar, kScalar>(
      isa, detail::fused_avx2, detail::fused_avx512, "sinkhorn fused kernels");
  return pf == FusedPrefetch::l1 ? t.l1 : t.l2;
}
template SkKernels<float> microkernel_kernels<float>(Isa);
template SkKernels<double> microkernel_kernels<double>(Isa);
template FusedKernels<float> fused_kernels<float>(Isa, FusedPrefetch);
template FusedKernels<double> fused_kernels<double>(Isa, FusedPrefetch);

}  // namespace rooflab::sinkhorn

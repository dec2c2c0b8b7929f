#pragma once
// Internals shared by the variant files (not part of the contract).
#include "kernels/sinkhorn/sinkhorn.hpp"

namespace rooflab::sinkhorn::detail {

// The row pass of typical / c2r / blocked: Algorithm 1 lines 1-10 with the loop unrolling
// the paper's baseline has (four independent partial sums, so the sum is not bound by the
// add latency and the compiler may vectorize it). Defined in common.cpp (baseline ISA).
template <class T> void portable_row_rescale(const SkArgs<T>& a);

// <name>_kernels<T>() of a portable variant (typical, c2r, blocked) for float and double: the
// shared row pass and the col_rescale / col_sums / col_scale templates of the file that
// expands it (after its anonymous namespace, inside rooflab::sinkhorn).
#define ROOFLAB_SK_PORTABLE_KERNELS(name)                                                     \
  template <class T>                                                                         \
  SkKernels<T> name##_kernels() {                                                            \
    return {detail::portable_row_rescale<T>, col_rescale<T>, col_sums<T>, col_scale<T>};     \
  }                                                                                          \
  template SkKernels<float> name##_kernels<float>();                                         \
  template SkKernels<double> name##_kernels<double>();

// The fused kernels of one ISA for each prefetch target (FusedPrefetch).
template <class T>
struct FusedByPrefetch {
  FusedKernels<T> l2, l1;
};

// The microkernel's and the fused kernels' SIMD tables, defined by microkernel_avx2.cpp and
// microkernel_avx512.cpp, each compiled with its ISA's flags.
extern const simd::Tables<SkKernels> microkernel_avx2, microkernel_avx512;
extern const simd::Tables<FusedByPrefetch> fused_avx2, fused_avx512;

}  // namespace rooflab::sinkhorn::detail

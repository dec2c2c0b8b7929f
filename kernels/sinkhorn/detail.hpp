#pragma once
// Internals shared by the variant files (not part of the contract).
#include "kernels/sinkhorn/sinkhorn.hpp"

namespace rooflab::sinkhorn::detail {

// The row pass of typical / c2r / blocked: Algorithm 1 lines 1-10 with the loop unrolling
// the paper's baseline has (four independent partial sums, so the sum is not bound by the
// add latency and the compiler may vectorize it). Defined in common.cpp (baseline ISA).
template <class T> void portable_row_rescale(const SkArgs<T>& a);

// The microkernel's SIMD tables, each defined in its own translation unit
// (microkernel_avx2.cpp, microkernel_avx512.cpp) compiled with that ISA's flags. They are
// constant-initialized data, not functions: reading a table runs no code from those TUs, so
// a CPU without the ISA can look at it (and skip) safely.
extern const SkKernels<double> microkernel_avx2_f64, microkernel_avx512_f64;
extern const SkKernels<float> microkernel_avx2_f32, microkernel_avx512_f32;
// The fused kernels (fused_simd.hpp), tables of the same kind, from the same TUs.
extern const FusedKernels<double> fused_avx2_f64, fused_avx512_f64;
extern const FusedKernels<float> fused_avx2_f32, fused_avx512_f32;

}  // namespace rooflab::sinkhorn::detail

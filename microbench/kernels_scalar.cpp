// Baseline x86-64 kernels (one element per "vector", kernels/simd/scalar.hpp; the compiler
// may still use SSE2). There is no FMA instruction in the baseline, so fma is a multiply and
// an add (still 2 flops); the streaming store is movnti.
// The compute kernels use SSE2's full width (2 doubles / 4 floats per register, part of
// x86-64): their ceilings are what code built for the baseline target can reach, and 12
// packed chains cover the mul + add latency, where 12 scalar ones that the compiler packs
// pairwise would measure latency, not throughput.
#include <emmintrin.h>

#include <type_traits>

#include "kernels/simd/scalar.hpp"
#include "microbench/kernels_impl.hpp"

namespace rooflab::microbench {
namespace {
// Internal linkage for the instantiations (see kernels_impl.hpp).
template <class E>
struct Scalar : simd::Scalar<E> {};

// The traits the compute kernels use (set1, store, add, mul, min, fma) over SSE2 registers.
template <class E>
struct Sse2 {
  static constexpr bool D = std::is_same_v<E, double>;
  using T = E;
  using R = std::conditional_t<D, __m128d, __m128>;
  static constexpr int64_t W = 16 / sizeof(E);
  static R set1(T x) { if constexpr (D) return _mm_set1_pd(x); else return _mm_set1_ps(x); }
  static void store(T* p, R x) { if constexpr (D) _mm_storeu_pd(p, x); else _mm_storeu_ps(p, x); }
  static R add(R a, R b) { if constexpr (D) return _mm_add_pd(a, b); else return _mm_add_ps(a, b); }
  static R mul(R a, R b) { if constexpr (D) return _mm_mul_pd(a, b); else return _mm_mul_ps(a, b); }
  static R min(R a, R b) { if constexpr (D) return _mm_min_pd(a, b); else return _mm_min_ps(a, b); }
  static R fma(R a, R b, R c) { return add(mul(a, b), c); }
};

constexpr KernelTable scalar_table() {
  KernelTable t = detail::make_table<Scalar>(Isa::scalar);
  t.fma_f64 = &detail::fma_k<Sse2, double>;
  t.fma_f32 = &detail::fma_k<Sse2, float>;
  t.add_f64 = &detail::add_k<Sse2, double>;
  t.add_f32 = &detail::add_k<Sse2, float>;
  t.mul_f64 = &detail::mul_k<Sse2, double>;
  t.mul_f32 = &detail::mul_k<Sse2, float>;
  t.addmin_f64 = &detail::addmin_k<Sse2, double>;
  t.addmin_f32 = &detail::addmin_k<Sse2, float>;
  t.lanes_f64 = kComputeAccumulators * int(Sse2<double>::W);
  t.lanes_f32 = kComputeAccumulators * int(Sse2<float>::W);
  return t;
}
}  // namespace

const KernelTable& scalar_kernels() {
  static constexpr KernelTable table = scalar_table();
  return table;
}
}  // namespace rooflab::microbench

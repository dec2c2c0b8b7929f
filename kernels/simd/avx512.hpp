#pragma once
// AVX-512 (F/VL/BW/DQ) vector traits shared by the kernel families' *_avx512.cpp files.
// Same rules as avx2.hpp: internal linkage, include only from AVX-512-flagged files.
// GCC 12's AVX-512 intrinsics build some results from _mm512_undefined_*(), which trips
// -Wmaybe-uninitialized / -Wuninitialized at the inlining site (GCC bug 105593); silence it
// for the header only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include <cstdint>

#include "kernels/simd/traits.hpp"

namespace rooflab::simd {
namespace {
// Native mask registers: lanes [0, n) enabled.
inline __m512d tail_load(const double* p, int n) { return _mm512_maskz_loadu_pd(__mmask8((1u << n) - 1u), p); }
inline __m512 tail_load(const float* p, int n) { return _mm512_maskz_loadu_ps(__mmask16((1u << n) - 1u), p); }
inline void tail_store(double* p, __m512d x, int n) { _mm512_mask_storeu_pd(p, __mmask8((1u << n) - 1u), x); }
inline void tail_store(float* p, __m512 x, int n) { _mm512_mask_storeu_ps(p, __mmask16((1u << n) - 1u), x); }
inline double reduce_add(__m512d x) {
  const __m256d h = _mm512_castpd512_pd256(_mm512_add_pd(x, _mm512_shuffle_f64x2(x, x, 0xEE)));
  const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}
inline float reduce_add(__m512 x) {
  const __m256 h = _mm512_castps512_ps256(_mm512_add_ps(x, _mm512_shuffle_f32x4(x, x, 0xEE)));
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

template <class T>
struct Avx512;
ROOFLAB_SIMD_TRAITS(Avx512, double, __m512d, 8, _mm512, pd)
ROOFLAB_SIMD_TRAITS(Avx512, float, __m512, 16, _mm512, ps)
}  // namespace
}  // namespace rooflab::simd

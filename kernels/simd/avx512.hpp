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

namespace rooflab::simd {
namespace {
template <class T>
struct Avx512;

template <>
struct Avx512<double> {
  using T = double;
  using R = __m512d;
  static constexpr int64_t W = 8;
  static __mmask8 mask(int n) { return __mmask8((1u << n) - 1u); }
  static R zero() { return _mm512_setzero_pd(); }
  static R set1(T x) { return _mm512_set1_pd(x); }
  static R load(const T* p) { return _mm512_loadu_pd(p); }
  static void store(T* p, R x) { _mm512_storeu_pd(p, x); }
  static R loadn(const T* p, int n) { return _mm512_maskz_loadu_pd(mask(n), p); }
  static void storen(T* p, R x, int n) { _mm512_mask_storeu_pd(p, mask(n), x); }
  static void stream(T* p, R x) { _mm512_stream_pd(p, x); }  // non-temporal; p 64-byte aligned
  static R add(R a, R b) { return _mm512_add_pd(a, b); }
  static R mul(R a, R b) { return _mm512_mul_pd(a, b); }
  static R min(R a, R b) { return _mm512_min_pd(a, b); }
  // min as compare-to-mask + blend (floyd_warshall's kernels: the paper's masked form).
  static R blend_min(R a, R b) { return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, b, _CMP_LT_OQ), b, a); }
  static R fma(R a, R b, R c) { return _mm512_fmadd_pd(a, b, c); }  // a * b + c
  static T hsum(R x) {
    const __m256d h = _mm512_castpd512_pd256(_mm512_add_pd(x, _mm512_shuffle_f64x2(x, x, 0xEE)));
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(h), _mm256_extractf128_pd(h, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
  }
  static void fence() { _mm_sfence(); }  // orders stream()s before later stores
};

template <>
struct Avx512<float> {
  using T = float;
  using R = __m512;
  static constexpr int64_t W = 16;
  static __mmask16 mask(int n) { return __mmask16((1u << n) - 1u); }
  static R zero() { return _mm512_setzero_ps(); }
  static R set1(T x) { return _mm512_set1_ps(x); }
  static R load(const T* p) { return _mm512_loadu_ps(p); }
  static void store(T* p, R x) { _mm512_storeu_ps(p, x); }
  static R loadn(const T* p, int n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  static void storen(T* p, R x, int n) { _mm512_mask_storeu_ps(p, mask(n), x); }
  static void stream(T* p, R x) { _mm512_stream_ps(p, x); }
  static R add(R a, R b) { return _mm512_add_ps(a, b); }
  static R mul(R a, R b) { return _mm512_mul_ps(a, b); }
  static R min(R a, R b) { return _mm512_min_ps(a, b); }
  static R blend_min(R a, R b) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), b, a); }
  static R fma(R a, R b, R c) { return _mm512_fmadd_ps(a, b, c); }
  static T hsum(R x) {
    const __m256 h = _mm512_castps512_ps256(_mm512_add_ps(x, _mm512_shuffle_f32x4(x, x, 0xEE)));
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
  }
  static void fence() { _mm_sfence(); }
};
}  // namespace
}  // namespace rooflab::simd

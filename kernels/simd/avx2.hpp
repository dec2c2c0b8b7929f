#pragma once
// AVX2 vector traits shared by the kernel families' *_avx2.cpp translation units.
// Everything is in an unnamed namespace: each AVX2 TU gets its own internal copy, so no
// AVX2-compiled function can be picked by the linker for a baseline TU (the families export
// only constinit tables of function pointers from their ISA files).
// Include only from files built with AVX2 flags (rooflab_isa_flags: *_avx2.cpp).
#include <immintrin.h>

#include <cstdint>

namespace rooflab::simd {
namespace {
// Sliding windows over {-1 x W, 0 x W}: a load at (W - n) enables lanes [0, n).
alignas(64) constexpr int64_t kAvx2Mask64[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
alignas(64) constexpr int32_t kAvx2Mask32[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

template <class T>
struct Avx2;

template <>
struct Avx2<double> {
  using T = double;
  using R = __m256d;
  static constexpr int64_t W = 4;
  static __m256i mask(int n) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kAvx2Mask64 + 4 - n)); }
  static R zero() { return _mm256_setzero_pd(); }
  static R set1(T x) { return _mm256_set1_pd(x); }
  static R load(const T* p) { return _mm256_loadu_pd(p); }
  static void store(T* p, R x) { _mm256_storeu_pd(p, x); }
  static R loadn(const T* p, int n) { return _mm256_maskload_pd(p, mask(n)); }
  static void storen(T* p, R x, int n) { _mm256_maskstore_pd(p, mask(n), x); }
  static void stream(T* p, R x) { _mm256_stream_pd(p, x); }  // non-temporal; p 32-byte aligned
  static R add(R a, R b) { return _mm256_add_pd(a, b); }
  static R mul(R a, R b) { return _mm256_mul_pd(a, b); }
  static R min(R a, R b) { return _mm256_min_pd(a, b); }
  static R fma(R a, R b, R c) { return _mm256_fmadd_pd(a, b, c); }  // a * b + c
  static T hsum(R x) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(x), _mm256_extractf128_pd(x, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
  }
  static void fence() { _mm_sfence(); }  // orders stream()s before later stores
};

template <>
struct Avx2<float> {
  using T = float;
  using R = __m256;
  static constexpr int64_t W = 8;
  static __m256i mask(int n) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kAvx2Mask32 + 8 - n)); }
  static R zero() { return _mm256_setzero_ps(); }
  static R set1(T x) { return _mm256_set1_ps(x); }
  static R load(const T* p) { return _mm256_loadu_ps(p); }
  static void store(T* p, R x) { _mm256_storeu_ps(p, x); }
  static R loadn(const T* p, int n) { return _mm256_maskload_ps(p, mask(n)); }
  static void storen(T* p, R x, int n) { _mm256_maskstore_ps(p, mask(n), x); }
  static void stream(T* p, R x) { _mm256_stream_ps(p, x); }
  static R add(R a, R b) { return _mm256_add_ps(a, b); }
  static R mul(R a, R b) { return _mm256_mul_ps(a, b); }
  static R min(R a, R b) { return _mm256_min_ps(a, b); }
  static R fma(R a, R b, R c) { return _mm256_fmadd_ps(a, b, c); }
  static T hsum(R x) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
  }
  static void fence() { _mm_sfence(); }
};
}  // namespace
}  // namespace rooflab::simd

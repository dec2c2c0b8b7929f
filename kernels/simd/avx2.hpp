#pragma once
// AVX2 vector traits shared by the kernel families' *_avx2.cpp translation units.
// Everything is in an unnamed namespace: each AVX2 TU gets its own internal copy, so no
// AVX2-compiled function can be picked by the linker for a baseline TU (the families export
// only constinit tables of function pointers from their ISA files).
// Include only from files built with AVX2 flags (rooflab_isa_flags: *_avx2.cpp).
#include <immintrin.h>

#include <cstdint>

#include "kernels/simd/traits.hpp"

namespace rooflab::simd {
namespace {
// Sliding windows over {-1 x W, 0 x W}: a load at (W - n) enables lanes [0, n).
alignas(64) constexpr int64_t kAvx2Mask64[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
alignas(64) constexpr int32_t kAvx2Mask32[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
inline __m256i avx2_mask(const double*, int n) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kAvx2Mask64 + 4 - n)); }
inline __m256i avx2_mask(const float*, int n) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kAvx2Mask32 + 8 - n)); }

inline __m256d tail_load(const double* p, int n) { return _mm256_maskload_pd(p, avx2_mask(p, n)); }
inline __m256 tail_load(const float* p, int n) { return _mm256_maskload_ps(p, avx2_mask(p, n)); }
inline void tail_store(double* p, __m256d x, int n) { _mm256_maskstore_pd(p, avx2_mask(p, n), x); }
inline void tail_store(float* p, __m256 x, int n) { _mm256_maskstore_ps(p, avx2_mask(p, n), x); }
inline double reduce_add(__m256d x) {
  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(x), _mm256_extractf128_pd(x, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}
inline float reduce_add(__m256 x) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
}

template <class T>
struct Avx2;
ROOFLAB_SIMD_TRAITS(Avx2, double, __m256d, 4, _mm256, pd)
ROOFLAB_SIMD_TRAITS(Avx2, float, __m256, 8, _mm256, ps)
}  // namespace
}  // namespace rooflab::simd

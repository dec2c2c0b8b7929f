// AVX2 + FMA kernels (built with -mavx2 -mfma; only called when the CPU has both).
#include <immintrin.h>

#include "microbench/kernels_impl.hpp"

namespace rooflab::microbench {
namespace {
struct Avx2 {
  using D = __m256d;
  using F = __m256;
  static constexpr size_t WD = 4, WF = 8, kStreamAlign = 32;
  static D loadd(const double* p) { return _mm256_loadu_pd(p); }
  static void stored(double* p, D v) { _mm256_storeu_pd(p, v); }
  static void streamd(double* p, D v) { _mm256_stream_pd(p, v); }
  static D splat(double v) { return _mm256_set1_pd(v); }
  static F splat(float v) { return _mm256_set1_ps(v); }
  static D add(D a, D b) { return _mm256_add_pd(a, b); }
  static F add(F a, F b) { return _mm256_add_ps(a, b); }
  static D mul(D a, D b) { return _mm256_mul_pd(a, b); }
  static F mul(F a, F b) { return _mm256_mul_ps(a, b); }
  static D fma(D a, D b, D c) { return _mm256_fmadd_pd(a, b, c); }
  static F fma(F a, F b, F c) { return _mm256_fmadd_ps(a, b, c); }
  static D min(D a, D b) { return _mm256_min_pd(a, b); }
  static F min(F a, F b) { return _mm256_min_ps(a, b); }
  static double hsum(D v) {
    alignas(32) double t[4];
    _mm256_store_pd(t, v);
    return (t[0] + t[1]) + (t[2] + t[3]);
  }
  static double hsum(F v) {
    alignas(32) float t[8];
    _mm256_store_ps(t, v);
    double s = 0;
    for (float x : t) s += x;
    return s;
  }
  static void fence() { _mm_sfence(); }
};
}  // namespace

const KernelTable& avx2_kernels() {
  static constexpr KernelTable table = detail::make_table<Avx2>(Isa::avx2);
  return table;
}
}  // namespace rooflab::microbench

// AVX-512 kernels (built with -mavx512f/vl/bw/dq; only called when the CPU has AVX-512F).
#include <immintrin.h>

// GCC 12 warns that _mm512_min_p[sd] uses an "uninitialized" _mm512_undefined_p[sd](): a
// false positive inside its own header.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "microbench/kernels_impl.hpp"

namespace rooflab::microbench {
namespace {
struct Avx512 {
  using D = __m512d;
  using F = __m512;
  static constexpr size_t WD = 8, WF = 16, kStreamAlign = 64;
  static D loadd(const double* p) { return _mm512_loadu_pd(p); }
  static void stored(double* p, D v) { _mm512_storeu_pd(p, v); }
  static void streamd(double* p, D v) { _mm512_stream_pd(p, v); }
  static D splat(double v) { return _mm512_set1_pd(v); }
  static F splat(float v) { return _mm512_set1_ps(v); }
  static D add(D a, D b) { return _mm512_add_pd(a, b); }
  static F add(F a, F b) { return _mm512_add_ps(a, b); }
  static D mul(D a, D b) { return _mm512_mul_pd(a, b); }
  static F mul(F a, F b) { return _mm512_mul_ps(a, b); }
  static D fma(D a, D b, D c) { return _mm512_fmadd_pd(a, b, c); }
  static F fma(F a, F b, F c) { return _mm512_fmadd_ps(a, b, c); }
  static D min(D a, D b) { return _mm512_min_pd(a, b); }
  static F min(F a, F b) { return _mm512_min_ps(a, b); }
  static double hsum(D v) {
    alignas(64) double t[8];
    _mm512_store_pd(t, v);
    double s = 0;
    for (double x : t) s += x;
    return s;
  }
  static double hsum(F v) {
    alignas(64) float t[16];
    _mm512_store_ps(t, v);
    double s = 0;
    for (float x : t) s += x;
    return s;
  }
  static void fence() { _mm_sfence(); }
};
}  // namespace

const KernelTable& avx512_kernels() {
  static constexpr KernelTable table = detail::make_table<Avx512>(Isa::avx512);
  return table;
}
}  // namespace rooflab::microbench

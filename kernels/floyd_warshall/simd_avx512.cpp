// `simd` / `regblock`, AVX-512: 16 floats / 8 doubles per vector; an 8 x 2-vector register
// block (16 accumulators, as the paper's 16 x 16-lane tile holds 16). Edges use native mask
// registers; min is the paper's masked form (compare to a mask, blend). Compiled always, run
// only where CPUID says so.
// GCC 12's AVX-512 intrinsics build some results from _mm512_undefined_*(), which trips
// -Wmaybe-uninitialized at the inlining site (GCC bug 105593); silence it for the header only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>
#pragma GCC diagnostic pop

#include "kernels/floyd_warshall/detail.hpp"
#include "kernels/floyd_warshall/simd_kernels.hpp"

namespace rooflab::fw {
namespace {
struct Avx512F32 {
  using T = float;
  using R = __m512;
  static constexpr int64_t W = 16;
  static constexpr int MR = 8;
  static constexpr int NRV = 2;
  static __mmask16 mask(int n) { return __mmask16((1u << n) - 1u); }
  static R set1(T x) { return _mm512_set1_ps(x); }
  static R load(const T* p) { return _mm512_loadu_ps(p); }
  static void store(T* p, R x) { _mm512_storeu_ps(p, x); }
  static R loadn(const T* p, int n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  static void storen(T* p, R x, int n) { _mm512_mask_storeu_ps(p, mask(n), x); }
  static R add(R a, R b) { return _mm512_add_ps(a, b); }
  static R min(R a, R b) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), b, a); }
};

struct Avx512F64 {
  using T = double;
  using R = __m512d;
  static constexpr int64_t W = 8;
  static constexpr int MR = 8;
  static constexpr int NRV = 2;
  static __mmask8 mask(int n) { return __mmask8((1u << n) - 1u); }
  static R set1(T x) { return _mm512_set1_pd(x); }
  static R load(const T* p) { return _mm512_loadu_pd(p); }
  static void store(T* p, R x) { _mm512_storeu_pd(p, x); }
  static R loadn(const T* p, int n) { return _mm512_maskz_loadu_pd(mask(n), p); }
  static void storen(T* p, R x, int n) { _mm512_mask_storeu_pd(p, mask(n), x); }
  static R add(R a, R b) { return _mm512_add_pd(a, b); }
  static R min(R a, R b) { return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, b, _CMP_LT_OQ), b, a); }
};
}  // namespace

namespace detail {
constinit const Kernels<float> simd_avx512_f32 = simd::table<Avx512F32>();
constinit const Kernels<double> simd_avx512_f64 = simd::table<Avx512F64>();
}  // namespace detail
}  // namespace rooflab::fw

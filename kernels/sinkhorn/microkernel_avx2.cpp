// `microkernel`, AVX2: 4 doubles / 8 floats per vector; micro-tile mr = 4 rows x nr = 2
// vectors (one 64-byte cache line of doubles per row). Edges use vmaskmov loads/stores.
#include <immintrin.h>

#include "kernels/sinkhorn/detail.hpp"
#include "kernels/sinkhorn/fused_simd.hpp"
#include "kernels/sinkhorn/microkernel_simd.hpp"

namespace rooflab::sinkhorn {
namespace {
// Sliding windows over {-1 x W, 0 x W}: lanes [0, n) on.
alignas(64) constexpr int64_t kMask64[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
alignas(64) constexpr int32_t kMask32[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

struct Avx2F64 {
  using T = double;
  using R = __m256d;
  static constexpr int64_t W = 4;
  static constexpr int MR = 4;
  static constexpr int64_t NRV = 2;
  static __m256i mask(int n) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMask64 + 4 - n)); }
  static R zero() { return _mm256_setzero_pd(); }
  static R set1(T x) { return _mm256_set1_pd(x); }
  static R load(const T* p) { return _mm256_loadu_pd(p); }
  static void store(T* p, R x) { _mm256_storeu_pd(p, x); }
  static R loadn(const T* p, int n) { return _mm256_maskload_pd(p, mask(n)); }
  static void storen(T* p, R x, int n) { _mm256_maskstore_pd(p, mask(n), x); }
  static R add(R a, R b) { return _mm256_add_pd(a, b); }
  static R mul(R a, R b) { return _mm256_mul_pd(a, b); }
  static T hsum(R x) {
    __m128d s = _mm_add_pd(_mm256_castpd256_pd128(x), _mm256_extractf128_pd(x, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
  }
};

struct Avx2F32 {
  using T = float;
  using R = __m256;
  static constexpr int64_t W = 8;
  static constexpr int MR = 4;
  static constexpr int64_t NRV = 2;
  static __m256i mask(int n) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMask32 + 8 - n)); }
  static R zero() { return _mm256_setzero_ps(); }
  static R set1(T x) { return _mm256_set1_ps(x); }
  static R load(const T* p) { return _mm256_loadu_ps(p); }
  static void store(T* p, R x) { _mm256_storeu_ps(p, x); }
  static R loadn(const T* p, int n) { return _mm256_maskload_ps(p, mask(n)); }
  static void storen(T* p, R x, int n) { _mm256_maskstore_ps(p, mask(n), x); }
  static R add(R a, R b) { return _mm256_add_ps(a, b); }
  static R mul(R a, R b) { return _mm256_mul_ps(a, b); }
  static T hsum(R x) {
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(x), _mm256_extractf128_ps(x, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(s, _mm_movehdup_ps(s)));
  }
};
}  // namespace

namespace detail {
constinit const SkKernels<double> microkernel_avx2_f64 = mk::table<Avx2F64>();
constinit const SkKernels<float> microkernel_avx2_f32 = mk::table<Avx2F32>();
constinit const FusedKernels<double> fused_avx2_f64 = fused::table<Avx2F64>();
constinit const FusedKernels<float> fused_avx2_f32 = fused::table<Avx2F32>();
}  // namespace detail
}  // namespace rooflab::sinkhorn

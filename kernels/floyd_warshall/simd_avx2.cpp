// `simd` / `regblock`, AVX2: 8 floats / 4 doubles per vector, vminps/vminpd; a 6 x 2-vector
// register block (12 accumulators + 2 B vectors + 1 broadcast of A = 15 of the 16 ymm).
// Edges use vmaskmov loads/stores.
#include <immintrin.h>

#include "kernels/floyd_warshall/detail.hpp"
#include "kernels/floyd_warshall/simd_kernels.hpp"

namespace rooflab::fw {
namespace {
// Sliding windows over {-1 x W, 0 x W}: lanes [0, n) on.
alignas(64) constexpr int64_t kMask64[8] = {-1, -1, -1, -1, 0, 0, 0, 0};
alignas(64) constexpr int32_t kMask32[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};

struct Avx2F32 {
  using T = float;
  using R = __m256;
  static constexpr int64_t W = 8;
  static constexpr int MR = 6;
  static constexpr int NRV = 2;
  static __m256i mask(int n) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMask32 + 8 - n)); }
  static R set1(T x) { return _mm256_set1_ps(x); }
  static R load(const T* p) { return _mm256_loadu_ps(p); }
  static void store(T* p, R x) { _mm256_storeu_ps(p, x); }
  static R loadn(const T* p, int n) { return _mm256_maskload_ps(p, mask(n)); }
  static void storen(T* p, R x, int n) { _mm256_maskstore_ps(p, mask(n), x); }
  static R add(R a, R b) { return _mm256_add_ps(a, b); }
  static R min(R a, R b) { return _mm256_min_ps(a, b); }
};

struct Avx2F64 {
  using T = double;
  using R = __m256d;
  static constexpr int64_t W = 4;
  static constexpr int MR = 6;
  static constexpr int NRV = 2;
  static __m256i mask(int n) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(kMask64 + 4 - n)); }
  static R set1(T x) { return _mm256_set1_pd(x); }
  static R load(const T* p) { return _mm256_loadu_pd(p); }
  static void store(T* p, R x) { _mm256_storeu_pd(p, x); }
  static R loadn(const T* p, int n) { return _mm256_maskload_pd(p, mask(n)); }
  static void storen(T* p, R x, int n) { _mm256_maskstore_pd(p, mask(n), x); }
  static R add(R a, R b) { return _mm256_add_pd(a, b); }
  static R min(R a, R b) { return _mm256_min_pd(a, b); }
};
}  // namespace

namespace detail {
constinit const Kernels<float> simd_avx2_f32 = simd::table<Avx2F32>();
constinit const Kernels<double> simd_avx2_f64 = simd::table<Avx2F64>();
}  // namespace detail
}  // namespace rooflab::fw

// Micro-kernel dispatch and the portable "scalar" micro-kernel (register block: config.hpp),
// plus the packing routines (memory-bound, baseline ISA).
#include <emmintrin.h>  // SSE2: baseline on x86-64

#include <string>
#include <type_traits>

#include "harness/error.hpp"
#include "kernels/gemm/ukernel_impl.hpp"
#include "kernels/simd/scalar.hpp"

namespace rooflab::gemm {

template <class T>
Ukernel<T> ukernel(Isa isa) {
  return simd::dispatch<T, uk::Body, simd::Scalar, kUkernelShapes.scalar>(isa, detail::ukernel_avx2,
                                                                             detail::ukernel_avx512, "gemm micro-kernel");
}
template Ukernel<float> ukernel<float>(Isa);
template Ukernel<double> ukernel<double>(Isa);

// Packing: memory-bound, so written with SSE2 only (baseline x86-64, no dispatch): full slivers
// move whole vectors (A: 4 x 4 / 2 x 2 register transposes of MR rows x 4 / 2 k; B: each row of
// the panel copied once, in order), edges fall back to element copies with zero padding.
namespace {
// dst[j * ldd + i] = src[i * lds + j] for the 4 x 4 (float) / 2 x 2 (double) block at src.
inline void transpose_block(const float* s, int64_t lds, float* d, int64_t ldd) {
  __m128 r0 = _mm_loadu_ps(s), r1 = _mm_loadu_ps(s + lds), r2 = _mm_loadu_ps(s + 2 * lds),
         r3 = _mm_loadu_ps(s + 3 * lds);
  _MM_TRANSPOSE4_PS(r0, r1, r2, r3);
  _mm_storeu_ps(d, r0), _mm_storeu_ps(d + ldd, r1), _mm_storeu_ps(d + 2 * ldd, r2), _mm_storeu_ps(d + 3 * ldd, r3);
}
inline void transpose_block(const double* s, int64_t lds, double* d, int64_t ldd) {
  const __m128d r0 = _mm_loadu_pd(s), r1 = _mm_loadu_pd(s + lds);
  _mm_storeu_pd(d, _mm_unpacklo_pd(r0, r1)), _mm_storeu_pd(d + ldd, _mm_unpackhi_pd(r0, r1));
}
inline __m128 load_v(const float* p) { return _mm_loadu_ps(p); }
inline __m128d load_v(const double* p) { return _mm_loadu_pd(p); }
inline void store_v(float* p, __m128 x) { _mm_storeu_ps(p, x); }
inline void store_v(double* p, __m128d x) { _mm_storeu_pd(p, x); }
template <class T>
inline constexpr int64_t kVec = 16 / int64_t(sizeof(T));  // elements per SSE2 register
}  // namespace

template <class T>
void pack_a(int64_t m, int64_t kc, const T* A, int64_t lda, int mr, T* dst) {
  constexpr int64_t L = kVec<T>;
  for (int64_t s = 0; s * mr < m; ++s, dst += mr * kc) {
    const int64_t rows = m - s * mr < mr ? m - s * mr : mr;
    const T* a = A + s * mr * lda;
    int64_t k = 0;
    if (rows == mr && mr % L == 0)
      for (; k + L <= kc; k += L)
        for (int64_t i = 0; i < mr; i += L) transpose_block(a + i * lda + k, lda, dst + k * mr + i, mr);
    for (; k < kc; ++k) {
      int64_t i = 0;
      for (; i < rows; ++i) dst[k * mr + i] = a[i * lda + k];
      for (; i < mr; ++i) dst[k * mr + i] = T(0);
    }
  }
}

template <class T>
void pack_b(int64_t kc, int64_t n, const T* B, int64_t ldb, int nr, T* dst) {
  constexpr int64_t L = kVec<T>;
  // Rows in groups of G: each visit of a sliver writes G x NR contiguous elements. One row at a
  // time wrote NR elements to each of the n / NR slivers in turn (a store stream per sliver);
  // f64 1024 x 512 panel from DRAM, Zen 4: 4 rows 15% faster, 8 rows no better than 4.
  constexpr int64_t G = 4;
  const int64_t full = n / nr, tail = n - full * nr;  // whole slivers, columns of the last one
  for (int64_t k0 = 0; k0 < kc; k0 += G) {
    const int64_t g1 = kc - k0 < G ? kc - k0 : G;
    for (int64_t s = 0; s <= full; ++s) {
      const int64_t cols = s < full ? nr : tail;
      if (cols == 0) break;
      const T* b = B + k0 * ldb + s * nr;
      T* d = dst + s * nr * kc + k0 * nr;
      for (int64_t g = 0; g < g1; ++g, b += ldb, d += nr) {
        int64_t j = 0;
        if (cols == nr)
          for (; j + L <= nr; j += L) store_v(d + j, load_v(b + j));
        for (; j < cols; ++j) d[j] = b[j];
        for (; j < nr; ++j) d[j] = T(0);
      }
    }
  }
}

template void pack_a<float>(int64_t, int64_t, const float*, int64_t, int, float*);
template void pack_a<double>(int64_t, int64_t, const double*, int64_t, int, double*);
template void pack_b<float>(int64_t, int64_t, const float*, int64_t, int, float*);
template void pack_b<double>(int64_t, int64_t, const double*, int64_t, int, double*);

}  // namespace rooflab::gemm

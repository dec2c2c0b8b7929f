// Micro-kernel dispatch and the portable "scalar" micro-kernel (register block: config.hpp),
// plus the packing routines (memory-bound, baseline ISA).
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

template <class T>
void pack_a(int64_t m, int64_t kc, const T* A, int64_t lda, int mr, T* dst) {
  for (int64_t s = 0; s * mr < m; ++s, dst += mr * kc) {
    const int64_t rows = m - s * mr < mr ? m - s * mr : mr;
    const T* a = A + s * mr * lda;
    for (int64_t k = 0; k < kc; ++k) {
      int64_t i = 0;
      for (; i < rows; ++i) dst[k * mr + i] = a[i * lda + k];
      for (; i < mr; ++i) dst[k * mr + i] = T(0);
    }
  }
}

template <class T>
void pack_b(int64_t kc, int64_t n, const T* B, int64_t ldb, int nr, T* dst) {
  for (int64_t s = 0; s * nr < n; ++s, dst += nr * kc) {
    const int64_t cols = n - s * nr < nr ? n - s * nr : nr;
    const T* b = B + s * nr;
    for (int64_t k = 0; k < kc; ++k) {
      int64_t j = 0;
      for (; j < cols; ++j) dst[k * nr + j] = b[k * ldb + j];
      for (; j < nr; ++j) dst[k * nr + j] = T(0);
    }
  }
}
template void pack_a<float>(int64_t, int64_t, const float*, int64_t, int, float*);
template void pack_a<double>(int64_t, int64_t, const double*, int64_t, int, double*);
template void pack_b<float>(int64_t, int64_t, const float*, int64_t, int, float*);
template void pack_b<double>(int64_t, int64_t, const double*, int64_t, int, double*);

}  // namespace rooflab::gemm

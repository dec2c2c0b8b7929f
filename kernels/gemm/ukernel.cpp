// Micro-kernel dispatch and the portable "scalar" micro-kernel (no intrinsics: one element per
// "vector", a 4 x 4 register block; GCC may still vectorize it with the baseline SSE2), plus
// the packing routines (memory-bound, baseline ISA).
#include <string>
#include <type_traits>

#include "harness/error.hpp"
#include "kernels/gemm/ukernel_impl.hpp"

namespace rooflab::gemm {
namespace detail {
extern const Ukernel<double> ukernel_avx2_f64, ukernel_avx512_f64;
extern const Ukernel<float> ukernel_avx2_f32, ukernel_avx512_f32;
}  // namespace detail

namespace {
template <class E>
struct ScalarUk {
  using T = E;
  using R = E;
  static constexpr int64_t W = 1;
  static constexpr int MR = 4;
  static constexpr int NRV = 4;
  static R zero() { return E(0); }
  static R set1(T x) { return x; }
  static R load(const T* p) { return *p; }
  static void store(T* p, R x) { *p = x; }
  // W == 1: a tail is never shorter than a vector, so the masked forms are never reached.
  static R loadn(const T* p, int n) { return n > 0 ? *p : T(0); }
  static void storen(T* p, R x, int n) { if (n > 0) *p = x; }
  static R add(R a, R b) { return a + b; }
  static R fma(R a, R b, R c) { return a * b + c; }
};
}  // namespace

template <class T>
Ukernel<T> ukernel(Isa isa) {
  constexpr bool f64 = std::is_same_v<T, double>;
  switch (isa) {
    case Isa::scalar: return uk::table<ScalarUk<T>>();
    case Isa::avx2:
      if constexpr (f64) return detail::ukernel_avx2_f64; else return detail::ukernel_avx2_f32;
    case Isa::avx512:
      if constexpr (f64) return detail::ukernel_avx512_f64; else return detail::ukernel_avx512_f32;
    case Isa::none: break;
  }
  throw Error("gemm: no micro-kernel for isa '" + std::string(to_string(isa)) +
              "' (known: scalar, avx2, avx512)");
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

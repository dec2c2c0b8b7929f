#pragma once
// The SFC-CA driver over a BRGEMM back end (internal to kernels/gemm; instantiated by
// sfc_ca.cpp with the own micro-kernel and by libxsmm.cpp with LIBXSMM's JIT BRGEMM).
//
// A back end Be<T> provides: a_block() / b_block() (elements of one packed bm x bk A block /
// bk x bn B block; consecutive K blocks of a tile row / column lie at exactly this stride, the
// batch stride), pack_a(dst, A, lda, m, kc) / pack_b(dst, B, ldb, kc, n) (pack an m x kc /
// kc x n piece into a zero-filled block), and tile(nb, a, b, Ct, ldc, m, n): the m x n tile
// at Ct += sum over the nb blocks from a / b.
#include <algorithm>
#include <string>

#include "harness/error.hpp"
#include "kernels/gemm/gemm.hpp"

namespace rooflab::gemm::detail {

inline int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t round_up(int64_t x, int64_t m) { return cdiv(x, m) * m; }

template <class T, class Be>
void sfc_drive(const SfcPlan& p, const Be& be, const Dims& d,
               const std::vector<std::pair<int32_t, int32_t>>& order, const T* A, const T* B, T* C, T* work) {
  const int64_t mt = cdiv(d.m, p.bm), nt = cdiv(d.n, p.bn), KB = cdiv(d.k, p.bk);
  if (int64_t(order.size()) != mt * nt)
    throw Error("gemm/sfc_ca: tile order has " + std::to_string(order.size()) + " tiles, expected " +
                std::to_string(mt * nt));
  const int64_t sa = be.a_block(), sb = be.b_block(), L = p.k_layers, ntiles = mt * nt, bk = p.bk;
  T* Ap = work;                 // A block (i, kb) at Ap + (i * KB + kb) * sa
  T* Bp = Ap + mt * KB * sa;    // B block (kb, j) at Bp + (j * KB + kb) * sb
  T* copies = Bp + nt * KB * sb;

#pragma omp parallel
  {
#pragma omp for schedule(static) collapse(2) nowait
    for (int64_t i = 0; i < mt; ++i)
      for (int64_t kb = 0; kb < KB; ++kb) {
        T* dst = Ap + (i * KB + kb) * sa;
        const int64_t m = std::min(p.bm, d.m - i * p.bm), kc = std::min(bk, d.k - kb * bk);
        if (m < p.bm || kc < bk || sa != p.bm * bk) std::fill(dst, dst + sa, T(0));  // padding
        be.pack_a(dst, A + i * p.bm * d.lda + kb * bk, d.lda, m, kc);
      }
#pragma omp for schedule(static) collapse(2) nowait
    for (int64_t j = 0; j < nt; ++j)
      for (int64_t kb = 0; kb < KB; ++kb) {
        T* dst = Bp + (j * KB + kb) * sb;
        const int64_t n = std::min(p.bn, d.n - j * p.bn), kc = std::min(bk, d.k - kb * bk);
        if (n < p.bn || kc < bk || sb != p.bn * bk) std::fill(dst, dst + sb, T(0));
        be.pack_b(dst, B + kb * bk * d.ldb + j * p.bn, d.ldb, kc, n);
      }
    if (L > 1) {
#pragma omp for schedule(static) nowait
      for (int64_t r = 0; r < (L - 1) * d.m; ++r) std::fill_n(copies + r * d.n, d.n, T(0));
    }
#pragma omp barrier

    // Layer-major, curve order within a layer: a static schedule gives each thread one
    // contiguous range of the curve (with L = threads, one whole layer each).
#pragma omp for schedule(static)
    for (int64_t w = 0; w < L * ntiles; ++w) {
      const int64_t l = w / ntiles;
      const auto [tj, ti] = order[size_t(w % ntiles)];
      const int64_t kb0 = KB * l / L, kb1 = KB * (l + 1) / L;
      const int64_t ldc = l == 0 ? d.ldc : d.n;
      T* Ct = (l == 0 ? C : copies + (l - 1) * d.m * d.n) + ti * p.bm * ldc + tj * p.bn;
      const int64_t m = std::min(p.bm, d.m - ti * p.bm), n = std::min(p.bn, d.n - tj * p.bn);
      for (int64_t kb = kb0; kb < kb1; kb += p.kbf)
        be.tile(std::min(p.kbf, kb1 - kb), Ap + (ti * KB + kb) * sa, Bp + (tj * KB + kb) * sb, Ct, ldc, m, n);
    }

    if (L > 1) {  // reduce the copies into C (after the implicit barrier above)
#pragma omp for schedule(static)
      for (int64_t i = 0; i < d.m; ++i)
        for (int64_t l = 1; l < L; ++l) {
          const T* src = copies + (l - 1) * d.m * d.n + i * d.n;
          T* dst = C + i * d.ldc;
          for (int64_t j = 0; j < d.n; ++j) dst[j] += src[j];
        }
    }
  }
}

}  // namespace rooflab::gemm::detail

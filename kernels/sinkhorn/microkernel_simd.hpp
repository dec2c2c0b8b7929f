#pragma once
// The `microkernel` variant (COFFEE-CPU: C2R + blocking + an mr x nr SIMD micro-kernel),
// written once over a small vector-traits type V and instantiated by each ISA translation
// unit (microkernel.cpp: scalar, microkernel_avx2.cpp, microkernel_avx512.cpp).
//
// Include this header ONLY from those files, and only instantiate it with a traits type from
// an anonymous namespace: every instantiation then has internal linkage, so no function
// compiled with AVX-512 flags can be shared with (and picked by the linker for) other TUs.
// For the same reason nothing from the standard library is called here but memset and the
// always-inline sk_factor; col_factors is an out-of-line baseline function.
//
// V provides: T (element), R (register), W (lanes), MR (rows of a micro-tile), NRV (vectors
// per micro-tile row; nr = NRV * W), zero(), set1(T), load(p), store(p, x), loadn(p, n) /
// storen(p, x, n) (first n < W lanes, masked; loadn zeroes the rest), add, mul, hsum.
#include <cstring>

#include "kernels/sinkhorn/sinkhorn.hpp"

namespace rooflab::sinkhorn::mk {
namespace {  // internal linkage in each ISA translation unit (see above)

int64_t imin(int64_t a, int64_t b) { return a < b ? a : b; }

// Row pass: four vector partial sums, a masked tail, one factor, a vector scaling loop.
template <class V>
void row_rescale(const SkArgs<typename V::T>& a) {
  using T = typename V::T;
  using R = typename V::R;
  constexpr int64_t W = V::W;
  const int64_t N = a.N;
  for (int64_t i = 0; i < a.M; ++i) {
    T* row = a.A + i * a.lda;
    R s0 = V::zero(), s1 = V::zero(), s2 = V::zero(), s3 = V::zero();
    int64_t j = 0;
    for (; j + 4 * W <= N; j += 4 * W) {
      s0 = V::add(s0, V::load(row + j));
      s1 = V::add(s1, V::load(row + j + W));
      s2 = V::add(s2, V::load(row + j + 2 * W));
      s3 = V::add(s3, V::load(row + j + 3 * W));
    }
    for (; j + W <= N; j += W) s0 = V::add(s0, V::load(row + j));
    if (j < N) s1 = V::add(s1, V::loadn(row + j, int(N - j)));
    const T sum = V::hsum(V::add(V::add(s0, s1), V::add(s2, s3)));
    const R f = V::set1(sk_factor(a.r[i], sum, a.fi));
    j = 0;
    for (; j + 4 * W <= N; j += 4 * W) {
      const R x0 = V::load(row + j), x1 = V::load(row + j + W);
      const R x2 = V::load(row + j + 2 * W), x3 = V::load(row + j + 3 * W);
      V::store(row + j, V::mul(x0, f));
      V::store(row + j + W, V::mul(x1, f));
      V::store(row + j + 2 * W, V::mul(x2, f));
      V::store(row + j + 3 * W, V::mul(x3, f));
    }
    for (; j + W <= N; j += W) V::store(row + j, V::mul(V::load(row + j), f));
    if (j < N) V::storen(row + j, V::mul(V::loadn(row + j, int(N - j)), f), int(N - j));
  }
}

// sum[0..jn) += rows p[0..ROWS) over one column panel. Each nr-wide strip of sums is loaded
// once per ROWS rows (not once per row as in c2r).
template <class V, int ROWS>
void sums_tile(const typename V::T* const* p, typename V::T* sum, int64_t jn) {
  using R = typename V::R;
  constexpr int64_t W = V::W, NRV = V::NRV;
  int64_t j = 0;
  for (; j + NRV * W <= jn; j += NRV * W) {
    R s[NRV];
    for (int v = 0; v < NRV; ++v) s[v] = V::load(sum + j + v * W);
    for (int k = 0; k < ROWS; ++k)
      for (int v = 0; v < NRV; ++v) s[v] = V::add(s[v], V::load(p[k] + j + v * W));
    for (int v = 0; v < NRV; ++v) V::store(sum + j + v * W, s[v]);
  }
  for (; j + W <= jn; j += W) {
    R s = V::load(sum + j);
    for (int k = 0; k < ROWS; ++k) s = V::add(s, V::load(p[k] + j));
    V::store(sum + j, s);
  }
  if (j < jn) {
    const int n = int(jn - j);
    R s = V::loadn(sum + j, n);
    for (int k = 0; k < ROWS; ++k) s = V::add(s, V::loadn(p[k] + j, n));
    V::storen(sum + j, s, n);
  }
}

// The micro-kernel: rows p[0..ROWS) of one panel times temp[0..jn). Per mr x nr tile the
// nr factors are loaded once and reused down the mr rows; loads are issued before the
// multiplies and the multiplies before the stores (COFFEE Fig. 5's reordering, which breaks
// the load -> mul -> store dependency chains of a naive unrolled loop).
template <class V, int ROWS>
void scale_tile(typename V::T* const* p, const typename V::T* temp, int64_t jn) {
  using R = typename V::R;
  constexpr int64_t W = V::W, NRV = V::NRV;
  int64_t j = 0;
  for (; j + NRV * W <= jn; j += NRV * W) {
    R f[NRV], x[ROWS][NRV];
    for (int v = 0; v < NRV; ++v) f[v] = V::load(temp + j + v * W);
    for (int k = 0; k < ROWS; ++k)
      for (int v = 0; v < NRV; ++v) x[k][v] = V::load(p[k] + j + v * W);
    for (int k = 0; k < ROWS; ++k)
      for (int v = 0; v < NRV; ++v) x[k][v] = V::mul(x[k][v], f[v]);
    for (int k = 0; k < ROWS; ++k)
      for (int v = 0; v < NRV; ++v) V::store(p[k] + j + v * W, x[k][v]);
  }
  for (; j + W <= jn; j += W) {
    const R f = V::load(temp + j);
    for (int k = 0; k < ROWS; ++k) V::store(p[k] + j, V::mul(V::load(p[k] + j), f));
  }
  if (j < jn) {
    const int n = int(jn - j);
    const R f = V::loadn(temp + j, n);
    for (int k = 0; k < ROWS; ++k) V::storen(p[k] + j, V::mul(V::loadn(p[k] + j, n), f), n);
  }
}

// Rows [i0, i1) of the panel starting at column j0, in groups of MR (remainder one by one).
template <class V, bool SUM>
void panel_rows(const SkArgs<typename V::T>& a, int64_t i0, int64_t i1, int64_t j0, int64_t jn) {
  using T = typename V::T;
  constexpr int MR = V::MR;
  T* base = a.A + j0;
  int64_t i = i0;
  for (; i + MR <= i1; i += MR) {
    T* p[MR];
    for (int k = 0; k < MR; ++k) p[k] = base + (i + k) * a.lda;
    if constexpr (SUM) sums_tile<V, MR>(p, a.work + j0, jn);
    else scale_tile<V, MR>(p, a.work + j0, jn);
  }
  for (; i < i1; ++i) {
    T* p[1] = {base + i * a.lda};
    if constexpr (SUM) sums_tile<V, 1>(p, a.work + j0, jn);
    else scale_tile<V, 1>(p, a.work + j0, jn);
  }
}

int64_t block(int64_t b, int64_t n) { return b < 1 ? 1 : (b > n && n > 0 ? n : b); }

template <class V>
void col_sums(const SkArgs<typename V::T>& a) {
  const int64_t nc = block(a.nc, a.N);
  for (int64_t j0 = 0; j0 < a.N; j0 += nc) panel_rows<V, true>(a, 0, a.M, j0, imin(nc, a.N - j0));
}

// Algorithm 3's loop nest: panel (nc) -> mc row block -> mr rows -> nr columns.
template <class V>
void scale_panel(const SkArgs<typename V::T>& a, int64_t j0, int64_t jn, int64_t mc) {
  for (int64_t i0 = 0; i0 < a.M; i0 += mc) panel_rows<V, false>(a, i0, imin(i0 + mc, a.M), j0, jn);
}

template <class V>
void col_scale(const SkArgs<typename V::T>& a) {
  const int64_t nc = block(a.nc, a.N), mc = block(a.mc, a.M);
  for (int64_t j0 = 0; j0 < a.N; j0 += nc) scale_panel<V>(a, j0, imin(nc, a.N - j0), mc);
}

template <class V>
void col_rescale(const SkArgs<typename V::T>& a) {
  using T = typename V::T;
  const int64_t nc = block(a.nc, a.N), mc = block(a.mc, a.M);
  std::memset(a.work, 0, size_t(a.N) * sizeof(T));
  col_sums<V>(a);
  for (int64_t j0 = 0; j0 < a.N; j0 += nc) {
    const int64_t jn = imin(nc, a.N - j0);
    col_factors(a.work + j0, a.c + j0, jn, a.fi);
    scale_panel<V>(a, j0, jn, mc);
  }
}

// The kernel body for simd::tables / simd::table_of.
struct Body {
  template <class V>
  static constexpr SkKernels<typename V::T> table() {
    return {row_rescale<V>, col_rescale<V>, col_sums<V>, col_scale<V>};
  }
};

}  // namespace
}  // namespace rooflab::sinkhorn::mk

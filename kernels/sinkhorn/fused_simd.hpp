#pragma once
// The fused one-pass row-slice kernels (mapuot, fused_uv; see FusedArgs in sinkhorn.hpp),
// written once over the vector-traits type V of microkernel_simd.hpp and instantiated by
// each ISA translation unit. Same rules as microkernel_simd.hpp: include only from those
// files, instantiate only with traits from an anonymous namespace (internal linkage, so no
// AVX-512 code can be picked by the linker for other TUs), call nothing out of line.
//
// Both kernels take rows in groups of G = 4: sweep 1 streams the group's rows from memory
// (the only DRAM read), sweep 2 re-reads them from L2 (4 rows of 4096 doubles = 128 KiB)
// and updates next[] once per group instead of once per row, which quarters the traffic on
// next[] (N elements, itself L1/L2-resident).
#include "kernels/sinkhorn/sinkhorn.hpp"

namespace rooflab::sinkhorn::fused {
namespace {  // internal linkage in each ISA translation unit

// sum_j p[j] * w[j] (w == nullptr: sum_j p[j]) with four vector accumulators.
template <class V, bool WEIGHTED>
typename V::T dot(const typename V::T* p, const typename V::T* w, int64_t N) {
  using R = typename V::R;
  constexpr int64_t W = V::W;
  auto term = [&](int64_t j) { return WEIGHTED ? V::mul(V::load(p + j), V::load(w + j)) : V::load(p + j); };
  R s0 = V::zero(), s1 = V::zero(), s2 = V::zero(), s3 = V::zero();
  int64_t j = 0;
  for (; j + 4 * W <= N; j += 4 * W) {
    s0 = V::add(s0, term(j));
    s1 = V::add(s1, term(j + W));
    s2 = V::add(s2, term(j + 2 * W));
    s3 = V::add(s3, term(j + 3 * W));
  }
  for (; j + W <= N; j += W) s0 = V::add(s0, term(j));
  if (j < N) {
    const int n = int(N - j);
    s1 = V::add(s1, WEIGHTED ? V::mul(V::loadn(p + j, n), V::loadn(w + j, n)) : V::loadn(p + j, n));
  }
  return V::hsum(V::add(V::add(s0, s1), V::add(s2, s3)));
}

// mapuot, rows p[0..G): A = (A * colf) * rf[k]; next += A.
template <class V, int G>
void mapuot_sweep2(typename V::T* const* p, const typename V::T* colf, const typename V::T* rf,
                   typename V::T* next, int64_t N) {
  using R = typename V::R;
  constexpr int64_t W = V::W;
  R f[G];
  for (int k = 0; k < G; ++k) f[k] = V::set1(rf[k]);
  int64_t j = 0;
  for (; j + W <= N; j += W) {
    const R cf = V::load(colf + j);
    R acc = V::load(next + j);
    for (int k = 0; k < G; ++k) {
      const R x = V::mul(V::mul(V::load(p[k] + j), cf), f[k]);
      V::store(p[k] + j, x);
      acc = V::add(acc, x);
    }
    V::store(next + j, acc);
  }
  if (j < N) {
    const int n = int(N - j);
    const R cf = V::loadn(colf + j, n);
    R acc = V::loadn(next + j, n);
    for (int k = 0; k < G; ++k) {
      const R x = V::mul(V::mul(V::loadn(p[k] + j, n), cf), f[k]);
      V::storen(p[k] + j, x, n);
      acc = V::add(acc, x);
    }
    V::storen(next + j, acc, n);
  }
}

template <class V, int G>
void mapuot_group(const FusedArgs<typename V::T>& a, int64_t i) {
  using T = typename V::T;
  T* p[G];
  T rf[G];
  for (int k = 0; k < G; ++k) {
    p[k] = a.A + (i + k) * a.lda;
    rf[k] = sk_factor(a.r[i + k], dot<V, true>(p[k], a.colf, a.N), a.fi);
  }
  mapuot_sweep2<V, G>(p, a.colf, rf, a.next, a.N);
}

template <class V>
void mapuot(const FusedArgs<typename V::T>& a) {
  int64_t i = 0;
  for (; i + 4 <= a.M; i += 4) mapuot_group<V, 4>(a, i);
  for (; i < a.M; ++i) mapuot_group<V, 1>(a, i);
}

// fused_uv, rows p[0..G) of K: next += sum_k K[k] * u[k]. K is only read.
template <class V, int G>
void uv_group(const FusedArgs<typename V::T>& a, int64_t i) {
  using T = typename V::T;
  using R = typename V::R;
  constexpr int64_t W = V::W;
  const T* p[G];
  R uk[G];
  for (int k = 0; k < G; ++k) {
    p[k] = a.A + (i + k) * a.lda;
    a.u[i + k] = pot_factor(a.r[i + k], dot<V, true>(p[k], a.colf, a.N), a.fi, a.u[i + k]);
    uk[k] = V::set1(a.u[i + k]);
  }
  int64_t j = 0;
  for (; j + W <= a.N; j += W) {
    R acc = V::load(a.next + j);
    for (int k = 0; k < G; ++k) acc = V::add(acc, V::mul(V::load(p[k] + j), uk[k]));
    V::store(a.next + j, acc);
  }
  if (j < a.N) {
    const int n = int(a.N - j);
    R acc = V::loadn(a.next + j, n);
    for (int k = 0; k < G; ++k) acc = V::add(acc, V::mul(V::loadn(p[k] + j, n), uk[k]));
    V::storen(a.next + j, acc, n);
  }
}

template <class V>
void uv(const FusedArgs<typename V::T>& a) {
  int64_t i = 0;
  for (; i + 4 <= a.M; i += 4) uv_group<V, 4>(a, i);
  for (; i < a.M; ++i) uv_group<V, 1>(a, i);
}

template <class V>
constexpr FusedKernels<typename V::T> table() {
  return {mapuot<V>, uv<V>};
}

}  // namespace
}  // namespace rooflab::sinkhorn::fused

#pragma once
// The kernels written once over the shared vector traits of kernels/simd (scalar.hpp,
// avx2.hpp, avx512.hpp): V<double> for the bandwidth and f64 compute kernels, V<float> for
// the f32 ones. Each kernels_<isa>.cpp instantiates make_table<Traits>() with traits of
// internal linkage (avx2.hpp / avx512.hpp are in an unnamed namespace; kernels_scalar.cpp
// wraps simd::Scalar in one), so every instantiation is local to its translation unit and
// no AVX-512 code can leak into the baseline build through a shared inline function (an ODR
// trap). For the same reason this header uses no standard-library functions.
//
// Traits used: T, R, W, zero, set1, load, store, stream (non-temporal, aligned to one
// vector), fence, add, mul, fma (a * b + c), min.
#include <cstddef>
#include <cstdint>

#include "microbench/kernels.hpp"

namespace rooflab::microbench::detail {

inline constexpr int kAccumulators = kComputeAccumulators;

// Sum of all lanes in double (f32 lanes widened first), lane order: the compute kernels'
// results are checked exactly, and this runs once after the timed loop.
template <class X>
double lanes(typename X::R v) {
  alignas(64) typename X::T t[X::W];
  X::store(t, v);
  double s = 0;
  for (int64_t k = 0; k < X::W; ++k) s += double(t[k]);
  return s;
}

template <template <class> class V>
double read_sum(const double* a, size_t n) {
  using D = V<double>;
  constexpr size_t W = size_t(D::W), U = 8;  // 8 accumulators keep the add chain off the critical path
  typename D::R acc[U];
  for (size_t k = 0; k < U; ++k) acc[k] = D::zero();
  size_t i = 0;
  for (; i + U * W <= n; i += U * W) {
#pragma GCC unroll 8
    for (size_t k = 0; k < U; ++k) acc[k] = D::add(acc[k], D::load(a + i + k * W));
  }
  double s = 0;
  for (size_t k = 0; k < U; ++k) s += lanes<D>(acc[k]);
  for (; i < n; ++i) s += a[i];
  return s;
}

template <template <class> class V>
void copy(double* b, const double* a, size_t n) {
  using D = V<double>;
  constexpr size_t W = size_t(D::W), U = 4;
  size_t i = 0;
  for (; i + U * W <= n; i += U * W) {
#pragma GCC unroll 4
    for (size_t k = 0; k < U; ++k) D::store(b + i + k * W, D::load(a + i + k * W));
  }
  for (; i < n; ++i) b[i] = a[i];
}

template <template <class> class V>
void update(double* a, double s, size_t n) {
  using D = V<double>;
  constexpr size_t W = size_t(D::W), U = 4;
  const auto vs = D::set1(s);
  size_t i = 0;
  for (; i + U * W <= n; i += U * W) {
#pragma GCC unroll 4
    for (size_t k = 0; k < U; ++k) D::store(a + i + k * W, D::mul(vs, D::load(a + i + k * W)));
  }
  for (; i < n; ++i) a[i] = s * a[i];
}

template <template <class> class V>
void triad(double* a, const double* b, const double* c, double s, size_t n) {
  using D = V<double>;
  constexpr size_t W = size_t(D::W), U = 4;
  const auto vs = D::set1(s);
  size_t i = 0;
  for (; i + U * W <= n; i += U * W) {
#pragma GCC unroll 4
    for (size_t k = 0; k < U; ++k)
      D::store(a + i + k * W, D::fma(vs, D::load(c + i + k * W), D::load(b + i + k * W)));
  }
  for (; i < n; ++i) a[i] = b[i] + s * c[i];
}

// S streams in lockstep: the same 8 loads per step as read_sum, P = 8 / S per stream.
template <template <class> class V, int S>
double read_streams(const double* const* a, size_t n) {
  using D = V<double>;
  constexpr size_t W = size_t(D::W), U = 8, P = U / size_t(S);
  static_assert(U % size_t(S) == 0, "S must divide 8");
  const double* p[S];
  for (int k = 0; k < S; ++k) p[k] = a[k];
  typename D::R acc[U];
  for (size_t k = 0; k < U; ++k) acc[k] = D::zero();
  size_t i = 0;
  for (; i + P * W <= n; i += P * W) {
#pragma GCC unroll 8
    for (size_t k = 0; k < U; ++k) acc[k] = D::add(acc[k], D::load(p[k / P] + i + (k % P) * W));
  }
  double s = 0;
  for (size_t k = 0; k < U; ++k) s += lanes<D>(acc[k]);
  for (int k = 0; k < S; ++k)
    for (size_t j = i; j < n; ++j) s += p[k][j];
  return s;
}

// S streams in lockstep, max(4, S) vectors per step (update's 4 for S <= 4).
template <template <class> class V, int S>
void update_streams(double* const* a, double s, size_t n) {
  using D = V<double>;
  constexpr size_t W = size_t(D::W), U = S > 4 ? size_t(S) : 4, P = U / size_t(S);
  static_assert(U % size_t(S) == 0, "S must divide max(4, S)");
  double* p[S];
  for (int k = 0; k < S; ++k) p[k] = a[k];
  const auto vs = D::set1(s);
  size_t i = 0;
  for (; i + P * W <= n; i += P * W) {
#pragma GCC unroll 8
    for (size_t k = 0; k < U; ++k) {
      double* q = p[k / P] + i + (k % P) * W;
      D::store(q, D::mul(vs, D::load(q)));
    }
  }
  for (int k = 0; k < S; ++k)
    for (size_t j = i; j < n; ++j) p[k][j] = s * p[k][j];
}

// Ordinary stores up to the first destination element aligned to a whole vector (what the
// streaming store needs).
template <class D>
size_t nt_head(const double* dst, size_t n) {
  constexpr uintptr_t align = uintptr_t(D::W) * sizeof(double);
  size_t i = 0;
  while (i < n && reinterpret_cast<uintptr_t>(dst + i) % align != 0) ++i;
  return i;
}

template <template <class> class V>
void copy_nt(double* b, const double* a, size_t n) {
  using D = V<double>;
  constexpr size_t W = size_t(D::W), U = 4;
  size_t i = nt_head<D>(b, n);
  for (size_t j = 0; j < i; ++j) b[j] = a[j];
  for (; i + U * W <= n; i += U * W) {
#pragma GCC unroll 4
    for (size_t k = 0; k < U; ++k) D::stream(b + i + k * W, D::load(a + i + k * W));
  }
  for (; i < n; ++i) b[i] = a[i];
  D::fence();  // streaming stores are weakly ordered; make them visible before returning
}

template <template <class> class V>
void triad_nt(double* a, const double* b, const double* c, double s, size_t n) {
  using D = V<double>;
  constexpr size_t W = size_t(D::W), U = 4;
  const auto vs = D::set1(s);
  size_t i = nt_head<D>(a, n);
  for (size_t j = 0; j < i; ++j) a[j] = b[j] + s * c[j];
  for (; i + U * W <= n; i += U * W) {
#pragma GCC unroll 4
    for (size_t k = 0; k < U; ++k)
      D::stream(a + i + k * W, D::fma(vs, D::load(c + i + k * W), D::load(b + i + k * W)));
  }
  for (; i < n; ++i) a[i] = b[i] + s * c[i];
  D::fence();
}

// kAccumulators independent dependency chains, each advanced by `step` per iteration.
template <class X, class Step>
double chains(uint64_t iters, typename X::R init, Step step) {
  typename X::R acc[kAccumulators];
  for (int k = 0; k < kAccumulators; ++k) acc[k] = init;
  for (uint64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int k = 0; k < kAccumulators; ++k) acc[k] = step(acc[k]);
  }
  double s = 0;
  for (int k = 0; k < kAccumulators; ++k) s += lanes<X>(acc[k]);
  return s;
}

// The f32 kernels convert x and y to float: S is the element type.
template <template <class> class V, class S>
double fma_k(uint64_t iters, double x, double y) {
  using X = V<S>;
  const auto vx = X::set1(S(x)), vy = X::set1(S(y));
  return chains<X>(iters, X::set1(S(0)), [=](auto a) { return X::fma(a, vx, vy); });
}
template <template <class> class V, class S>
double add_k(uint64_t iters, double, double y) {
  using X = V<S>;
  const auto vy = X::set1(S(y));
  return chains<X>(iters, X::set1(S(0)), [=](auto a) { return X::add(a, vy); });
}
template <template <class> class V, class S>
double mul_k(uint64_t iters, double x, double) {
  using X = V<S>;
  const auto vx = X::set1(S(x));
  return chains<X>(iters, X::set1(S(1)), [=](auto a) { return X::mul(a, vx); });
}
template <template <class> class V, class S>
double addmin_k(uint64_t iters, double x, double y) {
  using X = V<S>;
  const auto vx = X::set1(S(x)), vy = X::set1(S(y));
  return chains<X>(iters, X::set1(S(0)), [=](auto a) { return X::min(X::add(a, vy), vx); });
}

// constexpr so the table is constant-initialized: calling e.g. avx512_kernels() on a CPU
// without AVX-512 runs no code from that translation unit.
template <template <class> class V>
constexpr KernelTable make_table(Isa isa) {
  return KernelTable{isa,
                     &read_sum<V>, &copy<V>, &update<V>, &triad<V>, &copy_nt<V>, &triad_nt<V>,
                     {&read_streams<V, 1>, &read_streams<V, 2>, &read_streams<V, 4>,
                      &read_streams<V, 8>},
                     {&update_streams<V, 1>, &update_streams<V, 2>, &update_streams<V, 4>,
                      &update_streams<V, 8>},
                     &fma_k<V, double>, &fma_k<V, float>, &add_k<V, double>, &add_k<V, float>,
                     &mul_k<V, double>, &mul_k<V, float>, &addmin_k<V, double>,
                     &addmin_k<V, float>,
                     kAccumulators * int(V<double>::W), kAccumulators * int(V<float>::W)};
}

}  // namespace rooflab::microbench::detail

#pragma once
// The kernels written once over an ISA "traits" type; each kernels_<isa>.cpp defines its
// traits in an anonymous namespace and instantiates make_table<Traits>(). Because the traits
// type has internal linkage, every instantiation is local to its translation unit, so no
// AVX-512 code can leak into the baseline build through a shared inline function (an ODR
// trap). For the same reason this header uses no standard-library functions.
//
// Traits provide: D / F (f64 / f32 vector), WD / WF (lanes), kStreamAlign, loadd, stored,
// streamd, splat(double|float), add, mul, fma, min (overloaded for D and F), hsum(D|F), fence.
#include <cstddef>
#include <cstdint>

#include "microbench/kernels.hpp"

namespace rooflab::microbench::detail {

inline constexpr int kAccumulators = kComputeAccumulators;

template <class T>
double read_sum(const double* a, size_t n) {
  constexpr size_t W = T::WD, U = 8;  // 8 accumulators keep the add chain off the critical path
  typename T::D acc[U];
  for (size_t k = 0; k < U; ++k) acc[k] = T::splat(0.0);
  size_t i = 0;
  for (; i + U * W <= n; i += U * W) {
#pragma GCC unroll 8
    for (size_t k = 0; k < U; ++k) acc[k] = T::add(acc[k], T::loadd(a + i + k * W));
  }
  double s = 0;
  for (size_t k = 0; k < U; ++k) s += T::hsum(acc[k]);
  for (; i < n; ++i) s += a[i];
  return s;
}

template <class T>
void copy(double* b, const double* a, size_t n) {
  constexpr size_t W = T::WD, U = 4;
  size_t i = 0;
  for (; i + U * W <= n; i += U * W) {
#pragma GCC unroll 4
    for (size_t k = 0; k < U; ++k) T::stored(b + i + k * W, T::loadd(a + i + k * W));
  }
  for (; i < n; ++i) b[i] = a[i];
}

template <class T>
void update(double* a, double s, size_t n) {
  constexpr size_t W = T::WD, U = 4;
  const auto vs = T::splat(s);
  size_t i = 0;
  for (; i + U * W <= n; i += U * W) {
#pragma GCC unroll 4
    for (size_t k = 0; k < U; ++k) T::stored(a + i + k * W, T::mul(vs, T::loadd(a + i + k * W)));
  }
  for (; i < n; ++i) a[i] = s * a[i];
}

template <class T>
void triad(double* a, const double* b, const double* c, double s, size_t n) {
  constexpr size_t W = T::WD, U = 4;
  const auto vs = T::splat(s);
  size_t i = 0;
  for (; i + U * W <= n; i += U * W) {
#pragma GCC unroll 4
    for (size_t k = 0; k < U; ++k)
      T::stored(a + i + k * W, T::fma(vs, T::loadd(c + i + k * W), T::loadd(b + i + k * W)));
  }
  for (; i < n; ++i) a[i] = b[i] + s * c[i];
}

// Ordinary stores up to the first stream-aligned destination element.
template <class T>
size_t nt_head(const double* dst, size_t n) {
  size_t i = 0;
  while (i < n && reinterpret_cast<uintptr_t>(dst + i) % T::kStreamAlign != 0) ++i;
  return i;
}

template <class T>
void copy_nt(double* b, const double* a, size_t n) {
  constexpr size_t W = T::WD, U = 4;
  size_t i = nt_head<T>(b, n);
  for (size_t j = 0; j < i; ++j) b[j] = a[j];
  for (; i + U * W <= n; i += U * W) {
#pragma GCC unroll 4
    for (size_t k = 0; k < U; ++k) T::streamd(b + i + k * W, T::loadd(a + i + k * W));
  }
  for (; i < n; ++i) b[i] = a[i];
  T::fence();  // streaming stores are weakly ordered; make them visible before returning
}

template <class T>
void triad_nt(double* a, const double* b, const double* c, double s, size_t n) {
  constexpr size_t W = T::WD, U = 4;
  const auto vs = T::splat(s);
  size_t i = nt_head<T>(a, n);
  for (size_t j = 0; j < i; ++j) a[j] = b[j] + s * c[j];
  for (; i + U * W <= n; i += U * W) {
#pragma GCC unroll 4
    for (size_t k = 0; k < U; ++k)
      T::streamd(a + i + k * W, T::fma(vs, T::loadd(c + i + k * W), T::loadd(b + i + k * W)));
  }
  for (; i < n; ++i) a[i] = b[i] + s * c[i];
  T::fence();
}

// kAccumulators independent dependency chains, each advanced by `step` per iteration.
template <class T, class V, class Step>
double chains(uint64_t iters, V init, Step step) {
  V acc[kAccumulators];
  for (int k = 0; k < kAccumulators; ++k) acc[k] = init;
  for (uint64_t i = 0; i < iters; ++i) {
#pragma GCC unroll 16
    for (int k = 0; k < kAccumulators; ++k) acc[k] = step(acc[k]);
  }
  double s = 0;
  for (int k = 0; k < kAccumulators; ++k) s += T::hsum(acc[k]);
  return s;
}

template <class T, class S>
double fma_k(uint64_t iters, double x, double y) {
  const auto vx = T::splat(S(x)), vy = T::splat(S(y));
  return chains<T>(iters, T::splat(S(0)), [=](auto a) { return T::fma(a, vx, vy); });
}
template <class T, class S>
double add_k(uint64_t iters, double, double y) {
  const auto vy = T::splat(S(y));
  return chains<T>(iters, T::splat(S(0)), [=](auto a) { return T::add(a, vy); });
}
template <class T, class S>
double mul_k(uint64_t iters, double x, double) {
  const auto vx = T::splat(S(x));
  return chains<T>(iters, T::splat(S(1)), [=](auto a) { return T::mul(a, vx); });
}
template <class T, class S>
double addmin_k(uint64_t iters, double x, double y) {
  const auto vx = T::splat(S(x)), vy = T::splat(S(y));
  return chains<T>(iters, T::splat(S(0)), [=](auto a) { return T::min(T::add(a, vy), vx); });
}

// constexpr so the table is constant-initialized: calling e.g. avx512_kernels() on a CPU
// without AVX-512 runs no code from that translation unit.
template <class T>
constexpr KernelTable make_table(Isa isa) {
  return KernelTable{isa,
                     &read_sum<T>, &copy<T>, &update<T>, &triad<T>, &copy_nt<T>, &triad_nt<T>,
                     &fma_k<T, double>, &fma_k<T, float>, &add_k<T, double>, &add_k<T, float>,
                     &mul_k<T, double>, &mul_k<T, float>, &addmin_k<T, double>,
                     &addmin_k<T, float>,
                     kAccumulators * int(T::WD), kAccumulators * int(T::WF)};
}

}  // namespace rooflab::microbench::detail

#pragma once
// The kernels written once over vector traits (kernels/simd avx2.hpp, avx512.hpp; SSE2 ones in
// kernels_scalar.cpp): V<double> for the bandwidth and f64 compute kernels, V<float> for
// the f32 ones. Each kernels_<isa>.cpp instantiates make_table<Traits>() with traits of
// internal linkage (avx2.hpp / avx512.hpp are in an unnamed namespace, so are
// kernels_scalar.cpp's), so every instantiation is local to its translation unit and
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

// elem(j) for j in [from, to): the elements outside whole vectors (an unaligned head, a
// partial last vector). Out of line, so that the compiler does not vectorize and version
// these few scalar iterations inside the hot loop; the sweep's sizes never get here.
template <class Elem>
[[gnu::noinline]] void elements(size_t from, size_t to, const Elem& elem) {
  for (size_t j = from; j < to; ++j) elem(j);
}

// Keeps the compiler from merging or dropping repeated passes of a kernel that rewrites the
// same data (a second copy pass is idempotent); emits no instruction. Not for the read
// kernels: it would force their accumulators through memory after every pass.
inline void pass_barrier() { asm volatile("" ::: "memory"); }

// `reps` passes over n elements in the shape every bandwidth kernel shares: elem(j) on an
// unaligned head [0, h), then from h vec(i, k) on whole vectors, U per step (k = 0..U-1, the
// slot: a read's independent accumulator), then the last whole vectors (fewer than U) into
// slots 0.. as well, then elem(j) on the elements of a partial last vector. The sweep's
// working sets are whole cache lines, i.e. whole vectors, so no size pays for an
// element-at-a-time tail or a dependent chain. The leftover vectors go through a switch on
// their count: straight-line code with constant slots, so a read's accumulators stay in
// registers. A timed sample is one call: the call and a read's final reduction are paid once
// per sample, not once per pass (which made small working sets look slower). elem captures
// the kernel's pointers by value: a captured reference would escape to elements() and make
// the hot loop reload them after every store.
template <size_t W, size_t U, bool Writes, bool Ragged, class Vec, class Elem>
inline void passes_impl(size_t n, size_t h, uint64_t reps, const Vec& vec, const Elem& elem) {
  static_assert(U >= 1 && U <= 8, "at most 8 slots");
  const size_t body = h + (n - h) / (U * W) * (U * W), rest = (n - body) / W;
  const size_t end = body + rest * W;
  for (uint64_t r = 0; r < reps; ++r) {
    if (Ragged && h) elements(0, h, elem);
    for (size_t i = h; i < body; i += U * W) {
#pragma GCC unroll 8
      for (size_t k = 0; k < U; ++k) vec(i + k * W, k);
    }
    switch (rest) {  // rest < U; falls through from slot rest-1 down to slot 0
      case 7: if constexpr (U > 7) vec(body + 6 * W, 6); [[fallthrough]];
      case 6: if constexpr (U > 6) vec(body + 5 * W, 5); [[fallthrough]];
      case 5: if constexpr (U > 5) vec(body + 4 * W, 4); [[fallthrough]];
      case 4: if constexpr (U > 4) vec(body + 3 * W, 3); [[fallthrough]];
      case 3: if constexpr (U > 3) vec(body + 2 * W, 2); [[fallthrough]];
      case 2: if constexpr (U > 2) vec(body + W, 1); [[fallthrough]];
      case 1: if constexpr (U > 1) vec(body, 0); [[fallthrough]];
      default: break;
    }
    if (Ragged && end < n) elements(end, n, elem);
    if constexpr (Writes) pass_barrier();
  }
}

// Whole vectors only (every sweep size): a pass then tests nothing for scalar parts.
template <size_t W, size_t U, bool Writes, class Vec, class Elem>
inline void passes(size_t n, size_t h, uint64_t reps, const Vec& vec, const Elem& elem) {
  if (h == 0 && n % W == 0)
    passes_impl<W, U, Writes, false>(n, h, reps, vec, elem);
  else
    passes_impl<W, U, Writes, true>(n, h, reps, vec, elem);
}

// The 8 vector accumulators of the read kernels. Named members rather than an array: an array
// the kernels' lambdas capture stays in memory across the passes loop (GCC keeps it on the
// stack with "was it written" flags), named ones become registers once slot(k) is inlined
// with a constant k.
template <class D>
struct Sums {
  typename D::R s0 = D::zero(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
  typename D::R& slot(size_t k) {
    switch (k) {
      case 0: return s0;
      case 1: return s1;
      case 2: return s2;
      case 3: return s3;
      case 4: return s4;
      case 5: return s5;
      case 6: return s6;
      default: return s7;
    }
  }
  void add(size_t k, const double* p) { slot(k) = D::add(slot(k), D::load(p)); }
  // Their sum as a tree (depth 3), then its lanes.
  double total() const {
    return lanes<D>(D::add(D::add(D::add(s0, s1), D::add(s2, s3)), D::add(D::add(s4, s5), D::add(s6, s7))));
  }
};

// The Sums live in the caller and are updated through a reference the (inlined) vec lambda
// holds; elem lambdas hold pointers by value and a reference to the scalar tail sum only.
template <template <class> class V>
double read_sum(const double* a, size_t n, uint64_t reps) {
  using D = V<double>;
  constexpr size_t W = size_t(D::W), U = 8;  // 8 accumulators keep the add chain off the critical path
  Sums<D> acc;
  double tail = 0;
  passes<W, U, false>(
      n, 0, reps, [&](size_t i, size_t k) { acc.add(k, a + i); },
      [a, &tail](size_t j) { tail += a[j]; });
  return acc.total() + tail;
}

template <template <class> class V>
void copy(double* b, const double* a, size_t n, uint64_t reps) {
  using D = V<double>;
  constexpr size_t W = size_t(D::W), U = 4;
  passes<W, U, true>(
      n, 0, reps, [=](size_t i, size_t) { D::store(b + i, D::load(a + i)); },
      [=](size_t j) { b[j] = a[j]; });
}

template <template <class> class V>
void update(double* a, double s, size_t n, uint64_t reps) {
  using D = V<double>;
  constexpr size_t W = size_t(D::W), U = 4;
  const auto vs = D::set1(s);
  passes<W, U, true>(
      n, 0, reps, [=](size_t i, size_t) { D::store(a + i, D::mul(vs, D::load(a + i))); },
      [=](size_t j) { a[j] = s * a[j]; });
}

template <template <class> class V>
void triad(double* a, const double* b, const double* c, double s, size_t n, uint64_t reps) {
  using D = V<double>;
  constexpr size_t W = size_t(D::W), U = 4;
  const auto vs = D::set1(s);
  passes<W, U, true>(
      n, 0, reps,
      [=](size_t i, size_t) { D::store(a + i, D::fma(vs, D::load(c + i), D::load(b + i))); },
      [=](size_t j) { a[j] = b[j] + s * c[j]; });
}

// S streams in lockstep: the same 8 loads per step as read_sum, P = 8 / S per stream
// (slot m of stream q feeds accumulator q * P + m).
template <template <class> class V, int S>
double read_streams(const double* const* a, size_t n, uint64_t reps) {
  using D = V<double>;
  constexpr size_t W = size_t(D::W), U = 8, P = U / size_t(S);
  static_assert(U % size_t(S) == 0, "S must divide 8");
  const double* p[S];
  for (int k = 0; k < S; ++k) p[k] = a[k];
  Sums<D> acc;
  double tail = 0;
  passes<W, P, false>(
      n, 0, reps,
      [&](size_t i, size_t m) {
#pragma GCC unroll 8
        for (size_t q = 0; q < size_t(S); ++q) acc.add(q * P + m, p[q] + i);
      },
      [p, &tail](size_t j) {
        for (int q = 0; q < S; ++q) tail += p[q][j];
      });
  return acc.total() + tail;
}

// read_sum with every vector loaded L times (the ECM overlap test, microbench/overlap.hpp):
// L - 1 extra loads of the same address whose values only reach an empty asm, so they cost a
// load slot each and no arithmetic (in-core work of the load kind, T_nOL, without adds that
// would count as overlapping work T_OL). The pointer passes through an asm per reload so the
// compiler cannot merge the repeated loads.
template <template <class> class V, int L>
double read_reload(const double* a, size_t n, uint64_t reps) {
  using D = V<double>;
  constexpr size_t W = size_t(D::W), U = 8;
  Sums<D> acc;
  double tail = 0;
  passes<W, U, false>(
      n, 0, reps,
      [&](size_t i, size_t k) {
        acc.add(k, a + i);
#pragma GCC unroll 8
        for (int r = 1; r < L; ++r) {
          const double* q = a + i;
          asm volatile("" : "+r"(q));
          const typename D::R v = D::load(q);
          asm volatile("" : : "x"(v));
        }
      },
      [a, &tail](size_t j) { tail += a[j]; });
  return acc.total() + tail;
}

// S streams in lockstep, max(4, S) vectors per step (update's 4 for S <= 4).
template <template <class> class V, int S>
void update_streams(double* const* a, double s, size_t n, uint64_t reps) {
  using D = V<double>;
  constexpr size_t W = size_t(D::W), U = S > 4 ? size_t(S) : 4, P = U / size_t(S);
  static_assert(U % size_t(S) == 0, "S must divide max(4, S)");
  double* p[S];
  for (int k = 0; k < S; ++k) p[k] = a[k];
  const auto vs = D::set1(s);
  passes<W, P, true>(
      n, 0, reps,
      [&](size_t i, size_t) {
#pragma GCC unroll 8
        for (size_t q = 0; q < size_t(S); ++q) D::store(p[q] + i, D::mul(vs, D::load(p[q] + i)));
      },
      [=](size_t j) {
        for (int q = 0; q < S; ++q) p[q][j] = s * p[q][j];
      });
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
void copy_nt(double* b, const double* a, size_t n, uint64_t reps) {
  using D = V<double>;
  constexpr size_t W = size_t(D::W), U = 4;
  passes<W, U, true>(
      n, nt_head<D>(b, n), reps, [=](size_t i, size_t) { D::stream(b + i, D::load(a + i)); },
      [=](size_t j) { b[j] = a[j]; });
  D::fence();  // streaming stores are weakly ordered; make them visible before returning
}

template <template <class> class V>
void triad_nt(double* a, const double* b, const double* c, double s, size_t n, uint64_t reps) {
  using D = V<double>;
  constexpr size_t W = size_t(D::W), U = 4;
  const auto vs = D::set1(s);
  passes<W, U, true>(
      n, nt_head<D>(a, n), reps,
      [=](size_t i, size_t) { D::stream(a + i, D::fma(vs, D::load(c + i), D::load(b + i))); },
      [=](size_t j) { a[j] = b[j] + s * c[j]; });
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
                     {&read_reload<V, 1>, &read_reload<V, 2>, &read_reload<V, 3>, &read_reload<V, 4>,
                      &read_reload<V, 6>, &read_reload<V, 8>},
                     &fma_k<V, double>, &fma_k<V, float>, &add_k<V, double>, &add_k<V, float>,
                     &mul_k<V, double>, &mul_k<V, float>, &addmin_k<V, double>,
                     &addmin_k<V, float>,
                     kAccumulators * int(V<double>::W), kAccumulators * int(V<float>::W)};
}

}  // namespace rooflab::microbench::detail

#pragma once
// Internal to kernels/rtamm: one GEMM problem with exact small-integer data (as the gemm
// family's instance: A, B in [-2, 2], C0 in [-8, 8], so every summation order is exact) and
// its checks, shared by the family's Instance and the evaluation (which verifies every timed
// plan on every shape with one Freivalds vector: O(MN + MK + KN), exact in long double).
#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "harness/buffer.hpp"
#include "harness/registry.hpp"
#include "kernels/gemm/gemm.hpp"

namespace rooflab::rtamm::detail {

inline uint64_t mix(uint64_t x) {
  x ^= x >> 30, x *= 0xBF58476D1CE4E5B9ull, x ^= x >> 27, x *= 0x94D049BB133111EBull, x ^= x >> 31;
  return x;
}
inline int64_t small_int(uint64_t stream, uint64_t idx, int range) {
  return int64_t(mix(stream * 0x9E3779B97F4A7C15ull + idx) % uint64_t(2 * range + 1)) - range;
}
constexpr double kPadSentinel = 12345;  // C's padding columns must keep it

template <class T>
struct Problem {
  gemm::Dims d;
  AlignedBuffer<T> A, B, C, C0;

  explicit Problem(const gemm::Dims& dd)
      : d(dd), A(size_t(d.m * d.lda)), B(size_t(d.k * d.ldb)), C(size_t(d.m * d.ldc)), C0(size_t(d.m * d.ldc)) {
    gemm::check_dims(d);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t k = 0; k < d.lda; ++k)
        A[size_t(i * d.lda + k)] = k < d.k ? T(small_int(1, uint64_t(i * d.k + k), 2)) : T(NAN);
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < d.k; ++k)
      for (int64_t j = 0; j < d.ldb; ++j)
        B[size_t(k * d.ldb + j)] = j < d.n ? T(small_int(2, uint64_t(k * d.n + j), 2)) : T(NAN);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < d.m; ++i)
      for (int64_t j = 0; j < d.ldc; ++j)
        C0[size_t(i * d.ldc + j)] = j < d.n ? T(small_int(3, uint64_t(i * d.n + j), 8)) : T(kPadSentinel);
    reset();
  }

  void reset() {
    const size_t n = C.size();
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) C[i] = C0[i];
  }

  double a(int64_t i, int64_t k) const { return double(A[size_t(i * d.lda + k)]); }
  double b(int64_t k, int64_t j) const { return double(B[size_t(k * d.ldb + j)]); }
  double prod(int64_t i, int64_t j) const { return double(C[size_t(i * d.ldc + j)]) - double(C0[size_t(i * d.ldc + j)]); }

  // After one C += A·B from C0: padding untouched, and either every entry against a double
  // reference (full) or `vectors` Freivalds checks (C - C0) x == A (B x) with integer x.
  Verification check(bool full, int vectors) const {
    Verification v;
    std::ostringstream os;
    const int64_t M = d.m, N = d.n, K = d.k;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = N; j < d.ldc; ++j)
        if (double(C[size_t(i * d.ldc + j)]) != kPadSentinel) {
          v.max_err = INFINITY;
          os << "C padding entry (" << i << ", " << j << ") changed";
          v.detail = os.str();
          return v;
        }
    if (full) {
      std::vector<double> ref(size_t(M * N), 0.0);
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t k = 0; k < K; ++k)
          for (int64_t j = 0; j < N; ++j) ref[size_t(i * N + j)] += a(i, k) * b(k, j);
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          const double got = prod(i, j), e = std::isnan(got) ? INFINITY : std::fabs(got - ref[size_t(i * N + j)]);
          if (e > v.max_err) {
            v.max_err = e;
            os.str("");
            os << "entry (" << i << ", " << j << "): C - C0 = " << got << ", expected " << ref[size_t(i * N + j)];
          }
        }
      if (v.max_err == 0) os << "exact: all entries vs the double reference";
    } else {
      for (int t = 0; t < vectors && v.max_err == 0; ++t) {
        std::vector<long double> x(static_cast<size_t>(N)), bx(static_cast<size_t>(K), 0.0L);
        for (int64_t j = 0; j < N; ++j) x[size_t(j)] = (long double)small_int(10 + uint64_t(t), uint64_t(j), 128);
        for (int64_t k = 0; k < K; ++k)
          for (int64_t j = 0; j < N; ++j) bx[size_t(k)] += b(k, j) * x[size_t(j)];
        for (int64_t i = 0; i < M && v.max_err == 0; ++i) {
          long double l = 0, r = 0;
          for (int64_t j = 0; j < N; ++j) l += prod(i, j) * x[size_t(j)];
          for (int64_t k = 0; k < K; ++k) r += a(i, k) * bx[size_t(k)];
          if (l != r || std::isnan(double(l))) {
            v.max_err = std::isnan(double(l)) ? INFINITY : double(fabsl(l - r));
            os << "Freivalds vector " << t << " fails in row " << i << ": (C - C0) x = " << double(l)
               << ", A (B x) = " << double(r);
          }
        }
      }
      if (v.max_err == 0) os << "exact: " << vectors << " Freivalds vector(s), long double";
    }
    v.ok = v.max_err == 0;
    v.detail = os.str();
    return v;
  }
};

}  // namespace rooflab::rtamm::detail

#pragma once
// The "scalar" vector traits (one element per vector, no intrinsics) with the same interface
// as avx2.hpp / avx512.hpp, so each family writes its SIMD kernels once over a traits type.
// Baseline code: GCC may still auto-vectorize loops over it with SSE2.
#include <cstdint>

namespace rooflab::simd {
template <class Elem>
struct Scalar {
  using T = Elem;
  using R = Elem;
  static constexpr int64_t W = 1;
  static R zero() { return T(0); }
  static R set1(T x) { return x; }
  static R load(const T* p) { return *p; }
  static void store(T* p, R x) { *p = x; }
  // W == 1: a tail is never shorter than a vector; n == 0 loads and stores nothing.
  static R loadn(const T* p, int n) { return n > 0 ? *p : T(0); }
  static void storen(T* p, R x, int n) { if (n > 0) *p = x; }
  static R add(R a, R b) { return a + b; }
  static R mul(R a, R b) { return a * b; }
  static R min(R a, R b) { return a < b ? a : b; }
  static R fma(R a, R b, R c) { return a * b + c; }
  static T hsum(R x) { return x; }
};
}  // namespace rooflab::simd

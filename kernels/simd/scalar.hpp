#pragma once
// The "scalar" vector traits (one element per vector) with the same interface as avx2.hpp /
// avx512.hpp, so each family writes its SIMD kernels once over a traits type.
// Baseline code: GCC may still auto-vectorize loops over it with SSE2. The only intrinsics
// are SSE2's (part of x86-64): movnti for stream() and sfence for fence().
#include <cstdint>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

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
  // Non-temporal store of one element (movnti from a general register), p aligned to T.
  static void stream(T* p, R x) {
#if defined(__SSE2__)
    if constexpr (sizeof(T) == 8) {
      long long bits;
      __builtin_memcpy(&bits, &x, sizeof bits);
      _mm_stream_si64(reinterpret_cast<long long*>(p), bits);
    } else {
      static_assert(sizeof(T) == 4, "stream: 4- or 8-byte elements");
      int bits;
      __builtin_memcpy(&bits, &x, sizeof bits);
      _mm_stream_si32(reinterpret_cast<int*>(p), bits);
    }
#else
    *p = x;
#endif
  }
  static void fence() {
#if defined(__SSE2__)
    _mm_sfence();
#endif
  }
  static R add(R a, R b) { return a + b; }
  static R mul(R a, R b) { return a * b; }
  static R min(R a, R b) { return a < b ? a : b; }
  static R fma(R a, R b, R c) { return a * b + c; }
  static T hsum(R x) { return x; }
};
}  // namespace rooflab::simd

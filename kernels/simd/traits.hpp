#pragma once
// The vector traits avx2.hpp and avx512.hpp define, written once. ROOFLAB_SIMD_TRAITS(Name,
// Elem, Reg, Width, P, S) specializes Name<Elem>: element T, register R, W lanes, and
// the operations as the intrinsics P_<op>_S (P = _mm256 / _mm512, S = pd / ps). What differs
// by ISA comes from the including header's overloads for R: tail_load / tail_store (the first
// n < W lanes, masked; the others load as 0) and reduce_add (the horizontal sum).
#include <cstdint>

#define ROOFLAB_SIMD_TRAITS(Name, Elem, Reg, Width, P, S)                                        \
  template <>                                                                                   \
  struct Name<Elem> {                                                                           \
    using T = Elem;                                                                             \
    using R = Reg;                                                                              \
    static constexpr int64_t W = Width;                                                         \
    static R zero() { return P##_setzero_##S(); }                                               \
    static R set1(T x) { return P##_set1_##S(x); }                                              \
    static R load(const T* p) { return P##_loadu_##S(p); }                                      \
    static void store(T* p, R x) { P##_storeu_##S(p, x); }                                      \
    static R loadn(const T* p, int n) { return tail_load(p, n); }                               \
    static void storen(T* p, R x, int n) { tail_store(p, x, n); }                               \
    /* non-temporal; p aligned to the vector */                                                 \
    static void stream(T* p, R x) { P##_stream_##S(p, x); }                                     \
    static R add(R a, R b) { return P##_add_##S(a, b); }                                        \
    static R mul(R a, R b) { return P##_mul_##S(a, b); }                                        \
    static R min(R a, R b) { return P##_min_##S(a, b); }                                        \
    static R fma(R a, R b, R c) { return P##_fmadd_##S(a, b, c); } /* a * b + c */             \
    static T hsum(R x) { return reduce_add(x); }                                                \
    static void fence() { _mm_sfence(); } /* orders stream()s before later stores */            \
  };

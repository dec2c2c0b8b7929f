#pragma once
// The register micro-kernel, written once over a vector-traits type V and instantiated by each
// ISA translation unit (ukernel.cpp: scalar, ukernel_avx2.cpp, ukernel_avx512.cpp) with that
// ISA's register block from config.hpp. Include only from those files: everything here has
// internal linkage (no AVX-512 code can be picked by the linker elsewhere).
//
// V provides T, R, W, MR, NRV (vectors per row; NR = NRV * W), zero(), set1, load, store,
// loadn / storen (first n lanes), add, fma(a, b, c) = a * b + c.
#include <xmmintrin.h>  // _mm_prefetch (SSE: baseline on x86-64)

#include <algorithm>
#include <cstdint>

#include "kernels/gemm/config.hpp"
#include "kernels/gemm/gemm.hpp"

namespace rooflab::gemm::uk {
namespace {

// The register block's first NRV of V::NRV vector columns (the B slivers keep their NR = V::NRV
// x W stride): NRV < V::NRV serves the right edge of N, whose padding columns are not computed.
template <class V, int NRV>
void kernel_nv(int64_t nb, int64_t kc, const typename V::T* A, int64_t sa, const typename V::T* B,
               int64_t sb, typename V::T* C, int64_t ldc, int64_t m, int64_t n, Prefetch pf) {
  using R = typename V::R;
  constexpr int MR = V::MR;
  constexpr int64_t W = V::W, NR = NRV * W, LDB = V::NRV * W;
  R acc[MR][NRV];
#pragma GCC unroll 32
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
    for (int v = 0; v < NRV; ++v) acc[i][v] = V::zero();

  // Prefetches go a few at a time between chunks of kChunk k steps, never in a burst: a burst
  // of prefetches to L3 fills the core's miss buffers and stalls the FMAs behind them (measured
  // on an Intel Xeon; chunks of 32 beat 16 and 64 there, results/gemm/README.md#spread-prefetch).
  // First C's m rows, a row per chunk (they are only touched after the whole batch, so their
  // latency hides behind the FMAs), then the caller's pf.lines lines (the next A micro-panel),
  // spread evenly over the call's chunks; what the chunks leave is issued at the end.
  constexpr int64_t kLine = 64 / int64_t(sizeof(typename V::T));
  constexpr int64_t kChunk = 32;
  const int64_t chunks = nb * ((kc + kChunk - 1) / kChunk);
  const int64_t row_lines = pf.row_lines > 0 ? pf.row_lines : INT64_MAX;
  int64_t in_row = pf.first % row_lines;
  const char* row = static_cast<const char*>(pf.rows) + pf.first / row_lines * pf.stride;
  const char* pfp = row + 64 * in_row;
  int64_t crow = 0, due = 0, pf_left = pf.rows ? pf.lines : 0;
  auto pf_line = [&] {
    if (pf.to_l2) _mm_prefetch(pfp, _MM_HINT_T1);
    else _mm_prefetch(pfp, _MM_HINT_T0);
    --pf_left;
    if (++in_row < row_lines) pfp += 64;
    else in_row = 0, row += pf.stride, pfp = row;
  };
  auto c_row = [&] {
    const typename V::T* c = C + crow++ * ldc;
    for (int64_t j = 0; j < NR; j += kLine) _mm_prefetch(reinterpret_cast<const char*>(c + j), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(c + NR - 1), _MM_HINT_T0);  // unaligned rows
  };
  auto prefetch_step = [&] {  // Bresenham: pf.lines lines over the chunks
    if (crow < m) c_row();
    for (due += pf_left > 0 ? pf.lines : 0; due >= chunks && pf_left > 0; due -= chunks) pf_line();
  };
  auto step = [&](const typename V::T* a, const typename V::T* bp) __attribute__((always_inline)) {
    R bv[NRV];
#pragma GCC unroll 4
    for (int v = 0; v < NRV; ++v) bv[v] = V::load(bp + v * W);
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i) {
      const R ai = V::set1(a[i]);
#pragma GCC unroll 4
      for (int v = 0; v < NRV; ++v) acc[i][v] = V::fma(ai, bv[v], acc[i][v]);
    }
  };

  for (int64_t b = 0; b < nb; ++b) {
    const typename V::T* a = A + b * sa;
    const typename V::T* bp = B + b * sb;
    for (int64_t k0 = 0; k0 < kc; k0 += kChunk) {
      prefetch_step();
      // Unrolled by 4: fewer loop-carried pointer / counter updates per FMA.
#pragma GCC unroll 4
      for (int64_t k = k0, kend = std::min(kc, k0 + kChunk); k < kend; ++k, a += MR, bp += LDB) step(a, bp);
    }
  }
  while (crow < m) c_row();
  while (pf_left > 0) pf_line();

  if (m == MR && n == NR) {
#pragma GCC unroll 32
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NRV; ++v) {
        typename V::T* c = C + i * ldc + v * W;
        V::store(c, V::add(V::load(c), acc[i][v]));
      }
    return;
  }
  // Edge: only the m x n corner of C is read and written.
#pragma GCC unroll 32
  for (int i = 0; i < MR; ++i) {
    if (i >= m) break;
#pragma GCC unroll 4
    for (int v = 0; v < NRV; ++v) {
      const int64_t lanes = n - v * W;
      if (lanes <= 0) break;
      typename V::T* c = C + i * ldc + v * W;
      if (lanes >= W) V::store(c, V::add(V::load(c), acc[i][v]));
      else V::storen(c, V::add(V::loadn(c, int(lanes)), acc[i][v]), int(lanes));
    }
  }
}

// Narrow edges run the narrower block: an N edge of one vector in a 3-vector block otherwise
// spends 2 of its 3 FMAs on padding (1024 = 21 x 48 + 16 columns for the AVX-512 f32 block:
// 3% of all FMAs wasted at N = 1024).
template <class V, int NV>
void narrow(int64_t nv, int64_t nb, int64_t kc, const typename V::T* A, int64_t sa, const typename V::T* B,
            int64_t sb, typename V::T* C, int64_t ldc, int64_t m, int64_t n, Prefetch pf) {
  if constexpr (NV >= 1) {
    if (nv >= NV) return kernel_nv<V, NV>(nb, kc, A, sa, B, sb, C, ldc, m, n, pf);
    narrow<V, NV - 1>(nv, nb, kc, A, sa, B, sb, C, ldc, m, n, pf);
  }
}
template <class V>
void kernel(int64_t nb, int64_t kc, const typename V::T* A, int64_t sa, const typename V::T* B,
            int64_t sb, typename V::T* C, int64_t ldc, int64_t m, int64_t n, Prefetch pf) {
  narrow<V, V::NRV>((n + V::W - 1) / V::W, nb, kc, A, sa, B, sb, C, ldc, m, n, pf);
}

// The kernel body for simd::tables / simd::table_of.
struct Body {
  template <class V>
  static constexpr Ukernel<typename V::T> table() {
    return {V::MR, int(V::NRV * V::W), &kernel<V>};
  }
};

}  // namespace
}  // namespace rooflab::gemm::uk

namespace rooflab::gemm::detail {
// Defined by ukernel_avx2.cpp / ukernel_avx512.cpp, each compiled with its ISA's flags.
extern const simd::Tables<Ukernel> ukernel_avx2, ukernel_avx512;
}  // namespace rooflab::gemm::detail

#pragma once
// The `simd` base kernel and the `regblock` kernel, written once over a small vector-traits
// type V and instantiated by each ISA translation unit (simd.cpp: scalar, simd_avx2.cpp,
// simd_avx512.cpp) with that ISA's register block from config.hpp.
//
// Include this header ONLY from those files: everything here has internal linkage, so no
// function compiled with AVX-512 flags can be shared with (and picked by the linker for) other
// TUs. Nothing from the standard library is called here for the same reason.
//
// V provides: T (element), R (register), W (lanes), MR (rows of a register block), NRV
// (vectors per register-block row; nr = NRV * W), set1(T), load(p), store(p, x), loadn(p, n)
// / storen(p, x, n) (first n < W lanes, masked), add, min (min(a, b) = a < b ? a : b, which
// with a = the candidate and b = C is exactly "if C > A + B then C = A + B"). The kernels use
// min, not the paper's masked form (compare-to-mask + blend): the
// same result, NaN and signed zeros included, in one instruction instead of two, which is
// what the add+min ceiling measures.
#include <xmmintrin.h>  // _mm_prefetch (SSE: baseline on x86-64)

#include "kernels/floyd_warshall/config.hpp"
#include "kernels/floyd_warshall/floyd_warshall.hpp"

namespace rooflab::fw::simd {
namespace {  // internal linkage in each ISA translation unit (see above)

// One row: c[j] = min(a + b[j], c[j]) for j < n; four vectors per step, then one, then a
// masked tail (the scalar traits' plain kernel, below). b may be c (the pivot row relaxing
// itself): each vector of b is loaded before the same vector of c is stored.
template <class V>
[[gnu::always_inline]] inline void relax_row(typename V::T* c, const typename V::T* b,
                                             typename V::R a, int64_t n) {
  constexpr int64_t W = V::W;
  int64_t j = 0;
  for (; j + 4 * W <= n; j += 4 * W) {
    const auto s0 = V::add(a, V::load(b + j)), s1 = V::add(a, V::load(b + j + W));
    const auto s2 = V::add(a, V::load(b + j + 2 * W)), s3 = V::add(a, V::load(b + j + 3 * W));
    V::store(c + j, V::min(s0, V::load(c + j)));
    V::store(c + j + W, V::min(s1, V::load(c + j + W)));
    V::store(c + j + 2 * W, V::min(s2, V::load(c + j + 2 * W)));
    V::store(c + j + 3 * W, V::min(s3, V::load(c + j + 3 * W)));
  }
  for (; j + W <= n; j += W) V::store(c + j, V::min(V::add(a, V::load(b + j)), V::load(c + j)));
  if (j < n) {
    const int r = int(n - j);
    V::storen(c + j, V::min(V::add(a, V::loadn(b + j, r)), V::loadn(c + j, r)), r);
  }
}

// Columns [j, j + NV vectors) of step k for rows [i0, i1): c[i][j] = min(A[i][k] + b[j], c[i][j])
// with those columns of b (row k of B) held in registers across the rows. The last vector
// holds `tail` lanes (MASKED: masked loads and stores).
template <class V, int NV, bool MASKED>
[[gnu::always_inline]] inline void step_cols(typename V::T* C, const typename V::T* A, const typename V::T* b,
                                             int64_t ld, int64_t k, int64_t i0, int64_t i1, int64_t j, int tail) {
  constexpr int64_t W = V::W;
  typename V::R bv[NV];
  for (int v = 0; v < NV; ++v)
    bv[v] = MASKED && v == NV - 1 ? V::loadn(b + j + v * W, tail) : V::load(b + j + v * W);
  for (int64_t i = i0; i < i1; ++i) {
    const auto a = V::set1(A[i * ld + k]);
    typename V::T* c = C + i * ld + j;
    for (int v = 0; v < NV; ++v) {
      if (MASKED && v == NV - 1) V::storen(c + v * W, V::min(V::add(a, bv[v]), V::loadn(c + v * W, tail)), tail);
      else V::store(c + v * W, V::min(V::add(a, bv[v]), V::load(c + v * W)));
    }
  }
}

// FW-BASE-SIMD: k outermost, so C is read and written kk times (the paper's point about the
// plain kernel), and exact for every aliasing the schedules make (C the same tile as A and / or
// B), for any diagonal: the result is the loops' "for k, for i: a = A[i][k]; for j: c[i][j] =
// min(a + B[k][j], c[i][j])" with B[k][j] as it is at that moment. Within step k (vector ISAs,
// more than one row; else row by row) rows go in groups
// (plain_group_rows), and a group's columns in passes of up to 8 vectors whose columns of row k
// of B stay in registers across the group's rows: a row then costs one load and one store of C
// per vector, not two loads and a store (the pivot row and column tiles ran at about half the
// add+min peak). The loops' values are kept because
//   - C is B (the pivot row): rows up to k see row k as it was, later rows as row k left it, so
//     a group ends at row k and the next loads b again;
//   - C is A (the pivot column): A[i][k] is read before row i's column k is relaxed, so the
//     pass holding column k goes last (row i's other columns do not depend on it).
// One row a call (the flat schedule, whose A is inside C's row) goes row by row, as before.
template <class V>
void plain(typename V::T* C, const typename V::T* A, const typename V::T* B, int64_t ld,
           int64_t m, int64_t n, int64_t kk) {
  using T = typename V::T;
  if (V::W == 1 || m == 1) {
    // Rows in order, b loaded per row: the scalar traits (GCC vectorizes relax_row's loop at
    // SSE2, which passes of 4 scalars would not be: 5.8x slower, measured) and one row a call
    // (the flat schedule: nothing to hold b across; the passes cost it 7%, measured).
    for (int64_t k = 0; k < kk; ++k)
      for (int64_t i = 0; i < m; ++i) relax_row<V>(C + i * ld, B + k * ld, V::set1(A[i * ld + k]), n);
    return;
  }
  constexpr int64_t W = V::W;
  // Passes of 8 vectors, then one of 4, then single vectors, then a masked tail.
  const int64_t full8 = n / (8 * W) * (8 * W), full4 = full8 + (n - full8) / (4 * W) * (4 * W), singles = n / W * W;
  // Rows per group (b is loaded once per group and pass): config.hpp's rule.
  const int64_t RB = plain_group_rows(n, int64_t(sizeof(T)));
  for (int64_t k = 0; k < kk; ++k) {
    const T* b = B + k * ld;
    const int64_t split = B == C && k < m ? k + 1 : m;  // rows [0, split) see row k as it was
    // The pass holding column k of A when C is A (-1: none), kept for last.
    const int64_t kj = !(A == C && k < n) ? -1
                       : k < full8        ? k / (8 * W) * (8 * W)
                       : k < full4        ? full8
                       : k < singles      ? k / W * W
                                          : singles;
    for (int64_t i0 = 0; i0 < m;) {
      const int64_t i1 = i0 < split ? (split - i0 < RB ? split : i0 + RB) : (m - i0 < RB ? m : i0 + RB);
      auto pass = [&](int64_t j) {
        if (j < full8) step_cols<V, 8, false>(C, A, b, ld, k, i0, i1, j, int(W));
        else if (j < full4) step_cols<V, 4, false>(C, A, b, ld, k, i0, i1, j, int(W));
        else if (j < singles) step_cols<V, 1, false>(C, A, b, ld, k, i0, i1, j, int(W));
        else step_cols<V, 1, true>(C, A, b, ld, k, i0, i1, j, int(n - j));
      };
      for (int64_t j = 0; j < n; j += j < full8 ? 8 * W : j < full4 ? 4 * W : W)
        if (j != kj) pass(j);
      if (kj >= 0) pass(kj);
      i0 = i1;
    }
  }
}

// The block of C a register block relaxes next: `rows` rows of `cols` elements at p (none when
// rows == 0).
template <class T>
struct NextBlock {
  const T* p = nullptr;
  int64_t rows = 0, cols = 0;
};

// One ROWS x (NV vectors) register block of C: loaded once, relaxed through all kk, stored
// once. The last vector holds `tail` lanes (tail == W: full; then masked loads/stores).
// The next block's C lines are asked for during this one's k loop: ROWS lines ld apart, read at
// the block's start, which the hardware prefetchers do not foresee (B and A are read in order).
template <class V, int ROWS, int NV, bool MASKED>
[[gnu::always_inline]] inline void block(typename V::T* C, const typename V::T* A,
                                         const typename V::T* B, int64_t ld, int64_t kk, int tail,
                                         const NextBlock<typename V::T>& next) {
  using R = typename V::R;
  constexpr int64_t W = V::W;
  auto ld_vec = [&](const typename V::T* p, int v) {
    if constexpr (MASKED) return v == NV - 1 ? V::loadn(p + v * W, tail) : V::load(p + v * W);
    else return V::load(p + v * W);
  };
  R c[ROWS][NV];
  for (int r = 0; r < ROWS; ++r)
    for (int v = 0; v < NV; ++v) c[r][v] = ld_vec(C + r * ld, v);
  constexpr int64_t kLine = 64 / int64_t(sizeof(typename V::T));  // elements per 64-byte line
  for (int64_t r = 0; r < next.rows; ++r) {
    const typename V::T* row = next.p + r * ld;
    for (int64_t j = 0; j < next.cols; j += kLine) _mm_prefetch(reinterpret_cast<const char*>(row + j), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(row + next.cols - 1), _MM_HINT_T0);  // unaligned rows
  }
  // Unrolled by 4 (GCC leaves it rolled): the step's counter, pointer and branch uops then come
  // once per 4 steps, not beside every step's add+min pairs, which saturate the vector ports.
#pragma GCC unroll 4
  for (int64_t k = 0; k < kk; ++k) {
    R b[NV];
    for (int v = 0; v < NV; ++v) b[v] = ld_vec(B + k * ld, v);
    for (int r = 0; r < ROWS; ++r) {
      const R a = V::set1(A[r * ld + k]);
      for (int v = 0; v < NV; ++v) c[r][v] = V::min(V::add(a, b[v]), c[r][v]);
    }
  }
  for (int r = 0; r < ROWS; ++r)
    for (int v = 0; v < NV; ++v) {
      if (MASKED && v == NV - 1) V::storen(C + r * ld + v * W, c[r][v], tail);
      else V::store(C + r * ld + v * W, c[r][v]);
    }
}

// ROWS rows of C across all n columns: NRV-vector blocks, single vectors, a masked tail. The
// next band's first `next_rows` rows follow the last block (next_rows == 0: none).
template <class V, int ROWS>
void block_rows(typename V::T* C, const typename V::T* A, const typename V::T* B, int64_t ld,
                int64_t n, int64_t kk, int64_t next_rows) {
  constexpr int64_t W = V::W, NR = V::NRV * V::W;
  // The block after the one at column j (of width w).
  auto next = [&](int64_t j, int64_t w) {
    const int64_t j1 = j + w;
    return j1 < n ? NextBlock<typename V::T>{C + j1, ROWS, n - j1 < NR ? n - j1 : NR}
                  : NextBlock<typename V::T>{C + ROWS * ld, next_rows, n < NR ? n : NR};
  };
  int64_t j = 0;
  for (; j + NR <= n; j += NR) block<V, ROWS, V::NRV, false>(C + j, A, B + j, ld, kk, int(W), next(j, NR));
  for (; j + W <= n; j += W) block<V, ROWS, 1, false>(C + j, A, B + j, ld, kk, int(W), next(j, W));
  if (j < n) block<V, ROWS, 1, true>(C + j, A, B + j, ld, kk, int(n - j), next(j, n - j));
}

template <class V, int ROWS>
void rows_remainder(typename V::T* C, const typename V::T* A, const typename V::T* B, int64_t ld,
                    int64_t n, int64_t kk, int rows) {
  if constexpr (ROWS > 0) {
    if (rows == ROWS) return block_rows<V, ROWS>(C, A, B, ld, n, kk, 0);
    rows_remainder<V, ROWS - 1>(C, A, B, ld, n, kk, rows);
  }
}

// FW-BASE-REGBLOCK (loop interchange + register blocking): C[i][j] = min(C[i][j], min_k A[i][k] +
// B[k][j]) taken in any order, which is FW-BASE when C is disjoint from A and B, or is one of
// them with the other closed (Kernels::regblock). Rows in blocks of MR, the last rows in one
// smaller block.
template <class V>
void regblock(typename V::T* C, const typename V::T* A, const typename V::T* B, int64_t ld,
              int64_t m, int64_t n, int64_t kk) {
  int64_t i = 0;
  for (; i + V::MR <= m; i += V::MR) {
    const int64_t rest = m - i - V::MR;
    block_rows<V, V::MR>(C + i * ld, A + i * ld, B, ld, n, kk, rest < V::MR ? rest : V::MR);
  }
  if (i < m) rows_remainder<V, V::MR - 1>(C + i * ld, A + i * ld, B, ld, n, kk, int(m - i));
}

// The kernel body for simd::tables / simd::table_of.
struct Body {
  template <class V>
  static constexpr Kernels<typename V::T> table() {
    return {plain<V>, regblock<V>};
  }
};

}  // namespace
}  // namespace rooflab::fw::simd

namespace rooflab::fw::detail {
// Defined by simd_avx2.cpp / simd_avx512.cpp, each compiled with its ISA's flags.
extern const ::rooflab::simd::Tables<Kernels> simd_avx2, simd_avx512;
}  // namespace rooflab::fw::detail

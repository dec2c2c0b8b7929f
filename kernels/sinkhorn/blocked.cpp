// `blocked` (C2R + data blocking, COFFEE Algorithm 3 / Fig. 4): both passes work on mc x nc
// blocks, so the nc factors (or partial sums) of a block stay in L1 while its mc rows use them.
// The factors temp = c / sum are computed once for all columns (the reason the paper exchanges
// its two outer loops) before the scale, so the rows stay the outer loop: mc rows stream from
// memory together, each row read once from end to end. A panel-outer walk instead reads every
// row in N / nc pieces far apart in time, restarting each row's stream per panel.
// No packing: each element is touched once per pass, so a packed copy could not pay off.
#include <algorithm>
#include <cstring>
#include <type_traits>

#include "kernels/sinkhorn/detail.hpp"

namespace rooflab::sinkhorn {
namespace {

int64_t clamp_block(int64_t b, int64_t n) { return std::clamp<int64_t>(b, 1, std::max<int64_t>(n, 1)); }

// op(row segment, vec segment) over every mc x nc block, rows outer. Each of the mc rows is
// read one nc segment at a time, so the hardware's stream prefetch would restart at every
// segment: while a segment is worked on, the same row's next segment (the rows of the next
// block, for the last panel of several) is prefetched towards L2, a line per line worked (at most one
// segment's worth: more, in one burst, cost more than it saved in cache), which keeps mc
// streams running from memory.
template <class T, class Op>
void for_blocks(const SkArgs<T>& a, Op op) {
  const int64_t nc = clamp_block(a.nc, a.N), mc = clamp_block(a.mc, a.M);
  constexpr int64_t line = 64 / sizeof(T), step = 4 * line;
  if (a.N <= step) {  // one short segment per row: nothing to block or prefetch, C2R's plain walk
    for (int64_t i = 0; i < a.M; ++i) op(a.A + i * a.lda, a.work, a.N);
    return;
  }
  for (int64_t i0 = 0; i0 < a.M; i0 += mc) {
    const int64_t i1 = std::min(i0 + mc, a.M);
    for (int64_t j0 = 0; j0 < a.N; j0 += nc) {
      const int64_t jn = std::min(nc, a.N - j0);
      const bool last_panel = j0 + nc >= a.N;
      const int64_t nn = last_panel ? std::min(nc, a.N) : std::min(nc, a.N - j0 - nc);
      for (int64_t i = i0; i < i1; ++i) {
        T* row = a.A + i * a.lda + j0;
        // With one panel (nc >= N; the passes then run C2R's code, one_panel below) the rows
        // are walked in order, one stream the hardware prefetcher follows: no hints.
        const T* next = !last_panel ? row + nc : j0 > 0 && i + mc < a.M ? a.A + (i + mc) * a.lda : nullptr;
        // A line of `next` hinted per line worked, up to nn.
        const auto hint = [&](int64_t j, int64_t n) {
          if (next)
            for (int64_t p = j; p < std::min(j + n, nn); p += line) __builtin_prefetch(next + p, 0, 2);
        };
        int64_t j = 0;
        // Full steps at a compile-time length: the compiler unrolls them, where a run-time
        // length cost its loop set-up and tail per step, more than a cached step's work.
        for (; j + step <= jn; j += step) {
          hint(j, step);
          op(row + j, a.work + j0 + j, std::integral_constant<int64_t, step>{});
        }
        if (j < jn) {
          hint(j, jn - j);
          op(row + j, a.work + j0 + j, jn - j);
        }
      }
    }
  }
}

// One panel (nc >= N): the mc x nc walk is C2R's (rows in order, each whole, no hints), so
// the passes are C2R's own code. The 4-line steps cost more than its loop there: on Zen 4,
// f64 128x256 column pass 11.0 us in steps vs 9.9 (docs/families/sinkhorn.md, "blocked with
// one panel").
template <class T>
bool one_panel(const SkArgs<T>& a) { return a.nc >= a.N; }

template <class T>
void col_sums(const SkArgs<T>& a) {
  if (one_panel(a)) return c2r_kernels<T>().col_sums(a);
  for_blocks(a, [](const T* __restrict row, T* __restrict sum, auto jn) {
    for (int64_t j = 0; j < jn; ++j) sum[j] += row[j];
  });
}

template <class T>
void col_scale(const SkArgs<T>& a) {
  if (one_panel(a)) return c2r_kernels<T>().col_scale(a);
  for_blocks(a, [](T* __restrict row, const T* __restrict temp, auto jn) {
    for (int64_t j = 0; j < jn; ++j) row[j] *= temp[j];
  });
}

template <class T>
void col_rescale(const SkArgs<T>& a) {
  std::memset(a.work, 0, size_t(a.N) * sizeof(T));
  col_sums(a);
  col_factors(a.work, a.c, a.N, a.fi);  // Algorithm 3 line 2, for every panel at once
  col_scale(a);
}
}  // namespace

ROOFLAB_SK_PORTABLE_KERNELS(blocked)

}  // namespace rooflab::sinkhorn

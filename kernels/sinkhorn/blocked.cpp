// `blocked` (C2R + data blocking, COFFEE Algorithm 3 / Fig. 4): both passes work on mc x nc
// blocks, so the nc factors (or partial sums) of a block stay in L1 while its mc rows use them.
// The factors temp = c / sum are computed once for all columns (the reason the paper exchanges
// its two outer loops) before the scale, so the rows stay the outer loop: mc rows stream from
// memory together, each row read once from end to end. A panel-outer walk instead reads every
// row in N / nc pieces far apart in time, restarting each row's stream per panel.
// No packing: each element is touched once per pass, so a packed copy could not pay off.
#include <algorithm>
#include <cstring>

#include "kernels/sinkhorn/detail.hpp"

namespace rooflab::sinkhorn {
namespace {

int64_t clamp_block(int64_t b, int64_t n) { return std::clamp<int64_t>(b, 1, std::max<int64_t>(n, 1)); }

// op(row segment, vec segment) over every mc x nc block, rows outer.
template <class T, class Op>
void for_blocks(const SkArgs<T>& a, Op op) {
  const int64_t nc = clamp_block(a.nc, a.N), mc = clamp_block(a.mc, a.M);
  for (int64_t i0 = 0; i0 < a.M; i0 += mc) {
    const int64_t i1 = std::min(i0 + mc, a.M);
    for (int64_t j0 = 0; j0 < a.N; j0 += nc) {
      const int64_t jn = std::min(nc, a.N - j0);
      for (int64_t i = i0; i < i1; ++i) op(a.A + i * a.lda + j0, a.work + j0, jn);
    }
  }
}

template <class T>
void col_sums(const SkArgs<T>& a) {
  for_blocks(a, [](const T* __restrict row, T* __restrict sum, int64_t jn) {
    for (int64_t j = 0; j < jn; ++j) sum[j] += row[j];
  });
}

template <class T>
void col_scale(const SkArgs<T>& a) {
  for_blocks(a, [](T* __restrict row, const T* __restrict temp, int64_t jn) {
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

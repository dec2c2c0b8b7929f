// `blocked` (C2R + data blocking, COFFEE Algorithm 3 / Fig. 4): the column pass works on
// nc-wide column panels. For each panel the factors temp[0..nc) = c / sum are computed once
// (into the panel's slice of work, so they are warm in L1) and reused by every mc-row block
// down the panel. The sum pass is blocked the same way ("the algorithm works similarly with
// other parts"), which keeps the nc partial sums in L1 while rows stream by.
// No packing: each element is touched once per pass, so a packed copy could not pay off.
#include <algorithm>
#include <cstring>

#include "kernels/sinkhorn/detail.hpp"

namespace rooflab::sinkhorn {
namespace {

int64_t clamp_block(int64_t b, int64_t n) { return std::clamp<int64_t>(b, 1, std::max<int64_t>(n, 1)); }

template <class T>
void sums_panel(const SkArgs<T>& a, int64_t j0, int64_t jn) {
  T* __restrict sum = a.work + j0;
  for (int64_t i = 0; i < a.M; ++i) {
    const T* __restrict row = a.A + i * a.lda + j0;
    for (int64_t j = 0; j < jn; ++j) sum[j] += row[j];
  }
}

template <class T>
void scale_panel(const SkArgs<T>& a, int64_t j0, int64_t jn, int64_t mc) {
  const T* __restrict temp = a.work + j0;
  for (int64_t i0 = 0; i0 < a.M; i0 += mc) {
    const int64_t i1 = std::min(i0 + mc, a.M);
    for (int64_t i = i0; i < i1; ++i) {
      T* __restrict row = a.A + i * a.lda + j0;
      for (int64_t j = 0; j < jn; ++j) row[j] *= temp[j];
    }
  }
}

template <class T>
void col_sums(const SkArgs<T>& a) {
  const int64_t nc = clamp_block(a.nc, a.N);
  for (int64_t j0 = 0; j0 < a.N; j0 += nc) sums_panel(a, j0, std::min(nc, a.N - j0));
}

template <class T>
void col_scale(const SkArgs<T>& a) {
  const int64_t nc = clamp_block(a.nc, a.N), mc = clamp_block(a.mc, a.M);
  for (int64_t j0 = 0; j0 < a.N; j0 += nc) scale_panel(a, j0, std::min(nc, a.N - j0), mc);
}

template <class T>
void col_rescale(const SkArgs<T>& a) {
  const int64_t nc = clamp_block(a.nc, a.N), mc = clamp_block(a.mc, a.M);
  std::memset(a.work, 0, size_t(a.N) * sizeof(T));
  col_sums(a);
  for (int64_t j0 = 0; j0 < a.N; j0 += nc) {
    const int64_t jn = std::min(nc, a.N - j0);
    col_factors(a.work + j0, a.c + j0, jn, a.fi);  // Algorithm 3 line 2
    scale_panel(a, j0, jn, mc);
  }
}
}  // namespace

ROOFLAB_SK_PORTABLE_KERNELS(blocked)

}  // namespace rooflab::sinkhorn

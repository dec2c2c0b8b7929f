// `c2r` (COFFEE-C2R, Algorithm 2): the column sums are accumulated row by row into
// work[0..N), turned into factors temp[j] = c[j] / sum[j] in place, and the matrix is scaled
// in row-major order. Both passes stream A with stride 1; work[N] is the only reused data.
#include <cstring>

#include "kernels/sinkhorn/detail.hpp"

namespace rooflab::sinkhorn {
namespace {

template <class T>
void col_sums(const SkArgs<T>& a) {
  T* __restrict sum = a.work;
  for (int64_t i = 0; i < a.M; ++i) {
    const T* __restrict row = a.A + i * a.lda;
    for (int64_t j = 0; j < a.N; ++j) sum[j] += row[j];
  }
}

template <class T>
void col_scale(const SkArgs<T>& a) {
  const T* __restrict temp = a.work;
  for (int64_t i = 0; i < a.M; ++i) {
    T* __restrict row = a.A + i * a.lda;
    for (int64_t j = 0; j < a.N; ++j) row[j] *= temp[j];
  }
}

template <class T>
void col_rescale(const SkArgs<T>& a) {
  std::memset(a.work, 0, size_t(a.N) * sizeof(T));
  col_sums(a);
  col_factors(a.work, a.c, a.N, a.fi);
  col_scale(a);
}
}  // namespace

ROOFLAB_SK_PORTABLE_KERNELS(c2r)

}  // namespace rooflab::sinkhorn

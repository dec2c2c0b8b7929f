// `typical`: COFFEE Algorithm 1 as written. The column pass walks down each column (stride
// lda) once for the sum and once more for the scaling, so consecutive accesses hit different
// cache lines; that is the cost the other variants remove.
#include "kernels/sinkhorn/detail.hpp"

namespace rooflab::sinkhorn {
namespace {

template <class T>
T column_sum(const T* col, int64_t M, int64_t lda) {
  // Four partial sums, as in the row pass: the walk is bound by memory, not the add latency,
  // but the baseline should not be handicapped by a dependency chain either.
  T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= M; i += 4) {
    s0 += col[i * lda];
    s1 += col[(i + 1) * lda];
    s2 += col[(i + 2) * lda];
    s3 += col[(i + 3) * lda];
  }
  for (; i < M; ++i) s0 += col[i * lda];
  return (s0 + s1) + (s2 + s3);
}

template <class T>
void col_rescale(const SkArgs<T>& a) {
  for (int64_t j = 0; j < a.N; ++j) {
    T* col = a.A + j;
    const T f = sk_factor(a.c[j], column_sum(col, a.M, a.lda), a.fi);
    for (int64_t i = 0; i < a.M; ++i) col[i * a.lda] *= f;
  }
}

// The staged form (row-sliced callers) keeps the column-wise walks.
template <class T>
void col_sums(const SkArgs<T>& a) {
  for (int64_t j = 0; j < a.N; ++j) a.work[j] += column_sum(a.A + j, a.M, a.lda);
}

template <class T>
void col_scale(const SkArgs<T>& a) {
  for (int64_t j = 0; j < a.N; ++j) {
    T* col = a.A + j;
    const T f = a.work[j];
    for (int64_t i = 0; i < a.M; ++i) col[i * a.lda] *= f;
  }
}
}  // namespace

ROOFLAB_SK_PORTABLE_KERNELS(typical)

}  // namespace rooflab::sinkhorn

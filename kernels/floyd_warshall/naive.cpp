// `naive`: the three loops (k, i, j) and the flat schedule that runs any base kernel that way.
#include <omp.h>

#include "kernels/floyd_warshall/detail.hpp"

namespace rooflab::fw {
namespace {
// The paper's FW-BASE as written (row-major: j innermost, so the compiler may vectorize it).
template <class T>
void naive_base(T* C, const T* A, const T* B, int64_t ld, int64_t m, int64_t n, int64_t kk) {
  for (int64_t k = 0; k < kk; ++k) {
    const T* b = B + k * ld;
    for (int64_t i = 0; i < m; ++i) {
      const T a = A[i * ld + k];
      T* c = C + i * ld;
      for (int64_t j = 0; j < n; ++j) {
        const T s = a + b[j];
        c[j] = s < c[j] ? s : c[j];
      }
    }
  }
}
}  // namespace

template <class T>
Kernels<T> portable_kernels() {
  return {naive_base<T>, nullptr};
}
template Kernels<float> portable_kernels<float>();
template Kernels<double> portable_kernels<double>();

namespace detail {
// for k: the rows i != k in parallel, each relaxed through k with the base kernel on a
// 1 x n x 1 rectangle. Row k is skipped: in step k it would become
// min(D[k][j], D[k][k] + D[k][j]), a no-op when D[k][k] >= 0, and skipping it keeps the row
// that every thread reads free of writes (a negative cycle still shows on the diagonal,
// through D[i][i] = min(D[i][i], D[i][k] + D[k][i]) for the other vertices on it).
template <class T>
void flat_schedule(const Kernels<T>& k, T* D, int64_t n, int64_t ld) {
  const BaseFn<T> f = k.plain;
#pragma omp parallel
  for (int64_t p = 0; p < n; ++p) {
    const T* row_p = D + p * ld;
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; ++i)
      if (i != p) f(D + i * ld, D + i * ld + p, row_p, ld, 1, n, 1);
  }
}
template void flat_schedule<float>(const Kernels<float>&, float*, int64_t, int64_t);
template void flat_schedule<double>(const Kernels<double>&, double*, int64_t, int64_t);
}  // namespace detail
}  // namespace rooflab::fw

// `blocked`: FW-Blocking (non-recursive). Per pivot tile K: the pivot tile (K,K) alone, then
// the pivot row and column tiles (each depends only on (K,K)), then every other tile (each
// depends only on its row's and column's pivot tiles), with an OpenMP `for` per phase and the
// implicit barrier between phases. Also the predecessor-tracking version for path checks.
#include <omp.h>

#include <limits>

#include "harness/error.hpp"
#include "kernels/floyd_warshall/detail.hpp"

namespace rooflab::fw {
namespace detail {

// Runs op(I, J, K) in the blocked order for nt x nt tiles.
template <class Op>
void blocked_order(int64_t nt, const Op& op) {
  const int64_t others = nt - 1;
#pragma omp parallel
  for (int64_t K = 0; K < nt; ++K) {
#pragma omp single
    op(K, K, K);
    // Pivot row tiles (K, J) and pivot column tiles (I, K), J, I != K, as one loop.
#pragma omp for schedule(static)
    for (int64_t t = 0; t < 2 * others; ++t) {
      const int64_t x = t % others, X = x < K ? x : x + 1;
      if (t < others) op(K, X, K);
      else op(X, K, K);
    }
#pragma omp for collapse(2) schedule(static)
    for (int64_t i = 0; i < others; ++i)
      for (int64_t j = 0; j < others; ++j) op(i < K ? i : i + 1, j < K ? j : j + 1, K);
  }
}

// blocked_order's critical path: the pivot tile (plain), then the most tiles a thread gets of
// each static phase (pivot row and column, the rest).
CriticalOps blocked_critical_ops(int64_t nt, int threads) {
  const int64_t t = threads < 1 ? 1 : threads, others = nt - 1;
  const double row_col = double((2 * others + t - 1) / t), rest = double((others * others + t - 1) / t);
  return {double(nt) * (1 + row_col + rest), double(nt)};
}

template <class T>
void blocked_schedule(const Grid<T>& g) {
  blocked_order(g.nt, [&g](int64_t I, int64_t J, int64_t K) { g.op(I, J, K); });
}
template void blocked_schedule<float>(const Grid<float>&);
template void blocked_schedule<double>(const Grid<double>&);
}  // namespace detail

// With predecessors: when the path through k wins, the predecessor of j becomes the one on
// the k -> j path. Strict '<' keeps the first shortest path found, as the distances do.
template <class T>
void blocked_with_paths(T* D, int32_t* P, int64_t np, int64_t ld, int64_t bs) {
  if (bs < 1 || np % bs != 0)
    throw Error("floyd_warshall: blocked_with_paths needs np a multiple of bs >= 1");
  for (int64_t i = 0; i < np; ++i)
    for (int64_t j = 0; j < np; ++j)
      P[i * ld + j] = i != j && D[i * ld + j] < std::numeric_limits<T>::infinity() ? int32_t(i) : -1;
  detail::blocked_order(np / bs, [&](int64_t I, int64_t J, int64_t K) {
    for (int64_t k = K * bs; k < (K + 1) * bs; ++k)
      for (int64_t i = I * bs; i < (I + 1) * bs; ++i) {
        const T a = D[i * ld + k];
        for (int64_t j = J * bs; j < (J + 1) * bs; ++j) {
          const T s = a + D[k * ld + j];
          if (s < D[i * ld + j]) {
            D[i * ld + j] = s;
            P[i * ld + j] = P[k * ld + j];
          }
        }
      }
  });
}
template void blocked_with_paths<float>(float*, int32_t*, int64_t, int64_t, int64_t);
template void blocked_with_paths<double>(double*, int32_t*, int64_t, int64_t, int64_t);

std::vector<int64_t> reconstruct_path(const int32_t* P, int64_t n, int64_t ld, int64_t i, int64_t j) {
  std::vector<int64_t> rev{j};
  if (i == j) return rev;
  for (int64_t v = j; v != i;) {
    v = P[i * ld + v];
    if (v < 0) return {};
    rev.push_back(v);
    if (int64_t(rev.size()) > n)
      throw Error("floyd_warshall: predecessor matrix loops on the path " + std::to_string(i) +
                  " -> " + std::to_string(j));
  }
  return {rev.rbegin(), rev.rend()};
}

}  // namespace rooflab::fw

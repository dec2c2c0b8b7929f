// The six loop orders, plain triple loops on the row-major arrays (the "loop-order GEMM"
// baselines: same flops, very different access patterns). The accumulation is in T as a
// naive implementation would do it. Parallel over the outermost i or j loop (for kij / kji,
// where k is outermost, over the middle one).
#include <cstdint>

#include "harness/error.hpp"
#include "kernels/gemm/gemm.hpp"

namespace rooflab::gemm {

void check_dims(const Dims& d) {
  if (d.m < 1 || d.n < 1 || d.k < 1)
    throw Error("gemm: dimensions must be >= 1, got M=" + std::to_string(d.m) + " N=" +
                std::to_string(d.n) + " K=" + std::to_string(d.k));
  if (d.lda < d.k || d.ldb < d.n || d.ldc < d.n)
    throw Error("gemm: leading dimensions must be >= the row length: lda=" + std::to_string(d.lda) +
                " (K=" + std::to_string(d.k) + "), ldb=" + std::to_string(d.ldb) + " (N=" +
                std::to_string(d.n) + "), ldc=" + std::to_string(d.ldc) + " (N=" + std::to_string(d.n) + ")");
}

template <class T>
void loops(LoopOrder order, const Dims& d, const T* A, const T* B, T* C) {
  check_dims(d);
  const int64_t M = d.m, N = d.n, K = d.k, lda = d.lda, ldb = d.ldb, ldc = d.ldc;
  // The three innermost loops the six orders are made of (each inlined into its order):
  // k innermost, a dot product into C[i][j]; j innermost, row i of C += A[i][k] * row k of B;
  // i innermost, column j of C += A[:, k] * B[k][j].
  const auto dot = [=](int64_t i, int64_t j) {
    T s = C[i * ldc + j];
    for (int64_t k = 0; k < K; ++k) s += A[i * lda + k] * B[k * ldb + j];
    C[i * ldc + j] = s;
  };
  const auto row = [=](int64_t i, int64_t k) {
    const T a = A[i * lda + k];
    for (int64_t j = 0; j < N; ++j) C[i * ldc + j] += a * B[k * ldb + j];
  };
  const auto col = [=](int64_t j, int64_t k) {
    const T b = B[k * ldb + j];
    for (int64_t i = 0; i < M; ++i) C[i * ldc + j] += A[i * lda + k] * b;
  };
  // The two loop nests around them: an outer loop split among the threads; or k outermost,
  // the middle loop split (each thread owns whole rows / columns of C, so no two threads
  // write the same element).
  const auto outer_parallel = [](int64_t P, int64_t Q, auto body) {
#pragma omp parallel for schedule(static)
    for (int64_t p = 0; p < P; ++p)
      for (int64_t q = 0; q < Q; ++q) body(p, q);
  };
  const auto k_outer = [K](int64_t P, auto body) {
#pragma omp parallel
    for (int64_t k = 0; k < K; ++k) {
#pragma omp for schedule(static)
      for (int64_t p = 0; p < P; ++p) body(p, k);
    }
  };
  switch (order) {
    case LoopOrder::ijk: outer_parallel(M, N, dot); break;
    case LoopOrder::ikj: outer_parallel(M, K, row); break;
    case LoopOrder::jik: outer_parallel(N, M, [=](int64_t j, int64_t i) { dot(i, j); }); break;
    case LoopOrder::jki: outer_parallel(N, K, col); break;
    case LoopOrder::kij: k_outer(M, row); break;
    case LoopOrder::kji: k_outer(N, col); break;
  }
}

template void loops<float>(LoopOrder, const Dims&, const float*, const float*, float*);
template void loops<double>(LoopOrder, const Dims&, const double*, const double*, double*);

}  // namespace rooflab::gemm

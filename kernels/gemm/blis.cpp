// BLIS baseline: the typed API bli_?gemm with general strides (row stride ld, column stride 1),
// alpha = beta = 1; bli_thread_set_num_threads(T) before every call. The typed API (not cblas)
// avoids the cblas_* symbols OpenBLAS exports as well.
#include <blis.h>

#include <string>

#include "kernels/gemm/detail.hpp"

namespace rooflab::gemm::detail {
namespace {
std::string info() {
  return std::string("BLIS ") + bli_info_get_version_str() + ", kernel config " +
         bli_arch_string(bli_arch_query_id()) + ", bli_thread_set_num_threads(T) per call";
}

template <class T>
Compute<T> make(const Dims&, int threads) {
  return [threads](const Dims& d, const T* A, const T* B, T* C) {
    bli_thread_set_num_threads(threads);
    T one = 1;
    if constexpr (sizeof(T) == 8)
      bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, d.m, d.n, d.k, &one, const_cast<T*>(A), d.lda, 1,
                const_cast<T*>(B), d.ldb, 1, &one, C, d.ldc, 1);
    else
      bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, d.m, d.n, d.k, &one, const_cast<T*>(A), d.lda, 1,
                const_cast<T*>(B), d.ldb, 1, &one, C, d.ldc, 1);
  };
}
}  // namespace

const Baseline blis = {"blis", true, info, make<double>, make<float>};
}  // namespace rooflab::gemm::detail

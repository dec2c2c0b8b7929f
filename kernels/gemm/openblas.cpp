// OpenBLAS baseline: cblas_?gemm, RowMajor, alpha = beta = 1. BLIS exports cblas_* too, so
// the entry points are looked up inside libopenblas itself (dlsym on its own handle), never
// left to link order. Threads: openblas_set_num_threads() before every call (OpenBLAS's
// pthread pool ignores OpenMP's setting).
#include <cblas.h>
#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "harness/error.hpp"
#include "kernels/gemm/detail.hpp"

namespace rooflab::gemm::detail {
namespace {
using DgemmFn = decltype(&cblas_dgemm);
using SgemmFn = decltype(&cblas_sgemm);

// The symbol from the shared object that defines openblas_get_config (OpenBLAS only).
void* openblas_symbol(const char* name) {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&openblas_get_config), &info) || !info.dli_fname)
    throw Error("gemm/openblas: cannot locate libopenblas (dladdr failed)");
  void* h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!h) throw Error(std::string("gemm/openblas: dlopen(") + info.dli_fname + ") failed: " + dlerror());
  void* f = dlsym(h, name);
  if (!f) throw Error(std::string("gemm/openblas: ") + name + " not found in " + info.dli_fname);
  return f;
}

std::string info() {
  return std::string(openblas_get_config()) + ", core " + openblas_get_corename() +
         ", openblas_set_num_threads(T) per call";
}

// cblas_dgemm / cblas_sgemm share one signature but for the element type.
template <class T>
Compute<T> make(const Dims&, int threads) {
  constexpr bool f64 = std::is_same_v<T, double>;
  using Fn = std::conditional_t<f64, DgemmFn, SgemmFn>;
  auto fn = reinterpret_cast<Fn>(openblas_symbol(f64 ? "cblas_dgemm" : "cblas_sgemm"));
  return [fn, threads](const Dims& d, const T* A, const T* B, T* C) {
    openblas_set_num_threads(threads);
    fn(CblasRowMajor, CblasNoTrans, CblasNoTrans, blasint(d.m), blasint(d.n), blasint(d.k), T(1), A,
       blasint(d.lda), B, blasint(d.ldb), T(1), C, blasint(d.ldc));
  };
}
}  // namespace

const Baseline openblas = {"openblas", true, info, make<double>, make<float>};
}  // namespace rooflab::gemm::detail

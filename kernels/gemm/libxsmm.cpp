// sfc_ca with LIBXSMM 1.17's JIT BRGEMM (libxsmm_?mmdispatch_reducebatch_strd) as the tile
// kernel: the paper's own back end. Blocks are packed plainly (A block bm x bk row-major, B
// block bk x bn row-major); LIBXSMM is column-major, so a row-major tile C += A·B is issued as
// the column-major C^T += B^T A^T (m' = n, n' = m, B blocks first). One kernel per distinct
// tile shape (full / edge rows / edge columns) and C stride (C itself / the layer copies),
// dispatched once per instance, never in run().
#include <libxsmm.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "harness/error.hpp"
#include "harness/env.hpp"
#include "kernels/gemm/code_path.hpp"
#include "kernels/gemm/detail.hpp"
#include "kernels/gemm/sfc_driver.hpp"

namespace rooflab::gemm::detail {
namespace {

template <class T>
using XsmmFn = std::conditional_t<std::is_same_v<T, double>, libxsmm_dmmfunction_reducebatch_strd,
                                  libxsmm_smmfunction_reducebatch_strd>;

template <class T>
struct XsmmBrgemm {
  int64_t bm, bn, bk;
  struct Entry {
    int64_t m, n, ldc;
    XsmmFn<T> fn;
  };
  std::vector<Entry> kernels;

  int64_t a_block() const { return bm * bk; }
  int64_t b_block() const { return bk * bn; }
  void pack_a(T* dst, const T* A, int64_t lda, int64_t m, int64_t kc) const {
    for (int64_t i = 0; i < m; ++i) std::memcpy(dst + i * bk, A + i * lda, size_t(kc) * sizeof(T));
  }
  void pack_b(T* dst, const T* B, int64_t ldb, int64_t kc, int64_t n) const {
    for (int64_t k = 0; k < kc; ++k) std::memcpy(dst + k * bn, B + k * ldb, size_t(n) * sizeof(T));
  }
  void add(int64_t m, int64_t n, int64_t ldc) {
    for (const Entry& e : kernels)
      if (e.m == m && e.n == n && e.ldc == ldc) return;
    const libxsmm_blasint lda = libxsmm_blasint(bn), ldb = libxsmm_blasint(bk), ldcc = libxsmm_blasint(ldc);
    const T one = 1;
    const int flags = LIBXSMM_GEMM_FLAG_NONE, prefetch = LIBXSMM_GEMM_PREFETCH_NONE;
    const auto sa = libxsmm_blasint(b_block() * int64_t(sizeof(T))), sb = libxsmm_blasint(a_block() * int64_t(sizeof(T)));
    XsmmFn<T> fn;
    if constexpr (std::is_same_v<T, double>)
      fn = libxsmm_dmmdispatch_reducebatch_strd(libxsmm_blasint(n), libxsmm_blasint(m), libxsmm_blasint(bk), sa, sb,
                                                &lda, &ldb, &ldcc, &one, &one, &flags, &prefetch);
    else
      fn = libxsmm_smmdispatch_reducebatch_strd(libxsmm_blasint(n), libxsmm_blasint(m), libxsmm_blasint(bk), sa, sb,
                                                &lda, &ldb, &ldcc, &one, &one, &flags, &prefetch);
    if (!fn)
      throw Error("gemm/sfc_ca_libxsmm: LIBXSMM cannot JIT a " + std::to_string(m) + "x" + std::to_string(n) + "x" +
                  std::to_string(bk) + " BRGEMM on this CPU (target " + libxsmm_get_target_arch() + ")");
    kernels.push_back({m, n, ldc, fn});
  }
  void tile(int64_t nb, const T* a, const T* b, T* Ct, int64_t ldc, int64_t m, int64_t n) const {
    for (const Entry& e : kernels)
      if (e.m == m && e.n == n && e.ldc == ldc) {
        const unsigned long long count = static_cast<unsigned long long>(nb);
        e.fn(b, a, Ct, &count);
        return;
      }
    // Not reached: every shape is dispatched up front (a missing one would be a driver bug).
    throw Error("gemm/sfc_ca_libxsmm: no kernel for a " + std::to_string(m) + "x" + std::to_string(n) + " tile");
  }
};

// LIBXSMM 1.17's first libxsmm_init puts OMP_PROC_BIND=TRUE into the environment when it is
// unset. This process's OpenMP runtime read its settings at load, but every child would bind its
// threads (each MPI rank's initial thread to the first CPU of its mask, likwid-bench's), and
// bench.json would report a binding the user never asked for: keep the user's environment.
void init() {
  static const bool once = [] {
    const bool had = std::getenv("OMP_PROC_BIND") != nullptr;
    libxsmm_init();
    if (!had) unsetenv("OMP_PROC_BIND");
    return true;
  }();
  (void)once;
}

template <class T>
Compute<T> make(const SfcPlan& p, const Dims& d) {
  check_sfc_plan(p, d);
  auto be = std::make_shared<XsmmBrgemm<T>>(XsmmBrgemm<T>{p.bm, p.bn, p.bk, {}});
  init();
  const int64_t ms[] = {p.bm, d.m % p.bm ? d.m % p.bm : p.bm}, ns[] = {p.bn, d.n % p.bn ? d.n % p.bn : p.bn};
  for (int64_t m : ms)
    for (int64_t n : ns) {
      if (m > d.m || n > d.n) continue;  // a single (edge) tile: bm > M
      be->add(m, n, d.ldc);
      if (p.k_layers > 1) be->add(m, n, d.n);
    }
  auto order = std::make_shared<const std::vector<std::pair<int32_t, int32_t>>>(sfc_order(p, d));
  auto work = std::make_shared<std::vector<T>>(size_t(sfc_workspace(p, d, 1, 1)));
  return [p, be, order, work](const Dims& dd, const T* A, const T* B, T* C) {
    sfc_drive(p, *be, dd, *order, A, B, C, work->data());
  };
}
}  // namespace

std::string libxsmm_info() {
  init();
  return std::string("LIBXSMM ") + LIBXSMM_VERSION + ", JIT target " + libxsmm_get_target_arch();
}
// The JIT target LIBXSMM detected (capped only by a user's LIBXSMM_TARGET).
code_path::Facts libxsmm_facts() {
  static const code_path::Facts f = [] {
    code_path::count_probe();
    init();
    const Isa cpu = host_isa();  // the CPU, not ROOFLAB_MAX_ISA (code_path.hpp)
    code_path::Facts out;
    out.library = std::string("LIBXSMM ") + LIBXSMM_VERSION;
    const std::string target = libxsmm_get_target_arch();
    out.ran = "JIT target " + target;
    out.best = cpu == Isa::avx512 ? "JIT target skx or above"
               : cpu == Isa::avx2  ? "JIT target hsw or above"
                                     : out.ran;
    const auto user = env("LIBXSMM_TARGET");
    out.selected_by = user ? "LIBXSMM_TARGET=" + *user + " set by the user (respected)" : "LIBXSMM's own detection";
    return code_path::judge(out, code_path::libxsmm_target_tier(target), cpu,
                            "this CPU has " + std::string(code_path::tier_name(cpu)));
  }();
  return f;
}
Compute<double> sfc_libxsmm_f64(const SfcPlan& p, const Dims& d) { return make<double>(p, d); }
Compute<float> sfc_libxsmm_f32(const SfcPlan& p, const Dims& d) { return make<float>(p, d); }

}  // namespace rooflab::gemm::detail

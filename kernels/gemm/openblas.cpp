// OpenBLAS baseline: cblas_?gemm, RowMajor, alpha = beta = 1. BLIS exports cblas_* too, so
// the entry points are looked up inside libopenblas itself (dlsym on its own handle), never
// left to link order. Threads: openblas_set_num_threads() before every call (OpenBLAS's
// pthread pool ignores OpenMP's setting).
//
// Core: a DYNAMIC_ARCH OpenBLAS picks its kernels ("core") when it loads, and its detection
// lags new CPUs (0.3.21: Haswell on Zen 5, Prescott on some AVX-512 Xeons). Before the first
// call rooflab checks the core against this CPU (code_path.hpp); when it is of a lower ISA tier
// and the user did not set OPENBLAS_CORETYPE, it re-runs OpenBLAS's own core selection
// (gotoblas_dynamic_quit / gotoblas_dynamic_init, what the library's constructor calls) with
// OPENBLAS_CORETYPE set for that call only, then restores the environment. libopenblas cannot
// simply be dlopen'ed later with the variable set: LIBXSMM's BLAS wrappers link it, so it is
// loaded (and its constructor has run) before main.
#include <cblas.h>
#include <dlfcn.h>

#include <string>
#include <type_traits>

#include "harness/error.hpp"
#include "harness/env.hpp"
#include "kernels/gemm/code_path.hpp"
#include "kernels/gemm/detail.hpp"

namespace rooflab::gemm::detail {
namespace {
using DgemmFn = decltype(&cblas_dgemm);
using SgemmFn = decltype(&cblas_sgemm);
using VoidFn = void (*)();

void* openblas_handle() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&openblas_get_config), &info) || !info.dli_fname)
    throw Error("gemm/openblas: cannot locate libopenblas (dladdr failed)");
  void* h = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
  if (!h) throw Error(std::string("gemm/openblas: dlopen(") + info.dli_fname + ") failed: " + dlerror());
  return h;
}

// The symbol from the shared object that defines openblas_get_config (OpenBLAS only).
void* openblas_symbol(const char* name) {
  void* f = dlsym(openblas_handle(), name);
  if (!f) throw Error(std::string("gemm/openblas: ") + name + " not found in libopenblas");
  return f;
}

const char* kCoreVar = "OPENBLAS_CORETYPE";
}  // namespace

std::string openblas_select_core(const std::string& core) {
  void* h = openblas_handle();
  auto quit = reinterpret_cast<VoidFn>(dlsym(h, "gotoblas_dynamic_quit"));
  auto init = reinterpret_cast<VoidFn>(dlsym(h, "gotoblas_dynamic_init"));
  if (!quit || !init) return "";
  const ScopedEnv scoped(kCoreVar, core);
  quit();
  init();
  return openblas_get_corename();
}

namespace {

std::string version() {
  std::string v = OPENBLAS_VERSION;  // " OpenBLAS 0.3.21 "
  v.erase(0, v.find_first_not_of(' '));
  v.erase(v.find_last_not_of(' ') + 1);
  return v;
}

// Chooses the core once, at the first make() or code_path() call, before any GEMM call.
const code_path::Facts& facts() {
  static const code_path::Facts f = [] {
    code_path::count_probe();
    const Isa cpu = host_isa();  // the CPU, not ROOFLAB_MAX_ISA (code_path.hpp)
    const std::string detected = openblas_get_corename();
    const std::string best = code_path::openblas_best_core(cpu, detected);
    code_path::Facts out;
    out.library = version();
    const auto user = env(kCoreVar);
    if (user) {
      out.selected_by = std::string(kCoreVar) + "=" + *user + " set by the user (respected)";
    } else if (code_path::openblas_core_tier(best) <= code_path::openblas_core_tier(detected)) {
      out.selected_by = "OpenBLAS's own detection";
    } else {
      if (!openblas_select_core(best).empty()) {
        out.selected_by = std::string(kCoreVar) + "=" + best + " set by rooflab for OpenBLAS's core selection only "
                          "(its own detection: " + detected + ")";
      } else {
        out.selected_by = "OpenBLAS's own detection (not a DYNAMIC_ARCH build: the core is fixed at build time)";
      }
    }
    out.ran = std::string("core ") + openblas_get_corename();
    out.best = "core " + best;
    return code_path::judge(out, code_path::openblas_core_tier(openblas_get_corename()),
                            code_path::openblas_core_tier(best),
                            "this CPU has " + std::string(code_path::tier_name(cpu)));
  }();
  return f;
}

// No probe (it runs while the registry is built): the core is in code_path.
std::string info() { return version() + ", openblas_set_num_threads(T) per call"; }

// cblas_dgemm / cblas_sgemm share one signature but for the element type.
template <class T>
Compute<T> make(const Dims&, int threads) {
  facts();
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

const Baseline openblas = {"openblas", true, info, facts, make<double>, make<float>};
}  // namespace rooflab::gemm::detail

#pragma once
// Internal to kernels/gemm: the library baselines' entry points (each in its own translation
// unit, built only when the library was found) as plain compute functions over the contract.
#include <functional>
#include <string>

#include "kernels/gemm/code_path.hpp"
#include "kernels/gemm/gemm.hpp"

namespace rooflab::gemm::detail {

// C += A·B over the contract's dims; may keep state (a oneDNN primitive) in the closure.
template <class T>
using Compute = std::function<void(const Dims&, const T*, const T*, T*)>;

struct Baseline {
  const char* name;
  bool f64;                                     // f32 always
  std::string (*info)();                        // library, version, threading (the code path: code_path)
  // The code path it runs and whether that is its best for this CPU; the first call of any of
  // these entry points makes the library's choice (code_path.hpp).
  const code_path::Facts& (*facts)();
  Compute<double> (*make_f64)(const Dims&, int threads);
  Compute<float> (*make_f32)(const Dims&, int threads);
};

#ifdef ROOFLAB_HAVE_OPENBLAS
extern const Baseline openblas;
// Re-runs OpenBLAS's core selection with OPENBLAS_CORETYPE=core set for that call only (the
// environment is restored after); the core in use after it ("" when the build is not
// DYNAMIC_ARCH, which has no selection to re-run).
std::string openblas_select_core(const std::string& core);
#endif
#if defined(ROOFLAB_HAVE_BLIS)
extern const Baseline blis;
#endif
#ifdef ROOFLAB_HAVE_DNNL
extern const Baseline onednn;
#endif

#ifdef ROOFLAB_HAVE_LIBXSMM
// sfc_ca over LIBXSMM's BRGEMM (variant sfc_ca_libxsmm): the driver with plain row-major blocks.
std::string libxsmm_info();
code_path::Facts libxsmm_facts();
Compute<double> sfc_libxsmm_f64(const SfcPlan& p, const Dims& d);
Compute<float> sfc_libxsmm_f32(const SfcPlan& p, const Dims& d);
#endif

}  // namespace rooflab::gemm::detail

// `microkernel` (COFFEE-CPU): dispatch to the per-ISA tables and the portable (scalar) one.
// "scalar" means no explicit SIMD: baseline x86-64 code, a 4 x 4 element micro-tile as in
// the paper's mr = nr = 4 (the compiler may still use SSE2 on it).
#include <string>
#include <type_traits>

#include "harness/error.hpp"
#include "kernels/sinkhorn/detail.hpp"
#include "kernels/sinkhorn/fused_simd.hpp"
#include "kernels/sinkhorn/microkernel_simd.hpp"

namespace rooflab::sinkhorn {
namespace {
template <class Elem>
struct Scalar {
  using T = Elem;
  using R = Elem;
  static constexpr int64_t W = 1;
  static constexpr int MR = 4;
  static constexpr int64_t NRV = 4;
  static R zero() { return 0; }
  static R set1(T x) { return x; }
  static R load(const T* p) { return *p; }
  static void store(T* p, R x) { *p = x; }
  // W == 1: the masked forms are never reached with n >= 1; n == 0 loads nothing.
  static R loadn(const T* p, int n) { return n > 0 ? *p : T(0); }
  static void storen(T* p, R x, int n) { if (n > 0) *p = x; }
  static R add(R a, R b) { return a + b; }
  static R mul(R a, R b) { return a * b; }
  static T hsum(R x) { return x; }
};
}  // namespace

template <class T>
SkKernels<T> microkernel_kernels(Isa isa) {
  constexpr bool f64 = std::is_same_v<T, double>;
  switch (isa) {
    case Isa::scalar: return mk::table<Scalar<T>>();
    case Isa::avx2:
      if constexpr (f64) return detail::microkernel_avx2_f64; else return detail::microkernel_avx2_f32;
    case Isa::avx512:
      if constexpr (f64) return detail::microkernel_avx512_f64; else return detail::microkernel_avx512_f32;
    case Isa::none: break;
  }
  throw Error("sinkhorn/microkernel: no kernel for isa '" + std::string(to_string(isa)) + "'");
}
template SkKernels<float> microkernel_kernels<float>(Isa);
template SkKernels<double> microkernel_kernels<double>(Isa);

template <class T>
FusedKernels<T> fused_kernels(Isa isa) {
  constexpr bool f64 = std::is_same_v<T, double>;
  switch (isa) {
    case Isa::scalar: return fused::table<Scalar<T>>();
    case Isa::avx2:
      if constexpr (f64) return detail::fused_avx2_f64; else return detail::fused_avx2_f32;
    case Isa::avx512:
      if constexpr (f64) return detail::fused_avx512_f64; else return detail::fused_avx512_f32;
    case Isa::none: break;
  }
  throw Error("sinkhorn fused kernels: no kernel for isa '" + std::string(to_string(isa)) + "'");
}
template FusedKernels<float> fused_kernels<float>(Isa);
template FusedKernels<double> fused_kernels<double>(Isa);

Blocking microkernel_default_blocking(Isa) {
  // The paper's mc = 8; nc = 1024 columns keeps a panel's factors (8 KiB in f64) in L1 next
  // to the streamed rows on every ISA here, so one setting serves them all for now.
  return {8, 1024};
}

}  // namespace rooflab::sinkhorn

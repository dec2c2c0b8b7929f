// `simd` / `regblock` dispatch: the per-ISA tables and the portable "scalar" one. Scalar means
// no intrinsics: baseline x86-64 code, one element per "vector", with a 4 x 2 register block.
// GCC auto-vectorizes the plain kernel's row loop (SSE2) but not the register block, so at
// this ISA regblock is slower than plain (measured ~6 vs ~15 GFLOP/s on an in-L1 64^3 tile,
// Zen 3): it is here for the ablation and as the reference shape, not for speed.
#include <string>
#include <type_traits>

#include "harness/error.hpp"
#include "kernels/floyd_warshall/detail.hpp"
#include "kernels/floyd_warshall/simd_kernels.hpp"

namespace rooflab::fw {
namespace {
template <class Elem>
struct Scalar {
  using T = Elem;
  using R = Elem;
  static constexpr int64_t W = 1;
  static constexpr int MR = 4;
  static constexpr int NRV = 2;
  static R set1(T x) { return x; }
  static R load(const T* p) { return *p; }
  static void store(T* p, R x) { *p = x; }
  // W == 1: the masked forms are never reached (a tail is always shorter than W).
  static R loadn(const T* p, int n) { return n > 0 ? *p : T(0); }
  static void storen(T* p, R x, int n) { if (n > 0) *p = x; }
  static R add(R a, R b) { return a + b; }
  static R min(R a, R b) { return a < b ? a : b; }
};
}  // namespace

template <class T>
Kernels<T> simd_kernels(Isa isa) {
  constexpr bool f64 = std::is_same_v<T, double>;
  switch (isa) {
    case Isa::scalar: return simd::table<Scalar<T>>();
    case Isa::avx2:
      if constexpr (f64) return detail::simd_avx2_f64; else return detail::simd_avx2_f32;
    case Isa::avx512:
      if constexpr (f64) return detail::simd_avx512_f64; else return detail::simd_avx512_f32;
    case Isa::none: break;
  }
  throw Error("floyd_warshall: no SIMD kernel for isa '" + std::string(to_string(isa)) +
              "' (known: scalar, avx2, avx512)");
}
template Kernels<float> simd_kernels<float>(Isa);
template Kernels<double> simd_kernels<double>(Isa);

}  // namespace rooflab::fw

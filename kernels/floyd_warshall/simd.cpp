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
#include "kernels/simd/dispatch.hpp"
#include "kernels/simd/scalar.hpp"

namespace rooflab::fw {
namespace {
template <class Elem>
struct Scalar : ::rooflab::simd::Scalar<Elem> {
  static constexpr int MR = 4;
  static constexpr int NRV = 2;
};
}  // namespace

template <class T>
Kernels<T> simd_kernels(Isa isa) {
  return ::rooflab::simd::pick<T>(isa, simd::table<Scalar<T>>(), detail::simd_avx2_f64, detail::simd_avx2_f32,
                                  detail::simd_avx512_f64, detail::simd_avx512_f32, "floyd_warshall/simd");
}
template Kernels<float> simd_kernels<float>(Isa);
template Kernels<double> simd_kernels<double>(Isa);

}  // namespace rooflab::fw

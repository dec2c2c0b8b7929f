// `simd` / `regblock`, AVX-512: 16 floats / 8 doubles per vector; an 8 x 2-vector register
// block (16 accumulators, as the paper's 16 x 16-lane tile holds 16). Edges use native mask
// registers; min is the paper's masked form (compare to a mask, blend). Compiled always, run
// only where CPUID says so.

#include "kernels/simd/avx512.hpp"
#include "kernels/floyd_warshall/detail.hpp"
#include "kernels/floyd_warshall/simd_kernels.hpp"

namespace rooflab::fw {
namespace {
struct Avx512F32 : ::rooflab::simd::Avx512<float> {
  static constexpr int MR = 8;
  static constexpr int NRV = 2;
  static R min(R a, R b) { return _mm512_mask_blend_ps(_mm512_cmp_ps_mask(a, b, _CMP_LT_OQ), b, a); }
};
struct Avx512F64 : ::rooflab::simd::Avx512<double> {
  static constexpr int MR = 8;
  static constexpr int NRV = 2;
  static R min(R a, R b) { return _mm512_mask_blend_pd(_mm512_cmp_pd_mask(a, b, _CMP_LT_OQ), b, a); }
};
}  // namespace

namespace detail {
constinit const Kernels<float> simd_avx512_f32 = simd::table<Avx512F32>();
constinit const Kernels<double> simd_avx512_f64 = simd::table<Avx512F64>();
}  // namespace detail
}  // namespace rooflab::fw

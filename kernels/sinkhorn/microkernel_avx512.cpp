// `microkernel`, AVX-512: 8 doubles / 16 floats per vector; micro-tile mr = 4 rows x nr = 2
// vectors. Edges use native mask registers. Compiled always, run only where CPUID says so.

#include "kernels/simd/avx512.hpp"
#include "kernels/sinkhorn/detail.hpp"
#include "kernels/sinkhorn/fused_simd.hpp"
#include "kernels/sinkhorn/microkernel_simd.hpp"

namespace rooflab::sinkhorn {
namespace {
struct Avx512F64 : ::rooflab::simd::Avx512<double> {
  static constexpr int MR = 4;
  static constexpr int64_t NRV = 2;
};
struct Avx512F32 : ::rooflab::simd::Avx512<float> {
  static constexpr int MR = 4;
  static constexpr int64_t NRV = 2;
};
}  // namespace

namespace detail {
constinit const SkKernels<double> microkernel_avx512_f64 = mk::table<Avx512F64>();
constinit const SkKernels<float> microkernel_avx512_f32 = mk::table<Avx512F32>();
constinit const FusedKernels<double> fused_avx512_f64 = fused::table<Avx512F64>();
constinit const FusedKernels<float> fused_avx512_f32 = fused::table<Avx512F32>();
}  // namespace detail
}  // namespace rooflab::sinkhorn

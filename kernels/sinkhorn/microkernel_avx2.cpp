// `microkernel`, AVX2: 4 doubles / 8 floats per vector; micro-tile mr = 4 rows x nr = 2
// vectors (one 64-byte cache line of doubles per row). Edges use vmaskmov loads/stores.

#include "kernels/simd/avx2.hpp"
#include "kernels/sinkhorn/detail.hpp"
#include "kernels/sinkhorn/fused_simd.hpp"
#include "kernels/sinkhorn/microkernel_simd.hpp"

namespace rooflab::sinkhorn {
namespace {
struct Avx2F64 : ::rooflab::simd::Avx2<double> {
  static constexpr int MR = 4;
  static constexpr int64_t NRV = 2;
};
struct Avx2F32 : ::rooflab::simd::Avx2<float> {
  static constexpr int MR = 4;
  static constexpr int64_t NRV = 2;
};
}  // namespace

namespace detail {
constinit const SkKernels<double> microkernel_avx2_f64 = mk::table<Avx2F64>();
constinit const SkKernels<float> microkernel_avx2_f32 = mk::table<Avx2F32>();
constinit const FusedKernels<double> fused_avx2_f64 = fused::table<Avx2F64>();
constinit const FusedKernels<float> fused_avx2_f32 = fused::table<Avx2F32>();
}  // namespace detail
}  // namespace rooflab::sinkhorn

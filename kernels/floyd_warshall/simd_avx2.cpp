// `simd` / `regblock`, AVX2: 8 floats / 4 doubles per vector, vminps/vminpd; a 6 x 2-vector
// register block (12 accumulators + 2 B vectors + 1 broadcast of A = 15 of the 16 ymm).
// Edges use vmaskmov loads/stores.

#include "kernels/simd/avx2.hpp"
#include "kernels/floyd_warshall/detail.hpp"
#include "kernels/floyd_warshall/simd_kernels.hpp"

namespace rooflab::fw {
namespace {
struct Avx2F32 : ::rooflab::simd::Avx2<float> {
  static constexpr int MR = 6;
  static constexpr int NRV = 2;
};
struct Avx2F64 : ::rooflab::simd::Avx2<double> {
  static constexpr int MR = 6;
  static constexpr int NRV = 2;
};
}  // namespace

namespace detail {
constinit const Kernels<float> simd_avx2_f32 = simd::table<Avx2F32>();
constinit const Kernels<double> simd_avx2_f64 = simd::table<Avx2F64>();
}  // namespace detail
}  // namespace rooflab::fw

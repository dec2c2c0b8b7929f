// The micro-kernel, AVX2 + FMA: 6 rows x 2 vectors (8 doubles / 16 floats) = 12 accumulators,
// 2 B vectors and 1 broadcast of A: 15 of the 16 ymm registers (the BLIS haswell shape).
#include "kernels/simd/avx2.hpp"
#include "kernels/gemm/ukernel_impl.hpp"

namespace rooflab::gemm {
namespace {
template <class E>
struct Avx2Uk : ::rooflab::simd::Avx2<E> {
  static constexpr int MR = 6;
  static constexpr int NRV = 2;
};
}  // namespace

namespace detail {
extern const Ukernel<double> ukernel_avx2_f64;
extern const Ukernel<float> ukernel_avx2_f32;
constinit const Ukernel<double> ukernel_avx2_f64 = uk::table<Avx2Uk<double>>();
constinit const Ukernel<float> ukernel_avx2_f32 = uk::table<Avx2Uk<float>>();
}  // namespace detail
}  // namespace rooflab::gemm

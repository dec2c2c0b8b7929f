// The micro-kernel, AVX-512: 12 rows x 2 vectors (16 doubles / 32 floats) = 24 accumulators
// of the 32 zmm registers, 2 B vectors and 1 broadcast. Compiled always, run only where
// CPUID says so.
#include "kernels/simd/avx512.hpp"
#include "kernels/gemm/ukernel_impl.hpp"

namespace rooflab::gemm {
namespace {
template <class E>
struct Avx512Uk : ::rooflab::simd::Avx512<E> {
  static constexpr int MR = 12;
  static constexpr int NRV = 2;
};
}  // namespace

namespace detail {
extern const Ukernel<double> ukernel_avx512_f64;
extern const Ukernel<float> ukernel_avx512_f32;
constinit const Ukernel<double> ukernel_avx512_f64 = uk::table<Avx512Uk<double>>();
constinit const Ukernel<float> ukernel_avx512_f32 = uk::table<Avx512Uk<float>>();
}  // namespace detail
}  // namespace rooflab::gemm

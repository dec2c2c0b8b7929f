// `simd` / `regblock` dispatch: the per-ISA tables and the portable "scalar" one (register
// blocks: config.hpp).
#include <string>
#include <type_traits>

#include "harness/error.hpp"
#include "kernels/floyd_warshall/detail.hpp"
#include "kernels/floyd_warshall/simd_kernels.hpp"
#include "kernels/simd/scalar.hpp"

namespace rooflab::fw {

template <class T>
Kernels<T> simd_kernels(Isa isa) {
  namespace vec = ::rooflab::simd;
  return vec::dispatch<T, simd::Body, vec::Scalar, kRegblockShapes.scalar>(isa, detail::simd_avx2, detail::simd_avx512,
                                                                                "floyd_warshall/simd");
}
template Kernels<float> simd_kernels<float>(Isa);
template Kernels<double> simd_kernels<double>(Isa);

}  // namespace rooflab::fw

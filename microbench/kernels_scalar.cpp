// Baseline x86-64 kernels (one element per "vector", kernels/simd/scalar.hpp; the compiler
// may still use SSE2). There is no FMA instruction in the baseline, so fma is a multiply and
// an add (still 2 flops); the streaming store is movnti.
#include "kernels/simd/scalar.hpp"
#include "microbench/kernels_impl.hpp"

namespace rooflab::microbench {
namespace {
// Internal linkage for the instantiations (see kernels_impl.hpp).
template <class E>
struct Scalar : simd::Scalar<E> {};
}  // namespace

const KernelTable& scalar_kernels() {
  static constexpr KernelTable table = detail::make_table<Scalar>(Isa::scalar);
  return table;
}
}  // namespace rooflab::microbench

// AVX2 + FMA kernels (built with -mavx2 -mfma; only called when the CPU has both), over the
// shared traits of kernels/simd/avx2.hpp.
#include "kernels/simd/avx2.hpp"
#include "microbench/kernels_impl.hpp"

namespace rooflab::microbench {
const KernelTable& avx2_kernels() {
  static constexpr KernelTable table = detail::make_table<simd::Avx2>(Isa::avx2);
  return table;
}
}  // namespace rooflab::microbench

// AVX-512 kernels (built with -mavx512f/vl/bw/dq; only called when the CPU has AVX-512F),
// over the shared traits of kernels/simd/avx512.hpp.
#include "kernels/simd/avx512.hpp"
#include "microbench/kernels_impl.hpp"

namespace rooflab::microbench {
const KernelTable& avx512_kernels() {
  static constexpr KernelTable table = detail::make_table<simd::Avx512>(Isa::avx512);
  return table;
}
}  // namespace rooflab::microbench

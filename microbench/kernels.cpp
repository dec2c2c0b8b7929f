// Run-time ISA dispatch for the micro-benchmark kernels.
#include "microbench/kernels.hpp"

#include <string>

#include "harness/error.hpp"

namespace rooflab::microbench {

std::vector<ComputeKernel> compute_kernels(const KernelTable& kt) {
  return {{"fma_f64", kt.fma_f64, 2, kt.lanes_f64},       {"fma_f32", kt.fma_f32, 2, kt.lanes_f32},
          {"add_f64", kt.add_f64, 1, kt.lanes_f64},       {"add_f32", kt.add_f32, 1, kt.lanes_f32},
          {"mul_f64", kt.mul_f64, 1, kt.lanes_f64},       {"mul_f32", kt.mul_f32, 1, kt.lanes_f32},
          {"addmin_f64", kt.addmin_f64, 2, kt.lanes_f64}, {"addmin_f32", kt.addmin_f32, 2, kt.lanes_f32}};
}

const KernelTable& kernels_for(Isa isa) {
  if (!isa_supported(isa))
    throw Error("microbench: this CPU does not support " + std::string(to_string(isa)));
  switch (isa) {
    case Isa::avx512: return avx512_kernels();
    case Isa::avx2: return avx2_kernels();
    default: return scalar_kernels();
  }
}

}  // namespace rooflab::microbench

// Run-time ISA dispatch for the micro-benchmark kernels.
#include "microbench/kernels.hpp"

#include <string>

#include "harness/error.hpp"

namespace rooflab::microbench {

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

// The list of kernel families, in registry order. A new family adds one line here and one
// add_subdirectory in kernels/CMakeLists.txt.
#include "harness/registry.hpp"
#include "kernels/floyd_warshall/floyd_warshall.hpp"
#include "kernels/gemm/gemm.hpp"
#include "kernels/rtamm/rtamm.hpp"
#include "kernels/sinkhorn/cuda/sinkhorn_cuda.hpp"
#include "kernels/sinkhorn/sinkhorn.hpp"

namespace rooflab {
const std::vector<Family>& families() {
  static const std::vector<Family> all = {sinkhorn_family(), floyd_warshall_family(), gemm_family(), rtamm_family(),
                                           sinkhorn_cuda_family()};
  return all;
}
}  // namespace rooflab

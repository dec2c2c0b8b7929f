// families() with the sinkhorn_cuda family only, for the device-side builds (family_check and
// the unit tests built by device_build.sh): the other families need libraries a lent GPU
// machine does not have. Linked before rooflab_families, so the generated families_list.cpp is
// never pulled.
#include "harness/families.hpp"
#include "kernels/sinkhorn/cuda/sinkhorn_cuda.hpp"

namespace rooflab {
const std::vector<Family>& families() {
  static const std::vector<Family> all = {sinkhorn_cuda_family()};
  return all;
}
}  // namespace rooflab

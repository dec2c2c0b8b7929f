// The device API (device.hpp) of a build without nvcc: no device; every device operation
// throws the same reason, which the family reports as its accepts() message.
#include "harness/error.hpp"
#include "kernels/sinkhorn/cuda/device.hpp"

namespace rooflab::sinkhorn_cuda::dev {
namespace {
[[noreturn]] void unavailable() { throw Error("sinkhorn_cuda: " + status().why); }
}  // namespace

const Status& status() {
  static const Status s{false, 0, "built without CUDA (no nvcc found at configure time, or -DROOFLAB_WITH_CUDA=OFF)"};
  return s;
}
Props props() { unavailable(); }
void* alloc(size_t) { unavailable(); }
void release(void*) noexcept {}
void to_device(void*, const void*, size_t) { unavailable(); }
void to_host(void*, const void*, size_t) { unavailable(); }
void zero(void*, size_t) { unavailable(); }
void synchronize() { unavailable(); }
void part2(const Geometry&, const PassArgs<float>&) { unavailable(); }
void part2(const Geometry&, const PassArgs<double>&) { unavailable(); }
void part4(const Geometry&, const PassArgs<float>&) { unavailable(); }
void part4(const Geometry&, const PassArgs<double>&) { unavailable(); }
void factors(float*, float*, const float*, int64_t, float, bool) { unavailable(); }
void factors(double*, double*, const double*, int64_t, double, bool) { unavailable(); }
void scale(float*, int64_t, int64_t, int64_t, const float*, const float*) { unavailable(); }
void scale(double*, int64_t, int64_t, int64_t, const double*, const double*) { unavailable(); }
void fill(float*, int64_t, float) { unavailable(); }
void fill(double*, int64_t, double) { unavailable(); }
StreamResult stream(size_t, int) { unavailable(); }
PeakResult peak(int) { unavailable(); }
}  // namespace rooflab::sinkhorn_cuda::dev

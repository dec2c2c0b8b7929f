// Device presence, properties, memory and copies (see device.hpp).
#include <cuda_runtime.h>

#include <string>

#include "harness/error.hpp"
#include "kernels/sinkhorn/cuda/device.hpp"

namespace rooflab::sinkhorn_cuda::dev {
namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("sinkhorn_cuda: ") + what + ": " + cudaGetErrorString(e));
}
int attribute(cudaDeviceAttr a) {
  int v = 0;
  check(cudaDeviceGetAttribute(&v, a, 0), "cudaDeviceGetAttribute");
  return v;
}
}  // namespace

const Status& status() {
  static const Status s = [] {
    Status st;
    st.built = true;
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      st.why = std::string("no CUDA device (cudaGetDeviceCount: ") + cudaGetErrorString(e) + ")";
      (void)cudaGetLastError();  // clear the sticky error of the failed query
    } else if (n == 0) {
      st.why = "no CUDA device (cudaGetDeviceCount found none)";
    } else {
      st.count = n;
    }
    return st;
  }();
  return s;
}

Props props() {
  if (status().count == 0) throw Error("sinkhorn_cuda: " + status().why);
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, 0), "cudaGetDeviceProperties");
  Props r;
  r.name = p.name;
  r.cc_major = p.major, r.cc_minor = p.minor;
  r.sms = p.multiProcessorCount;
  r.global_bytes = p.totalGlobalMem;
  size_t free_b = 0, total_b = 0;
  check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  r.free_bytes = free_b;
  r.l2_bytes = size_t(p.l2CacheSize);
  r.clock_mhz = attribute(cudaDevAttrClockRate) / 1e3;
  r.memory_clock_mhz = attribute(cudaDevAttrMemoryClockRate) / 1e3;
  r.bus_width_bits = attribute(cudaDevAttrGlobalMemoryBusWidth);
  return r;
}

void* alloc(size_t bytes) {
  void* p = nullptr;
  const cudaError_t e = cudaMalloc(&p, bytes);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    throw Error("sinkhorn_cuda: cannot allocate " + std::to_string(bytes) + " bytes of device memory: " +
                cudaGetErrorString(e));
  }
  return p;
}
void release(void* p) noexcept {
  if (p) (void)cudaFree(p);
}
void to_device(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "copy to the device");
}
void to_host(void* dst, const void* src, size_t bytes) {
  check(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "copy from the device");
}
void zero(void* p, size_t bytes) { check(cudaMemset(p, 0, bytes), "cudaMemset"); }
void synchronize() { check(cudaDeviceSynchronize(), "kernel execution"); }

}  // namespace rooflab::sinkhorn_cuda::dev

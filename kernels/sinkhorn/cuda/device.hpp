#pragma once
// The host's view of the device: memory, the MAP-UOT / fused_uv / baseline kernel launches
// and the device micro-benchmarks. Implemented in CUDA (device.cu, kernels.cu, bench.cu) when
// the build has nvcc, else by no_cuda.cpp, whose functions say "built without CUDA". No CUDA
// types appear here, so plain C++ translation units can include it.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "kernels/sinkhorn/cuda/tiling.hpp"

namespace rooflab::sinkhorn_cuda::dev {

// Whether a device can be used; `why` says why not ("built without CUDA", "no CUDA device
// (cudaGetDeviceCount: ...)"). Queried once per process.
struct Status {
  bool built = false;  // compiled with nvcc
  int count = 0;       // devices visible
  std::string why;     // empty when count > 0
};
const Status& status();

struct Props {
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sms = 0;
  size_t global_bytes = 0, free_bytes = 0, l2_bytes = 0;
  double clock_mhz = 0, memory_clock_mhz = 0;
  int bus_width_bits = 0;
};
Props props();  // device 0; throws Error when there is none

// Device memory and copies; every failure throws Error with CUDA's message.
void* alloc(size_t bytes);
void release(void* p) noexcept;
void to_device(void* dst, const void* src, size_t bytes);
void to_host(void* dst, const void* src, size_t bytes);
void zero(void* p, size_t bytes);
void synchronize();  // waits for the launched kernels; throws on an asynchronous error

// ---- Sinkhorn kernels (kernels.cu). g comes from plan_part2 / plan_part4. -----------------
// Part 2 (MAP-UOT Alg. 2): x = A_ij * w_i; write: A_ij = x; colsum_j += x (atomic per tile).
// Part 4 (MAP-UOT Alg. 3): x = A_ij * w_j; write: A_ij = x; rowsum_i += x (atomic per tile).
// write = false is the read-only form (fused_uv's K^T u and K v, the baseline's sums).
template <class T>
struct PassArgs {
  T* A = nullptr;
  const T* w = nullptr;  // part 2: row weights (length M); part 4: column weights (length N)
  T* sums = nullptr;     // part 2: column sums (N); part 4: row sums (M); added to
  bool write = false;
};
void part2(const Geometry& g, const PassArgs<float>& a);
void part2(const Geometry& g, const PassArgs<double>& a);
void part4(const Geometry& g, const PassArgs<float>& a);
void part4(const Geometry& g, const PassArgs<double>& a);
// Parts 1 and 3: out_i = factor(target_i, sums_i) then sums_i = 0. keep = false: matrix
// form (zero sum -> 1); keep = true: scaling form (zero sum -> out_i unchanged).
void factors(float* out, float* sums, const float* target, int64_t n, float fi, bool keep);
void factors(double* out, double* sums, const double* target, int64_t n, double fi, bool keep);
// Baseline scaling: A_ij *= rowf_i (colf == nullptr) or A_ij *= colf_j (rowf == nullptr).
void scale(float* A, int64_t M, int64_t N, int64_t lda, const float* rowf, const float* colf);
void scale(double* A, int64_t M, int64_t N, int64_t lda, const double* rowf, const double* colf);
void fill(float* p, int64_t n, float v);
void fill(double* p, int64_t n, double v);

// ---- Micro-benchmarks (bench.cu) -----------------------------------------------------------
// BabelStream-style kernels on f64 arrays of n elements, best of `reps` timed launches.
// Bytes counted as the CPU characterization does (no write-allocate): read 1, copy 2,
// update 2, triad 3 arrays x 8n.
struct StreamResult {
  double read = 0, copy = 0, update = 0, triad = 0;  // GB/s
};
StreamResult stream(size_t n, int reps);
// Peak-FLOP kernels: independent FMA (2 flops) or add (1 flop) chains in registers.
struct PeakResult {
  double fma_f32 = 0, fma_f64 = 0, add_f32 = 0, add_f64 = 0;  // GFLOP/s
};
PeakResult peak(int reps);

}  // namespace rooflab::sinkhorn_cuda::dev

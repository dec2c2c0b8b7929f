// Device micro-benchmarks for the GPU roofline: BabelStream-style read / copy / update /
// triad on f64 arrays, and peak-FLOP kernels (FMA and add chains, f32 and f64).
// Each kernel is timed with CUDA events, one warm-up launch, best of `reps` launches (as
// BabelStream reports the fastest run). `inner` passes per launch let a level whose sweep
// is shorter than the launch overhead (L2) be timed; the arrays are not __restrict__ so the
// compiler cannot merge the passes.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <vector>

#include "harness/error.hpp"
#include "harness/measure.hpp"
#include "kernels/sinkhorn/cuda/device.hpp"

namespace rooflab::sinkhorn_cuda::dev {
namespace {
void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string("sinkhorn_cuda bench: ") + what + ": " + cudaGetErrorString(e));
}

constexpr int kThreads = 256;

// Grid-stride loops in which each thread has kUnroll coalesced elements in flight (element
// base + u * threads for u < kUnroll; loads first, then the uses): one element per thread
// does not put enough bytes in flight per SM to saturate an H100's DRAM.
constexpr int kUnroll = 4;
template <class Load, class Use>
__device__ __forceinline__ void stream_loop(size_t n, int inner, Load load, Use use) {
  const size_t threads = size_t(gridDim.x) * blockDim.x;
  for (int r = 0; r < inner; ++r)
    for (size_t base = blockIdx.x * size_t(blockDim.x) + threadIdx.x; base < n; base += kUnroll * threads) {
      double v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const size_t i = base + u * threads;
        v[u] = i < n ? load(i) : 0.0;
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const size_t i = base + u * threads;
        if (i < n) use(i, v[u]);
      }
    }
}

__global__ void init_kernel(double* a, double* b, double* c, size_t n) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x)
    a[i] = 0.1, b[i] = 0.2, c[i] = 0.0;
}
__global__ void copy_kernel(const double* a, double* c, size_t n, int inner) {
  stream_loop(n, inner, [=](size_t i) { return a[i]; }, [=](size_t i, double v) { c[i] = v; });
}
__global__ void update_kernel(double* a, double s, size_t n, int inner) {
  stream_loop(n, inner, [=](size_t i) { return a[i] * s; }, [=](size_t i, double v) { a[i] = v; });
}
__global__ void triad_kernel(double* a, const double* b, const double* c, double s, size_t n, int inner) {
  stream_loop(n, inner, [=](size_t i) { return b[i] + s * c[i]; }, [=](size_t i, double v) { a[i] = v; });
}
// Sum of a, one partial per block (written, so the loads cannot be dropped).
__global__ void read_kernel(const double* a, size_t n, int inner, double* partial) {
  __shared__ double ws[kThreads / 32];
  double s = 0;
  stream_loop(n, inner, [=](size_t i) { return a[i]; }, [&](size_t, double v) { s += v; });
  for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
  if ((threadIdx.x & 31) == 0) ws[threadIdx.x / 32] = s;
  __syncthreads();
  if (threadIdx.x == 0) {
    double t = 0;
    for (int w = 0; w < kThreads / 32; ++w) t += ws[w];
    partial[blockIdx.x] = t;
  }
}

// kChains independent dependency chains per thread keep every FP pipe busy.
constexpr int kChains = 8;
template <class T, bool FMA>
__global__ void peak_kernel(T* out, T a, T b, int iters) {
  T x[kChains];
#pragma unroll
  for (int k = 0; k < kChains; ++k) x[k] = T(threadIdx.x) * T(1e-3) + T(k);
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int k = 0; k < kChains; ++k) x[k] = FMA ? fma(x[k], a, b) : x[k] + b;
  }
  T s = 0;
#pragma unroll
  for (int k = 0; k < kChains; ++k) s += x[k];
  out[blockIdx.x * size_t(blockDim.x) + threadIdx.x] = s;
}

// Best time in seconds of `reps` launches of f (after one warm-up): the measurement driver
// (harness/measure.hpp) with CUDA events as its clock.
template <class F>
double best_seconds(int reps, F f) {
  cudaEvent_t e0, e1;
  check(cudaEventCreate(&e0), "cudaEventCreate");
  check(cudaEventCreate(&e1), "cudaEventCreate");
  const measure::Batch launches = [&](int64_t runs, bool warmup) {
    if (warmup) {
      f();
      check(cudaGetLastError(), "launch");
      return 0.0;
    }
    check(cudaEventRecord(e0), "cudaEventRecord");
    for (int64_t r = 0; r < runs; ++r) f();
    check(cudaEventRecord(e1), "cudaEventRecord");
    check(cudaEventSynchronize(e1), "kernel execution");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, e0, e1), "cudaEventElapsedTime");
    return double(ms) * 1e-3;
  };
  measure::Policy p;
  p.repetitions = std::max(1, reps);
  p.runs_per_sample = 1;
  p.warmup = 1;
  p.quiet.mark = false;  // device time: the host's load does not enter the events
  const double best = measure::measure(launches, p).best();
  check(cudaGetLastError(), "launch");
  (void)cudaEventDestroy(e0);
  (void)cudaEventDestroy(e1);
  return best;
}

struct DevArray {
  double* p = nullptr;
  explicit DevArray(size_t n) { p = static_cast<double*>(alloc(n * sizeof(double))); }
  ~DevArray() { release(p); }
};
}  // namespace

StreamResult stream(size_t n, int reps) {
  if (status().count == 0) throw Error("sinkhorn_cuda bench: " + status().why);
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute");
  DevArray a(n), b(n), c(n);
  init_kernel<<<unsigned(sms) * 8, kThreads>>>(a.p, b.p, c.p, n);
  check(cudaDeviceSynchronize(), "init");
  // Short sweeps (cache-resident arrays) repeat inside the launch to dwarf its overhead.
  const int inner = n * sizeof(double) < (size_t(64) << 20) ? 32 : 1;
  const double bytes = double(n) * sizeof(double) * inner / 1e9;
  // Which grid saturates a level depends on the level (DRAM wants bytes in flight, L2
  // occupancy): each kernel's ceiling is its best over a few grids, as a ceiling should be.
  std::vector<unsigned> grids;
  for (size_t g : {size_t(sms) * 4, size_t(sms) * 8, size_t(sms) * 16, size_t(sms) * 32,
                   (n + kThreads * kUnroll - 1) / (kThreads * kUnroll)})
    if (g >= 1 && g <= size_t(sms) * 32 && std::find(grids.begin(), grids.end(), unsigned(g)) == grids.end())
      grids.push_back(unsigned(g));
  DevArray partial(size_t(sms) * 32);
  auto best = [&](auto launch) {
    double t = 1e30;
    for (unsigned g : grids) t = std::min(t, best_seconds(reps, [&] { launch(g); }));
    return t;
  };
  StreamResult r;
  r.copy = 2 * bytes / best([&](unsigned g) { copy_kernel<<<g, kThreads>>>(a.p, c.p, n, inner); });
  r.update = 2 * bytes / best([&](unsigned g) { update_kernel<<<g, kThreads>>>(a.p, 1.0, n, inner); });
  r.triad = 3 * bytes / best([&](unsigned g) { triad_kernel<<<g, kThreads>>>(a.p, b.p, c.p, 0.4, n, inner); });
  r.read = bytes / best([&](unsigned g) { read_kernel<<<g, kThreads>>>(a.p, n, inner, partial.p); });
  return r;
}

PeakResult peak(int reps) {
  if (status().count == 0) throw Error("sinkhorn_cuda bench: " + status().why);
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute");
  const unsigned blocks = unsigned(sms) * 16;
  const size_t threads = size_t(blocks) * kThreads;
  DevArray out(threads);
  const int iters = 4096;
  const double ops = double(threads) * kChains * iters / 1e9;  // G operations per launch
  float* outf = reinterpret_cast<float*>(out.p);
  PeakResult r;
  r.fma_f32 = 2 * ops / best_seconds(reps, [&] { peak_kernel<float, true><<<blocks, kThreads>>>(outf, 0.999f, 1e-7f, iters); });
  r.fma_f64 = 2 * ops / best_seconds(reps, [&] { peak_kernel<double, true><<<blocks, kThreads>>>(out.p, 0.999, 1e-7, iters); });
  r.add_f32 = ops / best_seconds(reps, [&] { peak_kernel<float, false><<<blocks, kThreads>>>(outf, 0.999f, 1e-7f, iters); });
  r.add_f64 = ops / best_seconds(reps, [&] { peak_kernel<double, false><<<blocks, kThreads>>>(out.p, 0.999, 1e-7, iters); });
  return r;
}

}  // namespace rooflab::sinkhorn_cuda::dev

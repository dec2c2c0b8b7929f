#pragma once
// Micro-benchmark kernels, one table per ISA (scalar baseline, AVX2+FMA, AVX-512), chosen at
// run time. Kernels do no timing and no allocation; measure.cpp owns both.
//
// Bandwidth kernels stream over double arrays of n elements, `reps` passes per call (read
// returns the sum over all passes, update scales by s^reps). Bytes moved per pass (what the
// curves count, write-allocate excluded): read 1, copy 2, update 2, triad 3 arrays x 8n.
// Whole vectors go through the vector loop, so only n % (vector width) elements are handled
// one at a time.
// The *_streams variants split the same work over S concurrent streams (S = 1, 2, 4, 8, index
// log2 S in the tables): a[0..S) are S disjoint arrays of n elements each, walked in lockstep
// (read sums all S x n; update scales all S x n in place), as a kernel that processes S rows
// of a matrix at once does. Instruction mix per step as in the 1-stream kernel (read: 8
// vector loads into 8 sums, update: max(4, S) vectors), so only the number of address
// streams changes.
// The *_nt variants use non-temporal stores; their destination should be 64-byte aligned
// (an unaligned head is written with ordinary stores).
//
// Compute kernels run `iters` iterations over K independent vector accumulators (enough to
// cover FMA latency x throughput) and return the sum of every lane of every accumulator, so
// the work cannot be elided and tests can check the value analytically:
//   fma:    acc = acc * x + y   (acc0 = 0)      2 flops per lane per iteration
//   add:    acc = acc + y       (acc0 = 0)      1 flop
//   mul:    acc = acc * x       (acc0 = 1)      1 flop
//   addmin: acc = min(acc + y, x) (acc0 = 0)    2 flops (the Floyd-Warshall relaxation)
// The f32 kernels convert x and y to float and accumulate in float.
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "harness/isa.hpp"

namespace rooflab::microbench {

// Independent accumulators per compute kernel: covers latency x throughput on current x86
// (e.g. FMA latency 4 x 2 ports = 8) while 12 + 2 constants still fit 16 vector registers.
inline constexpr int kComputeAccumulators = 12;

using ReadFn = double (*)(const double* a, size_t n, uint64_t reps);
using CopyFn = void (*)(double* b, const double* a, size_t n, uint64_t reps);
using UpdateFn = void (*)(double* a, double s, size_t n, uint64_t reps);
using TriadFn = void (*)(double* a, const double* b, const double* c, double s, size_t n,
                         uint64_t reps);
using ComputeFn = double (*)(uint64_t iters, double x, double y);
using ReadStreamsFn = double (*)(const double* const* a, size_t n, uint64_t reps);
using UpdateStreamsFn = void (*)(double* const* a, double s, size_t n, uint64_t reps);

inline constexpr int kStreamCounts[] = {1, 2, 4, 8};  // the S the *_streams tables provide
// Index of S in kStreamCounts, -1 when not provided.
constexpr int stream_index(int s) { return s == 1 ? 0 : s == 2 ? 1 : s == 4 ? 2 : s == 8 ? 3 : -1; }

// Loads per vector of the read_reload kernels (the ECM overlap test, microbench/overlap.hpp).
inline constexpr int kReloadCounts[] = {1, 2, 3, 4, 6, 8};

struct KernelTable {
  Isa isa;
  ReadFn read;
  CopyFn copy;
  UpdateFn update;
  TriadFn triad;
  CopyFn copy_nt;
  TriadFn triad_nt;
  ReadStreamsFn read_streams[4];      // by stream_index(S)
  UpdateStreamsFn update_streams[4];
  ReadFn read_reload[6];              // by index in kReloadCounts: each vector loaded L times
  ComputeFn fma_f64, fma_f32, add_f64, add_f32, mul_f64, mul_f32, addmin_f64, addmin_f32;
  int lanes_f64;  // accumulators x vector width: values updated per iteration
  int lanes_f32;
};

// The compute kernels of a table by machine.json name ("fma_f64" ...), with their flops per lane
// per iteration: what characterize measures and the `peak` family times among other cases.
struct ComputeKernel {
  const char* name;
  ComputeFn fn;
  double flops_per_lane;
  int lanes;
};
std::vector<ComputeKernel> compute_kernels(const KernelTable& kt);

const KernelTable& scalar_kernels();
const KernelTable& avx2_kernels();
const KernelTable& avx512_kernels();

// ISA support and names come from harness/isa.hpp (isa_supported, best_isa, to_string).
const KernelTable& kernels_for(Isa isa);  // throws rooflab::Error if the CPU lacks `isa`

}  // namespace rooflab::microbench

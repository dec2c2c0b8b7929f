#pragma once
// Timed measurements: bandwidth vs working-set size on pinned threads, pointer-chase latency,
// compute ceilings and a clock estimate. Each point is repeated until one sample lasts at
// least `target_s`, then `samples` samples are taken; callers get the best and the median.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "microbench/kernels.hpp"

namespace rooflab::microbench {

enum class BwKernel { read, copy, update, triad, copy_nt, triad_nt };
inline constexpr BwKernel kAllBwKernels[] = {BwKernel::read,  BwKernel::copy,
                                             BwKernel::update, BwKernel::triad,
                                             BwKernel::copy_nt, BwKernel::triad_nt};
std::string_view name(BwKernel k);
int arrays_touched(BwKernel k);  // working set: read 1, copy 2, update 1, triad 3
int arrays_counted(BwKernel k);  // traffic counted: read 1, copy 2, update 2, triad 3
bool nontemporal(BwKernel k);

struct Timing {
  double target_s = 2e-3;  // minimum duration of one sample
  int samples = 5;
};

struct Stat {
  double best = 0;    // fastest sample (highest rate / lowest latency)
  double median = 0;
};

struct BwPoint {
  size_t bytes;  // working set of all arrays and threads, after rounding to whole cache lines
  Stat gbps;     // S-stream kernels: the placement (kStreamGaps) with the best sample
  std::vector<double> placements_gbps;  // S-stream kernels: best sample per kStreamGaps entry
};
struct BwCurve {
  BwKernel kernel;
  int threads;
  std::vector<BwPoint> points;
  int streams = 1;  // concurrent streams per thread (measure_bandwidth_streams)
};
// A sweep whose samples were disturbed: some point's best sample exceeds its median by more
// than `spread` (0.08: 8%). A quiet in-cache point's samples agree within a few percent.
bool has_spread_point(const std::vector<BwCurve>& curves, double spread);
// Point by point, keeps whichever of two measurements of the same curves (same kernels, threads
// and sizes, e.g. a sweep repeated later) has the faster best sample. Throws Error when they differ.
void keep_faster(std::vector<BwCurve>& into, const std::vector<BwCurve>& again);
// "read" for 1 stream, "read_s4" for 4: the name of the curve and of its ceiling.
std::string curve_name(BwKernel k, int streams);
// Kernels that have S-stream forms (KernelTable::*_streams): read and update.
bool has_streams(BwKernel k);

using Progress = std::function<void(const std::string&)>;

// Where the S arrays of an S-stream kernel start: stream q at q x (G + gap) bytes into the
// thread's buffer, G = one stream's share of the largest working set rounded up to a huge page,
// so that only `gap` sets the streams' relative 4 KiB and huge-page phases. Each point is
// measured at every gap and the best kept, since the phase that suits one kernel slows another
// (KVM Zen 4, 4 x 64 MiB, best of 5 interleaved rounds: gap 64 B read 34 GB/s, update 53;
// gap 2112 B + 37 pages read 29, update 54; gap 2112 B update 43, its streams 0 and 2 then
// 128 B apart mod 4 KiB, a false store-to-load dependency).
inline constexpr size_t kStreamGaps[] = {64, 33 * 64 + 37 * 4096};
size_t stream_offset(int q, size_t stream_bytes, size_t gap, size_t huge_page);

// Elements per array per thread that measure_bandwidth* use for a working set of `ws` bytes on
// `threads` threads: whole cache lines, at least one, at most `cap` elements (the buffer);
// with S > 1 streams, per stream array (whole lines again).
size_t elements_per_array(size_t ws, BwKernel k, int streams, int threads, size_t cap);

// The arrays one thread's kernel works on: a, b, c (1 stream) or s[0..S) (S streams).
struct BwArrays {
  double* a;
  double* b;
  double* c;
  double* const* s;
};
// One timed sample of kernel k with S streams: `reps` passes over n elements per array, as
// one kernel call (so call and reduction are paid once per sample). Returns the read
// kernels' sum (0 for the others) for the caller to keep. Throws Error for an S the kernel
// lacks.
double run_bandwidth_kernel(const KernelTable& kt, BwKernel k, int streams, const BwArrays& arr,
                            size_t n, uint64_t reps);

// One curve per kernel for `threads` threads pinned to cpus[0..threads-1]. The working set is
// split evenly across threads; each thread allocates and first-touches its own slice.
std::vector<BwCurve> measure_bandwidth(const KernelTable& kt, const std::vector<int>& cpus,
                                       int threads, const std::vector<BwKernel>& kernels,
                                       const std::vector<size_t>& sizes, const Timing& timing,
                                       const Progress& progress);

// As measure_bandwidth, with each thread's share of the working set split into S disjoint
// arrays walked in lockstep, one curve per kernel and S in `streams` (kStreamCounts; S = 1
// is the 1-stream kernel itself). Throws Error for a kernel without S-stream form or another S.
std::vector<BwCurve> measure_bandwidth_streams(const KernelTable& kt, const std::vector<int>& cpus,
                                               int threads, const std::vector<BwKernel>& kernels,
                                               const std::vector<int>& streams,
                                               const std::vector<size_t>& sizes,
                                               const Timing& timing, const Progress& progress);

struct LatencyPoint {
  size_t bytes;
  Stat ns;  // per dependent load
};
// Pointer chase over a random single-cycle permutation of cache lines, on CPU `cpu`.
std::vector<LatencyPoint> measure_latency(int cpu, const std::vector<size_t>& sizes,
                                          const Timing& timing);

// Aggregate GFLOP/s of `fn` on `threads` pinned threads; flops_per_iter is per thread.
Stat measure_compute(ComputeFn fn, double flops_per_iter, const std::vector<int>& cpus,
                     int threads, const Timing& timing);

// A ceiling at `threads` threads, each on a core of its own, reaches ~threads x the 1-thread
// one (`one`). Below `floor` x that the threads shared a core for a while (a host that
// co-schedules the vCPUs on one physical core, or an SMT sibling busy with another guest):
// `measure` runs again, at most `max_retries` times, and the best is kept. `still_low` says
// the last word was still below; `retries` how often it ran again.
struct ScalingCheck {
  Stat stat;
  int retries = 0;
  bool still_low = false;
};
ScalingCheck remeasure_if_shared(const std::function<Stat()>& measure, Stat first, double one, int threads,
                                 double floor = 0.75, int max_retries = 3);

// Core clock from a chain of dependent register-register integer adds (1 cycle latency on
// every x86-64 core; an immediate add could be folded at rename, so none is used).
double estimate_clock_ghz(int cpu, const Timing& timing);

// The clock a measured 1-thread FP ceiling implies: gflops / (pipes x lanes x flops per op).
struct FpClockSource {
  std::string kernel;       // e.g. "avx2 fma_f64"
  double gflops = 0;        // its 1-thread ceiling
  double pipes = 0;         // FP pipes assumed to issue it every cycle
  double lanes = 0;         // elements per vector
  double flops_per_op = 0;  // fma 2, add 1
};
struct ClockCheck {
  double integer_chain_ghz = 0;
  std::optional<double> fp_implied_ghz;
  FpClockSource source;
  double tolerance = 0.10;
  bool agree = false;
  std::optional<double> estimate_ghz;  // the integer-chain clock when the two agree
  std::string dropped_reason;          // why there is no estimate, naming both clocks
};
// Keeps the integer-chain clock when it is within `tolerance` (relative) of the FP-implied
// one; otherwise no estimate, with the reason.
ClockCheck check_clock(double integer_chain_ghz, const FpClockSource& fp, double tolerance = 0.10);

}  // namespace rooflab::microbench

#include "microbench/measure.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <numeric>
#include <optional>
#include <random>

#include "harness/buffer.hpp"
#include "harness/error.hpp"
#include "harness/measure.hpp"
#include "microbench/sysinfo.hpp"

namespace rooflab::microbench {

std::string_view name(BwKernel k) {
  switch (k) {
    case BwKernel::read: return "read";
    case BwKernel::copy: return "copy";
    case BwKernel::update: return "update";
    case BwKernel::triad: return "triad";
    case BwKernel::copy_nt: return "copy_nt";
    case BwKernel::triad_nt: return "triad_nt";
  }
  return "?";
}
int arrays_touched(BwKernel k) {
  switch (k) {
    case BwKernel::read:
    case BwKernel::update: return 1;
    case BwKernel::copy:
    case BwKernel::copy_nt: return 2;
    default: return 3;
  }
}
int arrays_counted(BwKernel k) { return k == BwKernel::update ? 2 : arrays_touched(k); }
bool nontemporal(BwKernel k) { return k == BwKernel::copy_nt || k == BwKernel::triad_nt; }
bool has_streams(BwKernel k) { return k == BwKernel::read || k == BwKernel::update; }
std::string curve_name(BwKernel k, int streams) {
  return std::string(name(k)) + (streams == 1 ? "" : "_s" + std::to_string(streams));
}

size_t stream_offset(int q, size_t stream_bytes, size_t gap, size_t huge_page) {
  const size_t g = (stream_bytes + huge_page - 1) / huge_page * huge_page;
  return size_t(q) * (g + gap);
}

size_t elements_per_array(size_t ws, BwKernel k, int streams, int threads, size_t cap) {
  const double lines = double(ws) / double(size_t(arrays_touched(k)) * size_t(threads) * 64);
  size_t n = std::max<size_t>(8, static_cast<size_t>(std::llround(lines)) * 8);
  n = std::min(n, cap);
  if (streams > 1) n = std::max<size_t>(8, n / size_t(streams) / 8 * 8);
  return n;
}

double run_bandwidth_kernel(const KernelTable& kt, BwKernel k, int streams, const BwArrays& arr,
                            size_t n, uint64_t reps) {
  if (streams != 1) {
    const int si = stream_index(streams);
    if (si < 0 || !has_streams(k))
      throw Error("microbench: no " + std::to_string(streams) + "-stream form of '" +
                  std::string(name(k)) + "'");
    if (k == BwKernel::read) return kt.read_streams[si](arr.s, n, reps);
    kt.update_streams[si](arr.s, 1.0, n, reps);
    return 0;
  }
  switch (k) {
    case BwKernel::read: return kt.read(arr.a, n, reps);
    case BwKernel::copy: kt.copy(arr.b, arr.a, n, reps); break;
    case BwKernel::update: kt.update(arr.a, 1.0, n, reps); break;
    case BwKernel::triad: kt.triad(arr.a, arr.b, arr.c, 1.0, n, reps); break;
    case BwKernel::copy_nt: kt.copy_nt(arr.b, arr.a, n, reps); break;
    case BwKernel::triad_nt: kt.triad_nt(arr.a, arr.b, arr.c, 1.0, n, reps); break;
  }
  return 0;
}

namespace {
using Clock = std::chrono::steady_clock;

// Kernel results end here so none is dead code, even under LTO.
std::atomic<double> g_sink;

// The driver's statistics (harness/measure.hpp); the sampling itself stays here (below).
Stat summarize(const std::vector<double>& v, bool higher_is_better) {
  if (v.empty()) throw Error("microbench: no samples");
  const measure::Stats st = measure::stats(v);
  Stat s;
  s.best = higher_is_better ? st.max : st.min;
  s.median = st.median;
  return s;
}

// State shared by the threads of one parallel region; written by the master between barriers.
struct Shared {
  uint64_t reps = 1;
  bool calibrating = true;
  int retries = 0;
  Clock::time_point t0;
  std::vector<double> secs_per_rep;
};

// The inner timing stays specialised (not measure::measure): every thread of a pinned team runs
// its share between barriers, and the calibration times the master's own run, not the team's.
// Called by every thread of the enclosing region (or by a lone thread: the orphaned barriers
// are then no-ops). Grows `reps` until the master's own run lasts >= target/2 and scales it
// to the target (its own time, not barrier to barrier: on a loaded machine waking the other
// threads can take milliseconds, which would otherwise pass for work), then times `timing.samples` samples from the master's barrier to barrier, so a sample ends
// when the slowest thread does. A sample shorter than target/3 means the calibration run was
// disturbed (a thread descheduled by other load) and reps is too small: the samples restart
// with reps scaled up, at most 5 times. Fills sh.secs_per_rep.
template <class Run>
void timed_samples(Shared& sh, bool master, const Timing& timing, Run&& run) {
  if (master) {
    sh.reps = 1;
    sh.calibrating = true;
    sh.retries = 0;
    sh.secs_per_rep.clear();
  }
  for (;;) {
#pragma omp barrier
    if (!sh.calibrating && sh.secs_per_rep.size() >= size_t(timing.samples)) break;
    if (master) sh.t0 = Clock::now();
#pragma omp barrier
    const auto own_start = Clock::now();
    run(sh.reps);
    const double own = std::chrono::duration<double>(Clock::now() - own_start).count();
#pragma omp barrier
    if (!master) continue;
    const double dt = std::chrono::duration<double>(Clock::now() - sh.t0).count();
    const double reps = double(sh.reps);
    if (sh.calibrating) {
      if (own >= timing.target_s / 2) {
        sh.reps = std::max<uint64_t>(1, std::llround(reps * timing.target_s / own));
        sh.calibrating = false;
      } else {
        const double grow = std::clamp(1.2 * timing.target_s / std::max(own, 1e-9), 2.0, 1000.0);
        sh.reps = static_cast<uint64_t>(std::ceil(reps * grow));
      }
    } else if (dt < timing.target_s / 3 && sh.retries < 5) {
      ++sh.retries;
      sh.reps = static_cast<uint64_t>(std::ceil(reps * timing.target_s / std::max(dt, 1e-9)));
      sh.secs_per_rep.clear();
    } else {
      sh.secs_per_rep.push_back(dt / reps);
    }
  }
  // No thread may still be reading `sh` when the master resets it for the next call.
#pragma omp barrier
}

void check_threads(const std::vector<int>& cpus, int threads) {
  if (threads < 1 || threads > static_cast<int>(cpus.size()))
    throw Error("microbench: " + std::to_string(threads) + " threads requested, " +
                std::to_string(cpus.size()) + " cores available");
}

// Pads between arrays (see measure_curves): half a page plus a line, and 37 pages.
constexpr size_t kArrayPad = kStreamGaps[1];

struct CurveSpec {
  BwKernel kernel;
  int streams;
};

std::vector<BwCurve> measure_curves(const KernelTable& kt, const std::vector<int>& cpus,
                                    int threads, const std::vector<CurveSpec>& specs,
                                    const std::vector<size_t>& sizes, const Timing& timing,
                                    const Progress& progress) {
  check_threads(cpus, threads);
  if (sizes.empty() || specs.empty()) return {};
  const size_t max_ws = *std::max_element(sizes.begin(), sizes.end());
  // Per thread: three arrays, each large enough for the whole per-thread working set of a
  // one-array kernel, placed `stride` apart. The stride adds to the array size
  //  - half a page plus a line (2112 B), so a load never shares its 4 KiB page offset with a
  //    store issued fewer than ~60 vector stores earlier (false store-to-load dependency,
  //    "4K aliasing"), and the streams use different cache sets;
  //  - 37 pages, so arrays are never a power-of-two distance apart: AMD Zen's L1 way
  //    predictor tags lines by a hash of linear-address bits 12..27, and arrays exactly
  //    2^27 or 2^28 bytes apart collide in it (measured: L1 copy 130 instead of 205 GB/s).
  // S-stream kernels place their S arrays (each 1/S of the one-array working set) at
  // stream_offset() for each of kStreamGaps.
  const size_t per_array = (max_ws / size_t(threads) + 63) / 64 * 64;
  const size_t stride = per_array + kArrayPad;
  const size_t huge = huge_page_bytes();
  auto sub_bytes = [&](int S) { return (per_array / size_t(S) + 63) / 64 * 64; };
  const size_t max_gap = *std::max_element(std::begin(kStreamGaps), std::end(kStreamGaps));
  size_t buf_bytes = 3 * stride;
  bool multi = false;
  for (const auto& sp : specs) {
    if (sp.streams == 1) continue;
    multi = true;
    buf_bytes = std::max(buf_bytes, stream_offset(sp.streams, sub_bytes(sp.streams), max_gap, huge));
  }

  std::vector<BwCurve> curves;
  for (const auto& sp : specs) curves.push_back({sp.kernel, threads, {}, sp.streams});
  Shared sh;
  std::string error;
  std::exception_ptr progress_error;

#pragma omp parallel num_threads(threads)
  {
    const int tid = omp_get_thread_num();
    const bool master = tid == 0;
    std::optional<ScopedPin> pin;
    PageBuffer buf;
    try {
      pin.emplace(cpus[tid]);
      buf = PageBuffer(buf_bytes);
    } catch (const std::exception& e) {
#pragma omp critical
      error = e.what();
    }
#pragma omp barrier
    if (error.empty()) {
      auto* base = static_cast<char*>(buf.data());
      double* a = reinterpret_cast<double*>(base);
      double* b = reinterpret_cast<double*>(base + stride);
      double* c = reinterpret_cast<double*>(base + 2 * stride);
      // First touch by the owning (pinned) thread places pages on its NUMA node.
      if (multi)  // the S-stream arrays also cover the pads
        for (size_t i = 0; i < buf_bytes / sizeof(double); ++i) a[i] = 1.0;
      for (size_t i = 0; i < per_array / sizeof(double); ++i) {
        a[i] = 1.0;
        b[i] = 2.0;
        c[i] = 0.5;
      }
      double sink = 0;
      for (size_t ki = 0; ki < specs.size(); ++ki) {
        const BwKernel k = specs[ki].kernel;
        const int S = specs[ki].streams;
        const size_t arrays = size_t(arrays_touched(k));
        double* ptr[8];  // the S arrays of an S-stream kernel, placed per gap below
        const BwArrays arr{a, b, c, ptr};
        const size_t gaps = S == 1 ? 1 : std::size(kStreamGaps);
        if (master && progress) try {
          progress("bandwidth " + curve_name(k, S) + " " + std::to_string(threads) +
                   (threads == 1 ? " thread" : " threads") + ": " +
                   std::to_string(sizes.size()) + " sizes, " +
                   format_bytes(double(sizes.front())) + " .. " +
                   format_bytes(double(max_ws)));
        } catch (...) {
          progress_error = std::current_exception();  // never let it escape the region
        }
        size_t last_n = 0;
        for (size_t ws : sizes) {
          const size_t n = elements_per_array(ws, k, S, threads, per_array / sizeof(double));
          if (n == last_n) continue;  // rounding merged two sweep sizes
          last_n = n;
          const double bytes_ws = double(n * sizeof(double) * arrays * size_t(S) * size_t(threads));
          const double traffic = double(n * sizeof(double)) * arrays_counted(k) * S * threads;
          BwPoint pt{size_t(bytes_ws), {}, {}};
          for (size_t g = 0; g < gaps; ++g) {
            for (int q = 0; q < S; ++q)
              ptr[q] = reinterpret_cast<double*>(base + stream_offset(q, sub_bytes(S), kStreamGaps[g], huge));
            auto run = [&](uint64_t reps) { sink += run_bandwidth_kernel(kt, k, S, arr, n, reps); };
            timed_samples(sh, master, timing, run);
            if (master) {
              std::vector<double> gbps;
              for (double s : sh.secs_per_rep) gbps.push_back(traffic / s * 1e-9);
              const Stat st = summarize(gbps, true);
              if (S > 1) pt.placements_gbps.push_back(st.best);
              if (g == 0 || st.best > pt.gbps.best) pt.gbps = st;
            }
          }
          if (master) curves[ki].points.push_back(pt);
        }
      }
      g_sink.store(sink, std::memory_order_relaxed);
    }
  }
  if (!error.empty()) throw Error("microbench: bandwidth setup failed: " + error);
  if (progress_error) std::rethrow_exception(progress_error);
  return curves;
}
}  // namespace

bool has_spread_point(const std::vector<BwCurve>& curves, double spread) {
  for (const auto& c : curves)
    for (const auto& p : c.points)
      if (p.gbps.median > 0 && p.gbps.best > (1 + spread) * p.gbps.median) return true;
  return false;
}

void keep_faster(std::vector<BwCurve>& into, const std::vector<BwCurve>& again) {
  if (into.size() != again.size()) throw Error("microbench: repeated sweep has other curves");
  for (size_t i = 0; i < into.size(); ++i) {
    auto& a = into[i];
    const auto& b = again[i];
    if (a.kernel != b.kernel || a.threads != b.threads || a.streams != b.streams || a.points.size() != b.points.size())
      throw Error("microbench: repeated sweep has other curves");
    for (size_t j = 0; j < a.points.size(); ++j) {
      if (a.points[j].bytes != b.points[j].bytes) throw Error("microbench: repeated sweep has other sizes");
      if (b.points[j].gbps.best > a.points[j].gbps.best) a.points[j] = b.points[j];
    }
  }
}

std::vector<BwCurve> measure_bandwidth(const KernelTable& kt, const std::vector<int>& cpus,
                                       int threads, const std::vector<BwKernel>& kernels,
                                       const std::vector<size_t>& sizes, const Timing& timing,
                                       const Progress& progress) {
  std::vector<CurveSpec> specs;
  for (BwKernel k : kernels) specs.push_back({k, 1});
  return measure_curves(kt, cpus, threads, specs, sizes, timing, progress);
}

std::vector<BwCurve> measure_bandwidth_streams(const KernelTable& kt, const std::vector<int>& cpus,
                                               int threads, const std::vector<BwKernel>& kernels,
                                               const std::vector<int>& streams,
                                               const std::vector<size_t>& sizes,
                                               const Timing& timing, const Progress& progress) {
  std::vector<CurveSpec> specs;
  for (BwKernel k : kernels) {
    if (!has_streams(k))
      throw Error("microbench: kernel '" + std::string(name(k)) +
                  "' has no S-stream form (read and update have)");
    for (int S : streams) {
      if (stream_index(S) < 0)
        throw Error("microbench: " + std::to_string(S) + " streams requested; 1, 2, 4 or 8 are provided");
      specs.push_back({k, S});
    }
  }
  return measure_curves(kt, cpus, threads, specs, sizes, timing, progress);
}

std::vector<LatencyPoint> measure_latency(int cpu, const std::vector<size_t>& sizes,
                                          const Timing& timing) {
  if (sizes.empty()) return {};
  ScopedPin pin(cpu);
  constexpr size_t kLine = 64;
  const size_t max_lines = *std::max_element(sizes.begin(), sizes.end()) / kLine + 1;
  PageBuffer buf(max_lines * kLine);
  auto* base = static_cast<char*>(buf.data());
  auto line = [&](size_t i) { return reinterpret_cast<void**>(base + i * kLine); };
  std::mt19937_64 rng(12345);  // fixed: the same permutation on every run
  std::vector<size_t> order;
  std::vector<LatencyPoint> out;
  Shared sh;
  for (size_t bytes : sizes) {
    const size_t m = std::max<size_t>(2, bytes / kLine);
    // Sattolo's algorithm: a uniformly random permutation that is a single cycle, so the
    // chase visits every line before repeating and no prefetcher can predict it.
    order.resize(m);
    std::iota(order.begin(), order.end(), size_t(0));
    for (size_t i = m - 1; i > 0; --i)
      std::swap(order[i], order[std::uniform_int_distribution<size_t>(0, i - 1)(rng)]);
    for (size_t i = 0; i < m; ++i) *line(order[i]) = line(order[(i + 1) % m]);
    void* p = line(order[0]);
    for (size_t i = 0, warm = std::min<size_t>(m, size_t(1) << 20); i < warm; ++i)
      p = *static_cast<void**>(p);
    auto run = [&](uint64_t loads) {
      for (uint64_t i = 0; i < loads; ++i) p = *static_cast<void**>(p);
    };
    timed_samples(sh, true, timing, run);
    g_sink.store(double(reinterpret_cast<uintptr_t>(p)), std::memory_order_relaxed);
    std::vector<double> ns;
    for (double s : sh.secs_per_rep) ns.push_back(s * 1e9);
    out.push_back({m * kLine, summarize(ns, false)});
  }
  return out;
}

Stat measure_compute(ComputeFn fn, double flops_per_iter, const std::vector<int>& cpus,
                     int threads, const Timing& timing) {
  check_threads(cpus, threads);
  Shared sh;
  std::string error;
#pragma omp parallel num_threads(threads)
  {
    const int tid = omp_get_thread_num();
    std::optional<ScopedPin> pin;
    try {
      pin.emplace(cpus[tid]);
    } catch (const std::exception& e) {
#pragma omp critical
      error = e.what();
    }
#pragma omp barrier
    if (error.empty()) {
      double sink = 0;
      // x = 1 and a tiny y keep every accumulator finite and normal for any iteration count.
      timed_samples(sh, tid == 0, timing, [&](uint64_t iters) { sink += fn(iters, 1.0, 1e-9); });
      g_sink.store(sink, std::memory_order_relaxed);
    }
  }
  if (!error.empty()) throw Error("microbench: " + error);
  std::vector<double> gflops;
  for (double s : sh.secs_per_rep) gflops.push_back(flops_per_iter * threads / s * 1e-9);
  return summarize(gflops, true);
}

double estimate_clock_ghz(int cpu, const Timing& timing) {
  ScopedPin pin(cpu);
  Shared sh;
  uint64_t x = 0;
  // The addend is a register whose value the core cannot know at rename: recent cores fold
  // chains of `add reg, imm` there (several per cycle), never `add reg, reg`.
  volatile uint64_t one = 1;
  const uint64_t y = one;
  timed_samples(sh, true, timing, [&](uint64_t reps) {
    for (uint64_t r = 0; r < reps; ++r)
      asm volatile(".rept 64\n\taddq %1, %0\n\t.endr" : "+r"(x) : "r"(y));
  });
  g_sink.store(double(x), std::memory_order_relaxed);
  return 64.0 / summarize(sh.secs_per_rep, false).best * 1e-9;
}

ClockCheck check_clock(double integer_chain_ghz, const FpClockSource& fp, double tolerance) {
  ClockCheck c;
  c.integer_chain_ghz = integer_chain_ghz;
  c.source = fp;
  c.tolerance = tolerance;
  const double per_cycle = fp.pipes * fp.lanes * fp.flops_per_op;
  if (fp.gflops > 0 && per_cycle > 0) c.fp_implied_ghz = fp.gflops / per_cycle;
  if (!(integer_chain_ghz > 0) || !c.fp_implied_ghz) {
    c.dropped_reason = "no clock to compare with (integer chain " + std::to_string(integer_chain_ghz) +
                       " GHz, FP-implied " + (c.fp_implied_ghz ? std::to_string(*c.fp_implied_ghz) : "none") + ")";
    return c;
  }
  c.agree = std::fabs(integer_chain_ghz / *c.fp_implied_ghz - 1) <= tolerance;
  if (c.agree) {
    c.estimate_ghz = integer_chain_ghz;
  } else {
    char buf[400];
    std::snprintf(buf, sizeof buf,
                  "the dependent integer-add chain gives %.3g GHz, the 1-thread %s ceiling "
                  "(%.4g GFLOP/s over %g pipes x %g lanes x %g flops per cycle) implies %.3g GHz: "
                  "they differ by more than %.0f%%",
                  integer_chain_ghz, fp.kernel.c_str(), fp.gflops, fp.pipes, fp.lanes,
                  fp.flops_per_op, *c.fp_implied_ghz, tolerance * 100);
    c.dropped_reason = buf;
  }
  return c;
}

ScalingCheck remeasure_if_shared(const std::function<Stat()>& measure, Stat first, double one, int threads,
                                 double floor, int max_retries) {
  ScalingCheck c{first};
  const auto low = [&] { return threads > 1 && one > 0 && c.stat.best < floor * threads * one; };
  for (; low() && c.retries < max_retries; ++c.retries) {
    const Stat again = measure();
    if (again.best > c.stat.best) c.stat = again;
  }
  c.still_low = low();
  return c;
}

}  // namespace rooflab::microbench

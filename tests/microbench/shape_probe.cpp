// Runs every bandwidth kernel (1-stream and S-stream) of the given ISA tables once per sweep size
// from 4 KiB to 64 KiB, each run between callgrind client requests (zero the counts, dump them
// tagged "shape <isa> <curve> <bytes> <traffic>"), exactly as measure_bandwidth times a sample:
// elements_per_array and run_bandwidth_kernel for 1 thread, reps passes in one call. Under
// `valgrind --tool=callgrind` each dump holds the instructions of one sample, so
// check_shape.py can compare instructions per byte across sizes; outside valgrind the client
// requests do nothing. Usage: shape_probe ISA... (scalar, avx2, avx512); an ISA the CPU (or
// valgrind's emulated CPU) lacks is reported on stdout and left out.
#include <valgrind/callgrind.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "harness/isa.hpp"
#include "microbench/characterize.hpp"
#include "microbench/kernels.hpp"
#include "microbench/measure.hpp"

using namespace rooflab::microbench;
using rooflab::Isa;

namespace {
constexpr size_t kMaxBytes = 64 * 1024;
// Bytes every sample moves (reps = this / working set, rounded): the calibration scales reps
// with the working set the same way, so per-sample costs weigh the same at every size.
constexpr double kSampleBytes = 1 << 20;

struct Aligned {
  explicit Aligned(size_t doubles)
      : p(static_cast<double*>(std::aligned_alloc(64, (doubles * sizeof(double) + 63) / 64 * 64))) {
    for (size_t i = 0; i < doubles; ++i) p[i] = 1.0;
  }
  ~Aligned() { std::free(p); }
  Aligned(const Aligned&) = delete;
  Aligned& operator=(const Aligned&) = delete;
  double* p;
};
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: shape_probe ISA...\n");
    return 2;
  }
  const std::vector<size_t> sizes = sweep_sizes(kMaxBytes, 4);
  const size_t cap = kMaxBytes / sizeof(double);
  // Separate allocations for every array: a, b, c and 8 stream arrays.
  std::vector<Aligned*> bufs;
  for (int i = 0; i < 11; ++i) bufs.push_back(new Aligned(cap));
  double* streams[8];
  for (int q = 0; q < 8; ++q) streams[q] = bufs[size_t(3 + q)]->p;
  const BwArrays arr{bufs[0]->p, bufs[1]->p, bufs[2]->p, streams};
  double sink = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string isa_name = argv[i];
    const Isa isa = isa_name == "avx512" ? Isa::avx512 : isa_name == "avx2" ? Isa::avx2 : Isa::scalar;
    if (isa_name != to_string(isa)) {
      std::fprintf(stderr, "shape_probe: unknown ISA '%s'\n", argv[i]);
      return 2;
    }
    if (!rooflab::isa_supported(isa)) {
      std::printf("unsupported %s\n", argv[i]);
      continue;
    }
    const KernelTable& kt = kernels_for(isa);
    for (BwKernel k : kAllBwKernels) {
      for (int S : kStreamCounts) {
        if (S > 1 && !has_streams(k)) continue;
        const std::string curve = curve_name(k, S);
        for (size_t ws : sizes) {
          const size_t n = elements_per_array(ws, k, S, 1, cap);
          const double bytes = double(n * sizeof(double)) * arrays_touched(k) * S;
          const double traffic = double(n * sizeof(double)) * arrays_counted(k) * S;
          const auto reps = static_cast<uint64_t>(std::max(1.0, kSampleBytes / bytes + 0.5));
          const std::string tag = "shape " + isa_name + " " + curve + " " +
                                  std::to_string(size_t(bytes)) + " " +
                                  std::to_string(size_t(traffic * double(reps)));
          CALLGRIND_ZERO_STATS;
          sink += run_bandwidth_kernel(kt, k, S, arr, n, reps);
          CALLGRIND_DUMP_STATS_AT(tag.c_str());
          std::printf("%s\n", tag.c_str());
        }
      }
    }
  }
  for (auto* b : bufs) delete b;
  std::fprintf(stderr, "sink %g\n", sink);
  return 0;
}

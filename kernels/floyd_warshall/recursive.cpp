// `recursive`: FW-REC (Park et al. 2004) on the tile grid. A call covers C = rows x cols,
// A = rows x ks, B = ks x cols (ranges of tiles); it splits each range in two and makes the
// paper's 8 calls: k first half C00, C01, C10, C11, then k second half C11, C10, C01, C00.
// Ranges of different sizes split at the same rule, so any two ranges are equal or
// disjoint: C is A exactly when cols == ks, C is B exactly when rows == ks.
//
// Parallelism (OpenMP tasks, only for calls of at least task_min_tiles tiles in some range):
//   C disjoint from A and B: the four calls of a k half write four different C blocks and
//     read only A and B: {1,2,3,4} then {5,6,7,8}.
//   otherwise (the dependencies of FW itself): {1}, {2,3}, {4}, {5}, {6,7}, {8}.
// An odd number of tiles splits unevenly (h = ceil(n/2)); a range of one tile does not split
// (its second half is empty and those calls are skipped), which covers any N.
#include <omp.h>

#include "kernels/floyd_warshall/detail.hpp"

namespace rooflab::fw::detail {
namespace {
struct Range {
  int64_t lo = 0, n = 0;
  bool operator==(const Range&) const = default;
  Range half(int h) const {
    const int64_t first = n > 1 ? (n + 1) / 2 : n;
    return h == 0 ? Range{lo, first} : Range{lo + first, n - first};
  }
};
struct Call {
  Range rows, cols, ks;
};

template <class T>
struct Rec {
  const Grid<T>& g;
  int64_t task_min;

  void run(const Call& c) const {
    if (c.rows.n == 0 || c.cols.n == 0 || c.ks.n == 0) return;
    if (c.rows.n == 1 && c.cols.n == 1 && c.ks.n == 1) return g.op(c.rows.lo, c.cols.lo, c.ks.lo);
    auto sub = [&c](int i, int j, int k) {
      return Call{c.rows.half(i), c.cols.half(j), c.ks.half(k)};
    };
    const Call s[8] = {sub(0, 0, 0), sub(0, 1, 0), sub(1, 0, 0), sub(1, 1, 0),
                       sub(1, 1, 1), sub(1, 0, 1), sub(0, 1, 1), sub(0, 0, 1)};
    const bool spawn = c.rows.n >= task_min || c.cols.n >= task_min || c.ks.n >= task_min;
    const bool aliased = c.cols == c.ks || c.rows == c.ks;
    if (!aliased) {
      group(s, 4, spawn);
      group(s + 4, 4, spawn);
    } else {
      run(s[0]);
      group(s + 1, 2, spawn);
      run(s[3]);
      run(s[4]);
      group(s + 5, 2, spawn);
      run(s[7]);
    }
  }

  // Calls that may run concurrently: all but the last as tasks, the last here, then wait.
  void group(const Call* s, int count, bool spawn) const {
    if (!spawn) {
      for (int i = 0; i < count; ++i) run(s[i]);
      return;
    }
    for (int i = 0; i + 1 < count; ++i) {
      const Call ci = s[i];
#pragma omp task firstprivate(ci)
      run(ci);
    }
    run(s[count - 1]);
#pragma omp taskwait
  }
};
}  // namespace

template <class T>
void recursive_schedule(const Grid<T>& g, int64_t task_min_tiles) {
  const Rec<T> rec{g, task_min_tiles < 1 ? 1 : task_min_tiles};
  const Range all{0, g.nt};
  if (omp_get_max_threads() == 1) return rec.run(Call{all, all, all});  // no task machinery
#pragma omp parallel
#pragma omp single
  rec.run(Call{all, all, all});
}
template void recursive_schedule<float>(const Grid<float>&, int64_t);
template void recursive_schedule<double>(const Grid<double>&, int64_t);
}  // namespace rooflab::fw::detail

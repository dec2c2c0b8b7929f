// `recursive`: FW-REC (Park et al. 2004) on the tile grid. A call covers C = rows x cols,
// A = rows x ks, B = ks x cols (ranges of tiles); it splits each range in two and makes the
// paper's 8 calls: k first half C00, C01, C10, C11, then k second half C11, C10, C01, C00.
// Ranges of different sizes split at the same rule, so any two ranges are equal or
// disjoint: C is A exactly when cols == ks, C is B exactly when rows == ks.
//
// Parallelism: the standard parallel FW-REC, as phases of one team with a barrier between
// them (no tasks: the waits of nested tasks idled one of two threads). Only the diagonal
// call (C = A = B) recurses in parallel; its 8 calls form 6 phases,
//   {1 diagonal}, {2 (C = B), 3 (C = A)}, {4 disjoint}, {5 diagonal}, {6, 7}, {8 disjoint},
// and every non-diagonal call is cut into independent pieces run by the threads:
//   C disjoint from A and B: C blocks (rows and columns), each over all of ks;
//   C = B (rows == ks, the pivot rows): column blocks, each column depends only on itself;
//   C = A (cols == ks, the pivot columns): row blocks.
// Each piece, and a diagonal call below task_min tiles, runs the serial recursion on one
// thread, so the cache-oblivious order holds inside every piece.
// An odd number of tiles splits unevenly (h = ceil(n/2)); a range of one tile does not split
// (its second half is empty and those calls are skipped), which covers any N.
#include <omp.h>

#include <algorithm>
#include <vector>

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
  // Part i of the 2^depth parts that `depth` nested halvings make (some empty when n is small).
  Range part(int depth, int64_t i) const {
    Range r = *this;
    for (int d = depth - 1; d >= 0; --d) r = r.half(int((i >> d) & 1));
    return r;
  }
};
struct Call {
  Range rows, cols, ks;
  bool empty() const { return rows.n == 0 || cols.n == 0 || ks.n == 0; }
};

Call sub(const Call& c, int i, int j, int k) { return Call{c.rows.half(i), c.cols.half(j), c.ks.half(k)}; }

template <class T>
struct Rec {
  const Grid<T>& g;

  // The serial recursion.
  void run(const Call& c) const {
    if (c.empty()) return;
    if (c.rows.n == 1 && c.cols.n == 1 && c.ks.n == 1) return g.op(c.rows.lo, c.cols.lo, c.ks.lo);
    for (const Call& s : {sub(c, 0, 0, 0), sub(c, 0, 1, 0), sub(c, 1, 0, 0), sub(c, 1, 1, 0),
                          sub(c, 1, 1, 1), sub(c, 1, 0, 1), sub(c, 0, 1, 1), sub(c, 0, 0, 1)})
      run(s);
  }
};

// Halvings of a range until it has at least `want` parts (or parts of one tile).
int depth_for(int64_t n, int64_t want) {
  int d = 0;
  while ((int64_t(1) << d) < want && (int64_t(1) << d) < n) ++d;
  return d;
}

// A non-diagonal call cut into independent pieces: 2^dr row parts x 2^dc column parts.
struct Pieces {
  Call c;
  int dr = 0, dc = 0;
  Pieces() = default;
  Pieces(const Call& call, int64_t want) : c(call) {
    if (c.empty()) return;
    const bool rows_free = !(c.rows == c.ks), cols_free = !(c.cols == c.ks);
    if (rows_free && cols_free) {
      // Square-ish blocks: split the longer side first, the other with what is left.
      const bool rows_first = c.rows.n >= c.cols.n;
      int& d1 = rows_first ? dr : dc;
      int& d2 = rows_first ? dc : dr;
      d1 = depth_for(rows_first ? c.rows.n : c.cols.n, want);
      const int64_t got = int64_t(1) << d1;
      d2 = depth_for(rows_first ? c.cols.n : c.rows.n, (want + got - 1) / got);
    } else if (rows_free) {
      dr = depth_for(c.rows.n, want);
    } else if (cols_free) {
      dc = depth_for(c.cols.n, want);
    }
  }
  int64_t count() const { return c.empty() ? 0 : int64_t(1) << (dr + dc); }
  Call piece(int64_t i) const { return Call{c.rows.part(dr, i >> dc), c.cols.part(dc, i & ((int64_t(1) << dc) - 1)), c.ks}; }
};

// One phase's work: the pieces of two independent non-diagonal calls (the second may be
// empty), numbered a's first.
struct Phase {
  Pieces pa, pb;
  Phase(const Call& a, const Call& b, int64_t want) : pa(a, want), pb(b, want) {}
  int64_t count() const { return pa.count() + pb.count(); }
  Call piece(int64_t i) const { return i < pa.count() ? pa.piece(i) : pb.piece(i - pa.count()); }
};

// The parallel recursion of a diagonal call, written once: Par runs it, Count prices it.
// `v.serial(c)` gets a call one thread runs whole, `v.phase(p)` a phase of independent pieces.
template <class Visitor>
void diagonal(const Call& c, int64_t task_min, int64_t want, Visitor& v) {
  if (c.empty()) return;
  if (c.rows.n < task_min || c.rows.n == 1) return v.serial(c);
  diagonal(sub(c, 0, 0, 0), task_min, want, v);
  v.phase(Phase(sub(c, 0, 1, 0), sub(c, 1, 0, 0), want));
  v.phase(Phase(sub(c, 1, 1, 0), Call{}, want));
  diagonal(sub(c, 1, 1, 1), task_min, want, v);
  v.phase(Phase(sub(c, 1, 0, 1), sub(c, 0, 1, 1), want));
  v.phase(Phase(sub(c, 0, 0, 1), Call{}, want));
}

// Run by every thread of the team (the same calls in the same order on all of them).
template <class T>
struct Par {
  const Rec<T>& rec;
  void serial(const Call& c) const {
#pragma omp single
    rec.run(c);
  }
  void phase(const Phase& p) const {
#pragma omp for schedule(dynamic, 1)
    for (int64_t i = 0; i < p.count(); ++i) rec.run(p.piece(i));
  }
};

// The critical path of that recursion in tile ops: a call's ops, its plain ones (the pivot
// tiles, i == j == k: ranges are equal or disjoint, Range), and per phase the pieces dealt in order to the
// least-loaded thread (schedule(dynamic, 1) with pieces of similar size).
struct Count {
  CriticalOps sum;
  int threads;
  static CriticalOps ops(const Call& c) {
    if (c.empty()) return {};
    const double r = double(c.rows.n), n = double(c.cols.n), k = double(c.ks.n);
    return {r * n * k, c.cols == c.ks && c.rows == c.ks ? k : 0};
  }
  void add(const CriticalOps& x) { sum.all += x.all, sum.plain += x.plain; }
  void serial(const Call& c) { add(ops(c)); }
  void phase(const Phase& p) {
    std::vector<CriticalOps> load(size_t(threads), CriticalOps{});
    const auto by_all = [](const CriticalOps& a, const CriticalOps& b) { return a.all < b.all; };
    for (int64_t i = 0; i < p.count(); ++i) {
      const CriticalOps x = ops(p.piece(i));
      auto least = std::min_element(load.begin(), load.end(), by_all);
      least->all += x.all, least->plain += x.plain;
    }
    add(*std::max_element(load.begin(), load.end(), by_all));
  }
};
}  // namespace

CriticalOps recursive_critical_ops(int64_t nt, int64_t task_min_tiles, int threads) {
  const Call all{{0, nt}, {0, nt}, {0, nt}};
  if (threads <= 1) return Count::ops(all);  // recursive_schedule: no team
  Count count{{}, threads};
  diagonal(all, task_min_tiles < 1 ? 1 : task_min_tiles, int64_t(threads), count);
  return count.sum;
}

template <class T>
void recursive_schedule(const Grid<T>& g, int64_t task_min_tiles) {
  const Rec<T> rec{g};
  const Call all{{0, g.nt}, {0, g.nt}, {0, g.nt}};
  const int threads = omp_get_max_threads();
  if (threads == 1) return rec.run(all);  // no team
  // One piece per thread: each piece sweeps all of ks, so more, smaller pieces read A and B
  // more often from the shared cache and memory than they gain in balance.
  const Par<T> par{rec};
#pragma omp parallel
  diagonal(all, task_min_tiles < 1 ? 1 : task_min_tiles, int64_t(threads), par);
}
template void recursive_schedule<float>(const Grid<float>&, int64_t);
template void recursive_schedule<double>(const Grid<double>&, int64_t);
}  // namespace rooflab::fw::detail

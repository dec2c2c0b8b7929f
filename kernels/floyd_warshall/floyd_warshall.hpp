#pragma once
// Floyd-Warshall all-pairs shortest paths (Endo, "Integrating cache oblivious approach with
// modern processor architecture: the case of Floyd-Warshall"): the kernel contract and the family.
//
// D is an n x n distance matrix, row-major, D[i][j] = weight of the edge i -> j, +infinity
// where there is none, 0 on the diagonal. FW replaces it by the shortest-path lengths. IEEE
// +inf is the "no edge" value: inf + w = inf and min(inf, inf) = inf, so no large-sentinel
// overflow can turn an unreachable pair into a finite (or wrapped) distance in f32.
//
// A solver is a schedule (how the N^3 updates are ordered and split across threads) over a
// base kernel (FW-BASE on tiles), in a layout:
//   schedule flat:      for k: for i (OpenMP for): row i relaxed through k (the three loops)
//   schedule blocked:   bs x bs tiles; per pivot tile K: (K,K), then row/column tiles (OpenMP
//                       for), then all others (OpenMP for) — FW-Blocking of the paper
//   schedule recursive: FW-REC(A, B, C) with 8 calls in dependency order down to one tile;
//                       in parallel, the diagonal calls above a size threshold recurse as
//                       phases of one team, the others are cut into one piece per thread
//   layout bdl:         tiles stored contiguously (block data layout); the conversion to and
//                       from it is part of solve(), so it is timed, as in the paper
//   regblock:           the register-blocked kernel (k innermost, C read and written once)
//                       on every tile op but the pivot tile's (C = A = B: the plain kernel)
// Kernels and schedules never allocate; they run inside the caller's OpenMP thread count.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/isa.hpp"
#include "harness/registry.hpp"

namespace rooflab {

// The registry table of the "floyd_warshall" family
// (variants naive, blocked, recursive, simd, bdl, regblock).
const Family& floyd_warshall_family();

namespace fw {

// FW-BASE on rectangles, k outermost:
//   for k < kk: for i < m: for j < n: C[i][j] = min(C[i][j], A[i][k] + B[k][j])
// All three share the row stride ld. C may be the same tile as A and/or B (the pivot row,
// column and tile of FW); the kernels read A[i][k] once per (k, i) and B[k][j] before C[i][j]
// is written, which is exact for those aliasings as long as the diagonal is >= 0.
template <class T>
using BaseFn = void (*)(T* C, const T* A, const T* B, int64_t ld, int64_t m, int64_t n, int64_t kk);

// regblock takes the updates in any order, so it keeps the loops' result for C disjoint from A
// and B, and for C = B with A closed (A[i][k'] <= A[i][k] + A[k][k'] for all i, k, k': FW's
// pivot tile after its own op, whose rows a pivot row tile's updates walk) or C = A with B
// closed: whether row k of B (column k of A) is read before or after its own relaxation, the
// extra terms it brings are sums the closed tile already bounds. Not for C = A = B.
template <class T>
struct Kernels {
  BaseFn<T> plain = nullptr;     // any aliasing
  BaseFn<T> regblock = nullptr;  // see above; nullptr: use plain
};

// The three loops as written (compiled for the baseline ISA; the compiler may vectorize j).
template <class T> Kernels<T> portable_kernels();
// Explicit SIMD: isa scalar (no intrinsics), avx2 or avx512. Returned whatever the CPU
// supports; callers check isa_supported() before running it. Throws Error for other ISAs.
template <class T> Kernels<T> simd_kernels(Isa isa);

enum class Schedule { flat, blocked, recursive };
enum class Layout { standard, bdl };

struct Plan {
  Schedule schedule = Schedule::flat;
  Layout layout = Layout::standard;
  bool regblock = false;
  int64_t bs = 64;         // tile size (blocked, recursive): a power of two
  int64_t task_min = 256;  // recursive: diagonal calls of fewer rows run on one thread
};

// The plain kernel's tile op in L1 (the model's per-level traffic, family.cpp): per k it walks
// C's bs rows, B's row k and A's line of column k in every row, so C is reused at the next k only
// if each L1 set can hold its share of those lines. For sampled tile ops (C, A, B distinct where
// the schedule has them) and k steps: the share of C's lines, and of the A lines read per k,
// that sit in a set holding more of them than it has ways (a cyclic sweep through an
// over-subscribed LRU set misses every time). Row stride `ld` elements (std layout) or the tile's
// own bs (bdl: contiguous tiles); the buffer is taken as 4 KiB aligned.
struct L1Spill {
  double c = 0;      // share of C's lines streamed from L2 at every k
  double a = 0;      // share of the bs A lines per k read from L2
  int max_lines = 0; // the most lines one set holds (C + B's row + A's column)
  int ways = 0, sets = 0;
};
L1Spill l1_spill(const Plan& plan, int64_t np, int64_t ld, int64_t elem_bytes, int64_t l1_bytes, int ways, int line);

// The matrix size solve() works on: n rounded up to a multiple of bs for the tiled schedules
// (the extra rows and columns are vertices without edges: +inf), n for flat.
int64_t padded_size(int64_t n, const Plan& plan);

// The tile ops on a tiled schedule's critical path with `threads` threads: per parallel phase
// the most one thread runs (the schedule's own split: static for blocked, pieces dealt in order
// for recursive), summed over the phases; `plain` those run by the plain kernel (the pivot
// tiles, C = A = B, or every op without register blocking). The model's in-core units (family.cpp): a small
// calibration shape has few tiles per phase, so its threads idle more than the case's do.
struct CriticalOps {
  double all = 0, plain = 0;
};
CriticalOps critical_tile_ops(const Plan& plan, int64_t nt, int threads);

// Solves in place. D is np x np (np = padded_size(n, plan)) with row stride ld >= np, the
// padding rows/columns +inf. work: np * np elements of scratch for layout bdl (else unused).
// Call from outside a parallel region; it uses omp_get_max_threads() threads.
template <class T>
void solve(const Plan& plan, const Kernels<T>& k, T* D, int64_t np, int64_t ld, T* work);

// The benchmark instance of a case (as the family's Variant::make builds it) running the
// given kernels instead of the variant's own (tests inject wrong kernels to see verify()
// fail). Throws Error for a bad case or kernels of the wrong element type.
template <class T>
std::unique_ptr<Instance> make_instance(const Case& c, const Kernels<T>& k);

// Blocked FW (portable kernel, standard layout, np a multiple of bs) that also records
// predecessors: P[i][j] = the vertex before j on a shortest i -> j path (-1: none or i == j).
// P has the same shape and stride as D.
template <class T>
void blocked_with_paths(T* D, int32_t* P, int64_t np, int64_t ld, int64_t bs);
// The path i -> ... -> j read from P (empty if there is none). Throws Error if P loops.
std::vector<int64_t> reconstruct_path(const int32_t* P, int64_t n, int64_t ld, int64_t i, int64_t j);

// ---- Inputs and checks ---------------------------------------------------------------------
// Generators with fixed seeds. Weights are integers (exact in f32 and f64 up to 2^24, far above
// any path length here), so every variant must reproduce the reference exactly whatever the
// order of its updates.
//   dense:    every edge, weight uniform in [1, 100]
//   sparse:   each edge with probability 2%, weight in [1, 100], +inf elsewhere (paper inputs)
//   negative: 5% edges, w(u,v) = w'(u,v) + p(u) - p(v) with w' in [1, 100] and potentials
//             p in [0, 200): many negative edges, no negative cycle (a cycle sums its w' > 0)
//   negcycle: negative plus a cycle of negative total weight through vertices 0 (and 1, 2)
enum class Graph { dense, sparse, negative, negcycle };
std::string to_string(Graph);
Graph parse_graph(const std::string&);  // throws Error

// Fills the n x n matrix D (stride ld) with the graph.
template <class T>
void generate(Graph g, int64_t n, T* D, int64_t ld);
// The potential p(v) used by `negative` / `negcycle` (0 for dense, sparse): w - p(u) + p(v)
// is >= 0 on every edge, so Dijkstra on it gives exact distances (dist + p(u) - p(v)).
double potential(Graph g, int64_t v);

// Throws Error for n <= 0, a NaN weight (naming it) or a -inf weight.
template <class T>
void check_input(const T* D, int64_t n, int64_t ld);
// A vertex v with D[v][v] < 0 (or NaN) after FW, i.e. on a negative cycle; -1 if none.
template <class T>
int64_t negative_cycle_vertex(const T* D, int64_t n, int64_t ld);

// The weight of edge u -> v of the generator's graph (what generate() writes), in double.
double weight(Graph g, int64_t n, int64_t u, int64_t v);
// Reference: the three loops in double on the generator's graph, n x n (row stride n). The
// last result is kept (the benchmark verifies many variants on the same graph in a row).
std::shared_ptr<const std::vector<double>> reference(Graph g, int64_t n);
// Exact single-source distances from s (column t with `to`): Dijkstra on the reduced weights.
// Needs a graph without negative cycles. O(n^2).
std::vector<double> dijkstra_row(Graph g, int64_t n, int64_t s);
std::vector<double> dijkstra_col(Graph g, int64_t n, int64_t t);

}  // namespace fw
}  // namespace rooflab

#pragma once
// Internals shared by the variant files (not part of the contract).
#include "kernels/floyd_warshall/floyd_warshall.hpp"

namespace rooflab::fw::detail {

// The matrix as a grid of nt x nt tiles of bs x bs, in either layout. A tile op (I, J, K) is
// FW-BASE(C = tile(I, J), A = tile(I, K), B = tile(K, J)).
template <class T>
struct Grid {
  T* base = nullptr;
  int64_t ld = 0;  // row stride of the standard layout
  int64_t bs = 0, nt = 0;
  bool bdl = false;
  Kernels<T> k;
  bool regblock = false;

  T* tile(int64_t I, int64_t J) const {
    return bdl ? base + (I * nt + J) * bs * bs : base + I * bs * ld + J * bs;
  }
  int64_t tile_ld() const { return bdl ? bs : ld; }
  void op(int64_t I, int64_t J, int64_t K) const {
    // C is A iff J == K, C is B iff I == K. Only the pivot tile (both) needs the k-order: a
    // pivot row or column tile's other operand is the pivot tile (K, K), closed by its own op
    // before, so the register block's order gives the loops' result (Kernels::regblock).
    const BaseFn<T> f = regblock && k.regblock && !(I == K && J == K) ? k.regblock : k.plain;
    f(tile(I, J), tile(I, K), tile(K, J), tile_ld(), bs, bs, bs);
  }
};

// Schedules (each file one): called from outside a parallel region.
template <class T> void flat_schedule(const Kernels<T>& k, T* D, int64_t n, int64_t ld);
template <class T> void blocked_schedule(const Grid<T>& g);
template <class T> void recursive_schedule(const Grid<T>& g, int64_t task_min_tiles);
// Their critical paths in tile ops (floyd_warshall.hpp critical_tile_ops), as the code above
// splits the work: {all, plain (the pivot tiles: C is A and B)}.
CriticalOps blocked_critical_ops(int64_t nt, int threads);
CriticalOps recursive_critical_ops(int64_t nt, int64_t task_min_tiles, int threads);
// Layout conversion (bdl.cpp): standard np x np (stride ld) <-> tiles of bs x bs.
template <class T> void to_bdl(const T* D, int64_t np, int64_t ld, int64_t bs, T* S);
template <class T> void from_bdl(const T* S, int64_t np, int64_t bs, T* D, int64_t ld);

}  // namespace rooflab::fw::detail

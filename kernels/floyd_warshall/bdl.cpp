// `bdl`: block data layout. Tile (I, J) of the np x np matrix is stored contiguously at
// S + (I * nt + J) * bs * bs with row stride bs, so a tile op touches three contiguous
// bs^2 blocks instead of bs rows ld apart (which, with ld a large power of two, map to a few
// cache sets: the conflict misses the paper's BDL removes). Conversions are OpenMP loops over
// tiles, run inside solve() and so timed, as the paper measures them.
#include <cstring>

#include "kernels/floyd_warshall/detail.hpp"

namespace rooflab::fw::detail {

template <class T>
void to_bdl(const T* D, int64_t np, int64_t ld, int64_t bs, T* S) {
  const int64_t nt = np / bs;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t I = 0; I < nt; ++I)
    for (int64_t J = 0; J < nt; ++J) {
      T* t = S + (I * nt + J) * bs * bs;
      for (int64_t r = 0; r < bs; ++r)
        std::memcpy(t + r * bs, D + (I * bs + r) * ld + J * bs, size_t(bs) * sizeof(T));
    }
}

template <class T>
void from_bdl(const T* S, int64_t np, int64_t bs, T* D, int64_t ld) {
  const int64_t nt = np / bs;
#pragma omp parallel for collapse(2) schedule(static)
  for (int64_t I = 0; I < nt; ++I)
    for (int64_t J = 0; J < nt; ++J) {
      const T* t = S + (I * nt + J) * bs * bs;
      for (int64_t r = 0; r < bs; ++r)
        std::memcpy(D + (I * bs + r) * ld + J * bs, t + r * bs, size_t(bs) * sizeof(T));
    }
}

template void to_bdl<float>(const float*, int64_t, int64_t, int64_t, float*);
template void to_bdl<double>(const double*, int64_t, int64_t, int64_t, double*);
template void from_bdl<float>(const float*, int64_t, int64_t, float*, int64_t);
template void from_bdl<double>(const double*, int64_t, int64_t, double*, int64_t);
}  // namespace rooflab::fw::detail

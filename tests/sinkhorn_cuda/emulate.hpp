#pragma once
// A host emulation of the sinkhorn_cuda kernels: the same blocks, threads, row tiles (with
// the grid-y stride), vector chunks and reductions as kernels.cu, computed on the CPU with
// the tiling.hpp index functions. Plugged into Solver as a Backend, it checks the iteration
// recipes and the index arithmetic against the long-double reference without a device.
// `visits`, when set, counts how often each element of A is touched (exactly once per pass).
#include <cstdlib>
#include <cstring>
#include <vector>

#include "kernels/sinkhorn/cuda/sinkhorn_cuda.hpp"

namespace rooflab::sinkhorn_cuda::emu {

inline std::vector<int>* visits = nullptr;  // M x lda counters, or null
inline std::vector<int>* sum_adds = nullptr;  // atomic adds per sums[] entry, or null

template <class T>
void part2(const Geometry& g, const dev::PassArgs<T>& a) {
  const int width = g.block_x * g.vec, rows_per_tile = g.block_y * g.ny;
  std::vector<T> part(static_cast<size_t>(g.block_y * width)), sw(static_cast<size_t>(rows_per_tile)),
      acc(static_cast<size_t>(g.vec));
  for (int64_t ct = 0; ct < g.col_tiles; ++ct)
    for (int by = 0; by < g.grid_y; ++by)
      for (int64_t rt = by; rt < g.row_tiles; rt += g.grid_y) {
        for (int k = 0; k < rows_per_tile; ++k) {
          const int64_t i = rt * rows_per_tile + k;
          sw[size_t(k)] = i < g.M ? a.w[i] : T(0);
        }
        for (int y = 0; y < g.block_y; ++y)
          for (int x = 0; x < g.block_x; ++x) {
            std::fill(acc.begin(), acc.end(), T(0));
            const int64_t j0 = chunk_col(g, ct, x);
            const int nc = cols_at(g, j0), nr = rows_of(g, rt, y);
            for (int k = 0; k < nr && nc > 0; ++k) {
              const int64_t i = first_row(g, rt, y) + k;
              for (int v = 0; v < nc; ++v) {
                T* p = a.A + i * g.lda + j0 + v;
                const T val = *p * sw[size_t(y * g.ny + k)];
                if (a.write) *p = val;
                acc[size_t(v)] += val;
                if (visits) ++(*visits)[size_t(i * g.lda + j0 + v)];
              }
            }
            for (int v = 0; v < g.vec; ++v) part[size_t(y * width + x * g.vec + v)] = acc[size_t(v)];
          }
        const int64_t col0 = ct * width;
        for (int c = 0; c < width; ++c) {
          if (col0 + c >= g.N) continue;
          T s = T(0);
          for (int y = 0; y < g.block_y; ++y) s += part[size_t(y * width + c)];
          a.sums[col0 + c] += s;
          if (sum_adds) ++(*sum_adds)[size_t(col0 + c)];
        }
      }
}

template <class T>
void part4(const Geometry& g, const dev::PassArgs<T>& a) {
  for (int64_t ct = 0; ct < g.col_tiles; ++ct)
    for (int by = 0; by < g.grid_y; ++by)
      for (int64_t rt = by; rt < g.row_tiles; rt += g.grid_y) {
        const int nr = rows_of(g, rt, 0);
        const int64_t i0 = first_row(g, rt, 0);
        for (int k = 0; k < nr; ++k) {
          T s = T(0);  // the warps' shuffled sums, then their sum in shared memory
          for (int x = 0; x < g.block_x; ++x) {
            const int64_t j0 = chunk_col(g, ct, x);
            const int nc = cols_at(g, j0);
            for (int v = 0; v < nc; ++v) {
              T* p = a.A + (i0 + k) * g.lda + j0 + v;
              const T val = *p * a.w[j0 + v];
              if (a.write) *p = val;
              s += val;
              if (visits) ++(*visits)[size_t((i0 + k) * g.lda + j0 + v)];
            }
          }
          a.sums[i0 + k] += s;
          if (sum_adds) ++(*sum_adds)[size_t(i0 + k)];
        }
      }
}

template <class T>
void factors(T* out, T* sums, const T* target, int64_t n, T fi, bool keep) {
  for (int64_t i = 0; i < n; ++i) {
    out[i] = (keep && sums[i] == T(0)) ? out[i] : factor_of(target[i], sums[i], fi);
    sums[i] = T(0);
  }
}

template <class T>
void scale(T* A, int64_t M, int64_t N, int64_t lda, const T* rowf, const T* colf) {
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) A[i * lda + j] *= colf ? colf[j] : rowf[i];
}

template <class T>
void fill(T* p, int64_t n, T v) {
  std::fill_n(p, n, v);
}

// Host memory, 256-byte aligned like cudaMalloc's.
inline void* alloc(size_t bytes) { return std::aligned_alloc(256, (bytes + 255) / 256 * 256); }
inline void release(void* p) noexcept { std::free(p); }
inline void copy(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
inline void zero(void* p, size_t bytes) { std::memset(p, 0, bytes); }
inline void synchronize() {}

template <class T>
Backend<T> backend() {
  return {alloc, release, copy, copy, zero, synchronize, part2<T>, part4<T>, factors<T>, scale<T>, fill<T>};
}

}  // namespace rooflab::sinkhorn_cuda::emu

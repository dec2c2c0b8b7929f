#pragma once
// Tile geometry of the MAP-UOT GPU kernels (MAP-UOT Sec. 4.2), shared by the CUDA kernels
// and the host: the launch planner and the host-side emulation used by the tests see the
// same index arithmetic the kernels use. Plain structs and inline functions only (no
// exceptions, no std containers), so nvcc can compile it for the device.
#include <cmath>
#include <cstddef>
#include <cstdint>

#if defined(__CUDACC__)
#define ROOFLAB_HD __host__ __device__
#else
#define ROOFLAB_HD
#endif

namespace rooflab::sinkhorn_cuda {

// Part 2 (row scaling + column sums): 2-D blocks of ty x tx threads; thread (y, x) handles
// ny consecutive rows and `vec` consecutive columns, so a block covers a (ty*ny) x (tx*vec)
// sub-matrix. Part 4 (column scaling + row sums): 1-D blocks of tx threads, ny rows each
// (the paper's Algorithm 3), a block covers ny x (tx*vec). vec = 16 / sizeof(T) with 128-bit
// loads, 1 when rows are not 16-byte aligned.
struct Tile2 {
  int ty = 2, tx = 32, ny = 8;  // the paper's best part-2 tile on an RTX 3090 Ti (Fig. 8)
};
struct Tile4 {
  int tx = 128, ny = 8;         // the paper's best part-4 tile (Fig. 8)
};

// A planned launch (see plan_part2 / plan_part4 in sinkhorn_cuda.hpp).
struct Geometry {
  int64_t M = 0, N = 0, lda = 0;
  int block_x = 1, block_y = 1;  // threads per block
  int ny = 1;                    // rows per thread
  int vec = 1;                   // columns per thread (elements of one 128-bit load, or 1)
  int64_t col_tiles = 0;         // blocks along the columns (grid x)
  int64_t row_tiles = 0;         // blocks along the rows; grid y = min(row_tiles, kMaxGridY),
  int grid_y = 0;                //   the kernels stride over the rest
  size_t smem_bytes = 0;         // dynamic shared memory per block
  int64_t cols_per_tile() const { return int64_t(block_x) * vec; }
};

// CUDA limits that hold on every architecture the build targets (sm_80, sm_90).
constexpr int kMaxThreadsPerBlock = 1024;
constexpr int kMaxGridY = 65535;
constexpr size_t kMaxSmemBytes = 48 * 1024;  // without the opt-in attribute
constexpr int kWarp = 32;
constexpr int kMaxNy = 64;

// First column of the vector chunk of thread x in column tile ct.
ROOFLAB_HD inline int64_t chunk_col(const Geometry& g, int64_t ct, int x) {
  return (ct * g.block_x + x) * g.vec;
}
// First row of thread y in row tile rt (part 2: ty threads x ny rows per tile; part 4:
// block_y == 1, so a tile is ny rows).
ROOFLAB_HD inline int64_t first_row(const Geometry& g, int64_t rt, int y) {
  return (rt * g.block_y + y) * g.ny;
}
// Number of rows thread y of row tile rt handles (0..ny; fewer in the last tile).
ROOFLAB_HD inline int rows_of(const Geometry& g, int64_t rt, int y) {
  const int64_t r0 = first_row(g, rt, y);
  const int64_t left = g.M - r0;
  return left <= 0 ? 0 : (left < g.ny ? int(left) : g.ny);
}
// Number of columns of the chunk starting at column j (0..vec; fewer at the right edge).
ROOFLAB_HD inline int cols_at(const Geometry& g, int64_t j) {
  const int64_t left = g.N - j;
  return left <= 0 ? 0 : (left < g.vec ? int(left) : g.vec);
}

// The Sinkhorn factors of sinkhorn.hpp (sk_factor / pot_factor) for host and device: a zero
// sum leaves the factor at 1 (matrix form) or keeps the scaling (scaling form).
template <class T>
ROOFLAB_HD inline T factor_of(T target, T sum, T fi) {
  if (sum == T(0)) return T(1);
  const T f = target / sum;
  if (fi == T(1)) return f;
#if defined(__CUDA_ARCH__)
  return pow(f, fi);
#else
  return std::pow(f, fi);
#endif
}

}  // namespace rooflab::sinkhorn_cuda

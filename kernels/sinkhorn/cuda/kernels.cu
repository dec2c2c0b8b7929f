// The MAP-UOT GPU kernels (MAP-UOT Sec. 4.2, Algorithms 2 and 3), their read-only forms
// (fused_uv, baseline sums), the factor kernels (parts 1 and 3) and the baseline scaling.
// Index arithmetic comes from tiling.hpp, which the host-side tests exercise.
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "harness/error.hpp"
#include "kernels/sinkhorn/cuda/device.hpp"

namespace rooflab::sinkhorn_cuda::dev {
namespace {

void check_launch(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw Error(std::string("sinkhorn_cuda: launching ") + what + ": " + cudaGetErrorString(e));
}

// ---- 128-bit chunks ---------------------------------------------------------------------
// A thread's V consecutive elements of a row. V > 1 only when the row start is 16-byte
// aligned (can_vectorize), so a full chunk is one float4 / double2 access; the last chunk
// of a row may be partial (n < V) and then goes element by element.
template <class T, int V>
struct Vec;
template <>
struct Vec<float, 4> {
  using type = float4;
  __device__ static void unpack(const float4& w, float (&x)[4]) { x[0] = w.x, x[1] = w.y, x[2] = w.z, x[3] = w.w; }
  __device__ static float4 pack(const float (&x)[4]) { return make_float4(x[0], x[1], x[2], x[3]); }
};
template <>
struct Vec<double, 2> {
  using type = double2;
  __device__ static void unpack(const double2& w, double (&x)[2]) { x[0] = w.x, x[1] = w.y; }
  __device__ static double2 pack(const double (&x)[2]) { return make_double2(x[0], x[1]); }
};

// RO: the data is not written by this kernel, so the read-only (non-coherent) path is safe.
template <class T, int V, bool RO>
__device__ __forceinline__ void load(const T* p, int n, T (&x)[V]) {
  if constexpr (V > 1) {
    if (n == V) {
      using W = typename Vec<T, V>::type;
      const W* q = reinterpret_cast<const W*>(p);
      Vec<T, V>::unpack(RO ? __ldg(q) : *q, x);
      return;
    }
  }
#pragma unroll
  for (int v = 0; v < V; ++v) x[v] = v < n ? (RO ? __ldg(p + v) : p[v]) : T(0);
}

template <class T, int V>
__device__ __forceinline__ void store(T* p, int n, const T (&x)[V]) {
  if constexpr (V > 1) {
    if (n == V) {
      *reinterpret_cast<typename Vec<T, V>::type*>(p) = Vec<T, V>::pack(x);
      return;
    }
  }
#pragma unroll
  for (int v = 0; v < V; ++v)
    if (v < n) p[v] = x[v];
}

// ---- Part 2: row scaling + column sums (Algorithm 2) --------------------------------------
// Block (bx, by) = column tile bx, row tiles by, by + gridDim.y, ... Thread (y, x) walks its
// ny rows down its V columns, loading the next row before working on the current one
// (prefetch), scales by the row weight (shared memory), and accumulates its column partials
// in registers; the ty partials of a column are then reduced in shared memory and added to
// the global column sums with one atomic per column and tile.
template <class T, int V, bool WRITE>
__global__ void __launch_bounds__(kMaxThreadsPerBlock)
part2_kernel(Geometry g, T* A, const T* __restrict__ w, T* __restrict__ colsum) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  const int width = g.block_x * V;                  // columns per tile
  T* part = reinterpret_cast<T*>(smem_raw);         // [ty][width] column partials
  T* sw = part + g.block_y * width;                 // [ty * ny] row weights of the tile
  const int x = threadIdx.x, y = threadIdx.y;
  const int tid = y * g.block_x + x, nthreads = g.block_x * g.block_y;
  const int rows_per_tile = g.block_y * g.ny;
  const int64_t ct = blockIdx.x;
  const int64_t j0 = chunk_col(g, ct, x);
  const int nc = cols_at(g, j0);

  for (int64_t rt = blockIdx.y; rt < g.row_tiles; rt += gridDim.y) {
    const int64_t tile_row0 = rt * rows_per_tile;
    for (int k = tid; k < rows_per_tile; k += nthreads) {
      const int64_t i = tile_row0 + k;
      sw[k] = i < g.M ? w[i] : T(0);
    }
    __syncthreads();

    T acc[V];
#pragma unroll
    for (int v = 0; v < V; ++v) acc[v] = T(0);
    const int nr = rows_of(g, rt, y);
    if (nc > 0 && nr > 0) {
      T* p = A + first_row(g, rt, y) * g.lda + j0;
      const T* wk = sw + y * g.ny;
      T cur[V], nxt[V];
      load<T, V, !WRITE>(p, nc, cur);
      for (int k = 0; k < nr; ++k) {
        const bool more = k + 1 < nr;
        if (more) load<T, V, !WRITE>(p + g.lda, nc, nxt);
        const T f = wk[k];
#pragma unroll
        for (int v = 0; v < V; ++v) cur[v] *= f;
        if constexpr (WRITE) store<T, V>(p, nc, cur);
#pragma unroll
        for (int v = 0; v < V; ++v) acc[v] += cur[v];
        if (more) {
#pragma unroll
          for (int v = 0; v < V; ++v) cur[v] = nxt[v];
          p += g.lda;
        }
      }
    }
#pragma unroll
    for (int v = 0; v < V; ++v) part[y * width + x * V + v] = acc[v];
    __syncthreads();

    const int64_t col0 = ct * width;
    for (int c = tid; c < width; c += nthreads) {
      if (col0 + c >= g.N) continue;
      T s = T(0);
      for (int yy = 0; yy < g.block_y; ++yy) s += part[yy * width + c];
      atomicAdd(colsum + col0 + c, s);
    }
    __syncthreads();  // part and sw are rewritten for the next row tile
  }
}

// ---- Part 4: column scaling + row sums (Algorithm 3) --------------------------------------
// 1-D blocks of tx threads (whole warps); block (bx, by) = column tile bx, row tiles by, ...
// Each thread keeps the weights of its V columns in registers, walks the tile's ny rows
// (prefetching the next), and the row's tile sum is a warp shuffle followed by a sum over
// the warps in shared memory and one atomic per row and tile.
template <class T, int V, bool WRITE>
__global__ void __launch_bounds__(kMaxThreadsPerBlock)
part4_kernel(Geometry g, T* A, const T* __restrict__ w, T* __restrict__ rowsum) {
  extern __shared__ __align__(16) unsigned char smem_raw[];
  T* wsum = reinterpret_cast<T*>(smem_raw);  // [ny][nwarps] per-warp row sums
  const int x = threadIdx.x, lane = x & (kWarp - 1), warp = x / kWarp, nwarps = g.block_x / kWarp;
  const int64_t j0 = chunk_col(g, blockIdx.x, x);
  const int nc = cols_at(g, j0);
  T wv[V];
#pragma unroll
  for (int v = 0; v < V; ++v) wv[v] = v < nc ? w[j0 + v] : T(0);

  for (int64_t rt = blockIdx.y; rt < g.row_tiles; rt += gridDim.y) {
    const int nr = rows_of(g, rt, 0);  // the same for the whole block
    const int64_t i0 = first_row(g, rt, 0);
    T* p = A + i0 * g.lda + j0;
    T cur[V], nxt[V];
#pragma unroll
    for (int v = 0; v < V; ++v) cur[v] = nxt[v] = T(0);
    if (nc > 0) load<T, V, !WRITE>(p, nc, cur);
    for (int k = 0; k < nr; ++k) {
      const bool more = k + 1 < nr;
      if (more && nc > 0) load<T, V, !WRITE>(p + g.lda, nc, nxt);
      T t = T(0);
      if (nc > 0) {
#pragma unroll
        for (int v = 0; v < V; ++v) cur[v] *= wv[v];
        if constexpr (WRITE) store<T, V>(p, nc, cur);
#pragma unroll
        for (int v = 0; v < V; ++v) t += cur[v];
      }
      // Every lane reaches the shuffle (threads past the right edge contribute 0).
#pragma unroll
      for (int off = kWarp / 2; off > 0; off >>= 1) t += __shfl_down_sync(0xffffffffu, t, off);
      if (lane == 0) wsum[k * nwarps + warp] = t;
      if (more) {
#pragma unroll
        for (int v = 0; v < V; ++v) cur[v] = nxt[v];
        p += g.lda;
      }
    }
    __syncthreads();
    for (int k = x; k < nr; k += g.block_x) {
      T s = T(0);
      for (int q = 0; q < nwarps; ++q) s += wsum[k * nwarps + q];
      atomicAdd(rowsum + i0 + k, s);
    }
    __syncthreads();  // wsum is rewritten for the next row tile
  }
}

// ---- Parts 1 and 3, baseline scaling, fill -------------------------------------------------
template <class T>
__global__ void factors_kernel(T* out, T* sums, const T* target, int64_t n, T fi, bool keep) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    const T s = sums[i];
    out[i] = (keep && s == T(0)) ? out[i] : factor_of(target[i], s, fi);
    sums[i] = T(0);
  }
}

// Elementwise, as CuPy's broadcast multiply, but kScaleUnroll independent coalesced
// elements per thread: with one 4-byte element per thread an SM has too few bytes in flight
// to reach the DRAM bandwidth, which would make the baseline look worse than it need be.
constexpr int kScaleUnroll = 4;
template <class T>
__global__ void scale_kernel(T* A, int64_t M, int64_t N, int64_t lda, const T* rowf, const T* colf) {
  const int64_t span = int64_t(blockDim.x) * kScaleUnroll;
  for (int64_t i = blockIdx.y; i < M; i += gridDim.y) {
    T* row = A + i * lda;
    const T rf = rowf ? rowf[i] : T(1);
    for (int64_t j0 = blockIdx.x * span + threadIdx.x; j0 < N; j0 += int64_t(gridDim.x) * span) {
      T x[kScaleUnroll];
#pragma unroll
      for (int u = 0; u < kScaleUnroll; ++u) {
        const int64_t j = j0 + u * int64_t(blockDim.x);
        x[u] = j < N ? row[j] * (colf ? colf[j] : rf) : T(0);
      }
#pragma unroll
      for (int u = 0; u < kScaleUnroll; ++u) {
        const int64_t j = j0 + u * int64_t(blockDim.x);
        if (j < N) row[j] = x[u];
      }
    }
  }
}

template <class T>
__global__ void fill_kernel(T* p, int64_t n, T v) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    p[i] = v;
}

// 1-D grid for an O(n) kernel: 256 threads, at most 4096 blocks (grid-stride beyond).
dim3 grid_1d(int64_t n) { return dim3(unsigned(std::min<int64_t>((n + 255) / 256, 4096)), 1, 1); }

// The instantiation for the planned vector width (1 or 16 bytes) and the write flag.
template <class T>
using PassKernel = void (*)(Geometry, T*, const T*, T*);
#define ROOFLAB_PICK(kernel, T, vec, write)                                              \
  ((vec) == 1 ? ((write) ? &kernel<T, 1, true> : &kernel<T, 1, false>)                   \
              : ((write) ? &kernel<T, int(16 / sizeof(T)), true> : &kernel<T, int(16 / sizeof(T)), false>))

template <class T>
void launch_pass(PassKernel<T> k, const Geometry& g, const PassArgs<T>& a, const char* what) {
  const dim3 grid(unsigned(g.col_tiles), unsigned(g.grid_y)), block(unsigned(g.block_x), unsigned(g.block_y));
  k<<<grid, block, g.smem_bytes>>>(g, a.A, a.w, a.sums);
  check_launch(what);
}

template <class T>
void launch_factors(T* out, T* sums, const T* target, int64_t n, T fi, bool keep) {
  factors_kernel<T><<<grid_1d(n), 256>>>(out, sums, target, n, fi, keep);
  check_launch("factors");
}

template <class T>
void launch_scale(T* A, int64_t M, int64_t N, int64_t lda, const T* rowf, const T* colf) {
  const dim3 grid(unsigned(std::min<int64_t>((N + 256 * kScaleUnroll - 1) / (256 * kScaleUnroll), 1024)),
                  unsigned(std::min<int64_t>(M, kMaxGridY)));
  scale_kernel<T><<<grid, 256>>>(A, M, N, lda, rowf, colf);
  check_launch("scale");
}

template <class T>
void launch_fill(T* p, int64_t n, T v) {
  fill_kernel<T><<<grid_1d(n), 256>>>(p, n, v);
  check_launch("fill");
}
}  // namespace

void part2(const Geometry& g, const PassArgs<float>& a) {
  launch_pass(ROOFLAB_PICK(part2_kernel, float, g.vec, a.write), g, a, "part 2");
}
void part2(const Geometry& g, const PassArgs<double>& a) {
  launch_pass(ROOFLAB_PICK(part2_kernel, double, g.vec, a.write), g, a, "part 2");
}
void part4(const Geometry& g, const PassArgs<float>& a) {
  launch_pass(ROOFLAB_PICK(part4_kernel, float, g.vec, a.write), g, a, "part 4");
}
void part4(const Geometry& g, const PassArgs<double>& a) {
  launch_pass(ROOFLAB_PICK(part4_kernel, double, g.vec, a.write), g, a, "part 4");
}
void factors(float* out, float* sums, const float* target, int64_t n, float fi, bool keep) {
  launch_factors(out, sums, target, n, fi, keep);
}
void factors(double* out, double* sums, const double* target, int64_t n, double fi, bool keep) {
  launch_factors(out, sums, target, n, fi, keep);
}
void scale(float* A, int64_t M, int64_t N, int64_t lda, const float* rowf, const float* colf) {
  launch_scale(A, M, N, lda, rowf, colf);
}
void scale(double* A, int64_t M, int64_t N, int64_t lda, const double* rowf, const double* colf) {
  launch_scale(A, M, N, lda, rowf, colf);
}
void fill(float* p, int64_t n, float v) { launch_fill(p, n, v); }
void fill(double* p, int64_t n, double v) { launch_fill(p, n, v); }

}  // namespace rooflab::sinkhorn_cuda::dev

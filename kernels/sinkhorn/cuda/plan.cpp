// Launch planning for the MAP-UOT GPU kernels: tile validation against the CUDA limits and
// the grid for a shape. Host-only, so it is tested on machines without a device.
#include <algorithm>
#include <string>

#include "harness/error.hpp"
#include "kernels/sinkhorn/cuda/sinkhorn_cuda.hpp"

namespace rooflab::sinkhorn_cuda {
namespace {

std::string name2(const Tile2& t) {
  return "part-2 tile ty:" + std::to_string(t.ty) + "/tx:" + std::to_string(t.tx) + "/ny:" + std::to_string(t.ny);
}
std::string name4(const Tile4& t) {
  return "part-4 tile rtx:" + std::to_string(t.tx) + "/rny:" + std::to_string(t.ny);
}

// Shared memory of the kernels (kernels.cu): part 2 keeps ty x (tx*vec) column partials and
// ty*ny row weights; part 4 keeps ny x (tx/32) per-warp row partials.
size_t smem2(const Tile2& t, size_t elem, int vec) {
  return (size_t(t.ty) * size_t(t.tx) * size_t(vec) + size_t(t.ty) * size_t(t.ny)) * elem;
}
size_t smem4(const Tile4& t, size_t elem) { return size_t(t.ny) * size_t(t.tx / kWarp) * elem; }

void check_smem(size_t bytes, const std::string& what) {
  if (bytes > kMaxSmemBytes)
    throw Error(what + " needs " + std::to_string(bytes) + " bytes of shared memory per block, more than the " +
                std::to_string(kMaxSmemBytes) + " a block may use");
}

void check_shape(int64_t M, int64_t N, int64_t lda) {
  if (M < 1 || N < 1) throw Error("sinkhorn_cuda: sizes must be >= 1, got " + std::to_string(M) + "x" + std::to_string(N));
  if (lda < N) throw Error("sinkhorn_cuda: lda " + std::to_string(lda) + " < N " + std::to_string(N));
}

int vec_of(size_t elem, bool vectorize) { return vectorize ? int(16 / elem) : 1; }

void finish(Geometry& g, int64_t rows_per_tile) {
  g.col_tiles = (g.N + g.cols_per_tile() - 1) / g.cols_per_tile();
  g.row_tiles = (g.M + rows_per_tile - 1) / rows_per_tile;
  g.grid_y = int(std::min<int64_t>(g.row_tiles, kMaxGridY));
  if (g.col_tiles > int64_t(0x7fffffff))
    throw Error("sinkhorn_cuda: " + std::to_string(g.col_tiles) + " column tiles exceed the grid's x limit 2^31-1");
}
}  // namespace

bool can_vectorize(const void* A, int64_t lda, size_t elem) {
  return reinterpret_cast<uintptr_t>(A) % 16 == 0 && (size_t(lda) * elem) % 16 == 0;
}

void validate_tile(const Tile2& t, size_t elem) {
  const std::string n = name2(t);
  if (t.ty < 1 || t.tx < 1 || t.ny < 1) throw Error(n + ": ty, tx and ny must be >= 1");
  if (int64_t(t.ty) * t.tx > kMaxThreadsPerBlock)
    throw Error(n + ": ty x tx = " + std::to_string(int64_t(t.ty) * t.tx) + " threads, more than the " +
                std::to_string(kMaxThreadsPerBlock) + " a block may have");
  if (t.ny > kMaxNy) throw Error(n + ": ny must be <= " + std::to_string(kMaxNy));
  check_smem(smem2(t, elem, vec_of(elem, true)), n);  // the vectorized launch needs the most
}

void validate_tile(const Tile4& t, size_t elem) {
  const std::string n = name4(t);
  if (t.tx < kWarp || t.tx > kMaxThreadsPerBlock || t.tx % kWarp != 0)
    throw Error(n + ": rtx must be a multiple of 32 in 32..1024 (row sums are warp shuffles over whole warps)");
  if (t.ny < 1 || t.ny > kMaxNy) throw Error(n + ": rny must be in 1.." + std::to_string(kMaxNy));
  check_smem(smem4(t, elem), n);
}

Geometry plan_part2(int64_t M, int64_t N, int64_t lda, size_t elem, const Tile2& t, bool vectorize) {
  check_shape(M, N, lda);
  validate_tile(t, elem);
  Geometry g;
  g.M = M, g.N = N, g.lda = lda;
  g.block_x = t.tx, g.block_y = t.ty, g.ny = t.ny, g.vec = vec_of(elem, vectorize);
  g.smem_bytes = smem2(t, elem, g.vec);
  finish(g, int64_t(t.ty) * t.ny);
  return g;
}

Geometry plan_part4(int64_t M, int64_t N, int64_t lda, size_t elem, const Tile4& t, bool vectorize) {
  check_shape(M, N, lda);
  validate_tile(t, elem);
  Geometry g;
  g.M = M, g.N = N, g.lda = lda;
  g.block_x = t.tx, g.block_y = 1, g.ny = t.ny, g.vec = vec_of(elem, vectorize);
  g.smem_bytes = smem4(t, elem);
  finish(g, t.ny);
  return g;
}

std::string unavailable_reason() { return dev::status().why; }

}  // namespace rooflab::sinkhorn_cuda

// Generalized Hilbert curve for any w x h rectangle (own implementation of the recursive
// construction popularized by J. Cerveny's "gilbert"): the rectangle, given by its major axis
// a and minor axis b (vectors), is split in two along a if it is much longer than wide,
// otherwise in three (the first and last parts traversed with the axes swapped, as the
// Hilbert curve does); halves are made even where possible so the pieces connect edge to edge.
#include <cstdlib>

#include "harness/error.hpp"
#include "kernels/gemm/gemm.hpp"

namespace rooflab::gemm {
namespace {
using Cells = std::vector<std::pair<int32_t, int32_t>>;

int64_t sgn(int64_t v) { return (v > 0) - (v < 0); }
int64_t floor_half(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

// Cells of the rectangle at (x, y) spanned by a = (ax, ay) (walk direction) and b = (bx, by).
void walk(Cells& out, int64_t x, int64_t y, int64_t ax, int64_t ay, int64_t bx, int64_t by) {
  const int64_t w = std::llabs(ax + ay), h = std::llabs(bx + by);
  const int64_t dax = sgn(ax), day = sgn(ay), dbx = sgn(bx), dby = sgn(by);
  if (h == 1) {  // a single row along a
    for (int64_t i = 0; i < w; ++i, x += dax, y += day) out.emplace_back(int32_t(x), int32_t(y));
    return;
  }
  if (w == 1) {  // a single column along b
    for (int64_t i = 0; i < h; ++i, x += dbx, y += dby) out.emplace_back(int32_t(x), int32_t(y));
    return;
  }
  int64_t ax2 = floor_half(ax), ay2 = floor_half(ay), bx2 = floor_half(bx), by2 = floor_half(by);
  const int64_t w2 = std::llabs(ax2 + ay2), h2 = std::llabs(bx2 + by2);
  if (2 * w > 3 * h) {
    // Long: two halves along a, each traversed in the same orientation.
    if ((w2 & 1) && w > 2) ax2 += dax, ay2 += day;
    walk(out, x, y, ax2, ay2, bx, by);
    walk(out, x + ax2, y + ay2, ax - ax2, ay - ay2, bx, by);
  } else {
    // Up along b (axes swapped), across the far part along a, back down along -b.
    if ((h2 & 1) && h > 2) bx2 += dbx, by2 += dby;
    walk(out, x, y, bx2, by2, ax2, ay2);
    walk(out, x + bx2, y + by2, ax, ay, bx - bx2, by - by2);
    walk(out, x + (ax - dax) + (bx2 - dbx), y + (ay - day) + (by2 - dby), -bx2, -by2, -(ax - ax2),
         -(ay - ay2));
  }
}
}  // namespace

std::vector<std::pair<int32_t, int32_t>> gilbert(int64_t w, int64_t h) {
  if (w < 1 || h < 1)
    throw Error("gilbert: the grid must be at least 1 x 1, got " + std::to_string(w) + " x " + std::to_string(h));
  if (w > (int64_t(1) << 30) || h > (int64_t(1) << 30) || w * h > (int64_t(1) << 32))
    throw Error("gilbert: grid " + std::to_string(w) + " x " + std::to_string(h) + " is too large");
  Cells out;
  out.reserve(size_t(w * h));
  if (w >= h) walk(out, 0, 0, w, 0, 0, h);
  else walk(out, 0, 0, 0, h, w, 0);
  return out;
}

}  // namespace rooflab::gemm

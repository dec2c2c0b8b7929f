// SFC-CA GEMM: C in bm x bn tiles visited along a generalized Hilbert curve, so consecutive
// tiles share an A row-panel or a B column-panel (cache-oblivious reuse in L2/L3); the curve is
// cut into contiguous ranges, one per thread (`omp for schedule(static)`). With k_layers = L,
// K's blocks are split in L contiguous ranges, layer l summing its range into its own copy of
// C (layer 0 into C itself), the copies added at the end: the 2.5D / 3D variants that trade
// the copies' traffic for more parallelism / smaller per-thread working sets. Each tile is a
// sequence of BRGEMMs over kbf K-blocks of bk: per MR x NR register block, C stays in
// registers for the whole batch.
//
// Layout: A and B are first packed (inside run(), timed, in parallel) into blocks: A block
// (i, kb) = bm x bk as MR-slivers, B block (kb, j) = bk x bn as NR-slivers, consecutive kb of
// the same tile row / column at a fixed stride — exactly the strided batch a BRGEMM takes.
// Padding rows / columns / K are zeros, so edge tiles need no special code beyond masked C.
#include <algorithm>

#include "harness/error.hpp"
#include "kernels/gemm/gemm.hpp"
#include "kernels/gemm/sfc_driver.hpp"

namespace rooflab::gemm {
using detail::cdiv;
using detail::round_up;

void check_sfc_plan(const SfcPlan& p, const Dims& d) {
  check_dims(d);
  if (p.bm < 1 || p.bn < 1 || p.bk < 1)
    throw Error("gemm/sfc_ca: bm, bn, bk must be >= 1, got bm:" + std::to_string(p.bm) + " bn:" +
                std::to_string(p.bn) + " bk:" + std::to_string(p.bk));
  // Tiles beyond 2^20 are no tiling; the bound keeps the workspace arithmetic within 64 bits.
  constexpr int64_t kMaxTile = int64_t(1) << 20;
  if (p.bm > kMaxTile || p.bn > kMaxTile || p.bk > kMaxTile)
    throw Error("gemm/sfc_ca: bm, bn, bk must be <= 2^20, got bm:" + std::to_string(p.bm) + " bn:" +
                std::to_string(p.bn) + " bk:" + std::to_string(p.bk));
  const int64_t kb = cdiv(d.k, p.bk);
  if (p.k_layers < 1 || p.k_layers > kb)
    throw Error("gemm/sfc_ca: k_layers must be in [1, K blocks = ceil(K / bk) = " + std::to_string(kb) +
                "], got " + std::to_string(p.k_layers));
  const int64_t per_layer = kb / p.k_layers;  // the smallest layer's share
  if (p.kbf < 1 || p.kbf > per_layer)
    throw Error("gemm/sfc_ca: kbf (K blocks per BRGEMM) must be in [1, " + std::to_string(per_layer) +
                "] (K blocks " + std::to_string(kb) + " / k_layers " + std::to_string(p.k_layers) +
                "), got " + std::to_string(p.kbf));
}

int64_t sfc_workspace(const SfcPlan& p, const Dims& d, int mr, int nr) {
  const int64_t kb = cdiv(d.k, p.bk);
  return kb * p.bk * (cdiv(d.m, p.bm) * round_up(p.bm, mr) + cdiv(d.n, p.bn) * round_up(p.bn, nr)) +
         (p.k_layers - 1) * d.m * d.n;
}

std::vector<std::pair<int32_t, int32_t>> sfc_order(const SfcPlan& p, const Dims& d) {
  check_sfc_plan(p, d);
  // x = tile column (along N), y = tile row (along M).
  return gilbert(cdiv(d.n, p.bn), cdiv(d.m, p.bm));
}

namespace {
// The micro-kernel back end: blocks of MR-slivers (A) / NR-slivers (B), each MR x NR block of a
// tile one micro-kernel call over the whole batch.
template <class T>
struct OwnBrgemm {
  Ukernel<T> uk;
  int64_t bk, bmp, bnp;
  int64_t a_block() const { return bmp * bk; }
  int64_t b_block() const { return bnp * bk; }
  void pack_a(T* dst, const T* A, int64_t lda, int64_t m, int64_t kc) const {
    const int64_t MR = uk.mr;
    for (int64_t s = 0; s * MR < bmp; ++s) {
      const int64_t rows = std::clamp<int64_t>(m - s * MR, 0, MR);
      if (rows > 0) pack_a(rows, kc, A + s * MR * lda, lda, uk.mr, dst + s * MR * bk);
    }
  }
  void pack_b(T* dst, const T* B, int64_t ldb, int64_t kc, int64_t n) const {
    const int64_t NR = uk.nr;
    for (int64_t s = 0; s * NR < bnp; ++s) {
      const int64_t cols = std::clamp<int64_t>(n - s * NR, 0, NR);
      if (cols > 0) pack_b(kc, cols, B + s * NR, ldb, uk.nr, dst + s * NR * bk);
    }
  }
  void tile(int64_t nb, const T* a, const T* b, T* Ct, int64_t ldc, int64_t m, int64_t n) const {
    const int64_t MR = uk.mr, NR = uk.nr;
    for (int64_t jr = 0; jr < n; jr += NR)
      for (int64_t ir = 0; ir < m; ir += MR)
        uk.fn(nb, bk, a + ir * bk, a_block(), b + jr * bk, b_block(), Ct + ir * ldc + jr, ldc,
              std::min(MR, m - ir), std::min(NR, n - jr), {});
  }
  static void pack_a(int64_t m, int64_t kc, const T* A, int64_t lda, int mr, T* dst) {
    gemm::pack_a(m, kc, A, lda, mr, dst);
  }
  static void pack_b(int64_t kc, int64_t n, const T* B, int64_t ldb, int nr, T* dst) {
    gemm::pack_b(kc, n, B, ldb, nr, dst);
  }
};
}  // namespace

template <class T>
void sfc_ca(const SfcPlan& p, const Ukernel<T>& uk, const Dims& d,
            const std::vector<std::pair<int32_t, int32_t>>& order, const T* A, const T* B, T* C, T* work) {
  const OwnBrgemm<T> be{uk, p.bk, round_up(p.bm, uk.mr), round_up(p.bn, uk.nr)};
  detail::sfc_drive(p, be, d, order, A, B, C, work);
}
template void sfc_ca<float>(const SfcPlan&, const Ukernel<float>&, const Dims&,
                            const std::vector<std::pair<int32_t, int32_t>>&, const float*, const float*,
                            float*, float*);
template void sfc_ca<double>(const SfcPlan&, const Ukernel<double>&, const Dims&,
                             const std::vector<std::pair<int32_t, int32_t>>&, const double*, const double*,
                             double*, double*);

}  // namespace rooflab::gemm

#pragma once
// The gemm family's parameters in one place, as BLIS keeps one config per architecture: the
// micro-kernel's register block per ISA (ukernel_impl.hpp builds each ISA's kernel from it;
// the blocking, rtamm's pool, the model and the tests read MR / NR from the resulting tables,
// ukernel<T>(isa)) and sfc_ca's default tiling.
#include <cstdint>

#include "kernels/simd/tables.hpp"

namespace rooflab::gemm {

inline constexpr simd::IsaShapes kUkernelShapes{
    // No intrinsics, one element per "vector" (GCC may still use SSE2).
    .scalar = {4, 4},
    // 12 accumulators, 3 B vectors and 1 broadcast of A fill the 16 ymm; 7 loads per 12 FMAs
    // (BLIS's haswell 6 x 2 needs 8) and a third less A traffic per flop.
    .avx2 = {4, 3},
    // 24 accumulators of the 32 zmm, 3 B vectors and 1 broadcast: 11 loads per 24 FMAs (a
    // 12 x 2 block needs 14), NR a divisor of sfc_ca's 96-wide tile for f64 and f32 alike.
    .avx512 = {8, 3},
};

struct SfcPlan {
  int64_t bm = 0, bn = 0, bk = 0;  // tile of C and K-block
  int64_t k_layers = 1;            // copies of C, each summing a contiguous range of K blocks
  int64_t kbf = 1;                 // K blocks per BRGEMM call
};
// sfc_ca defaults: a 96 x 96 C tile (a multiple of every MR and NR above), K-blocks of 128 and
// batches of 2 (256 of K per BRGEMM: the B sliver fills half of L1, as KC does for blocked).
inline constexpr SfcPlan kSfcDefault{96, 96, 128, 1, 2};

}  // namespace rooflab::gemm

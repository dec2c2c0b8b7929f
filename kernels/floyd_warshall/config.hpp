#pragma once
// The floyd_warshall family's parameters in one place, as BLIS keeps one config per
// architecture: the default tiling (the family table) and, per ISA, the register block of the
// `simd` / `regblock` kernels (simd_kernels.hpp builds each ISA's kernels from it).
#include <cstdint>

#include "kernels/simd/tables.hpp"

namespace rooflab::fw {

constexpr int64_t kDefaultBs = 64;        // tile edge (the paper's choice)
constexpr int64_t kDefaultTaskMin = 256;  // rows below which a diagonal call runs on one thread

// The plain kernel's row groups (simd_kernels.hpp): a group's rows are relaxed pass by pass
// while a pass's vectors of the pivot row stay in registers. A tile's rows (at most 16 KiB a
// group, half of the smallest L1 of the CPU classes seen, 32 KiB) go in groups of 16; longer
// rows one by one, in order, as they stream from beyond L1. The model prices it by this rule.
// Internal linkage: the ISA translation units include this (no shared AVX-512 copy).
constexpr int64_t kPlainGroupRows = 16;
static constexpr int64_t plain_group_rows(int64_t row_elems, int64_t elem_bytes) {
  return row_elems * elem_bytes * kPlainGroupRows <= 16384 ? kPlainGroupRows : 1;
}

inline constexpr simd::IsaShapes kRegblockShapes{
    // No intrinsics: GCC vectorizes the plain kernel's row loop (SSE2) but not the register
    // block, so here regblock is the ablation's reference shape, not a speed-up.
    .scalar = {4, 2},
    // 12 accumulators + 2 B vectors + 1 broadcast of A = 15 of the 16 ymm.
    .avx2 = {6, 2},
    // 16 accumulators, as the paper's 16 x 16-lane tile holds 16.
    .avx512 = {8, 2},
};

}  // namespace rooflab::fw

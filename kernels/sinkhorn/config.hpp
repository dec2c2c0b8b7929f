#pragma once
// The sinkhorn family's per-ISA parameters, in one place (as BLIS's per-architecture configs):
// the micro-kernel's tile, the rows the fused kernels stream at once, and the default
// blockings. microkernel_simd.hpp / fused_simd.hpp build each ISA's kernels from them; the
// family table's model names the stream ceilings from them.
#include <cstdint>

#include "kernels/simd/tables.hpp"

namespace rooflab::sinkhorn {

// The microkernel's mr x nr tile: the paper's mr = 4 rows everywhere; nr = 2 vectors at the
// SIMD ISAs (with AVX2 one 64-byte line of doubles per row), the paper's 4 at scalar.
inline constexpr simd::IsaShapes kMicrokernelShapes{.scalar = {4, 4}, .avx2 = {4, 2}, .avx512 = {4, 2}};

// Rows mapuot / fused_uv stream from DRAM at once (their group G, fused_simd.hpp).
constexpr int kFusedRows = 4;

// The blocking when a case gives no mc:/nc:.
struct Blocking { int64_t mc, nc; };
// blocked: the paper's mc = 8 with 8 KiB panels of doubles.
constexpr Blocking kBlockedDefault{8, 1024};
// microkernel: the paper's mc = 8; nc: panels as wide as the row up to 16384 columns. The
// factors of such a panel stay in L2, which feeds the micro-kernel well enough (one factor
// load per mr rows), while each row segment is one long stream for the hardware prefetcher
// (narrow panels restart the streams at every segment). One setting serves every ISA here.
constexpr Blocking microkernel_default_blocking(Isa) { return {8, 16384}; }

}  // namespace rooflab::sinkhorn

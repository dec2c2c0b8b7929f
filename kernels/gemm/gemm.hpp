#pragma once
// GEMM (C += A·B) and the SFC-CA GEMM of Georganas et al., "Harnessing deep learning and HPC
// kernels via high-level loop and tensor abstractions on CPU architectures" / the SFC-CA paper
// (../shared/papers/sfc-ca-gemm.txt): the kernel contract and the family.
//
// Contract: A is M x K, B is K x N, C is M x N, all row-major with leading dimensions
// lda >= K, ldb >= N, ldc >= N; every variant computes C += A·B (alpha = beta = 1).
// Variants (names as in the registry):
//   ijk ikj jik jki kij kji  the three plain loops in that order; the outermost i or j loop is
//                            an OpenMP for (for kij / kji the middle one)
//   blocked                  BLIS/Goto: NC / KC / MC cache blocking, packed A (MC x KC) and B
//                            (KC x NC) panels, an MR x NR register micro-kernel per ISA
//   sfc_ca                   C in bm x bn tiles ordered along a generalized Hilbert curve,
//                            k_layers copies of C splitting K, each tile a BRGEMM over kbf
//                            K-blocks of bk (the same micro-kernel, batch-reduce form)
//   sfc_ca_libxsmm           sfc_ca with LIBXSMM 1.17's JIT BRGEMM as the tile kernel (when found)
//   openblas blis onednn     the libraries, when found at configure time (onednn: f32 only);
//                            each reports its version / kernel / threading in its description
//                            and Model::note, and runs with the case's thread count
// Kernels never allocate; they use omp_get_max_threads() threads from outside a parallel region.
//
// Benchmark instance (family.cpp): inputs are small integers (A, B in [-2, 2], C0 in [-8, 8]),
// so every summation order is exact and verification compares exactly: all entries against a
// double reference up to M*N*K = 2^27, above that two Freivalds vectors ((C - C0) x == A (B x),
// exact in long double) plus ~390 sampled entries; C's padding columns (ld:+p) must be
// untouched. Each timed unit is C += A·B; reset() (before every repetition) restores C = C0.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "harness/cache_sets.hpp"
#include "harness/isa.hpp"
#include "harness/registry.hpp"
#include "kernels/gemm/config.hpp"

namespace rooflab {

// The registry table of the "gemm" family.
const Family& gemm_family();

namespace gemm {

// The roofline model every C += A·B shares: 2MNK flops at the FMA ceiling, and the minimum
// traffic any GEMM moves from the level its matrices live in (A, B read once, C read and written
// once: "update", counted twice). Families refine the traffic and the note.
Model min_traffic_model(DType dtype, int64_t m, int64_t n, int64_t k);

// ---- The register micro-kernel (batch-reduce form) -------------------------------------------
// C[0:m, 0:n] (row stride ldc) += sum_{b < nb} Ap_b · Bp_b, with Ap_b = A + b * sa an MR x kc
// sliver packed k-major (Ap_b[k * MR + i]) and Bp_b = B + b * sb a kc x NR sliver packed
// k-major (Bp_b[k * NR + j]); m <= MR, n <= NR (edges: masked loads/stores of C only; the
// slivers are zero-padded to MR / NR). nb = 1 is the BLIS micro-kernel; nb > 1 is a BRGEMM
// with strided batch addresses (LIBXSMM's reducebatch_strd), C kept in registers throughout.
// pf: 64-byte lines the kernel prefetches while it runs, spread over its k steps (BLIS's a_next:
// the caller's next A micro-panel, packed or still in A's rows).
// Lines [first, first + lines) of rows of row_lines consecutive lines, stride bytes apart, the
// first row at `rows` (row_lines <= 0: one contiguous row). rows null: none. to_l2: into L2 only
// (lines to be read once soon, e.g. by packing), else into L1.
struct Prefetch {
  const void* rows = nullptr;
  int64_t first = 0, lines = 0, row_lines = 0, stride = 0;
  bool to_l2 = false;
};
template <class T>
using UkernelFn = void (*)(int64_t nb, int64_t kc, const T* A, int64_t sa, const T* B, int64_t sb,
                           T* C, int64_t ldc, int64_t m, int64_t n, Prefetch pf);
template <class T>
struct Ukernel {
  int mr = 0, nr = 0;
  UkernelFn<T> fn = nullptr;
};
// isa: scalar, avx2 or avx512 (returned whatever the CPU supports; callers check
// isa_supported()). Throws Error for Isa::none.
template <class T> Ukernel<T> ukernel(Isa isa);

// Packs rows [0, m) x columns [0, kc) of A (stride lda) into MR-row slivers, k-major, zero
// rows up to a multiple of mr: dst[s * mr * kc + k * mr + i] = A[(s * mr + i) * lda + k].
template <class T> void pack_a(int64_t m, int64_t kc, const T* A, int64_t lda, int mr, T* dst);
// Packs rows [0, kc) x columns [0, n) of B (stride ldb) into NR-column slivers, k-major, zero
// columns up to a multiple of nr: dst[s * nr * kc + k * nr + j] = B[k * ldb + s * nr + j].
template <class T> void pack_b(int64_t kc, int64_t n, const T* B, int64_t ldb, int nr, T* dst);

// ---- Drivers -------------------------------------------------------------------------------
struct Dims {
  int64_t m = 0, n = 0, k = 0, lda = 0, ldb = 0, ldc = 0;
};
// The case parameter ld:+p (padding of every leading dimension, 0 <= p <= 4096; 0 when absent),
// shared by the families built on this contract (gemm, rtamm). Throws Error naming the case.
int64_t parse_ld_pad(const Case& c);
// Throws Error unless m, n, k >= 1 and lda >= k, ldb >= n, ldc >= n.
void check_dims(const Dims& d);

enum class LoopOrder { ijk, ikj, jik, jki, kij, kji };
template <class T> void loops(LoopOrder order, const Dims& d, const T* A, const T* B, T* C);

struct BlockedPlan {
  int64_t mc = 0, kc = 0, nc = 0;  // 0: default_blocked_plan()
};
// blocked() runs BLIS's loops on the transposed product (blocked.cpp): an MC x KC A panel shared
// by the threads (L3; each MR x KC micro-panel packed by the first column block to reach it; the
// next panel in a second buffer while the threads finish the current one, no barrier between K
// blocks), a KC x NC B block per thread (L2), an MR x KC A micro-panel reused by the jr loop's
// calls (L1).
// The sizes rule (bytes): a B block filling half of L2 (NC a multiple of NR) shaped for the
// least traffic from beyond L2 per flop (C once per K block, an A micro-panel once per B block:
// KC = 2 NC = sqrt(L2 / s)), KC at most what keeps the A micro-panel in half of L1, MC so that
// the A panel fills half of L3 (rounded up to a multiple of MR). blocked() splits K into equal
// blocks of at most KC.
BlockedPlan default_blocked_plan(int64_t elem_size, int mr, int nr, int64_t l1, int64_t l2, int64_t l3);
// The analytical blocking of Low, Igual, Smith, Quintana-Orti, "Analytical modeling is enough
// for high-performance BLIS" (ACM TOMS 43(2), 2016), from each level's size, ways and line,
// applied to the transposed product (the paper's A / B, MR / NR, MC / NC trade places):
//   KC (eq. 4-6): the KC x NR B sliver streaming through L1 fills C_Br whole L1 ways, the
//      MR x KC A micro-panel, reused, keeps its C_Ar = ceil(MR/NR C_Br) ways, one way is left
//      for C: C_Br = floor((W1 - 1) / (1 + MR/NR)); a 2-way L1 (C_Br = 0): half a way.
//   NC: the KC x NC B block takes the L2 ways left after one for C and those of the streaming
//      A micro-panel.
//   MC: the MC x KC A panel takes the L3 ways left after one for C and those of the threads'
//      B blocks (the L3 is shared, the A panel too).
// KC a multiple of 8, MC of MR, NC of NR. `ok` is false, and `plan` the sizes rule
// (default_blocked_plan), when a level's ways or line is unknown (0) or its size is not
// ways x line x sets; `note` says which rule and why.
using rooflab::CacheGeometry;  // harness/cache_sets.hpp: size, ways, line (sets, source unused here)
struct BlockedRule {
  BlockedPlan plan;
  bool ok = false;  // the analytical model applied
  std::string note;
};
BlockedRule analytic_blocked_plan(int64_t elem_size, int mr, int nr, const CacheGeometry& l1,
                                  const CacheGeometry& l2, const CacheGeometry& l3, int threads);
// The blocks blocked() runs on d with `threads` threads: K in equal blocks of at most KC, M in
// equal MR-aligned panels of at most MC, N in `n_blocks` blocks of whole NR slivers, as equal
// as slivers allow (widths differ by at most one sliver; at most NC), at least two per thread
// when there are several (the threads take them in turn); shorter K blocks leave the A panel
// and B block room for more rows and columns in the cache the plan sized them for. mc / kc /
// nc are the widest blocks; one thread's nc is the widest of any team; m_panels x k_blocks are
// the driver's (M panel, K block) iterations. The model prices these, not the plan's maxima.
struct BlockedRun {
  int64_t mc = 0, kc = 0, nc = 0;
  int64_t n_blocks = 1, m_panels = 1, k_blocks = 1;
};
BlockedRun run_blocks(const BlockedPlan& p, const Dims& d, int64_t mr, int64_t nr, int threads);
// Columns [first, last) of N block b of r (0 <= b < r.n_blocks): S = ceil(N / NR) NR slivers
// (the last one cut at N) dealt in order, S mod n_blocks blocks of one sliver more first, so
// that the blocks the threads take last are the short ones.
struct ColumnRange {
  int64_t first, last;
};
ColumnRange column_block(const BlockedRun& r, int64_t b, int64_t n, int64_t nr);
// Scratch blocked(p, ..., d, ...) needs (elements) with up to `threads` threads: two A panels
// (one where d has a single M panel and K block) + one B block per thread, of the blocks run on d.
int64_t blocked_workspace(const BlockedPlan& p, const Dims& d, int mr, int nr, int threads);
template <class T>
void blocked(const BlockedPlan& p, const Ukernel<T>& uk, const Dims& d, const T* A, const T* B, T* C,
             T* work);

// SfcPlan and its defaults kSfcDefault: config.hpp.
// Throws Error for a bad combination (non-positive knobs, k_layers > K blocks, kbf > the K
// blocks of a layer), naming the knob and its limit.
void check_sfc_plan(const SfcPlan& p, const Dims& d);
// Scratch of sfc_ca (elements): packed A and B blocks + (k_layers - 1) copies of C.
int64_t sfc_workspace(const SfcPlan& p, const Dims& d, int mr, int nr);
// The tile order: the generalized Hilbert curve over ceil(M / bm) x ceil(N / bn) tiles.
// Computed once per problem (not timed).
std::vector<std::pair<int32_t, int32_t>> sfc_order(const SfcPlan& p, const Dims& d);
template <class T>
void sfc_ca(const SfcPlan& p, const Ukernel<T>& uk, const Dims& d,
            const std::vector<std::pair<int32_t, int32_t>>& order, const T* A, const T* B, T* C, T* work);

// Generalized Hilbert ("gilbert") curve over a w x h grid of cells, any w, h >= 1: every cell
// (x, y), 0 <= x < w, 0 <= y < h, exactly once, starting at (0, 0); consecutive cells are
// edge-neighbours, except for one diagonal step when the parities of w and h force it
// (see tests). Throws Error for w < 1 or h < 1.
std::vector<std::pair<int32_t, int32_t>> gilbert(int64_t w, int64_t h);

// The benchmark instance of a case with the given micro-kernel instead of the variant's own
// (tests inject broken kernels to see verify() fail). Throws Error for a bad case.
template <class T>
std::unique_ptr<Instance> make_instance(const Case& c, const Ukernel<T>& uk);

}  // namespace gemm
}  // namespace rooflab

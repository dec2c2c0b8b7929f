// BLIS / Goto GEMM: five loops around the micro-kernel.
//   jc (NC columns of B and C) -> pc (KC of K): B panel KC x NC packed once, by all threads
//   -> ic (MR-aligned blocks of at most MC rows, taken by the threads in turn): A block MC x KC
//   packed into the thread's own buffer -> jr (NR) -> ir (MR): micro-kernel.
// The B sliver (KC x NR) stays close (L1 / L2) while the ir loop streams the A block; the B
// panel is shared through L3. Edges (any M, N, K) are zero-padded slivers + masked C access.
#include <algorithm>
#include <atomic>
#include <string>
#include <vector>
#include <omp.h>

#include "harness/error.hpp"
#include "kernels/gemm/gemm.hpp"

namespace rooflab::gemm {
namespace {
int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
}  // namespace

BlockedPlan default_blocked_plan(int64_t s, int mr, int nr, int64_t l1, int64_t l2, int64_t l3) {
  BlockedPlan p;
  // KC amortizes each micro-kernel call's C tile (read and written once per call) over kc
  // rank-1 updates, so it is taken as large as the caches allow: the KC x NR B sliver, reused by
  // every call of the ir loop, within a quarter of L2 (the A micro-panels stream past it), and
  // the MR x KC A micro-panel within L1.
  p.kc = std::min(l2 / 4 / (int64_t(nr) * s), l1 / (int64_t(mr) * s)) / 8 * 8;
  p.kc = std::max<int64_t>(16, p.kc);
  // MC: the A block spans twice L2. Only its current MR x KC micro-panel must be close (the
  // prefetchers stream the rest); a larger block re-fetches each B sliver from L3 less often.
  p.mc = std::max<int64_t>(mr, (2 * l2) / (p.kc * s) / mr * mr);
  // NC rounds up to NR: cache sizes and KC are powers of two, so the half-L3 target often is
  // one too, and rounding it down (NR = 12, 24, 48) cut a power-of-two N into one more block,
  // each repacking A (4096^3 on Zen 4: 2 N blocks instead of 1, measured 2-3% slower).
  p.nc = std::max<int64_t>(nr, round_up((l3 / 2) / (p.kc * s), nr));
  return p;
}

BlockedRule analytic_blocked_plan(int64_t s, int mr, int nr, const CacheGeometry& l1, const CacheGeometry& l2,
                                  const CacheGeometry& l3, int threads) {
  BlockedRule r;
  const CacheGeometry* lv[3] = {&l1, &l2, &l3};
  for (int i = 0; i < 3; ++i) {
    const CacheGeometry& c = *lv[i];
    if (c.size <= 0 || c.ways <= 0 || c.line <= 0 || c.size % (int64_t(c.ways) * c.line) != 0) {
      r.plan = default_blocked_plan(s, mr, nr, l1.size, l2.size, l3.size);
      r.note = "sizes rule: L" + std::to_string(i + 1) +
               "'s ways or line size unknown, or its size not ways x line x sets (" + std::to_string(c.size) +
               " B, " + std::to_string(c.ways) + " ways, " + std::to_string(c.line) + " B lines)";
      return r;
    }
  }
  // Bytes per way (N_L x C_L, sets x line) and per k step of the A / B micro-panels.
  const int64_t way1 = l1.size / l1.ways, way2 = l2.size / l2.ways, way3 = l3.size / l3.ways;
  const int64_t a = int64_t(mr) * s, b = int64_t(nr) * s;
  auto cdiv = [](int64_t x, int64_t y) { return (x + y - 1) / y; };
  // C_Ar <= (W1 - 1) / (1 + NR/MR), in bytes so that NR/MR need not divide.
  const int64_t c_ar = (l1.ways - 1) * a / (a + b);
  int64_t kc = c_ar >= 1 ? c_ar * way1 / a : way1 / (2 * a);
  kc = std::max<int64_t>(8, kc / 8 * 8);
  const int64_t c_bc2 = cdiv(b * kc, way2);  // the B sliver streaming through L2
  const int64_t c_ac2 = std::max<int64_t>(1, l2.ways - 1 - c_bc2);
  const int64_t mc = std::max<int64_t>(mr, c_ac2 * way2 / (kc * s) / mr * mr);
  const int64_t c_ac3 = cdiv(std::max(1, threads) * mc * kc * s, way3);  // every thread's A block
  const int64_t c_bc3 = std::max<int64_t>(1, l3.ways - 1 - c_ac3);
  const int64_t nc = std::max<int64_t>(nr, c_bc3 * way3 / (kc * s) / nr * nr);
  r.plan = {mc, kc, nc};
  r.ok = true;
  r.note = "analytical rule (Low et al. 2016): A micro-panel " + std::to_string(c_ar) + " of " +
           std::to_string(l1.ways) + " L1 ways, A block " + std::to_string(c_ac2) + " of " + std::to_string(l2.ways) +
           " L2 ways, B panel " + std::to_string(c_bc3) + " of " + std::to_string(l3.ways) + " L3 ways";
  return r;
}

BlockedPlan run_blocks(const BlockedPlan& p, const Dims& d, int64_t mr, int64_t nr, int64_t rows) {
  // K in equal blocks of at most KC (a multiple of 8 where KC is): no short last block whose
  // C-tile traffic is amortized over a few rank-1 updates only.
  const int64_t kblocks = (d.k + p.kc - 1) / p.kc;
  const int64_t kcb = std::min(p.kc, round_up((d.k + kblocks - 1) / kblocks, p.kc % 8 == 0 ? 8 : 1));
  // The B panel buffer holds KC x NC: shorter K blocks leave it room for more columns. N is
  // then split into equal blocks too (each N block packs A once more).
  const int64_t ncmax = std::max(nr, p.kc * round_up(p.nc, nr) / kcb / nr * nr);
  const int64_t nblocks = (d.n + ncmax - 1) / ncmax;
  const int64_t ncb = std::min(ncmax, round_up((d.n + nblocks - 1) / nblocks, nr));
  // The rows in equal MR-aligned blocks of at most MC, as K and N.
  const int64_t mblocks = std::max<int64_t>(1, (rows + p.mc - 1) / p.mc);
  const int64_t mcb = std::min(p.mc, round_up((rows + mblocks - 1) / mblocks, mr));
  return {mcb, kcb, ncb};
}

int64_t row_block(const BlockedPlan& p, const Dims& d, int64_t mr, int64_t nr, int threads) {
  const int64_t nt = std::max(1, threads), msl = (d.m + mr - 1) / mr;  // MR-slivers of rows
  const int64_t mcb0 = run_blocks(p, d, mr, nr, (msl + nt - 1) / nt * mr).mc;
  const int64_t want = std::max<int64_t>((d.m + mcb0 - 1) / mcb0, nt > 1 ? 2 * nt : 1);
  const int64_t nblk = (want + nt - 1) / nt * nt;
  return std::min((msl + nblk - 1) / nblk * mr, round_up(p.mc, mr));  // within the A buffer
}

int64_t blocked_workspace(const BlockedPlan& p, int mr, int nr, int threads) {
  return p.kc * round_up(p.nc, nr) + int64_t(threads) * round_up(p.mc, mr) * p.kc;
}

template <class T>
void blocked(const BlockedPlan& p, const Ukernel<T>& uk, const Dims& d, const T* A, const T* B, T* C,
             T* work) {
  check_dims(d);
  if (p.mc < 1 || p.kc < 1 || p.nc < 1) throw Error("gemm/blocked: mc, kc, nc must be >= 1");
  const int64_t MR = uk.mr, NR = uk.nr;
  T* Bp = work;
  T* Ap_all = work + p.kc * round_up(p.nc, NR);
  const BlockedPlan run = run_blocks(p, d, MR, NR, d.m);
  const int64_t kcb = run.kc, ncb = run.nc;

  const int64_t n_it = ((d.n + ncb - 1) / ncb) * ((d.k + kcb - 1) / kcb);
  std::vector<std::atomic<int64_t>> next(size_t(std::max<int64_t>(1, n_it)));
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    T* Ap = Ap_all + int64_t(t) * round_up(p.mc, MR) * p.kc;
    // Row blocks taken in turn from a shared counter (row_block: at least 2 per thread): a
    // thread the host slows takes fewer instead of the others waiting for it at the barrier.
    const int64_t mcb = row_block(p, d, MR, NR, nt);
    int64_t it = 0;
    for (int64_t jc = 0; jc < d.n; jc += ncb) {
      const int64_t nc = std::min(ncb, d.n - jc);
      for (int64_t pc = 0; pc < d.k; pc += kcb, ++it) {
        const int64_t kc = std::min(kcb, d.k - pc);
        // Each thread packs a contiguous run of slivers: one pass along B's rows.
        const int64_t nsl = (nc + NR - 1) / NR, s0 = nsl * t / nt, s1 = nsl * (t + 1) / nt;
        if (s1 > s0)
          pack_b(kc, std::min(nc, s1 * NR) - s0 * NR, B + pc * d.ldb + jc + s0 * NR, d.ldb, int(NR), Bp + s0 * NR * kc);
#pragma omp barrier  // the whole B panel is packed
        for (int64_t ic; (ic = next[size_t(it)].fetch_add(1, std::memory_order_relaxed) * mcb) < d.m;) {
          const int64_t mc = std::min(mcb, d.m - ic);
          pack_a(mc, kc, A + ic * d.lda + pc, d.lda, int(MR), Ap);
          for (int64_t jr = 0; jr < nc; jr += NR)
            for (int64_t ir = 0; ir < mc; ir += MR)
              uk.fn(1, kc, Ap + ir * kc, 0, Bp + jr * kc, 0, C + (ic + ir) * d.ldc + jc + jr, d.ldc,
                    std::min(MR, mc - ir), std::min(NR, nc - jr));
        }
#pragma omp barrier  // the B panel is overwritten next
      }
    }
  }
}
template void blocked<float>(const BlockedPlan&, const Ukernel<float>&, const Dims&, const float*,
                             const float*, float*, float*);
template void blocked<double>(const BlockedPlan&, const Ukernel<double>&, const Dims&, const double*,
                              const double*, double*, double*);

}  // namespace rooflab::gemm

// BLIS / Goto GEMM with BLIS's loops on the transposed product C^T = B^T A^T: our micro-kernel
// broadcasts A and loads B as vectors, so A plays BLIS's B and B plays BLIS's A.
//   ic (MC rows of A and C) -> pc (KC of K): A panel MC x KC
//   -> jc (NR-aligned column blocks, taken by the threads in turn): B block KC x NC packed into
//   the thread's own buffer -> ir (MR): A micro-panel packed by the first block to reach it
//   -> jr (NR): micro-kernel.
// The MR x KC A micro-panel stays close (L1) while the jr loop streams the thread's B block
// from L2; the A panel is shared through L3. With MR < NR (every shape in config.hpp) the A
// micro-panel is the smaller operand, so KC can be long (fewer passes over C) and still leave
// it in half of L1. Edges (any M, N, K) are zero-padded slivers + masked C access.
// No barrier between (ic, pc) iterations: two A panel buffers, and a column block starts once
// the same block of the previous iteration (the same C tiles) is finished, so a thread that
// runs out of blocks starts the next iteration while the others finish theirs.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <string>
#include <vector>
#include <omp.h>
#include <sched.h>
#include <time.h>
#include <xmmintrin.h>

#include "harness/error.hpp"
#include "kernels/gemm/gemm.hpp"

namespace rooflab::gemm {
namespace {
int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
}  // namespace

BlockedPlan default_blocked_plan(int64_t s, int mr, int nr, int64_t l1, int64_t l2, int64_t l3) {
  BlockedPlan p;
  // KC and NC for the least traffic from beyond L2 per flop with the thread's KC x NC B block
  // (swept once per A micro-panel) in half of L2: C is read and written once per K block
  // (s / KC bytes per flop), an A micro-panel read once per B block (s / (2 NC)); with
  // KC x NC fixed that is least at KC = 2 NC = sqrt(L2 / s). KC is capped so that the MR x KC A
  // micro-panel, reused by every call of the jr loop, fits half of L1. Half, not all of L2: the
  // rest holds C's tiles and the A micro-panels on their way, and a B block filling L2 ran
  // slower on the Zen 3 when the host was busy (results/gemm/README.md#half-l2).
  const int64_t kc_l2 = int64_t(std::sqrt(double(l2) / double(s)));
  p.kc = std::max<int64_t>(16, std::min(l1 / 2 / (int64_t(mr) * s), kc_l2) / 8 * 8);
  p.nc = std::max<int64_t>(nr, (l2 / 2) / (p.kc * s) / nr * nr);
  // MC: the shared A panel fills half of L3, rounded up to MR: cache sizes and KC are powers
  // of two, so the target often is one too, and rounding it down would cut a power-of-two M
  // into one more panel (each packing B once more).
  p.mc = std::max<int64_t>(mr, round_up((l3 / 2) / (p.kc * s), mr));
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
  // Bytes per way (N_L x C_L, sets x line) and per k step of the A / B micro-panels. The paper
  // blocks BLIS's loops, whose L1-resident operand is the B sliver and whose streaming one the
  // A micro-panel; here (the transposed product) the A micro-panel stays and the B slivers
  // stream, so the paper's MR / NR, A / B and MC / NC trade places.
  const int64_t way1 = l1.size / l1.ways, way2 = l2.size / l2.ways, way3 = l3.size / l3.ways;
  const int64_t a = int64_t(mr) * s, b = int64_t(nr) * s;
  auto cdiv = [](int64_t x, int64_t y) { return (x + y - 1) / y; };
  // The streaming B sliver's ways C_Br <= (W1 - 1) / (1 + MR/NR), in bytes so that MR/NR need
  // not divide; the A micro-panel keeps ceil(MR/NR C_Br), one way is left for C.
  const int64_t c_br = (l1.ways - 1) * b / (a + b);
  int64_t kc = c_br >= 1 ? c_br * way1 / b : way1 / (2 * b);
  kc = std::max<int64_t>(8, kc / 8 * 8);
  const int64_t c_ac2 = cdiv(a * kc, way2);  // the A micro-panel streaming through L2
  const int64_t c_bc2 = std::max<int64_t>(1, l2.ways - 1 - c_ac2);
  const int64_t nc = std::max<int64_t>(nr, c_bc2 * way2 / (kc * s) / nr * nr);
  const int64_t c_bc3 = cdiv(std::max(1, threads) * nc * kc * s, way3);  // every thread's B block
  const int64_t c_ac3 = std::max<int64_t>(1, l3.ways - 1 - c_bc3);
  const int64_t mc = std::max<int64_t>(mr, c_ac3 * way3 / (kc * s) / mr * mr);
  r.plan = {mc, kc, nc};
  r.ok = true;
  r.note = "analytical rule (Low et al. 2016, on the transposed product): B sliver " + std::to_string(c_br) + " of " +
           std::to_string(l1.ways) + " L1 ways, B block " + std::to_string(c_bc2) + " of " + std::to_string(l2.ways) +
           " L2 ways, A panel " + std::to_string(c_ac3) + " of " + std::to_string(l3.ways) + " L3 ways";
  return r;
}

BlockedRun run_blocks(const BlockedPlan& p, const Dims& d, int64_t mr, int64_t nr, int threads) {
  // K in equal blocks of at most KC (a multiple of 8 where KC is): no short last block whose
  // C-tile traffic is amortized over a few rank-1 updates only.
  const int64_t kblocks = (d.k + p.kc - 1) / p.kc;
  const int64_t kcb = std::min(p.kc, round_up((d.k + kblocks - 1) / kblocks, p.kc % 8 == 0 ? 8 : 1));
  // The A panel and B block targets are MC x KC and KC x NC elements of cache: shorter K blocks
  // leave room for more rows and columns. M is then split into equal MR-aligned panels (each
  // packs B once more), N into NR slivers dealt out evenly to the blocks, at least two per
  // thread when there are several (the threads take them in turn: one the host slows takes
  // fewer, the others go on), widths within one sliver rather than NC-wide blocks and a short
  // last one (the product ends when the thread with the last block finishes it).
  const int64_t mcmax = std::max(mr, p.kc * round_up(p.mc, mr) / kcb / mr * mr);
  const int64_t mblocks = (d.m + mcmax - 1) / mcmax;
  const int64_t mcb = std::min(mcmax, round_up((d.m + mblocks - 1) / mblocks, mr));
  const int64_t nt = std::max(1, threads), nsl = (d.n + nr - 1) / nr;  // NR-slivers of columns
  const int64_t slmax = std::max<int64_t>(1, p.kc * round_up(p.nc, nr) / kcb / nr);  // slivers a buffer holds
  const int64_t want = std::max<int64_t>((nsl + slmax - 1) / slmax, nt > 1 ? 2 * nt : 1);
  const int64_t nblk = std::max<int64_t>(1, std::min(nsl, (want + nt - 1) / nt * nt));
  return {mcb, kcb, (nsl + nblk - 1) / nblk * nr, nblk, (d.m + mcb - 1) / mcb, (d.k + kcb - 1) / kcb};
}

ColumnRange column_block(const BlockedRun& r, int64_t b, int64_t n, int64_t nr) {
  const int64_t nsl = (n + nr - 1) / nr, q = nsl / r.n_blocks, rem = nsl % r.n_blocks;
  auto first = [&](int64_t i) { return (i * q + std::min(i, rem)) * nr; };
  return {first(b), std::min(n, first(b + 1))};
}

int64_t blocked_workspace(const BlockedPlan& p, const Dims& d, int mr, int nr, int threads) {
  // Sized from the blocks run on d, not the plan's maxima (MC alone fills half of L3). One
  // thread's column blocks are the widest a team of any size runs.
  const BlockedRun r = run_blocks(p, d, mr, nr, 1);
  return std::min<int64_t>(2, r.m_panels * r.k_blocks) * r.mc * r.kc + int64_t(std::max(1, threads)) * r.kc * r.nc;
}

namespace {
// Waits until ready() holds: a short pause-spin (the wait is usually the tail of one block),
// then yields, then sleeps 20 us per look, so a waiting thread does not keep a core from a
// thread that needs it (a CPU shared with another process, more threads than CPUs).
template <class F>
void wait_until(F ready) {
  for (int i = 0; !ready(); i = std::min(i + 1, 1 << 20)) {
    if (i < 1024) _mm_pause();
    else if (i < 1024 + 64) sched_yield();
    else {
      const timespec ts{0, 20000};
      nanosleep(&ts, nullptr);
    }
  }
}

// What the threads share per (M panel, K block) iteration; a cache line each.
struct alignas(64) IterSync {
  std::atomic<int64_t> next_block{0}, finished{0};
};
// An A micro-panel of an iteration: not packed, being packed, packed.
enum : uint8_t { kFree = 0, kPacking = 1, kPacked = 2 };
}  // namespace

template <class T>
void blocked(const BlockedPlan& p, const Ukernel<T>& uk, const Dims& d, const T* A, const T* B, T* C,
             T* work) {
  check_dims(d);
  if (p.mc < 1 || p.kc < 1 || p.nc < 1) throw Error("gemm/blocked: mc, kc, nc must be >= 1");
  const int64_t MR = uk.mr, NR = uk.nr;
  // MC and KC do not depend on the threads; one thread's column blocks are the widest (the
  // B buffers' stride, as blocked_workspace sized them).
  const BlockedRun run = run_blocks(p, d, MR, NR, 1);
  const int64_t mcb = run.mc, kcb = run.kc;
  const int64_t n_it = run.m_panels * run.k_blocks;
  T* Ap[2] = {work, work + (n_it > 1 ? mcb * kcb : 0)};
  T* Bp_all = work + std::min<int64_t>(2, n_it) * mcb * kcb;
  std::vector<IterSync> iters(static_cast<size_t>(n_it));
  const int64_t msl_max = (mcb + MR - 1) / MR;
  std::vector<std::atomic<uint8_t>> a_state(static_cast<size_t>(n_it * msl_max));
  // done[b] = 1 + the last iteration whose column block b is finished: block b of iteration
  // it + 1 updates the same C tiles, so it starts after that (the threads need not finish an
  // iteration together: one that runs out of blocks starts the next iteration's).
  std::vector<std::atomic<int64_t>> done(size_t((d.n + NR - 1) / NR));
#pragma omp parallel
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    T* Bp = Bp_all + int64_t(t) * kcb * run.nc;
    const BlockedRun cols = run_blocks(p, d, MR, NR, nt);
    int64_t it = 0;
    for (int64_t ic = 0; ic < d.m; ic += mcb) {
      const int64_t mc = std::min(mcb, d.m - ic), msl = (mc + MR - 1) / MR;
      for (int64_t pc = 0; pc < d.k; pc += kcb, ++it) {
        const int64_t kc = std::min(kcb, d.k - pc);
        IterSync& s = iters[size_t(it)];
        T* Ai = Ap[it % 2];
        std::atomic<uint8_t>* as = a_state.data() + it * msl_max;
        // Ai held the A panel of iteration it - 2: every block of that one must be finished.
        if (it >= 2) wait_until([&] { return iters[size_t(it - 2)].finished.load(std::memory_order_acquire) == cols.n_blocks; });
        for (int64_t b; (b = s.next_block.fetch_add(1, std::memory_order_relaxed)) < cols.n_blocks;) {
          const ColumnRange cr = column_block(cols, b, d.n, NR);
          const int64_t jc = cr.first, nc = cr.last - cr.first;
          pack_b(kc, nc, B + pc * d.ldb + jc, d.ldb, int(NR), Bp);
          wait_until([&] { return done[size_t(b)].load(std::memory_order_acquire) >= it; });
          // A micro-panels are packed by the first block to reach them, right before its jr
          // loop uses them from L1 (Goto / OpenBLAS pack the shared operand so). Block b begins
          // its ir loop at micro-panel (b mod nt) msl / nt, so the blocks the threads start
          // together each pack their own range instead of waiting on the other's. The next
          // micro-panel is prefetched a share per call of this one's jr loop (from the packed
          // panel in L3, or from A's rows into L2 while it is still to be packed; to L1 they
          // lost at f64 4096^3), so an ir step need not start on its latency; the kernel
          // spreads its share over its k steps. 64-byte lines (every x86-64), a longer line
          // only repeats a prefetch (results/gemm/README.md#prefetch).
          const int64_t calls = (nc + NR - 1) / NR, first = (b % nt) * msl / nt;
          const int64_t packed_lines = (MR * kc * int64_t(sizeof(T)) + 63) / 64;
          const int64_t row_lines = (kc * int64_t(sizeof(T)) + 126) / 64;  // + 1: A's rows need not start a line
          for (int64_t i = 0; i < msl; ++i) {
            const int64_t q = first + i < msl ? first + i : first + i - msl, ir = q * MR;
            std::atomic<uint8_t>& st = as[q];
            if (st.load(std::memory_order_acquire) != kPacked) {
              uint8_t expect = kFree;
              if (st.compare_exchange_strong(expect, kPacking, std::memory_order_acquire)) {
                pack_a(std::min(MR, mc - ir), kc, A + (ic + ir) * d.lda + pc, d.lda, int(MR), Ai + ir * kc);
                st.store(kPacked, std::memory_order_release);
              } else {
                wait_until([&] { return st.load(std::memory_order_acquire) == kPacked; });
              }
            }
            Prefetch next;
            if (i + 1 < msl) {
              const int64_t qn = q + 1 < msl ? q + 1 : 0;
              if (as[qn].load(std::memory_order_relaxed) == kFree)
                next = {A + (ic + qn * MR) * d.lda + pc, 0, std::min(MR, mc - qn * MR) * row_lines, row_lines,
                        d.lda * int64_t(sizeof(T)), true};
              else
                next = {Ai + qn * MR * kc, 0, packed_lines, 0, 0};
            }
            const int64_t lines = next.lines, per = (lines + calls - 1) / calls;
            for (int64_t jr = 0, j = 0; jr < nc; jr += NR, ++j) {
              next.first = j * per;
              next.lines = std::clamp<int64_t>(lines - j * per, 0, per);
              uk.fn(1, kc, Ai + ir * kc, 0, Bp + jr * kc, 0, C + (ic + ir) * d.ldc + jc + jr, d.ldc,
                    std::min(MR, mc - ir), std::min(NR, nc - jr), next.lines ? next : Prefetch{});
            }
          }
          done[size_t(b)].store(it + 1, std::memory_order_release);
          s.finished.fetch_add(1, std::memory_order_release);
        }
      }
    }
  }
}
template void blocked<float>(const BlockedPlan&, const Ukernel<float>&, const Dims&, const float*,
                             const float*, float*, float*);
template void blocked<double>(const BlockedPlan&, const Ukernel<double>&, const Dims&, const double*,
                              const double*, double*, double*);

}  // namespace rooflab::gemm

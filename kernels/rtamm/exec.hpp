#pragma once
// Internal to kernels/rtamm: the executor's control logic (drive) and its phases. The same
// code runs a plan (run_plan), counts its data movement (movement_by_steps) and is timed by the
// unit-cost micro-benchmark (units.cpp), so the unit costs measure exactly the executed phases.
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "kernels/rtamm/rtamm.hpp"

namespace rooflab::rtamm::detail {

inline int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }
inline int64_t ceil_div(int64_t x, int64_t m) { return (x + m - 1) / m; }

// One phase's transfers: pack an A block, pack a B block, load a C block, store a C block
// (each optional), into / from buffer 0 or 1.
struct Xfer {
  bool a = false, b = false, cl = false, cs = false;
  Step sa, sb, scl, scs;
  int abuf = 0, bbuf = 0, clbuf = 0, csbuf = 0;
  bool any() const { return a || b || cl || cs; }
};

// Tasks of a transfer: A slivers (MR rows), B slivers (NR columns), C rows loaded, C rows stored,
// in that order (the groups of Omp::task's index).
inline void group_counts(const Xfer& x, int mr, int nr, int64_t n[4]) {
  n[0] = x.a ? ceil_div(x.sa.mc, mr) : 0, n[1] = x.b ? ceil_div(x.sb.nc, nr) : 0;
  n[2] = x.cl ? x.scl.mc : 0, n[3] = x.cs ? x.scs.mc : 0;
}
inline int64_t task_count(const Xfer& x, int mr, int nr) {
  int64_t n[4];
  group_counts(x, mr, nr, n);
  return n[0] + n[1] + n[2] + n[3];
}
// Part `part` of `parts` of a group of n tasks: [n part / parts, n (part + 1) / parts).
inline void share(int64_t n, int64_t part, int64_t parts, int64_t& lo, int64_t& hi) {
  lo = n * part / parts, hi = n * (part + 1) / parts;
}

// The control flow of a plan: calls x.phase(xfer) for each transfer phase and
// x.kernel(step, abuf, bbuf, cbuf, ahead_xfer) for each step's kernel phase, in order.
template <class X>
void drive(const Plan& p, const gemm::Dims& d, X& x) {
  const Steps st(p, d);
  const int64_t n = st.count();
  const bool ab_ahead = p.ahead != Ahead::none, c_ahead = p.ahead == Ahead::abc;
  int ca = 1, cb = 1, cc = 1;  // current buffers (the first block goes into buffer 0)
  Step prev;
  for (int64_t s = 0; s < n; ++s) {
    const Step cur = st.at(s);
    const bool first = s == 0;
    const bool newA = first || cur.mi != prev.mi || cur.ki != prev.ki;
    const bool newB = first || cur.ki != prev.ki || cur.ni != prev.ni;
    const bool newC = first || cur.mi != prev.mi || cur.ni != prev.ni;
    Xfer t;
    if (newC && !first) t.cs = true, t.scs = prev, t.csbuf = cc;
    // A block not packed ahead: pack it now into the other buffer; either way switch to it.
    if (newA) {
      if (!(ab_ahead && !first)) t.a = true, t.sa = cur, t.abuf = 1 - ca;
      ca = 1 - ca;
    }
    if (newB) {
      if (!(ab_ahead && !first)) t.b = true, t.sb = cur, t.bbuf = 1 - cb;
      cb = 1 - cb;
    }
    if (newC) {
      if (!(c_ahead && !first)) t.cl = true, t.scl = cur, t.clbuf = 1 - cc;
      cc = 1 - cc;
    }
    if (t.any()) x.phase(t);
    Xfer nx;
    if (ab_ahead && s + 1 < n) {
      const Step nxt = st.at(s + 1);
      if (nxt.mi != cur.mi || nxt.ki != cur.ki) nx.a = true, nx.sa = nxt, nx.abuf = 1 - ca;
      if (nxt.ki != cur.ki || nxt.ni != cur.ni) nx.b = true, nx.sb = nxt, nx.bbuf = 1 - cb;
      if (c_ahead && (nxt.mi != cur.mi || nxt.ni != cur.ni)) nx.cl = true, nx.scl = nxt, nx.clbuf = 1 - cc;
    }
    x.kernel(cur, ca, cb, cc, nx);
    prev = cur;
  }
  Xfer last;
  last.cs = true, last.scs = prev, last.csbuf = cc;
  x.phase(last);
}

// The OpenMP executor: every thread of the enclosing parallel region calls drive() with its own
// Omp object; each thread runs its share of a phase, then a barrier.
template <class T>
struct Omp {
  const gemm::Ukernel<T>& uk;
  gemm::Dims d;
  const T* A;
  const T* B;
  T* C;
  T* abuf[2];
  T* bbuf[2];
  T* cbuf[2];
  int64_t ldl;  // local C row stride (run_block's Ncg)

  // The buffers as workspace(p, d) sizes them: run_block's extents (no step exceeds them).
  Omp(const Plan& p, const gemm::Ukernel<T>& u, const gemm::Dims& dd, const T* a, const T* b, T* c, T* work)
      : Omp(run_block(p, dd, u.mr, u.nr), u, dd, a, b, c, work) {}
  Omp(const Block& rb, const gemm::Ukernel<T>& u, const gemm::Dims& dd, const T* a, const T* b, T* c, T* work)
      : uk(u), d(dd), A(a), B(b), C(c), ldl(rb.ncg) {
    const int64_t as = round_up(rb.mcg, u.mr) * rb.kcg, bs = rb.kcg * round_up(rb.ncg, u.nr), cs = rb.mcg * rb.ncg;
    abuf[0] = work, abuf[1] = work + as, bbuf[0] = work + 2 * as, bbuf[1] = bbuf[0] + bs;
    cbuf[0] = bbuf[1] + bs, cbuf[1] = cbuf[0] + cs;
  }

  void task(const Xfer& x, int64_t i) const {
    const int mr = uk.mr, nr = uk.nr;
    if (x.a) {
      const int64_t na = ceil_div(x.sa.mc, mr);
      if (i < na) {
        gemm::pack_a(std::min<int64_t>(mr, x.sa.mc - i * mr), x.sa.kc, A + (x.sa.m0 + i * mr) * d.lda + x.sa.k0,
                     d.lda, mr, abuf[x.abuf] + i * mr * x.sa.kc);
        return;
      }
      i -= na;
    }
    if (x.b) {
      const int64_t nb = ceil_div(x.sb.nc, nr);
      if (i < nb) {
        gemm::pack_b(x.sb.kc, std::min<int64_t>(nr, x.sb.nc - i * nr), B + x.sb.k0 * d.ldb + x.sb.n0 + i * nr,
                     d.ldb, nr, bbuf[x.bbuf] + i * nr * x.sb.kc);
        return;
      }
      i -= nb;
    }
    if (x.cl) {
      if (i < x.scl.mc) {
        std::memcpy(cbuf[x.clbuf] + i * ldl, C + (x.scl.m0 + i) * d.ldc + x.scl.n0, size_t(x.scl.nc) * sizeof(T));
        return;
      }
      i -= x.scl.mc;
    }
    std::memcpy(C + (x.scs.m0 + i) * d.ldc + x.scs.n0, cbuf[x.csbuf] + i * ldl, size_t(x.scs.nc) * sizeof(T));
  }

  // Runs part `part` of `parts` of every task group of x: each thread packs its share of the A
  // slivers, of the B slivers and of the C rows. A split of the task list by count (schedule
  // static) gave one thread every sliver (listed first, ~MR x Kcg elements each) and the other
  // only C rows (Ncg each): on 528x48x48 with one 816x216x80 block the first phase took 32.9 us
  // on one thread and 6.3 us on the other.
  void run_share(const Xfer& x, int64_t part, int64_t parts) const {
    int64_t n[4], lo, hi, off = 0;
    group_counts(x, uk.mr, uk.nr, n);
    for (int g = 0; g < 4; off += n[g], ++g) {
      share(n[g], part, parts, lo, hi);
      for (int64_t i = lo; i < hi; ++i) task(x, off + i);
    }
  }

  void phase(const Xfer& x) const {
    run_share(x, omp_get_thread_num(), omp_get_num_threads());
#pragma omp barrier
  }

  // All MR x NR tiles of the block, split into one contiguous range per thread; each group of the
  // ahead transfer's tasks spread evenly over the tiles (tile t runs tasks [n t / tiles,
  // n (t + 1) / tiles) of a group of n), so every thread's tiles carry their share of each group.
  // The bounds advance by adding n per tile (no division per tile: at 8x24 tiles of 256^3 the
  // divisions cost ~15%).
  void kernel(const Step& s, int ca, int cb, int cc, const Xfer& nx) const {
    const int mr = uk.mr, nr = uk.nr;
    const int64_t ni = ceil_div(s.mc, mr), tiles = ni * ceil_div(s.nc, nr);
    const T* Ap = abuf[ca];
    const T* Bp = bbuf[cb];
    T* Cl = cbuf[cc];
    int64_t t0, t1;
    share(tiles, omp_get_thread_num(), omp_get_num_threads(), t0, t1);
    int64_t n[4], off[4], next[4], rem[4];
    group_counts(nx, mr, nr, n);
    for (int g = 0; g < 4; ++g)
      off[g] = g ? off[g - 1] + n[g - 1] : 0, next[g] = n[g] * t0 / tiles, rem[g] = n[g] * t0 % tiles;
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t j = t / ni, i = t % ni;
      uk.fn(1, s.kc, Ap + i * mr * s.kc, 0, Bp + j * nr * s.kc, 0, Cl + i * mr * ldl + j * nr, ldl,
            std::min<int64_t>(mr, s.mc - i * mr), std::min<int64_t>(nr, s.nc - j * nr), {});
      for (int g = 0; g < 4; ++g) {
        if (!n[g]) continue;
        for (rem[g] += n[g]; rem[g] >= tiles; rem[g] -= tiles) task(nx, off[g] + next[g]++);
      }
    }
#pragma omp barrier
  }
};

}  // namespace rooflab::rtamm::detail

#pragma once
// The fused one-pass row-slice kernels (mapuot, fused_uv; see FusedArgs in sinkhorn.hpp),
// written once over the vector-traits type V of microkernel_simd.hpp and instantiated by
// each ISA translation unit. Same rules as microkernel_simd.hpp: include only from those
// files, instantiate only with traits from an anonymous namespace (internal linkage, so no
// AVX-512 code can be picked by the linker for other TUs), call nothing out of line.
//
// Rows go in groups of G = 4 (then single rows). A group needs two sweeps: its row sums
// (the only DRAM read) before its scaling / its next-column-sum update (a re-read from L2:
// 4 rows of 4096 doubles = 128 KiB). Run one after the other, DRAM idles during the second
// sweep (~25% of the time at 4096^2). So the sweeps are software-pipelined: one loop over
// the columns streams group g+1 from DRAM for its sums and finishes group g from L2, and
// a software prefetch keeps the DRAM streams ahead of the loads.
#include "kernels/sinkhorn/detail.hpp"
#include "kernels/sinkhorn/sinkhorn.hpp"

namespace rooflab::sinkhorn::fused {
static_assert(kFusedRows == 4, "the row groups below are written for G = 4 (config.hpp)");
namespace {  // internal linkage in each ISA translation unit

// Software prefetch of the streamed (DRAM) rows, 4 streams per thread, 2 KiB ahead, into L2
// (prefetcht1) or L1 (prefetcht0): FusedPrefetch, the case's pf:. L1 also holds the rows of the
// group being finished, `next` and the column factors; which target wins differs by CPU
// (docs/families/sinkhorn.md#prefetch).
constexpr int64_t kPrefetchBytes = 2048;
// __builtin_prefetch's locality argument: 3 = prefetcht0 (into L1), 2 = prefetcht1 (L2 and
// outward). A variable template: the builtin needs a constant even in unoptimized builds.
template <FusedPrefetch PF>
constexpr int kLocality = PF == FusedPrefetch::l1 ? 3 : 2;

// One pipelined sweep over columns [0, N):
//   sums: s[k] = sum_j pd[k][j] * colf[j]         for the GD rows pd (the next group)
//   tail: mapuot  x = pa[k][j] * colf[j] * f[k]; pa[k][j] = x; next[j] += x
//         fused_uv next[j] += pa[k][j] * f[k]     for the GA rows pa (the current group)
// GD = 0: only the tail (the last group); GA = 0: only the sums (the first group).
template <class V, bool MAP, FusedPrefetch PFT, int GA, int GD>
void sweep(typename V::T* const* pa, const typename V::T* f, const typename V::T* const* pd,
           typename V::T* s, const typename V::T* colf, typename V::T* next, int64_t N) {
  using T = typename V::T;
  using R = typename V::R;
  constexpr int64_t W = V::W;
  constexpr int64_t PF = kPrefetchBytes / int64_t(sizeof(T));
  constexpr bool prefetch = GD > 0 && W > 1;  // scalar: the compiler's own loop, no hints
  R acc[GD > 0 ? GD : 1], fk[GA > 0 ? GA : 1];
  for (int k = 0; k < GD; ++k) acc[k] = V::zero();
  for (int k = 0; k < GA; ++k) fk[k] = V::set1(f[k]);
  auto body = [&](int64_t j, R cf, auto ld, auto st) {
    for (int k = 0; k < GD; ++k) acc[k] = V::fma(ld(pd[k] + j), cf, acc[k]);
    if constexpr (GA > 0) {
      R n = ld(next + j);
      for (int k = 0; k < GA; ++k) {
        if constexpr (MAP) {
          const R x = V::mul(V::mul(ld(pa[k] + j), cf), fk[k]);
          st(pa[k] + j, x);
          n = V::add(n, x);
        } else {
          n = V::fma(ld(pa[k] + j), fk[k], n);
        }
      }
      st(next + j, n);
    }
  };
  const auto ld = [](const T* p) { return V::load(p); };
  const auto st = [](T* p, R x) { V::store(p, x); };
  int64_t j = 0;
  for (; j + W <= N; j += W) {
    if constexpr (prefetch) {
      // One hint per cache line and row: lanes W * sizeof(T) per step, 64-byte lines.
      if ((j * int64_t(sizeof(T))) % 64 == 0)
        for (int k = 0; k < GD; ++k) __builtin_prefetch(pd[k] + j + PF, 0, kLocality<PFT>);
    }
    body(j, V::load(colf + j), ld, st);
  }
  if (j < N) {
    const int n = int(N - j);
    const auto ldn = [n](const T* p) { return V::loadn(p, n); };
    const auto stn = [n](T* p, R x) { V::storen(p, x, n); };
    body(j, V::loadn(colf + j, n), ldn, stn);
  }
  for (int k = 0; k < GD; ++k) s[k] = V::hsum(acc[k]);
}

// The row slice as groups of 4 rows then single rows; sweep i streams group i and finishes
// group i - 1 with the factors its sums gave.
template <class V, bool MAP, FusedPrefetch PFT>
void slice(const FusedArgs<typename V::T>& a) {
  using T = typename V::T;
  const int64_t full = a.M / 4 * 4;
  T* pa[4] = {};
  T* pd[4] = {};
  T f[4] = {}, s[4] = {};
  int ga = 0;  // rows of the group being finished (its factors in f)
  auto run = [&](int gd) {
    // GD, GA in {0, 1, 4}: a group of 4 rows can be followed by 4 or 1, a single row by 1.
    switch (ga * 10 + gd) {
      case 4: sweep<V, MAP, PFT, 0, 4>(pa, f, pd, s, a.colf, a.next, a.N); break;
      case 1: sweep<V, MAP, PFT, 0, 1>(pa, f, pd, s, a.colf, a.next, a.N); break;
      case 44: sweep<V, MAP, PFT, 4, 4>(pa, f, pd, s, a.colf, a.next, a.N); break;
      case 41: sweep<V, MAP, PFT, 4, 1>(pa, f, pd, s, a.colf, a.next, a.N); break;
      case 11: sweep<V, MAP, PFT, 1, 1>(pa, f, pd, s, a.colf, a.next, a.N); break;
      case 40: sweep<V, MAP, PFT, 4, 0>(pa, f, pd, s, a.colf, a.next, a.N); break;
      case 10: sweep<V, MAP, PFT, 1, 0>(pa, f, pd, s, a.colf, a.next, a.N); break;
      default: break;
    }
  };
  for (int64_t i = 0; i < a.M;) {
    const int gd = i < full ? 4 : 1;
    for (int k = 0; k < gd; ++k) pd[k] = a.A + (i + k) * a.lda;
    run(gd);
    // The streamed group becomes the one to finish: its factors from its sums.
    for (int k = 0; k < gd; ++k) {
      pa[k] = pd[k];
      if constexpr (MAP) {
        f[k] = sk_factor(a.r[i + k], s[k], a.fi);
      } else {
        a.u[i + k] = pot_factor(a.r[i + k], s[k], a.fi, a.u[i + k]);
        f[k] = a.u[i + k];
      }
    }
    ga = gd;
    i += gd;
  }
  run(0);
}

template <class V, FusedPrefetch PFT>
void mapuot(const FusedArgs<typename V::T>& a) { slice<V, true, PFT>(a); }

template <class V, FusedPrefetch PFT>
void uv(const FusedArgs<typename V::T>& a) { slice<V, false, PFT>(a); }

// The kernel body for simd::tables / simd::table_of.
struct Body {
  template <class V>
  static constexpr detail::FusedByPrefetch<typename V::T> table() {
    return {{mapuot<V, FusedPrefetch::l2>, uv<V, FusedPrefetch::l2>},
            {mapuot<V, FusedPrefetch::l1>, uv<V, FusedPrefetch::l1>}};
  }
};

}  // namespace
}  // namespace rooflab::sinkhorn::fused

// Threads over row slices (MAP-UOT Alg. 1, COFFEE's row-slice decomposition): the staged
// column pass with private partial sums, and the fused one-pass iterations. The kernels
// stay single-threaded plain functions; only this file opens parallel regions.
#include <omp.h>

#include <algorithm>
#include <cstring>

#include "kernels/sinkhorn/detail.hpp"

namespace rooflab::sinkhorn {
namespace {

struct Range { int64_t begin, end; };

// Rows of thread t: balanced contiguous slices.
Range rows_of(int64_t M, int t, int T) { return {M * t / T, M * (t + 1) / T}; }

// Columns of thread t for the reductions: whole 64-byte lines, so no two threads write to
// one line of work / colf.
template <class E>
Range cols_of(int64_t N, int t, int T) {
  constexpr int64_t line = 64 / int64_t(sizeof(E));
  const int64_t lines = (N + line - 1) / line;
  return {std::min(N, lines * t / T * line), std::min(N, lines * (t + 1) / T * line)};
}

template <class T>
SkArgs<T> slice(const SkArgs<T>& a, Range r, T* work) {
  SkArgs<T> s = a;
  s.A = a.A + r.begin * a.lda;
  s.M = r.end - r.begin;
  s.r = a.r + r.begin;
  s.work = work;
  return s;
}

// f(t, nt) on each thread t of a team of `threads`. nt = omp_get_num_threads() may be below
// the request (nested or limited runtime): slices and reductions use the team actually granted.
template <class F>
void on_team(int threads, F f) {
#pragma omp parallel num_threads(threads)
  f(omp_get_thread_num(), omp_get_num_threads());
}

// out[j] = sum_t partial[t][j] for j in cols, in thread order (deterministic).
template <class T>
void reduce(const T* partial, int64_t stride, int threads, Range cols, T* out) {
  for (int64_t j = cols.begin; j < cols.end; ++j) out[j] = partial[j];
  for (int t = 1; t < threads; ++t) {
    const T* p = partial + t * stride;
    for (int64_t j = cols.begin; j < cols.end; ++j) out[j] += p[j];
  }
}
}  // namespace

template <class T>
void parallel_row_rescale(const SkKernels<T>& k, const SkArgs<T>& a, const SkTeam<T>& team) {
  if (team.threads <= 1) return k.row_rescale(a);
  on_team(team.threads, [&](int t, int nt) { k.row_rescale(slice(a, rows_of(a.M, t, nt), a.work)); });
}

template <class T>
void parallel_col_rescale(const SkKernels<T>& k, const SkArgs<T>& a, const SkTeam<T>& team) {
  if (team.threads <= 1) return k.col_rescale(a);
  on_team(team.threads, [&](int t, int nt) {
    T* mine = team.partial + t * team.stride;
    std::memset(mine, 0, size_t(a.N) * sizeof(T));
    const SkArgs<T> s = slice(a, rows_of(a.M, t, nt), mine);
    k.col_sums(s);
#pragma omp barrier
    const Range cols = cols_of<T>(a.N, t, nt);
    reduce(team.partial, team.stride, nt, cols, a.work);
    col_factors(a.work + cols.begin, a.c + cols.begin, cols.end - cols.begin, a.fi);
#pragma omp barrier
    SkArgs<T> sc = s;
    sc.work = a.work;
    k.col_scale(sc);
  });
}

template <class T>
FusedSolver<T>::FusedSolver(Kind kind, FusedKernels<T> k, Data d, int threads)
    : kind_(kind), k_(k), d_(d), threads_(std::max(1, threads)) {}

template <class T>
void FusedSolver<T>::start() {
  std::fill_n(d_.colf, d_.N, T(1));
  std::fill_n(d_.partial, threads_ * team_stride<T>(d_.N), T(0));
  if (kind_ == Kind::uv) std::fill_n(d_.u, d_.M, T(1));
  pending_ = false;
}

template <class T>
void FusedSolver<T>::run() {
  const int64_t stride = team_stride<T>(d_.N);
  const bool mapuot = kind_ == Kind::mapuot, apply_pending = pending_;
  on_team(threads_, [&](int t, int nt) {
    const Range cols = cols_of<T>(d_.N, t, nt);
    if (mapuot && apply_pending) {
      // Line 16-20: the column factors of the previous pass's sums.
      reduce(d_.partial, stride, nt, cols, d_.colf);
      col_factors(d_.colf + cols.begin, d_.c + cols.begin, cols.end - cols.begin, d_.fi);
#pragma omp barrier
    }
    const Range rows = rows_of(d_.M, t, nt);
    T* mine = d_.partial + t * stride;
    std::memset(mine, 0, size_t(d_.N) * sizeof(T));
    FusedArgs<T> f{d_.A + rows.begin * d_.lda, rows.end - rows.begin, d_.N, d_.lda,
                   d_.r + rows.begin, d_.fi, d_.colf, d_.u ? d_.u + rows.begin : nullptr, mine};
    (mapuot ? k_.mapuot : k_.uv)(f);
    if (!mapuot) {
      // v from K^T u; colf (= v) is read by every thread's sweep, so wait for all of them.
#pragma omp barrier
      for (int64_t j = cols.begin; j < cols.end; ++j) {
        T s = d_.partial[j];
        for (int q = 1; q < nt; ++q) s += d_.partial[q * stride + j];
        d_.colf[j] = pot_factor(d_.c[j], s, d_.fi, d_.colf[j]);
      }
    }
  });
  pending_ = mapuot;
}

template <class T>
void FusedSolver<T>::finish() {
  if (!pending_) return;
  const int64_t stride = team_stride<T>(d_.N);
  // Same reduction as run()'s prologue, then a plain column scaling of each slice.
  const SkKernels<T> c2r = c2r_kernels<T>();
  on_team(threads_, [&](int t, int nt) {
    const Range cols = cols_of<T>(d_.N, t, nt);
    reduce(d_.partial, stride, nt, cols, d_.colf);
    col_factors(d_.colf + cols.begin, d_.c + cols.begin, cols.end - cols.begin, d_.fi);
#pragma omp barrier
    const Range rows = rows_of(d_.M, t, nt);
    SkArgs<T> s{d_.A + rows.begin * d_.lda, rows.end - rows.begin, d_.N, d_.lda,
                d_.r + rows.begin, d_.c, d_.fi, d_.colf, 1, 1};
    c2r.col_scale(s);
  });
  pending_ = false;
}

template <class T>
void FusedSolver<T>::column_sums(T* out) const {
  const int64_t stride = team_stride<T>(d_.N);
  // A run() may have been granted fewer than threads_ threads; start() zeroed the rest.
  std::fill_n(out, d_.N, T(0));
  for (int t = 0; t < threads_; ++t)
    for (int64_t j = 0; j < d_.N; ++j) out[j] += d_.partial[t * stride + j];
}

template void parallel_row_rescale<float>(const SkKernels<float>&, const SkArgs<float>&, const SkTeam<float>&);
template void parallel_row_rescale<double>(const SkKernels<double>&, const SkArgs<double>&, const SkTeam<double>&);
template void parallel_col_rescale<float>(const SkKernels<float>&, const SkArgs<float>&, const SkTeam<float>&);
template void parallel_col_rescale<double>(const SkKernels<double>&, const SkArgs<double>&, const SkTeam<double>&);
template class FusedSolver<float>;
template class FusedSolver<double>;

}  // namespace rooflab::sinkhorn

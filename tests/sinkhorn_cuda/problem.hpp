#pragma once
// Shared by the unit tests and device_check: a random problem, two iterations of a variant on
// a backend (device or host emulation) and the comparison with the long-double reference
// under the family's tolerance.
#include <limits>
#include <random>
#include <vector>

#include "kernels/sinkhorn/cuda/sinkhorn_cuda.hpp"
#include "kernels/sinkhorn/sinkhorn.hpp"

namespace rooflab::sinkhorn_cuda::testing {

// A0 uniform in [0.1, 1.1) (padding columns of lda > N are 0), targets in [0.5, 1.5) with
// sum(c) == sum(r).
template <class T>
struct Problem {
  int64_t M, N, lda;
  std::vector<T> A0, r, c;
  Problem(int64_t M_, int64_t N_, int64_t lda_, uint64_t seed = 7)
      : M(M_), N(N_), lda(lda_), A0(size_t(M_ * lda_), T(0)), r(size_t(M_)), c(size_t(N_)) {
    std::mt19937_64 gen(seed);
    std::uniform_real_distribution<double> a(0.1, 1.1), t(0.5, 1.5);
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) A0[size_t(i * lda + j)] = T(a(gen));
    long double sr = 0, sc = 0;
    for (auto& x : r) sr += x = T(t(gen));
    for (auto& x : c) sc += x = T(t(gen));
    for (auto& x : c) x = T(x * (sr / sc));
  }
};

// Two iterations of `kind` on backend b with A placed `offset` elements into its buffer (to
// test unaligned rows); the matrix (mapuot, baseline) or the plan u K v (uv). g2: the part-2
// launch the solver planned.
template <class T>
std::vector<T> two_iterations(const Backend<T>& b, Kind kind, const Problem<T>& p, double fi, Tile2 t2, Tile4 t4,
                              int64_t offset = 0, Geometry* g2 = nullptr) {
  DeviceBuffer<T> dA(b, p.A0.size() + size_t(offset));
  b.to_device(dA.data() + offset, p.A0.data(), p.A0.size() * sizeof(T));
  Solver<T> s(b, kind, dA.data() + offset, p.M, p.N, p.lda, p.r.data(), p.c.data(), T(fi), t2, t4);
  if (g2) *g2 = s.geometry2();
  s.start();
  s.run();
  s.run();
  std::vector<T> got(p.A0.size());
  if (kind == Kind::uv) {
    std::vector<T> u(size_t(p.M)), v(size_t(p.N));
    s.u(u.data()), s.v(v.data());
    for (int64_t i = 0; i < p.M; ++i)
      for (int64_t j = 0; j < p.N; ++j) got[size_t(i * p.lda + j)] = u[size_t(i)] * p.A0[size_t(i * p.lda + j)] * v[size_t(j)];
  } else {
    b.to_host(got.data(), dA.data() + offset, got.size() * sizeof(T));
  }
  return got;
}

struct RefCheck {
  double max_err = 0, tol = 0;
  bool ok() const { return max_err <= tol; }
};
// `got` after two iterations against the reference, with the family's verify() tolerance.
template <class T>
RefCheck against_reference(const std::vector<T>& got, Kind kind, const Problem<T>& p, double fi) {
  sinkhorn::SkReference<T> ref(p.A0.data(), p.M, p.N, p.lda, p.r.data(), p.c.data(), fi,
                               kind == Kind::uv ? sinkhorn::Form::scaling : sinkhorn::Form::matrix);
  ref.iterate(), ref.iterate();
  const int extra = 2 + (fi != 1 ? 2 : 0);
  return {sinkhorn::compare_with_reference(got.data(), p.lda, ref).max_err,
          sinkhorn::sk_error_bound({p.N + extra, p.M + extra, p.N + extra, p.M + extra},
                                   double(std::numeric_limits<T>::epsilon()))};
}

}  // namespace rooflab::sinkhorn_cuda::testing

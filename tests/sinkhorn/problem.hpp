#pragma once
// Shared by the sinkhorn tests: a random problem with padding and guards.
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/sinkhorn/sinkhorn.hpp"

namespace rooflab::sinkhorn::sktest {

// ---- A test problem with padding and guards -----------------------------------------------
// Rows are lda apart; the lda - N padding columns and a guard after the last row hold NaN, so
// a kernel that reads them poisons its sums (caught by the comparison) and one that writes
// them is caught by guards_intact().
template <class T>
struct Problem {
  int64_t M, N, lda;
  std::vector<T> A0, A, r, c, work;
  static constexpr int64_t kGuard = 64;

  Problem(int64_t M_, int64_t N_, int64_t lda_, uint32_t seed) : M(M_), N(N_), lda(lda_) {
    const T nan = std::numeric_limits<T>::quiet_NaN();
    A0.assign(size_t(M * lda + kGuard), nan);
    uint64_t s = 0x9E3779B97F4A7C15ull * (seed + 1);
    auto next = [&s] {  // xorshift64*: uniform in [0, 1)
      s ^= s >> 12, s ^= s << 25, s ^= s >> 27;
      return double((s * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53;
    };
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) A0[size_t(i * lda + j)] = T(0.1 + next());
    long double sr = 0, sc = 0;
    for (int64_t i = 0; i < M; ++i) r.push_back(T(0.5 + next())), sr += r.back();
    for (int64_t j = 0; j < N; ++j) c.push_back(T(0.5 + next())), sc += c.back();
    for (auto& x : c) x = T(x * (sr / sc));
    A = A0;
    work.assign(size_t(N), T(0));
  }
  SkArgs<T> args(int64_t mc = 8, int64_t nc = 1024, T fi = 1) {
    return SkArgs<T>{A.data(), M, N, lda, r.data(), c.data(), fi, work.data(), mc, nc};
  }
  bool guards_intact() const {
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = N; j < lda; ++j)
        if (!std::isnan(A[size_t(i * lda + j)])) return false;
    for (int64_t g = 0; g < kGuard; ++g)
      if (!std::isnan(A[size_t(M * lda + g)])) return false;
    return true;
  }
};

}  // namespace rooflab::sinkhorn::sktest

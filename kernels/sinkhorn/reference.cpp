// The reference: Sinkhorn-Knopp in long double, in scaling-vector form. The scaled matrix is
// always diag(u) A0 diag(v), so a pass only updates u (row pass) or v (column pass) from sums
// over A0 weighted by the other vector; A0 stays in the caller's precision and no M x N
// long-double matrix is needed. Its own rounding (~K * 2^-64) is negligible next to the
// kernels' tolerance.
#include <cmath>
#include <limits>

#include "kernels/sinkhorn/sinkhorn.hpp"

namespace rooflab::sinkhorn {

namespace {
long double ld_factor(long double target, long double sum, long double fi) {
  if (sum == 0) return 1;  // the kernels' zero-sum rule
  const long double f = target / sum;
  return fi == 1 ? f : std::pow(f, fi);
}
}  // namespace

template <class T>
SkReference<T>::SkReference(const T* A0, int64_t M, int64_t N, int64_t lda, const T* r,
                            const T* c, long double fi, Form form)
    : A0_(A0), M_(M), N_(N), lda_(lda), r_(r), c_(c), fi_(fi), form_(form), u_(size_t(M), 1.0L),
      v_(size_t(N), 1.0L) {}

template <class T>
void SkReference<T>::row_pass() {
  for (int64_t i = 0; i < M_; ++i) {
    const T* row = A0_ + i * lda_;
    long double s = 0;
    for (int64_t j = 0; j < N_; ++j) s += row[j] * v_[j];
    if (form_ == Form::matrix) u_[i] *= ld_factor(r_[i], u_[i] * s, fi_);
    else if (s != 0) u_[i] = ld_factor(r_[i], s, fi_);
  }
}

template <class T>
void SkReference<T>::col_pass() {
  std::vector<long double> s(size_t(N_), 0.0L);
  for (int64_t i = 0; i < M_; ++i) {  // row-major walk: A0 may be 16000^2
    const T* row = A0_ + i * lda_;
    const long double ui = u_[i];
    for (int64_t j = 0; j < N_; ++j) s[j] += row[j] * ui;
  }
  for (int64_t j = 0; j < N_; ++j) {
    if (form_ == Form::matrix) v_[j] *= ld_factor(c_[j], v_[j] * s[j], fi_);
    else if (s[j] != 0) v_[j] = ld_factor(c_[j], s[j], fi_);
  }
}

template <class T>
SkCompare compare_with_reference(const T* A, int64_t lda, const SkReference<T>& ref) {
  SkCompare worst;
  for (int64_t i = 0; i < ref.M(); ++i) {
    for (int64_t j = 0; j < ref.N(); ++j) {
      const long double e = ref.expected(i, j);
      const long double got = A[i * lda + j];
      long double err = e != 0 ? std::fabs(got - e) / std::fabs(e) : std::fabs(got);
      if (std::isnan(err)) err = std::numeric_limits<long double>::infinity();
      if (worst.i < 0 || err > worst.max_err) {
        worst = {double(err), i, j, double(got), double(e)};
      }
    }
  }
  return worst;
}

template class SkReference<float>;
template class SkReference<double>;
template SkCompare compare_with_reference<float>(const float*, int64_t, const SkReference<float>&);
template SkCompare compare_with_reference<double>(const double*, int64_t, const SkReference<double>&);

}  // namespace rooflab::sinkhorn

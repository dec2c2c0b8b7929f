// The iteration recipes of the GPU variants (see Solver in sinkhorn_cuda.hpp) and the
// backend that runs them on the device.
#include <algorithm>

#include "kernels/sinkhorn/cuda/sinkhorn_cuda.hpp"

namespace rooflab::sinkhorn_cuda {

template <class T>
Backend<T> device_backend() {
  using P = void (*)(const Geometry&, const dev::PassArgs<T>&);
  using F = void (*)(T*, T*, const T*, int64_t, T, bool);
  using S = void (*)(T*, int64_t, int64_t, int64_t, const T*, const T*);
  using L = void (*)(T*, int64_t, T);
  return {dev::alloc,           dev::release,        dev::to_device,      dev::to_host,
          dev::zero,            dev::synchronize,    P(&dev::part2),      P(&dev::part4),
          F(&dev::factors),     S(&dev::scale),      L(&dev::fill)};
}

template <class T>
Solver<T>::Solver(const Backend<T>& b, Kind kind, T* A, int64_t M, int64_t N, int64_t lda, const T* r_host,
                  const T* c_host, T fi, Tile2 t2, Tile4 t4)
    : b_(b), kind_(kind), A_(A), M_(M), N_(N), fi_(fi),
      g2_(plan_part2(M, N, lda, sizeof(T), t2, can_vectorize(A, lda, sizeof(T)))),
      g4_(plan_part4(M, N, lda, sizeof(T), t4, can_vectorize(A, lda, sizeof(T)))),
      r_(b, size_t(M)), c_(b, size_t(N)), rowf_(b, size_t(M)), colf_(b, size_t(N)), rowsum_(b, size_t(M)),
      colsum_(b, size_t(N)), ones_(b, size_t(std::max(M, N))) {
  r_.upload(r_host);
  c_.upload(c_host);
  b_.fill(ones_.data(), int64_t(ones_.size()), T(1));
  b_.synchronize();
}

template <class T>
void Solver<T>::start() {
  b_.zero(rowsum_.data(), size_t(M_) * sizeof(T));
  b_.zero(colsum_.data(), size_t(N_) * sizeof(T));
  if (kind_ == Kind::mapuot) {
    b_.part4(g4_, {A_, ones_.data(), rowsum_.data(), false});  // row sums of the start matrix
  } else if (kind_ == Kind::uv) {
    b_.fill(rowf_.data(), M_, T(1));
    b_.fill(colf_.data(), N_, T(1));
  }
  b_.synchronize();
}

template <class T>
void Solver<T>::run() {
  T *A = A_, *rowf = rowf_.data(), *colf = colf_.data(), *rs = rowsum_.data(), *cs = colsum_.data();
  const T *r = r_.data(), *c = c_.data(), *ones = ones_.data();
  switch (kind_) {
    case Kind::mapuot:
      b_.factors(rowf, rs, r, M_, fi_, false);  // part 1
      b_.part2(g2_, {A, rowf, cs, true});       // part 2: rows scaled, column sums
      b_.factors(colf, cs, c, N_, fi_, false);  // part 3
      b_.part4(g4_, {A, colf, rs, true});       // part 4: columns scaled, next row sums
      break;
    case Kind::uv:                              // rowf = u, colf = v; K is never written
      b_.part4(g4_, {A, colf, rs, false});      // K v
      b_.factors(rowf, rs, r, M_, fi_, true);   // u
      b_.part2(g2_, {A, rowf, cs, false});      // K^T u
      b_.factors(colf, cs, c, N_, fi_, true);   // v
      break;
    case Kind::baseline:
      b_.part4(g4_, {A, ones, rs, false});      // row sums
      b_.factors(rowf, rs, r, M_, fi_, false);
      b_.scale(A, M_, N_, g4_.lda, rowf, nullptr);  // row scale
      b_.part2(g2_, {A, ones, cs, false});      // column sums
      b_.factors(colf, cs, c, N_, fi_, false);
      b_.scale(A, M_, N_, g4_.lda, nullptr, colf);  // column scale
      break;
  }
  b_.synchronize();
}

template <class T>
void Solver<T>::run_part2_only() {
  b_.part2(g2_, {A_, ones_.data(), colsum_.data(), true});
  b_.synchronize();
}

template <class T>
void Solver<T>::run_part4_only() {
  b_.part4(g4_, {A_, ones_.data(), rowsum_.data(), true});
  b_.synchronize();
}

template Backend<float> device_backend<float>();
template Backend<double> device_backend<double>();
template class Solver<float>;
template class Solver<double>;

}  // namespace rooflab::sinkhorn_cuda

#pragma once
// Sinkhorn-Knopp matrix scaling (COFFEE, IEEE TPDS 2023): the kernel contract and the family.
//
// A is M x N, row-major, leading dimension lda >= N. r (length M) and c (length N) are the
// target marginals (COFFEE's RMD / CMD).
//   row pass:    row i    is scaled by factor(r[i], sum_j A[i][j])
//   column pass: column j is scaled by factor(c[j], sum_i A[i][j])
//   iteration:   row pass, then column pass (COFFEE Algorithm 1)
// factor(target, sum) = (target / sum)^fi. fi = 1 is plain Sinkhorn-Knopp (no pow is taken);
// fi < 1 is the unbalanced-OT exponent (MAP-UOT: fi = reg_m / (reg_m + reg)).
// A row or column whose sum is exactly 0 is left unchanged (factor 1): no scaling can give
// it a positive marginal, and 1 is what keeps it finite (target/0 would be inf, 0*inf NaN).
//
// Kernels are plain functions: no allocation, no I/O, no threads. A row slice is just a
// sub-matrix (A + i0*lda, M = rows, r + i0), so callers that split rows across threads or
// MPI ranks use the column pass in stages: zero a private work[N], col_sums on the slice,
// reduce the sums across slices, col_factors, col_scale on the slice.
#include <cmath>
#include <cstdint>
#include <memory>
#include <string_view>
#include <type_traits>
#include <vector>

#include "harness/isa.hpp"
#include "harness/registry.hpp"

namespace rooflab {

// The registry table of the "sinkhorn" family (variants typical, c2r, blocked, microkernel).
const Family& sinkhorn_family();

namespace sinkhorn {

template <class T>
struct SkArgs {
  T* A = nullptr;
  int64_t M = 0, N = 0, lda = 0;
  const T* r = nullptr;      // row targets, length M
  const T* c = nullptr;      // column targets, length N
  T fi = 1;                  // marginal exponent; 1 = plain SK
  T* work = nullptr;         // >= N scratch: column sums, then column factors
  int64_t mc = 8, nc = 1024; // blocking (blocked, microkernel); any values >= 1
};

template <class T>
using SkPass = void (*)(const SkArgs<T>&);

// One variant's kernels. col_rescale == {zero work; col_sums; col_factors; col_scale} up to
// the order of operations (blocked/microkernel compute each nc-block's factors right before
// scaling it, as Algorithm 3 does).
template <class T>
struct SkKernels {
  SkPass<T> row_rescale = nullptr;  // rows to r
  SkPass<T> col_rescale = nullptr;  // columns to c (uses work)
  SkPass<T> col_sums = nullptr;     // work[j] += sum_i A[i][j]   (caller zeroes work)
  SkPass<T> col_scale = nullptr;    // A[i][j] *= work[j]         (work holds the factors)
};

// factor(target, sum) with the zero-sum rule above. Always inlined: it is also used inside
// the AVX2/AVX-512 translation units, which must not emit out-of-line copies of shared
// functions (the linker could pick an AVX-512 copy for everybody). ::pow / ::powf are libm's.
template <class T>
[[gnu::always_inline]] inline T sk_factor(T target, T sum, T fi) {
  if (sum == T(0)) return T(1);
  const T f = target / sum;
  if (fi == T(1)) return f;
  if constexpr (std::is_same_v<T, float>) return ::powf(f, fi);
  else return ::pow(f, fi);
}

// work[j] = factor(c[j], work[j]) for j < n (sums in, factors out).
template <class T>
void col_factors(T* work, const T* c, int64_t n, T fi);

// One iteration: row pass then column pass.
template <class T>
inline void iterate(const SkKernels<T>& k, const SkArgs<T>& a) {
  k.row_rescale(a);
  k.col_rescale(a);
}

// The kernel tables. microkernel_kernels: isa is scalar, avx2 or avx512; the table is returned
// whatever the CPU supports (callers check isa_supported() before running it).
template <class T> SkKernels<T> typical_kernels();
template <class T> SkKernels<T> c2r_kernels();
template <class T> SkKernels<T> blocked_kernels();
template <class T> SkKernels<T> microkernel_kernels(Isa isa);
// By variant name ("typical", "c2r", "blocked", "microkernel"); isa only for microkernel.
// Throws rooflab::Error for an unknown variant or ISA.
template <class T> SkKernels<T> kernels_for(std::string_view variant, Isa isa);

// The benchmark instance of a case (as the family's Variant::make builds it) running the given
// kernels instead of the case variant's own: tests inject wrong kernels to see verify() fail;
// later variants built from these passes can reuse the instance. Throws Error for a bad case.
template <class T>
std::unique_ptr<Instance> make_instance(const Case& c, const SkKernels<T>& k);

// The blocking the microkernel uses when a case gives no mc:/nc: (one place per ISA, as BLIS
// keeps its per-architecture parameters).
struct Blocking { int64_t mc, nc; };
Blocking microkernel_default_blocking(Isa isa);

// ---- Reference -------------------------------------------------------------------------
// Long-double Sinkhorn in scaling-vector form: A = diag(u) A0 diag(v), starting at u = v = 1.
// No long-double copy of A is kept (it matters at 16000^2). Same zero-sum rule as the kernels.
template <class T>
class SkReference {
 public:
  SkReference(const T* A0, int64_t M, int64_t N, int64_t lda, const T* r, const T* c,
              long double fi = 1);
  void row_pass();
  void col_pass();
  void iterate() { row_pass(); col_pass(); }
  long double expected(int64_t i, int64_t j) const { return A0_[i * lda_ + j] * u_[i] * v_[j]; }
  int64_t M() const { return M_; }
  int64_t N() const { return N_; }

 private:
  const T* A0_;
  int64_t M_, N_, lda_;
  const T* r_;
  const T* c_;
  long double fi_;
  std::vector<long double> u_, v_;
};

// Worst element of A against the reference: relative error |a - e| / e (absolute where e is
// 0; NaN/inf count as infinitely wrong).
struct SkCompare {
  double max_err = 0;
  int64_t i = -1, j = -1;
  double got = 0, expected = 0;
};
template <class T>
SkCompare compare_with_reference(const T* A, int64_t lda, const SkReference<T>& ref);

// A first-order bound on the relative error of `passes` kernel passes in precision T against
// exact arithmetic, for non-negative data. A pass summing K terms (recursive, blocked or
// SIMD-partial summation alike) is off by at most (K-1)u relative, the division and the
// multiply add u each (u = eps/2); an element that already carries relative error in
// [-d, d] is divided by a sum carrying a weighted average of such errors, so the spread can
// double per pass: d <- 2d + (K+1)u. `lengths` holds K for each pass in order (N for a row
// pass, M for a column pass). Observed errors are ~sqrt(K)u, far inside this.
double sk_error_bound(const std::vector<int64_t>& lengths, double eps);

}  // namespace sinkhorn
}  // namespace rooflab

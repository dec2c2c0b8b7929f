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
#include <optional>
#include <string_view>
#include <type_traits>
#include <vector>

#include "harness/isa.hpp"
#include "harness/registry.hpp"
#include "kernels/sinkhorn/config.hpp"  // Blocking, microkernel_default_blocking

namespace rooflab {

// The registry table of the "sinkhorn" family (variants typical, c2r, blocked, microkernel,
// mapuot, fused_uv).
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
// the order of operations (microkernel computes each nc-block's factors right before scaling
// it, as Algorithm 3 does).
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

// ---- Threads: row slices with private column sums ---------------------------------------
// `threads` OpenMP threads each own rows [M*t/T, M*(t+1)/T). The column pass is staged:
// every thread sums its slice into its own partial row of `partial` (T rows, `stride`
// elements apart, stride a multiple of a cache line, so no two threads write one line),
// then each thread reduces and turns into factors its own cache-line-aligned column range
// of a.work, then scales its slice. threads == 1 calls the variant's fused passes directly.
template <class T>
struct SkTeam {
  int threads = 1;
  T* partial = nullptr;  // threads x stride, 64-byte aligned (unused when threads == 1)
  int64_t stride = 0;    // team_stride<T>(N)
};
// Elements per private partial row: N rounded up to a whole number of 64-byte lines.
template <class T>
constexpr int64_t team_stride(int64_t N) {
  constexpr int64_t line = 64 / int64_t(sizeof(T));
  return (N + line - 1) / line * line;
}
template <class T> void parallel_row_rescale(const SkKernels<T>& k, const SkArgs<T>& a, const SkTeam<T>& team);
template <class T> void parallel_col_rescale(const SkKernels<T>& k, const SkArgs<T>& a, const SkTeam<T>& team);

// ---- Fused one-pass kernels (mapuot, fused_uv) -------------------------------------------
// One row slice of a fused iteration. The per-slice kernels are plain functions (no
// threads); FusedSolver below runs them over thread-owned row slices.
//   mapuot (MAP-UOT Alg. 1): for each row, x_j = A_ij * colf[j], s = sum_j x_j, then
//     A_ij = x_j * factor(r_i, s), next[j] += A_ij. A is read and written once; the row's
//     second sweep hits cache. colf are the column factors of the previous iteration.
//   fused_uv (scaling-vector form, K read-only): for each row, s = (K v)_i,
//     u_i = pot_factor(r_i, s), next[j] += K_ij u_i. K is only read, once.
template <class T>
struct FusedArgs {
  T* A = nullptr;          // mapuot: the matrix, scaled in place; fused_uv: K (not written)
  int64_t M = 0, N = 0, lda = 0;
  const T* r = nullptr;    // row targets of the slice
  T fi = 1;
  const T* colf = nullptr; // mapuot: column factors to apply first; fused_uv: v
  T* u = nullptr;          // fused_uv: row scalings of the slice (written)
  T* next = nullptr;       // += next column sums (caller zeroes)
};
template <class T>
using FusedPass = void (*)(const FusedArgs<T>&);
template <class T>
struct FusedKernels {
  FusedPass<T> mapuot = nullptr;
  FusedPass<T> uv = nullptr;
};
// Where the fused kernels' software prefetch puts the rows they stream from DRAM (the case
// parameter pf:): L2 (prefetcht1, the default) or L1 (prefetcht0). Which is faster depends on
// the CPU (docs/families/sinkhorn.md#prefetch); the arithmetic is the same.
enum class FusedPrefetch { l2, l1 };
// The parameter's spellings, indexed by FusedPrefetch: [0] is what a case without pf: runs.
inline constexpr const char* kFusedPrefetchNames[] = {"l2", "l1"};
// FusedPrefetch from its spelling; nullopt for others.
inline std::optional<FusedPrefetch> parse_fused_prefetch(std::string_view s) {
  if (s == kFusedPrefetchNames[0]) return FusedPrefetch::l2;
  if (s == kFusedPrefetchNames[1]) return FusedPrefetch::l1;
  return std::nullopt;
}
// isa: scalar, avx2 or avx512 (table returned whatever the CPU supports).
template <class T> FusedKernels<T> fused_kernels(Isa isa, FusedPrefetch pf = FusedPrefetch::l2);

// POT's scaling-vector update (sinkhorn_knopp / sinkhorn_knopp_unbalanced):
// scaling = (target / (K other))^fi. Zero sum: the scaling is kept (`keep`), as the
// matrix-form rule keeps the factor 1.
template <class T>
[[gnu::always_inline]] inline T pot_factor(T target, T sum, T fi, T keep) {
  return sum == T(0) ? keep : sk_factor(target, sum, fi);
}

// A fused iteration over thread-owned row slices (MAP-UOT Alg. 1 lines 5-20). Owns no
// memory: the caller provides M x N data, r, c, and the scratch named below.
//   Mapuot: run() = apply pending column factors + row pass + next column sums. After
//     run() the rows are scaled and a column pass is pending; finish() applies it, so
//     k run()s + finish() == k row+column iterations of the reference.
//   Uv: run() = u from (K v), next = K^T u, v from next (POT's row-then-column order; with
//     fi < 1 exactly POT's sinkhorn_knopp_unbalanced). plan = diag(u) K diag(v).
template <class T>
class FusedSolver {
 public:
  enum class Kind { mapuot, uv };
  struct Data {
    T* A;                 // matrix (mapuot) or K (uv)
    int64_t M, N, lda;
    const T* r;
    const T* c;
    T fi;
    T* colf;              // N: mapuot pending column factors; uv: v
    T* u;                 // M: uv row scalings (mapuot: unused, may be null)
    T* partial;           // threads x team_stride<T>(N), 64-byte aligned (private sums)
  };
  FusedSolver(Kind kind, FusedKernels<T> k, Data d, int threads);
  void start();           // mapuot: no pending columns (factors 1); uv: u = v = 1
  void run();
  void finish();          // mapuot: apply pending column factors; uv: nothing to do
  // Column sums of the current matrix / plan as of the last run() (mapuot: before the
  // pending column pass, i.e. sums whose factors are pending). Summed over threads into out.
  void column_sums(T* out) const;

 private:
  Kind kind_;
  FusedKernels<T> k_;
  Data d_;
  int threads_;
  bool pending_ = false;
};

// ---- Reference -------------------------------------------------------------------------
// Long-double Sinkhorn in scaling-vector form: A = diag(u) A0 diag(v), starting at u = v = 1.
// No long-double copy of A is kept (it matters at 16000^2). Same zero-sum rule as the kernels.
// Form::matrix: the papers' pass, factor (target / current sum)^fi applied to the matrix
// (u *= factor(r, u * (A0 v))). Form::scaling: POT's update u = (r / (A0 v))^fi. The two
// agree for fi = 1; for fi < 1 they are different iterations (every fixed point of the
// matrix form has exact marginals, i.e. it is a damped balanced Sinkhorn).
enum class Form { matrix, scaling };
template <class T>
class SkReference {
 public:
  SkReference(const T* A0, int64_t M, int64_t N, int64_t lda, const T* r, const T* c,
              long double fi = 1, Form form = Form::matrix);
  void row_pass();
  void col_pass();
  void iterate() { row_pass(); col_pass(); }
  long double expected(int64_t i, int64_t j) const { return A0_[i * lda_ + j] * u_[i] * v_[j]; }
  const std::vector<long double>& u() const { return u_; }
  const std::vector<long double>& v() const { return v_; }
  int64_t M() const { return M_; }
  int64_t N() const { return N_; }

 private:
  const T* A0_;
  int64_t M_, N_, lda_;
  const T* r_;
  const T* c_;
  long double fi_;
  Form form_;
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

// verify() of an instance: A (row stride lda) against the reference after the passes of
// `lengths` (see sk_error_bound), each with `extra` more roundings (fused products, pow, a
// T-term reduction of row slices); `after` names the passes in the detail ("2 iterations").
template <class T>
Verification verify_against(const T* A, int64_t lda, const SkReference<T>& ref, std::vector<int64_t> lengths,
                            int extra, const std::string& after);

// The benchmark problem, the same wherever it is built (the family's instances, the MPI
// program's ranks): entry k = i * N + j of the M x N matrix is a counter-based hash of k, so a
// thread or a rank builds its own rows in any order, uniform in [0.1, 1.1) (positive, so every
// sum is positive and the factors are far from 1 on the first pass); targets r, c uniform in
// [0.5, 1.5), c rescaled so that sum(c) == sum(r) (a balanced problem has a solution).
double problem_entry(uint64_t k);
template <class T> void problem_targets(T* r, int64_t M, T* c, int64_t N);

// The case parameter fi (the unbalanced-OT exponent reg_m / (reg_m + reg), in (0, 1]; 1 =
// balanced when absent), shared with the sinkhorn_cuda family. Throws Error naming the case.
double parse_fi(const Case& c);

}  // namespace sinkhorn
}  // namespace rooflab

#pragma once
// Full Sinkhorn / unbalanced-OT solves on top of the family's kernels: from a cost matrix C
// and reg (K = exp(-C / reg)), iterate until the stopping rule holds or max_iter is reached,
// and return the plan (and scalings), the iteration count and the final marginal error.
//
// Balanced (reg_m = inf): every variant. Stopping rule: ||P 1 - a||_1 + ||P^T 1 - b||_1 <= tol,
// checked every check_every iterations (one extra read pass over the matrix per check,
// except mapuot whose fused pass yields the column sums for free).
// Unbalanced (reg_m finite, fi = reg_m / (reg_m + reg)): fused_uv only, which runs POT's
// sinkhorn_knopp_unbalanced iteration u = (a / K v)^fi, v = (b / K^T u)^fi; stopping rule
// POT's: (max|u - u'| / max(|u|, |u'|, 1) + the same for v) / 2 <= tol between two
// consecutive iterations.
// The matrix-form variants' pow(target / sum, fi) factor (MAP-UOT, COFFEE) is a different
// iteration: every fixed point of it has exact marginals (a damped balanced Sinkhorn), so it
// does not solve POT's UOT problem; solve() refuses it with that explanation.
// No log-domain stabilization: when a row or column of K underflows to zero the solve stops
// with an error suggesting a larger reg or a log-domain solver.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "harness/isa.hpp"

namespace rooflab::sinkhorn {

struct SolveOptions {
  std::string variant = "fused_uv";  // typical, c2r, blocked, microkernel, mapuot, fused_uv
  Isa isa = Isa::none;               // none: the best ISA the CPU supports (ISA variants)
  double reg = 0;                    // entropic regularization, > 0
  double reg_m = std::numeric_limits<double>::infinity();  // marginal relaxation; inf = balanced
  double tol = 1e-9;
  int64_t max_iter = 1000;
  int64_t check_every = 10;          // iterations between stopping-rule checks
  int threads = 1;
};

template <class T>
struct SolveResult {
  std::vector<T> plan;        // M x N, row-major
  std::vector<T> u, v;        // fused_uv: plan = diag(u) K diag(v); empty for other variants
  int64_t iterations = 0;
  bool converged = false;
  double stop_value = 0;      // the stopping rule's value at the last check
  double marginal_error = 0;  // ||P 1 - a||_1 + ||P^T 1 - b||_1 of the returned plan
  double seconds = 0;         // time in the iterations (no K setup, checks or final plan)
  std::string isa;            // the ISA that ran ("" for non-ISA variants)
  std::string prefetch;       // mapuot / fused_uv: where the streamed rows were prefetched to (pf:)
};

// Throws rooflab::Error for bad input (sizes < 1, negative / NaN / inf entries in C, a or b,
// reg <= 0, reg_m <= 0, balanced marginals of different mass, K rows/columns underflowing to
// zero, an unknown variant or unsupported ISA, UOT on a matrix-form variant) and for a
// result that is not finite. a has M entries, b has N.
template <class T>
SolveResult<T> solve(const T* C, int64_t M, int64_t N, const T* a, const T* b, const SolveOptions& o);

}  // namespace rooflab::sinkhorn

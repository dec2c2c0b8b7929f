// The "sinkhorn" family table: variants, their models, the problem instance, the profiles.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>

#include "harness/buffer.hpp"
#include "harness/error.hpp"
#include "kernels/sinkhorn/sinkhorn.hpp"

namespace rooflab {
namespace {
using namespace sinkhorn;

// ---- Case parameters -------------------------------------------------------------------
// part: which unit run() times — "iter" (row then column pass), "row" or "col".
enum class Part { iter, row, col };

struct Params {
  int64_t M = 0, N = 0;
  Part part = Part::iter;
  int64_t mc = 0, nc = 0;  // blocked / microkernel only
};

bool is_blocked(const std::string& variant) { return variant == "blocked" || variant == "microkernel"; }

Params params_of(const Case& c) {
  const std::string n = c.name();
  if (c.dims.size() != 2) throw Error(n + ": sinkhorn takes two sizes, MxN");
  Params p;
  p.M = c.dims[0];
  p.N = c.dims[1];
  const std::string part = c.param_str("part", "iter");
  if (part == "iter") p.part = Part::iter;
  else if (part == "row") p.part = Part::row;
  else if (part == "col") p.part = Part::col;
  else throw Error(n + ": part must be iter, row or col, got '" + part + "'");
  for (const auto& [k, v] : c.params) {
    if (k == "part") continue;
    if ((k == "mc" || k == "nc") && is_blocked(c.variant)) continue;
    throw Error(n + ": unknown parameter '" + k + "' for sinkhorn/" + c.variant +
                (is_blocked(c.variant) ? " (known: mc, nc, part)" : " (known: part)"));
  }
  if (is_blocked(c.variant)) {
    const Blocking def = c.variant == "microkernel" ? microkernel_default_blocking(c.isa) : Blocking{8, 1024};
    p.mc = c.param_int("mc", def.mc);
    p.nc = c.param_int("nc", def.nc);
    if (p.mc < 1 || p.nc < 1) throw Error(n + ": mc and nc must be >= 1");
  }
  return p;
}

std::string accepts(const Case& c) {
  try {
    params_of(c);
  } catch (const Error& e) {
    return e.what();
  }
  if (c.threads != 1) return "only threads:1 is implemented (OpenMP row slices come later)";
  return "";
}

// ---- Model -----------------------------------------------------------------------------
// Per element a pass does one add (its sum) and one multiply (its scaling): 2·M·N flops, no
// FMA, so the ceiling is the add ceiling. Minimal DRAM traffic per pass, in the bandwidth
// kernels' convention (update = read + write, counted 2x):
//   row pass:    the row is summed and scaled while it sits in L1/L2 -> one update of A
//   column pass: a read pass (the sums) and an update pass (the scaling)
// plus one read of the target vector r or c. The scratch work[N] is cache-resident.
Model model(const Case& c) {
  const Params p = params_of(c);
  const double s = double(dtype_size(c.dtype));
  const double MN = double(p.M) * double(p.N);
  const bool row = p.part != Part::col, col = p.part != Part::row;
  Model m;
  m.flops = 2 * MN * (int(row) + int(col));
  const double read = (col ? MN * s + double(p.N) * s : 0) + (row ? double(p.M) * s : 0);
  m.traffic = {{read, "read"}, {2 * MN * s * (int(row) + int(col)), "update"}};
  m.working_set = MN * s + double(p.M + 2 * p.N) * s;
  m.compute_ceiling = c.dtype == DType::f64 ? "add_f64" : "add_f32";
  m.note = "row pass: 1 update of A; column pass: 1 read + 1 update of A (COFFEE Alg. 2); "
           "+ r/c reads";
  if (c.variant == "typical" && col)
    m.note += ". typical walks columns with stride lda: each element is its own cache line, so "
              "once a column walk's M x 64 B exceed the cache a line is fetched once per column "
              "it holds, up to 64/sizeof = " + std::to_string(64 / int(s)) +
              "x this minimal traffic (COFFEE's point; see the efficiency)";
  return m;
}

size_t memory_bytes(const Case& c) {
  if (c.dims.size() != 2) return 0;
  const size_t s = dtype_size(c.dtype), M = size_t(c.dims[0]), N = size_t(c.dims[1]);
  // A and its pristine copy A0, r, c, work; the reference's u, v and column-sum scratch.
  return 2 * M * N * s + (M + 2 * N) * s + (M + 2 * N) * sizeof(long double);
}

// ---- Instance --------------------------------------------------------------------------
// Deterministic data from a counter-based hash: element (i, j) does not depend on the order
// of generation, so a later threaded first touch produces the same matrix.
uint64_t mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
double unit(uint64_t stream, uint64_t k) { return double(mix(mix(stream) ^ k) >> 11) * 0x1.0p-53; }
constexpr uint64_t kSeedA = 1, kSeedR = 2, kSeedC = 3;

template <class T>
class SkInstance final : public Instance {
 public:
  SkInstance(const Params& p, SkKernels<T> k)
      : p_(p), k_(k), A_(size_t(p.M * p.N)), A0_(size_t(p.M * p.N)), r_(size_t(p.M)),
        c_(size_t(p.N)), work_(size_t(p.N)) {
    // Entries uniform in [0.1, 1.1): positive, so every sum is positive and the SK factors
    // are far from 1 on the first pass. Targets uniform in [0.5, 1.5), c rescaled so that
    // sum(c) == sum(r) (a balanced problem has a solution).
    for (int64_t i = 0; i < p.M; ++i)
      for (int64_t j = 0; j < p.N; ++j)
        A0_[size_t(i * p.N + j)] = T(0.1 + unit(kSeedA, uint64_t(i * p.N + j)));
    std::memcpy(A_.data(), A0_.data(), A0_.size() * sizeof(T));  // first touch of A
    long double sr = 0, sc = 0;
    for (int64_t i = 0; i < p.M; ++i) sr += r_[size_t(i)] = T(0.5 + unit(kSeedR, uint64_t(i)));
    for (int64_t j = 0; j < p.N; ++j) sc += c_[size_t(j)] = T(0.5 + unit(kSeedC, uint64_t(j)));
    for (int64_t j = 0; j < p.N; ++j) c_[size_t(j)] = T(c_[size_t(j)] * (sr / sc));
    std::fill_n(work_.data(), p.N, T(0));
    args_ = SkArgs<T>{A_.data(), p.M, p.N, p.N, r_.data(), c_.data(), T(1), work_.data(),
                      p.mc, p.nc};
  }

  // Repeated runs need no reset: every pass normalizes (after a row pass the entries of row
  // i sum to r[i], after a column pass those of column j to c[j]), so the values stay
  // bounded and converge to the SK fixed point instead of drifting; the work per run does
  // not depend on the values (no early exits, factors near 1 are still applied).
  void run() override {
    if (p_.part != Part::col) k_.row_rescale(args_);
    if (p_.part != Part::row) k_.col_rescale(args_);
  }

  // From A0: run() twice and compare with the long-double reference doing the same passes.
  // Twice, because the first run sees far-from-1 factors (a wrong factor or a missed edge
  // shows as O(1) errors) and the second checks that a run starts from a clean state (e.g.
  // stale column sums in work would show). For part=iter that is row, col, row, col.
  Verification verify() override {
    std::memcpy(A_.data(), A0_.data(), A0_.size() * sizeof(T));
    SkReference<T> ref(A0_.data(), p_.M, p_.N, p_.N, r_.data(), c_.data());
    std::vector<int64_t> lengths;
    for (int rep = 0; rep < 2; ++rep) {
      run();
      if (p_.part != Part::col) ref.row_pass(), lengths.push_back(p_.N);
      if (p_.part != Part::row) ref.col_pass(), lengths.push_back(p_.M);
    }
    const SkCompare w = compare_with_reference(A_.data(), p_.N, ref);
    Verification v;
    v.max_err = w.max_err;
    v.tol = sk_error_bound(lengths, double(std::numeric_limits<T>::epsilon()));
    v.ok = w.max_err <= v.tol;
    std::ostringstream os;
    os.precision(17);
    os << "worst relative error " << w.max_err << " at (" << w.i << ", " << w.j << "): got "
       << w.got << ", expected " << w.expected << "; tol " << v.tol << " after "
       << lengths.size() << " passes";
    v.detail = os.str();
    std::memcpy(A_.data(), A0_.data(), A0_.size() * sizeof(T));
    return v;
  }

 private:
  Params p_;
  SkKernels<T> k_;
  AlignedBuffer<T> A_, A0_, r_, c_, work_;
  SkArgs<T> args_;
};

std::unique_ptr<Instance> make(const Case& c) {
  if (c.dtype == DType::f64) return make_instance<double>(c, kernels_for<double>(c.variant, c.isa));
  return make_instance<float>(c, kernels_for<float>(c.variant, c.isa));
}

// ---- Profiles --------------------------------------------------------------------------
const char* const kVariants[] = {"typical", "c2r", "blocked", "microkernel"};
const char* const kParts[] = {"iter", "row", "col"};

// blocked names its mc/nc (they are the variant's knobs); microkernel uses the per-ISA
// defaults unless a case overrides them.
Case make_case(const std::string& variant, DType dt, int64_t M, int64_t N, const std::string& part,
               int64_t mc, int64_t nc) {
  Case c;
  c.family = "sinkhorn";
  c.variant = variant;
  c.dtype = dt;
  c.dims = {M, N};
  if (variant == "blocked") {
    c.params.emplace_back("mc", std::to_string(mc));
    c.params.emplace_back("nc", std::to_string(nc));
  }
  c.params.emplace_back("part", part);
  return c;
}

std::vector<Case> cases(std::string_view profile) {
  std::vector<Case> out;
  if (profile == "quick") {
    for (DType dt : {DType::f64, DType::f32})
      for (const char* v : kVariants)
        for (const char* part : kParts) out.push_back(make_case(v, dt, 4096, 4096, part, 8, 1024));
    // Odd shapes: edges of every vector width, mr, mc and nc; a single row; a single column.
    for (auto [M, N] : {std::pair<int64_t, int64_t>{1023, 517}, {1, 4097}, {4097, 1}})
      for (const char* v : kVariants) out.push_back(make_case(v, DType::f64, M, N, "iter", 8, 1024));
  } else if (profile == "paper") {
    // COFFEE's 16000^2 doubles plus a size sweep; blocked with the paper's mc = 8, nc = 1000.
    for (int64_t n : {1024, 2048, 4096, 8192, 16000})
      for (const char* v : kVariants)
        for (const char* part : kParts) out.push_back(make_case(v, DType::f64, n, n, part, 8, 1000));
  }
  return out;
}

Variant variant_row(std::string name, std::string description, std::vector<Isa> isas) {
  Variant v;
  v.name = std::move(name);
  v.description = std::move(description);
  v.isas = std::move(isas);
  v.dtypes = {DType::f64, DType::f32};
  v.accepts = accepts;
  v.model = model;
  v.make = make;
  return v;
}
}  // namespace

template <class T>
std::unique_ptr<Instance> sinkhorn::make_instance(const Case& c, const SkKernels<T>& k) {
  if (c.dtype != (std::is_same_v<T, double> ? DType::f64 : DType::f32))
    throw Error(c.name() + ": kernels of the wrong element type for this case");
  return std::make_unique<SkInstance<T>>(params_of(c), k);
}
template std::unique_ptr<Instance> sinkhorn::make_instance<float>(const Case&, const SkKernels<float>&);
template std::unique_ptr<Instance> sinkhorn::make_instance<double>(const Case&, const SkKernels<double>&);

const Family& sinkhorn_family() {
  static const Family f = [] {
    Family fam;
    fam.name = "sinkhorn";
    fam.description = "Sinkhorn-Knopp matrix scaling, one row/column pass or iteration (COFFEE, TPDS 2023)";
    fam.variants = {
        variant_row("typical", "Algorithm 1 as written: the column pass walks down columns (stride lda)", {}),
        variant_row("c2r", "COFFEE-C2R: column sums accumulated row by row, row-major scaling (Alg. 2)", {}),
        variant_row("blocked", "C2R + mc x nc blocking, factors temp[nc] reused down each panel (Alg. 3)", {}),
        variant_row("microkernel", "COFFEE-CPU: blocked + mr x nr SIMD micro-kernel, SIMD row pass",
                    {Isa::scalar, Isa::avx2, Isa::avx512}),
    };
    fam.cases = cases;
    fam.memory_bytes = memory_bytes;
    return fam;
  }();
  return f;
}

}  // namespace rooflab

// Pieces every variant shares: column factors, the portable row pass, lookup by name, the
// error bound used by verification, the fi case parameter.
#include <limits>
#include <sstream>
#include <string>

#include "harness/error.hpp"
#include "kernels/sinkhorn/detail.hpp"

namespace rooflab::sinkhorn {

template <class T>
void col_factors(T* work, const T* c, int64_t n, T fi) {
  for (int64_t j = 0; j < n; ++j) work[j] = sk_factor(c[j], work[j], fi);
}

namespace detail {
template <class T>
void portable_row_rescale(const SkArgs<T>& a) {
  for (int64_t i = 0; i < a.M; ++i) {
    T* __restrict row = a.A + i * a.lda;
    T s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int64_t j = 0;
    for (; j + 4 <= a.N; j += 4) {
      s0 += row[j];
      s1 += row[j + 1];
      s2 += row[j + 2];
      s3 += row[j + 3];
    }
    for (; j < a.N; ++j) s0 += row[j];
    const T f = sk_factor(a.r[i], (s0 + s1) + (s2 + s3), a.fi);
    for (j = 0; j < a.N; ++j) row[j] *= f;
  }
}
template void portable_row_rescale<float>(const SkArgs<float>&);
template void portable_row_rescale<double>(const SkArgs<double>&);
}  // namespace detail

template <class T>
SkKernels<T> kernels_for(std::string_view variant, Isa isa) {
  const bool isa_given = isa != Isa::none;
  if (variant == "microkernel") {
    if (!isa_given) throw Error("sinkhorn/microkernel needs an ISA (scalar, avx2 or avx512)");
    return microkernel_kernels<T>(isa);
  }
  if (isa_given)
    throw Error("sinkhorn/" + std::string(variant) + " is not ISA-specific (got isa " +
                std::string(to_string(isa)) + ")");
  if (variant == "typical") return typical_kernels<T>();
  if (variant == "c2r") return c2r_kernels<T>();
  if (variant == "blocked") return blocked_kernels<T>();
  throw Error("unknown sinkhorn variant '" + std::string(variant) +
              "' (known: typical, c2r, blocked, microkernel)");
}

double parse_fi(const Case& c) {
  const std::string* v = c.param("fi");
  if (!v) return 1;
  size_t pos = 0;
  double fi = 0;
  try {
    fi = std::stod(*v, &pos);
  } catch (...) {
    pos = 0;
  }
  if (pos != v->size() || !(fi > 0 && fi <= 1))
    throw Error(c.name() + ": fi must be a number in (0, 1] (fi = reg_m / (reg_m + reg)), got '" + *v + "'");
  return fi;
}

template <class T>
Verification verify_against(const T* A, int64_t lda, const SkReference<T>& ref, std::vector<int64_t> lengths,
                            int extra, const std::string& after) {
  for (auto& k : lengths) k += extra;
  const SkCompare w = compare_with_reference(A, lda, ref);
  Verification v;
  v.max_err = w.max_err;
  v.tol = sk_error_bound(lengths, double(std::numeric_limits<T>::epsilon()));
  v.ok = w.max_err <= v.tol;
  std::ostringstream os;
  os.precision(17);
  os << "worst relative error " << w.max_err << " at (" << w.i << ", " << w.j << "): got " << w.got
     << ", expected " << w.expected << "; tol " << v.tol << " after " << after;
  v.detail = os.str();
  return v;
}
template Verification verify_against<float>(const float*, int64_t, const SkReference<float>&, std::vector<int64_t>,
                                            int, const std::string&);
template Verification verify_against<double>(const double*, int64_t, const SkReference<double>&,
                                             std::vector<int64_t>, int, const std::string&);

namespace {
uint64_t mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
double unit(uint64_t stream, uint64_t k) { return double(mix(mix(stream) ^ k) >> 11) * 0x1.0p-53; }
constexpr uint64_t kSeedA = 1, kSeedR = 2, kSeedC = 3;
}  // namespace

double problem_entry(uint64_t k) { return 0.1 + unit(kSeedA, k); }

template <class T>
void problem_targets(T* r, int64_t M, T* c, int64_t N) {
  long double sr = 0, sc = 0;
  for (int64_t i = 0; i < M; ++i) sr += r[i] = T(0.5 + unit(kSeedR, uint64_t(i)));
  for (int64_t j = 0; j < N; ++j) sc += c[j] = T(0.5 + unit(kSeedC, uint64_t(j)));
  for (int64_t j = 0; j < N; ++j) c[j] = T(c[j] * (sr / sc));
}
template void problem_targets<float>(float*, int64_t, float*, int64_t);
template void problem_targets<double>(double*, int64_t, double*, int64_t);

double sk_error_bound(const std::vector<int64_t>& lengths, double eps) {
  const double u = eps / 2;
  double d = 0;
  for (int64_t k : lengths) d = 2 * d + double(k + 1) * u;
  return d;
}

template void col_factors<float>(float*, const float*, int64_t, float);
template void col_factors<double>(double*, const double*, int64_t, double);
template SkKernels<float> kernels_for<float>(std::string_view, Isa);
template SkKernels<double> kernels_for<double>(std::string_view, Isa);

}  // namespace rooflab::sinkhorn

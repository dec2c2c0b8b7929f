// Baseline x86-64 kernels at SSE2's full width (2 doubles / 4 floats per register, part of
// x86-64): their ceilings are what code built for the baseline target can reach. There is no
// FMA instruction in the baseline, so fma is a multiply and an add (still 2 flops); the
// streaming store is movntpd / movntps.
// One element per "vector" would measure neither: GCC packs 12 scalar compute chains
// pairwise into SSE2 registers (latency, not throughput), and 8-byte loads reach half the L1
// bandwidth of the 16-byte loads baseline code gets from the vectorizer.
#include <emmintrin.h>

#include <type_traits>

#include "microbench/kernels_impl.hpp"

namespace rooflab::microbench {
namespace {
// The register type by element type: a specialization, not std::conditional_t, whose template
// arguments would drop __m128's vector attributes (GCC's -Wignored-attributes).
template <class E> struct Sse2Reg { using type = __m128; };
template <> struct Sse2Reg<double> { using type = __m128d; };
// The traits kernels_impl.hpp uses, over SSE2 registers (internal linkage, see there).
template <class E>
struct Sse2 {
  static constexpr bool D = std::is_same_v<E, double>;
  using T = E;
  using R = typename Sse2Reg<E>::type;
  static constexpr int64_t W = 16 / sizeof(E);
  static R zero() { if constexpr (D) return _mm_setzero_pd(); else return _mm_setzero_ps(); }
  static R set1(T x) { if constexpr (D) return _mm_set1_pd(x); else return _mm_set1_ps(x); }
  static R load(const T* p) { if constexpr (D) return _mm_loadu_pd(p); else return _mm_loadu_ps(p); }
  static void store(T* p, R x) { if constexpr (D) _mm_storeu_pd(p, x); else _mm_storeu_ps(p, x); }
  // p aligned to one vector (nt_head).
  static void stream(T* p, R x) { if constexpr (D) _mm_stream_pd(p, x); else _mm_stream_ps(p, x); }
  static void fence() { _mm_sfence(); }
  static R add(R a, R b) { if constexpr (D) return _mm_add_pd(a, b); else return _mm_add_ps(a, b); }
  static R mul(R a, R b) { if constexpr (D) return _mm_mul_pd(a, b); else return _mm_mul_ps(a, b); }
  static R min(R a, R b) { if constexpr (D) return _mm_min_pd(a, b); else return _mm_min_ps(a, b); }
  static R fma(R a, R b, R c) { return add(mul(a, b), c); }
};
}  // namespace

const KernelTable& scalar_kernels() {
  static constexpr KernelTable table = detail::make_table<Sse2>(Isa::scalar);
  return table;
}
}  // namespace rooflab::microbench

// Baseline x86-64 kernels (one double per "vector"; the compiler may still use SSE2). There
// is no FMA instruction in the baseline, so fma is a multiply and an add (still 2 flops).
#include <immintrin.h>

#include "microbench/kernels_impl.hpp"

namespace rooflab::microbench {
namespace {
struct Scalar {
  using D = double;
  using F = float;
  static constexpr size_t WD = 1, WF = 1, kStreamAlign = 8;
  static D loadd(const double* p) { return *p; }
  static void stored(double* p, D v) { *p = v; }
  static void streamd(double* p, D v) {
    long long bits;
    __builtin_memcpy(&bits, &v, sizeof bits);
    _mm_stream_si64(reinterpret_cast<long long*>(p), bits);  // movnti (SSE2)
  }
  static D splat(double v) { return v; }
  static F splat(float v) { return v; }
  static D add(D a, D b) { return a + b; }
  static F add(F a, F b) { return a + b; }
  static D mul(D a, D b) { return a * b; }
  static F mul(F a, F b) { return a * b; }
  static D fma(D a, D b, D c) { return a * b + c; }
  static F fma(F a, F b, F c) { return a * b + c; }
  static D min(D a, D b) { return a < b ? a : b; }  // same operand order as minpd
  static F min(F a, F b) { return a < b ? a : b; }
  static double hsum(D v) { return v; }
  static double hsum(F v) { return v; }
  static void fence() { _mm_sfence(); }
};
}  // namespace

const KernelTable& scalar_kernels() {
  static constexpr KernelTable table = detail::make_table<Scalar>(Isa::scalar);
  return table;
}
}  // namespace rooflab::microbench

// `microkernel` (COFFEE-CPU): dispatch to the per-ISA tables and the portable (scalar) one.
// "scalar" means no explicit SIMD: baseline x86-64 code, a 4 x 4 element micro-tile as in
// the paper's mr = nr = 4 (the compiler may still use SSE2 on it).
#include <string>
#include <type_traits>

#include "harness/error.hpp"
#include "kernels/sinkhorn/detail.hpp"
#include "kernels/sinkhorn/fused_simd.hpp"
#include "kernels/sinkhorn/microkernel_simd.hpp"
#include "kernels/simd/dispatch.hpp"
#include "kernels/simd/scalar.hpp"

namespace rooflab::sinkhorn {
namespace {
template <class Elem>
struct Scalar : ::rooflab::simd::Scalar<Elem> {
  static constexpr int MR = 4;  // the paper's mr = nr = 4 micro-tile
  static constexpr int64_t NRV = 4;
};
}  // namespace

template <class T>
SkKernels<T> microkernel_kernels(Isa isa) {
  return simd::pick<T>(isa, mk::table<Scalar<T>>(), detail::microkernel_avx2_f64, detail::microkernel_avx2_f32,
                       detail::microkernel_avx512_f64, detail::microkernel_avx512_f32, "sinkhorn/microkernel");
}
template SkKernels<float> microkernel_kernels<float>(Isa);
template SkKernels<double> microkernel_kernels<double>(Isa);

template <class T>
FusedKernels<T> fused_kernels(Isa isa) {
  constexpr bool f64 = std::is_same_v<T, double>;
  switch (isa) {
    case Isa::scalar: return fused::table<Scalar<T>>();
    case Isa::avx2:
      if constexpr (f64) return detail::fused_avx2_f64; else return detail::fused_avx2_f32;
    case Isa::avx512:
      if constexpr (f64) return detail::fused_avx512_f64; else return detail::fused_avx512_f32;
    case Isa::none: break;
  }
  throw Error("sinkhorn fused kernels: no kernel for isa '" + std::string(to_string(isa)) + "'");
}
template FusedKernels<float> fused_kernels<float>(Isa);
template FusedKernels<double> fused_kernels<double>(Isa);

Blocking microkernel_default_blocking(Isa) {
  // The paper's mc = 8. nc: panels as wide as the row up to 16384 columns. The factors of
  // such a panel (128 KiB in f64) stay in L2, which feeds the micro-kernel well enough (one
  // factor load per mr rows), while each row segment is one long stream for the hardware
  // prefetcher; nc = 1024 (8 KiB segments, factors in L1) restarts the streams at every
  // segment: column pass at 16000^2 f64, 1 thread, on the 2-core Zen 3 VM: 257 ms (nc 1024),
  // 212 ms (4096), 187 ms (16000). One setting serves every ISA here.
  return {8, 16384};
}

}  // namespace rooflab::sinkhorn

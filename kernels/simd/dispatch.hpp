#pragma once
// Run-time choice among a family's per-ISA kernel tables for element type T: the portable
// (scalar) table and the constinit tables exported by its *_avx2.cpp / *_avx512.cpp files.
#include <string>
#include <string_view>
#include <type_traits>

#include "harness/error.hpp"
#include "harness/isa.hpp"

namespace rooflab::simd {
// Returns the table for `isa` (callers check isa_supported() before running it); throws
// Error naming `what` for an ISA without one.
template <class T, class Table, class Table64, class Table32>
Table pick(Isa isa, Table scalar, const Table64& avx2_f64, const Table32& avx2_f32,
           const Table64& avx512_f64, const Table32& avx512_f32, std::string_view what) {
  constexpr bool f64 = std::is_same_v<T, double>;
  switch (isa) {
    case Isa::scalar: return scalar;
    case Isa::avx2:
      if constexpr (f64) return avx2_f64; else return avx2_f32;
    case Isa::avx512:
      if constexpr (f64) return avx512_f64; else return avx512_f32;
    case Isa::none: break;
  }
  throw Error(std::string(what) + ": no kernel for isa '" + std::string(to_string(isa)) +
              "' (known: scalar, avx2, avx512)");
}
}  // namespace rooflab::simd

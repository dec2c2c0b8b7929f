#pragma once
// What every family's SIMD kernels share around their bodies (BLIS-style): a register-block
// Shape per ISA (in each family's config.hpp, the one place its per-ISA parameters live), the
// traits type a body is instantiated with (an ISA's vector traits + that shape), the tables
// each ISA's translation unit exports for both element types, and the run-time choice among
// them.
#include <string>
#include <string_view>
#include <type_traits>

#include "harness/error.hpp"
#include "harness/isa.hpp"

namespace rooflab::simd {

// A register block of mr rows x nrv vectors (nr = nrv x the ISA's lanes W).
struct Shape {
  int mr;
  int nrv;
};
// A family's register block at each ISA (its config.hpp).
struct IsaShapes {
  Shape scalar, avx2, avx512;
  constexpr Shape operator[](Isa isa) const {
    return isa == Isa::avx512 ? avx512 : isa == Isa::avx2 ? avx2 : scalar;
  }
};

namespace {  // internal linkage: each ISA translation unit instantiates its own
// The vector traits V (Avx2<T>, Avx512<T>, Scalar<T>) with a family's register block S: what
// a kernel body is written over (V::MR, V::NRV next to V's operations).
template <class V, Shape S>
struct Shaped : V {
  static constexpr int MR = S.mr;
  static constexpr int NRV = S.nrv;
};
}  // namespace

// One ISA's kernel tables of a family, for both element types (constant data: reading them
// runs no code of that ISA, so a CPU without it can look and skip).
template <template <class> class Table>
struct Tables {
  Table<double> f64;
  Table<float> f32;
  template <class T>
  constexpr const Table<T>& get() const {
    if constexpr (std::is_same_v<T, double>) return f64;
    else return f32;
  }
};

namespace {
// A family's kernel body is a type with `template <class V> static constexpr Table<V::T>
// table()`. table_of: that table for element type T on the ISA of vector traits VT (Avx2,
// Avx512, Scalar) with register block S; tables: both element types, as an ISA's translation
// unit exports them.
template <class Body, template <class> class VT, Shape S, class T>
constexpr auto table_of() {
  return Body::template table<Shaped<VT<T>, S>>();
}
template <template <class> class Table, class Body, template <class> class VT, Shape S>
constexpr Tables<Table> tables() {
  return {table_of<Body, VT, S, double>(), table_of<Body, VT, S, float>()};
}
}  // namespace

// The table for `isa` (callers check isa_supported() before running it); throws Error naming
// `what` for an ISA without one.
template <class T, template <class> class Table>
Table<T> pick(Isa isa, const Table<T>& scalar, const Tables<Table>& avx2, const Tables<Table>& avx512,
              std::string_view what) {
  switch (isa) {
    case Isa::scalar: return scalar;
    case Isa::avx2: return avx2.template get<T>();
    case Isa::avx512: return avx512.template get<T>();
    case Isa::none: break;
  }
  throw Error(std::string(what) + ": no kernel for isa '" + std::string(to_string(isa)) +
              "' (known: scalar, avx2, avx512)");
}

namespace {
// pick() with the scalar table built here: Body over the scalar traits ScalarVT with block S.
template <class T, class Body, template <class> class ScalarVT, Shape S, template <class> class Table>
Table<T> dispatch(Isa isa, const Tables<Table>& avx2, const Tables<Table>& avx512, std::string_view what) {
  return pick<T>(isa, table_of<Body, ScalarVT, S, T>(), avx2, avx512, what);
}
}  // namespace

}  // namespace rooflab::simd

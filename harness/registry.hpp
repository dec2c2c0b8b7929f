#pragma once
// The variant registry: one table per kernel family, one row per variant.
//
// A family (kernels/<family>/) provides a `Family` value: its variants (name, ISAs, dtypes,
// the model, a factory for a ready-to-run Instance) and the list of cases per profile. The
// harness owns everything around the kernel: naming, filtering, allocation (through the
// factory), verification before timing, timing, counters, JSON. Adding a variant = one
// source file + one row in the family's table.
//
// Naming grammar (Google Benchmark names, JSON keys, plot labels and CLI filters alike):
//   <family>/<variant>[/<isa>]/<dtype>/<d0>x<d1>[x<d2>...][/<key>:<value>]*
//   e.g. sinkhorn/microkernel/avx2/f64/4096x4096/part:col/threads:1
// `isa` appears only for variants that declare ISAs; params appear in the order the case
// lists them; `threads:<T>` is always last.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "harness/error.hpp"
#include "harness/isa.hpp"

namespace rooflab {

enum class DType { f32, f64 };
std::string_view to_string(DType);
std::optional<DType> parse_dtype(std::string_view);
size_t dtype_size(DType);

// One concrete benchmark instance.
struct Case {
  std::string family;
  std::string variant;
  Isa isa = Isa::none;
  DType dtype = DType::f64;
  std::vector<int64_t> dims;                                 // e.g. {M, N} or {M, N, K}
  std::vector<std::pair<std::string, std::string>> params;   // family-specific, ordered
  int threads = 1;

  std::string name() const;
  std::string dims_string() const;                           // "4096x4096"
  const std::string* param(std::string_view key) const;      // nullptr if absent
  int64_t param_int(std::string_view key, int64_t fallback) const;  // throws Error if not int
  std::string param_str(std::string_view key, std::string fallback) const;
};

// Parses a name written in the grammar above. Throws rooflab::Error with the reason.
Case parse_case_name(std::string_view name);

// Work and traffic of one timed unit (one Instance::run()), declared by the variant row.
// The roofline predictor turns this into a time with the measured ceilings of machine.json:
//   t = max(flops / compute ceiling, sum_i traffic[i].bytes / bandwidth(level, traffic[i].kernel))
// Several traffic terms let a kernel with passes of different kinds (a read-only sum pass and
// an in-place scaling pass) be predicted with the bandwidth each kind really gets.
struct Traffic {
  double bytes = 0;            // bytes moved from the level the working set lives in
  std::string kernel;          // machine.json bandwidth kernel: "read", "update", "copy", "triad"
};
struct Model {
  double flops = 0;            // operations as the family counts them (FW: 2 per update)
  std::vector<Traffic> traffic;
  double working_set = 0;      // bytes touched by one run(); selects the memory level
  std::string compute_ceiling; // machine.json compute key, e.g. "fma_f64", "add_f64", "addmin_f32"
  std::string note;            // where the traffic formula comes from
  double bytes() const {
    double b = 0;
    for (const auto& t : traffic) b += t.bytes;
    return b;
  }
};

struct Verification {
  bool ok = false;
  double max_err = 0;          // the family's error measure (max relative error for SK)
  double tol = 0;
  std::string detail;          // where the worst error was, or why it failed
};

// A problem allocated and initialized for one case. run() is the timed unit: no allocation,
// no I/O. verify() compares against the family reference and leaves the instance ready to
// run (it may re-initialize the data).
class Instance {
 public:
  virtual ~Instance() = default;
  virtual void run() = 0;
  virtual Verification verify() = 0;
  // Called before each repetition (untimed) for kernels whose repeated runs would drift.
  virtual void reset() {}
};

struct Variant {
  std::string name;                      // "c2r"
  std::string description;               // one line, shown by `rooflab list`
  std::vector<Isa> isas;                 // empty: not ISA-specific (no isa in the name)
  std::vector<DType> dtypes{DType::f64, DType::f32};
  // Empty string = the case is acceptable; otherwise the reason it is not.
  std::function<std::string(const Case&)> accepts;
  std::function<Model(const Case&)> model;
  std::function<std::unique_ptr<Instance>(const Case&)> make;
};

struct Family {
  std::string name;
  std::string description;
  std::vector<Variant> variants;
  // The cases run by a profile ("smoke", "quick", "paper"); Isa::none in a case means "each ISA the
  // variant declares and the CPU supports" and is expanded by expand_cases().
  std::function<std::vector<Case>(std::string_view profile)> cases;
  // Bytes the harness will allocate for a case (data + reference), checked before allocating.
  std::function<size_t(const Case&)> memory_bytes;
  const Variant* find(std::string_view variant) const;
};

// Helpers for family tables.
// A Variant::accepts from the family's parameter parser: acceptable when parsing (which
// throws Error with the reason) succeeds.
template <class Parse>
std::function<std::string(const Case&)> accepts_if_parses(Parse parse) {
  return [parse](const Case& c) -> std::string {
    try {
      parse(c);
    } catch (const Error& e) {
      return e.what();
    }
    return "";
  };
}
// Throws Error when kernels of element type T are handed a case of another dtype.
template <class T>
void require_dtype(const Case& c) {
  if (c.dtype != (sizeof(T) == 8 ? DType::f64 : DType::f32))
    throw Error(c.name() + ": kernels of the wrong element type for this case");
}

// All families, in a fixed order (harness/families.cpp lists them).
const std::vector<Family>& families();
const Family* find_family(std::string_view name);

// "smoke": every family and variant once at tiny sizes (odd ones where the family has them),
// seconds per family: proves the whole pipeline on a new machine. "quick": small sizes, minutes.
// "paper": the papers' sizes, hours.
std::vector<std::string> known_profiles();   // {"smoke", "quick", "paper"}
std::string known_profiles_string();         // "smoke, quick, paper" (for messages)
// Every case of every family for `profile`, ISA-expanded, in registry order. Throws Error for
// an unknown profile.
std::vector<Case> expand_cases(std::string_view profile);
// Filter with an ECMAScript regex searched in the name (as --benchmark_filter does).
// Throws Error for a malformed regex.
std::vector<Case> filter_cases(const std::vector<Case>& cases, const std::string& regex);

// Validates a case against its family/variant (known names, dtype, ISA supported by the CPU,
// positive and not absurd dims, variant.accepts, memory). Throws Error with a clear message.
void validate_case(const Case& c);
const Variant& variant_of(const Case& c);  // throws Error if unknown

}  // namespace rooflab

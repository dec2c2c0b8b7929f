#pragma once
// The variant registry: one table per kernel family, one row per variant.
//
// A family (kernels/<family>/) provides a `Family` value (make_family below): its variants
// (name, ISAs, dtypes, the model, a factory for a ready-to-run Instance) and the list of cases
// per profile. The harness owns everything around the kernel: naming, filtering, allocation
// (through the factory), verification before timing, timing, counters, JSON. Adding a
// variant = one source file + one row in the family's table.
//
// This header is the registry's types only: family libraries build on it. The list of families
// and what needs it (lookup, profiles, filters, validate_case) is harness/families.hpp.
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

#include <nlohmann/json.hpp>

#include "harness/error.hpp"
#include "harness/isa.hpp"
#include "roofline/model.hpp"  // Model, Traffic: what a variant row declares

namespace rooflab::roofline {
struct Machine;
}

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

struct Verification {
  bool ok = false;
  double max_err = 0;          // the family's error measure (max relative error for SK)
  double tol = 0;
  std::string detail;          // where the worst error was, or why it failed
  // "verification failed: max error E > tol T (detail)": how every command reports a failure.
  std::string failure() const;
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

using Predictions = std::function<nlohmann::json(const Case&, const roofline::Machine&)>;

struct Variant {
  std::string name;                      // "c2r"
  std::string description;               // one line, shown by `rooflab list`
  std::vector<Isa> isas;                 // empty: not ISA-specific (no isa in the name)
  std::vector<DType> dtypes{DType::f64, DType::f32};
  // Empty string = the case is acceptable; otherwise the reason it is not.
  std::function<std::string(const Case&)> accepts;
  std::function<Model(const Case&)> model;
  std::function<std::unique_ptr<Instance>(const Case&)> make;
  // The variant's own models beside the classic roofline, {name: object} for model.json's
  // "predictions" (e.g. gemm sfc_ca's tight per-BRGEMM roofline); empty: none. Throws Error
  // when the machine lacks what a model needs.
  Predictions predictions;
  // A vendor library's name ("openblas") when the variant calls it as a baseline; empty: an own
  // kernel. `rooflab list --json` carries it, so figures need no list of their own.
  std::string library;
  bool is_baseline() const { return !library.empty(); }
  // For a variant that runs a vendor library's code (a baseline, or a vendor back end): the code
  // path it runs and whether that is the library's best for this CPU (bench.json "code_path");
  // empty: none.
  std::function<nlohmann::json()> code_path;
  // Cases name no ISA, but the kernel picks one at run time (rtamm: gemm/blocked's default
  // ISA, preferred_isa): the one a case runs, priced against it (bench.json "runs_isa"). Empty:
  // the case's own ISA.
  std::function<Isa(const Case&)> runs_isa;
};

// A case parameter whose best value depends on the machine (a prefetch target, say), measured
// rather than derived. values[0] is what a case without the parameter runs: a profile names the
// parameter only where another value won.
struct Knob {
  std::string key;
  std::vector<std::string> values;
};

struct Family {
  std::string name;
  std::string description;
  std::vector<Variant> variants;
  // The cases run by a profile ("smoke", "quick", "paper"); Isa::none in a case means "each ISA the
  // variant declares and the CPU supports" and is expanded by expand_cases().
  std::function<std::vector<Case>(std::string_view profile)> cases;
  // The cases `rooflab isa-calibrate` times at each supported ISA to choose each ISA-specific
  // variant's default ISA (preferred_isa, harness/isa_choice.hpp): one per variant and dtype,
  // Isa::none, at the size the profiles run the default at. Empty or unset: nothing to choose.
  std::function<std::vector<Case>()> isa_cases;
  // The machine-dependent case parameters of a calibration case at a given ISA (tuning knobs):
  // `rooflab isa-calibrate` times each ISA at every setting of them, and the profiles' default-ISA
  // cases name the chosen ISA's winners (preferred_value, harness/isa_choice.hpp). Empty: none.
  std::function<std::vector<Knob>(const Case&)> knobs;
  // The in-core calibration of a case (docs/model.md): the same variant, ISA, dtype, params and
  // threads at small cache-resident shapes, timed by `rooflab bench` beside it and marked
  // "calibration" (never evaluated). The model fits the case's Model::core_work to their times
  // and uses that as the ECM's in-core time. Empty or unset: priced against the compute ceiling.
  std::function<std::vector<Case>(const Case&)> calibration_cases;
  // Overlap probes (docs/model.md): calibration shapes of the same case that live one level
  // deeper than calibration_cases' (marked "calibration_probe"): the share of the transfers from
  // beyond the calibration's level that the kernel does not hide is measured on them, not
  // assumed. Empty or unset: those transfers are added in full.
  std::function<std::vector<Case>(const Case&)> overlap_probes;
  // Bytes the harness will allocate for a case (data + reference), checked before allocating.
  std::function<size_t(const Case&)> memory_bytes;
  const Variant* find(std::string_view variant) const;
  const Variant& at(std::string_view variant) const;  // throws Error naming the known variants
};

// ---- Building a family table ---------------------------------------------------------------
// Every family has the same shape: one parameter parser for all its variants (its Error is the
// reason a case is not accepted), one model, one factory, the profiles and the memory estimate.
// A family fills FamilyHooks once and lists its variants as rows; make_family() builds the table.
struct VariantRow {
  std::string name;
  std::string description;
  std::vector<Isa> isas = {};                           // empty: not ISA-specific
  std::vector<DType> dtypes = {DType::f64, DType::f32};
  std::string library = {};                             // Variant::library: set by baseline rows
  std::function<nlohmann::json()> code_path = {};       // Variant::code_path
  std::function<Isa(const Case&)> runs_isa = {};        // Variant::runs_isa
};
struct FamilyHooks {
  std::function<std::string(const Case&)> accepts;      // "" or the reason (accepts_if_parses)
  std::function<Model(const Case&)> model;
  std::function<std::unique_ptr<Instance>(const Case&)> make;
  std::function<std::vector<Case>(std::string_view profile)> cases;
  // Called only for cases accepts() took: may assume the family's parser succeeds.
  std::function<size_t(const Case&)> memory_bytes;
  Predictions predictions = {};                         // optional: Variant::predictions
  std::function<std::vector<Case>()> isa_cases = {};    // optional: Family::isa_cases
  std::function<std::vector<Case>(const Case&)> calibration_cases = {};  // optional: Family::calibration_cases
  std::function<std::vector<Case>(const Case&)> overlap_probes = {};     // optional: Family::overlap_probes
  std::function<std::vector<Knob>(const Case&)> knobs = {};              // optional: Family::knobs
};
Family make_family(std::string name, std::string description, const FamilyHooks& hooks,
                   const std::vector<VariantRow>& rows);
// What an ISA-specific row declares: scalar, avx2, avx512 (the run-time dispatch picks one).
// A function, not an inline variable: the per-ISA translation units include this header, and
// must not emit (linker-shared) vector code compiled with their ISA's flags.
std::vector<Isa> all_isas();

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
// f.template operator()<T>() with T the element type of `dtype` (a family's typed factory).
template <class F>
auto with_element_type(DType dtype, F&& f) {
  return dtype == DType::f64 ? f.template operator()<double>() : f.template operator()<float>();
}

// ---- Checks that need no family list -------------------------------------------------------
// The largest thread count a case may ask for: args::kMaxThreads (the bound of every command's
// --threads), or less where this process may not create that many (RLIMIT_NPROC,
// kernel.threads-max).
int max_case_threads();
// Validates a case against its family table: variant, dtype, ISA (declared and supported by
// this CPU), sizes (positive, each <= 2^31, their product within 64 bits and <= 1e13 elements),
// threads (1..max_case_threads()), variant.accepts, and the family's memory estimate against
// the memory available, before anything is allocated. Throws Error naming the case.
void check_case(const Family& family, const Case& c);

}  // namespace rooflab

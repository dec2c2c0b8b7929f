#include "harness/registry.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <sstream>

#include "harness/args.hpp"
#include "harness/buffer.hpp"
#include "harness/error.hpp"

namespace rooflab {

std::string_view to_string(DType d) { return d == DType::f32 ? "f32" : "f64"; }

std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "f32") return DType::f32;
  if (s == "f64") return DType::f64;
  return std::nullopt;
}

size_t dtype_size(DType d) { return d == DType::f32 ? 4 : 8; }

namespace {
std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    out.emplace_back(s.substr(start, pos == std::string_view::npos ? s.npos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::optional<int64_t> to_int(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// Why `s` is not an int64: out of range, or not an integer at all.
std::string not_int64(std::string_view s) {
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc::result_out_of_range && p == s.data() + s.size() ? "does not fit in 64 bits"
                                                                           : "is not an integer";
}

bool is_dims_token(std::string_view s) {
  // digits and 'x' (and '-', so a negative size is reported as such by validate_case):
  // 4096, 4096x4096, 1x4097x3
  if (s.empty() || s.front() == 'x' || s.back() == 'x') return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || c == 'x' || c == '-'; });
}
}  // namespace

std::string Case::dims_string() const {
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i) s += 'x';
    s += std::to_string(dims[i]);
  }
  return s;
}

std::string Case::name() const {
  // Appended piece by piece (GCC 12's -Wrestrict misfires on chains of string operator+ here).
  std::string s = family;
  (s += '/') += variant;
  if (isa != Isa::none) (s += '/') += to_string(isa);
  ((s += '/') += to_string(dtype)) += '/';
  s += dims_string();
  for (const auto& [k, v] : params) (((s += '/') += k) += ':') += v;
  (s += "/threads:") += std::to_string(threads);
  return s;
}

const std::string* Case::param(std::string_view key) const {
  for (const auto& [k, v] : params)
    if (k == key) return &v;
  return nullptr;
}

int64_t Case::param_int(std::string_view key, int64_t fallback) const {
  const std::string* v = param(key);
  if (!v) return fallback;
  auto i = to_int(*v);
  if (!i) throw Error(name() + ": parameter " + std::string(key) + " must be an integer, got '" + *v + "'");
  return *i;
}

std::string Case::param_str(std::string_view key, std::string fallback) const {
  const std::string* v = param(key);
  return v ? *v : fallback;
}

Case parse_case_name(std::string_view name) {
  const auto tok = split(name, '/');
  auto bad = [&](const std::string& why) {
    return Error("bad benchmark name '" + std::string(name) + "': " + why +
                 " (grammar: <family>/<variant>[/<isa>]/<dtype>/<d0>x<d1>[/<key>:<value>]*/threads:<T>)");
  };
  if (tok.size() < 4) throw bad("too few components");
  Case c;
  c.family = tok[0];
  c.variant = tok[1];
  size_t i = 2;
  if (auto isa = parse_isa(tok[i])) {
    c.isa = *isa;
    ++i;
  }
  if (i >= tok.size()) throw bad("missing dtype");
  auto dt = parse_dtype(tok[i]);
  if (!dt) throw bad("unknown dtype '" + tok[i] + "' (f32 or f64)");
  c.dtype = *dt;
  ++i;
  if (i >= tok.size() || !is_dims_token(tok[i])) throw bad("missing sizes like 4096x4096");
  for (const auto& d : split(tok[i], 'x')) {
    auto v = to_int(d);
    if (!v) throw bad("size '" + d + "' " + not_int64(d));
    c.dims.push_back(*v);
  }
  ++i;
  bool have_threads = false;
  for (; i < tok.size(); ++i) {
    const auto colon = tok[i].find(':');
    if (colon == std::string::npos || colon == 0) throw bad("'" + tok[i] + "' is not key:value");
    std::string k = tok[i].substr(0, colon), v = tok[i].substr(colon + 1);
    if (k == "threads") {
      auto t = to_int(v);
      if (!t) throw bad("threads must be an integer");
      // Out of int's range: refused here rather than wrapped to another count.
      if (*t < std::numeric_limits<int>::min() || *t > std::numeric_limits<int>::max())
        throw bad("threads:" + v + " is out of range (threads must be in 1.." + std::to_string(max_case_threads()) + ")");
      c.threads = int(*t);
      have_threads = true;
    } else {
      if (have_threads) throw bad("threads:<T> must be the last component");
      c.params.emplace_back(std::move(k), std::move(v));
    }
  }
  return c;
}

const Variant* Family::find(std::string_view v) const {
  for (const auto& var : variants)
    if (var.name == v) return &var;
  return nullptr;
}

const Variant& Family::at(std::string_view v) const {
  if (const Variant* found = find(v)) return *found;
  std::string known;
  for (const auto& x : variants) known += (known.empty() ? "" : ", ") + x.name;
  throw Error("unknown variant '" + std::string(v) + "' of " + name + " (known: " + known + ")");
}

int max_case_threads() {
  static const int cap = [] {
    int64_t n = args::kMaxThreads;  // the one bound every command's --threads has
    // Threads count against the user's process limit and the kernel's thread limit.
    if (rlimit rl{}; getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
      n = std::min<int64_t>(n, int64_t(rl.rlim_cur));
    std::ifstream tm("/proc/sys/kernel/threads-max");
    if (int64_t m = 0; tm >> m && m > 0) n = std::min(n, m);
    return int(std::max<int64_t>(n, 1));
  }();
  return cap;
}

namespace {
// The product of the sizes, or why it is refused (overflow of 64 bits, more than 1e13 elements).
std::string check_dims(const Case& c) {
  if (c.dims.empty()) return "no sizes";
  for (int64_t d : c.dims)
    if (d <= 0) return "sizes must be positive, got " + std::to_string(d);
  int64_t elems = 1;
  for (int64_t d : c.dims)
    if (__builtin_mul_overflow(elems, d, &elems))
      return "sizes " + c.dims_string() + " multiply to more than 2^63 elements (the product overflows 64 bits)";
  for (int64_t d : c.dims)
    if (d > (int64_t(1) << 31)) return "size " + std::to_string(d) + " is absurd (> 2^31)";
  if (elems > int64_t(1e13)) return "problem of " + std::to_string(elems) + " elements is absurd (> 1e13)";
  return "";
}
}  // namespace

void check_case(const Family& fam, const Case& c) {
  const std::string n = c.name();
  const Variant& v = fam.at(c.variant);
  if (std::find(v.dtypes.begin(), v.dtypes.end(), c.dtype) == v.dtypes.end())
    throw Error(n + ": variant " + v.name + " has no " + std::string(to_string(c.dtype)) + " version");
  if (v.isas.empty() && c.isa != Isa::none)
    throw Error(n + ": variant " + v.name + " is not ISA-specific; drop '/" +
                std::string(to_string(c.isa)) + "'");
  if (!v.isas.empty()) {
    if (c.isa == Isa::none) throw Error(n + ": variant " + v.name + " needs an ISA component");
    if (std::find(v.isas.begin(), v.isas.end(), c.isa) == v.isas.end())
      throw Error(n + ": variant " + v.name + " has no " + std::string(to_string(c.isa)) + " path");
    if (!isa_supported(c.isa))
      throw Error(n + ": this CPU does not support " + std::string(to_string(c.isa)));
  }
  if (const std::string why = check_dims(c); !why.empty()) throw Error(n + ": " + why);
  if (c.threads < 1 || c.threads > max_case_threads())
    throw Error(n + ": threads must be in 1.." + std::to_string(max_case_threads()) + ", got " +
                std::to_string(c.threads) +
                (max_case_threads() < args::kMaxThreads ? " (this process may not create more: ulimit -u, kernel.threads-max)"
                                                        : ""));
  if (v.accepts) {
    // The families' reasons usually name the case already.
    const std::string why = v.accepts(c);
    if (!why.empty()) throw Error(why.rfind(n, 0) == 0 ? why : n + ": " + why);
  }
  if (fam.memory_bytes) require_memory(fam.memory_bytes(c), n.c_str());
}

std::string Verification::failure() const {
  return "verification failed: max error " + std::to_string(max_err) + " > tol " + std::to_string(tol) +
         (detail.empty() ? "" : " (" + detail + ")");
}

std::vector<Isa> all_isas() { return {Isa::scalar, Isa::avx2, Isa::avx512}; }

Family make_family(std::string name, std::string description, const FamilyHooks& h,
                   const std::vector<VariantRow>& rows) {
  Family f;
  f.name = std::move(name);
  f.description = std::move(description);
  for (const VariantRow& r : rows)
    f.variants.push_back({r.name, r.description, r.isas, r.dtypes, h.accepts, h.model, h.make, h.predictions, r.library,
                          r.code_path, r.runs_isa});
  f.cases = h.cases;
  f.isa_cases = h.isa_cases;
  f.calibration_cases = h.calibration_cases;
  f.overlap_probes = h.overlap_probes;
  f.knobs = h.knobs;
  f.memory_bytes = h.memory_bytes;
  return f;
}

}  // namespace rooflab

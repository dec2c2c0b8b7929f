#include "harness/registry.hpp"

#include <algorithm>
#include <charconv>
#include <regex>
#include <sstream>

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
  std::string s = family + "/" + variant;
  if (isa != Isa::none) s += "/" + std::string(to_string(isa));
  s += "/" + std::string(to_string(dtype)) + "/" + dims_string();
  for (const auto& [k, v] : params) s += "/" + k + ":" + v;
  s += "/threads:" + std::to_string(threads);
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
    if (!v) throw bad("size '" + d + "' is not an integer");
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

const Family* find_family(std::string_view name) {
  for (const auto& f : families())
    if (f.name == name) return &f;
  return nullptr;
}

std::vector<std::string> known_profiles() { return {"smoke", "quick", "paper"}; }

std::string known_profiles_string() {
  std::string s;
  for (const auto& p : known_profiles()) s += (s.empty() ? "" : ", ") + p;
  return s;
}

std::vector<Case> expand_cases(std::string_view profile) {
  const auto profiles = known_profiles();
  if (std::find(profiles.begin(), profiles.end(), profile) == profiles.end())
    throw Error("unknown profile '" + std::string(profile) + "' (known: " + known_profiles_string() + ")");
  std::vector<Case> out;
  for (const auto& fam : families()) {
    for (Case c : fam.cases(profile)) {
      c.family = fam.name;
      const Variant* v = fam.find(c.variant);
      if (!v) throw Error("family " + fam.name + " lists a case for unknown variant " + c.variant);
      if (c.isa == Isa::none && !v->isas.empty()) {
        // Each ISA the variant declares and this CPU runs; the others are not registered.
        for (Isa isa : supported_isas(v->isas)) {
          c.isa = isa;
          out.push_back(c);
        }
      } else {
        out.push_back(c);
      }
    }
  }
  return out;
}

std::vector<Case> filter_cases(const std::vector<Case>& cases, const std::string& regex) {
  if (regex.empty()) return cases;
  std::regex re;
  try {
    re = std::regex(regex, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    throw Error("bad filter regex '" + regex + "': " + e.what());
  }
  std::vector<Case> out;
  for (const auto& c : cases)
    if (std::regex_search(c.name(), re)) out.push_back(c);
  return out;
}

const Variant& variant_of(const Case& c) {
  const Family* fam = find_family(c.family);
  if (!fam) {
    std::string known;
    for (const auto& f : families()) known += (known.empty() ? "" : ", ") + f.name;
    throw Error("unknown family '" + c.family + "' (known: " + known + ")");
  }
  const Variant* v = fam->find(c.variant);
  if (!v) {
    std::string known;
    for (const auto& x : fam->variants) known += (known.empty() ? "" : ", ") + x.name;
    throw Error("unknown variant '" + c.variant + "' of " + c.family + " (known: " + known + ")");
  }
  return *v;
}

void validate_case(const Case& c) {
  const Variant& v = variant_of(c);
  const std::string n = c.name();
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
  if (c.dims.empty()) throw Error(n + ": no sizes");
  double elems = 1;
  for (int64_t d : c.dims) {
    if (d <= 0) throw Error(n + ": sizes must be positive, got " + std::to_string(d));
    if (d > (int64_t(1) << 31)) throw Error(n + ": size " + std::to_string(d) + " is absurd (> 2^31)");
    elems *= double(d);
  }
  if (elems > 1e13) throw Error(n + ": problem of " + std::to_string(elems) + " elements is absurd");
  if (c.threads < 1 || c.threads > 4096)
    throw Error(n + ": threads must be in 1..4096, got " + std::to_string(c.threads));
  if (v.accepts) {
    std::string why = v.accepts(c);
    if (!why.empty()) throw Error(n + ": " + why);
  }
  const Family* fam = find_family(c.family);
  if (fam->memory_bytes) require_memory(fam->memory_bytes(c), n.c_str());
}

}  // namespace rooflab

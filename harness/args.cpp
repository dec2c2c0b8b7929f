#include "harness/args.hpp"

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace rooflab::args {
namespace fs = std::filesystem;

namespace {
std::string num(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%g", x);
  return b;
}

std::string range_text(double lo, double hi, bool lo_open, bool hi_open) {
  const bool has_lo = std::isfinite(lo), has_hi = std::isfinite(hi);
  if (has_lo && has_hi) return std::string(" in ") + (lo_open ? "(" : "[") + num(lo) + ", " + num(hi) + (hi_open ? ")" : "]");
  if (has_lo) return std::string(lo_open ? " > " : " >= ") + num(lo);
  if (has_hi) return std::string(hi_open ? " < " : " <= ") + num(hi);
  return "";
}

std::string or_list(const std::vector<std::string>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i == 0 ? "" : i + 1 == v.size() ? " or " : ", ") + v[i];
  return s;
}

// An option-like token: "--x..." or "-x" (a letter); "-5" and "-" are values.
bool looks_like_option(const std::string& a) {
  if (a.size() < 2 || a[0] != '-') return false;
  if (a[1] == '-') return a.size() > 2;
  return std::isalpha(static_cast<unsigned char>(a[1])) != 0;
}

std::string default_metavar(const Option& o) {
  if (!o.metavar.empty()) return o.metavar;
  if (o.kind == Kind::choice) {
    std::string s;
    for (const auto& c : o.choices) s += (s.empty() ? "" : "|") + c;
    return s;
  }
  return "VALUE";
}

// Checks a value of an option of kind `o.kind`; throws UsageError (or Error for paths).
void check_value(const Option& o, const std::string& v) {
  switch (o.kind) {
    case Kind::flag:
    case Kind::string:
      return;
    case Kind::integer:
      parse_integer(o.name, v, o.ilo, o.ihi);
      return;
    case Kind::real:
      parse_real(o.name, v, o.rlo, o.rhi, o.rlo_open, o.rhi_open);
      return;
    case Kind::choice:
      for (const auto& c : o.choices)
        if (c == v) return;
      throw UsageError(o.name + " must be " + or_list(o.choices) + ", got '" + v + "'" + o.hint);
    case Kind::path:
      if (v.empty()) throw UsageError(o.name + " needs a non-empty path");
      check_path(o.name, v, o.path_kind, o.hint);
      return;
  }
}
}  // namespace

int64_t parse_integer(const std::string& what, const std::string& text, int64_t lo, int64_t hi) {
  const std::string range = " in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  std::string_view s = text;
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec == std::errc::invalid_argument || p != s.data() + s.size())
    throw UsageError(what + " must be an integer" + range + ", got '" + text + "'");
  if (ec == std::errc::result_out_of_range || v < lo || v > hi)
    throw UsageError(what + " must be an integer" + range + ", got '" + text + "' (out of range)");
  return v;
}

double parse_real(const std::string& what, const std::string& text, double lo, double hi, bool lo_open,
                  bool hi_open) {
  const std::string want = what + " must be a finite number" + range_text(lo, hi, lo_open, hi_open);
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0])))
    throw UsageError(want + ", got '" + text + "'");
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) throw UsageError(want + ", got '" + text + "'");
  if (!std::isfinite(v)) throw UsageError(want + ", got '" + text + "' (not finite)");
  if (v < lo || v > hi || (lo_open && v == lo) || (hi_open && v == hi))
    throw UsageError(want + ", got '" + text + "' (out of range)");
  return v;
}

void check_path(const std::string& what, const std::string& path, PathKind kind, const std::string& hint) {
  std::error_code ec;
  const fs::path p(path);
  switch (kind) {
    case PathKind::any:
      return;
    case PathKind::input_file:
      if (!fs::exists(p, ec)) throw Error(what + " " + path + " not found" + hint);
      if (fs::is_directory(p, ec)) throw Error(what + " " + path + " is a directory, not a file" + hint);
      if (access(path.c_str(), R_OK) != 0) throw Error(what + " " + path + " is not readable");
      return;
    case PathKind::input_dir:
      if (!fs::exists(p, ec)) throw Error(what + " " + path + " does not exist" + hint);
      if (!fs::is_directory(p, ec)) throw Error(what + " " + path + " is not a directory" + hint);
      return;
    case PathKind::output_file:
    {
      if (fs::is_directory(p, ec)) throw Error(what + " " + path + " is a directory; it names a file");
      const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
      if (fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw Error(what + " " + path + ": " + dir.string() + " is not a directory");
      check_path(what, dir.string(), PathKind::output_dir, hint);
      return;
    }
    case PathKind::output_dir: {
      if (fs::exists(p, ec)) {
        if (!fs::is_directory(p, ec)) throw Error(what + " " + path + " is a file, not a directory");
        if (access(path.c_str(), W_OK) != 0) throw Error(what + " " + path + ": output directory is not writable");
        return;
      }
      // The nearest existing ancestor decides whether the directory can be created.
      fs::path up = fs::absolute(p, ec).lexically_normal();
      while (up.has_parent_path() && up != up.parent_path() && !fs::exists(up, ec)) up = up.parent_path();
      if (!fs::is_directory(up, ec))
        throw Error(what + " " + path + ": cannot create output directory: " + up.string() + " is not a directory");
      if (access(up.c_str(), W_OK) != 0)
        throw Error(what + " " + path + ": cannot create output directory: " + up.string() + " is not writable");
      return;
    }
  }
}

// ---- Spec ----------------------------------------------------------------------------------
Option& Spec::last() {
  if (opts_.empty()) throw std::logic_error("args: a modifier before any option");
  return opts_.back();
}

Spec& Spec::flag(const std::string& name, const std::string& help) {
  Option o;
  o.name = name, o.help = help, o.kind = Kind::flag;
  opts_.push_back(o);
  return *this;
}
Spec& Spec::string(const std::string& name, const std::string& metavar, const std::string& help,
                   std::optional<std::string> def) {
  Option o;
  o.name = name, o.metavar = metavar, o.help = help, o.kind = Kind::string, o.def = std::move(def);
  opts_.push_back(o);
  return *this;
}
Spec& Spec::integer(const std::string& name, const std::string& metavar, const std::string& help, int64_t lo,
                    int64_t hi, std::optional<int64_t> def) {
  Option o;
  o.name = name, o.metavar = metavar, o.help = help, o.kind = Kind::integer, o.ilo = lo, o.ihi = hi;
  if (def) o.def = std::to_string(*def);
  opts_.push_back(o);
  return *this;
}
Spec& Spec::real(const std::string& name, const std::string& metavar, const std::string& help, double lo, double hi,
                 std::optional<double> def, bool lo_open, bool hi_open) {
  Option o;
  o.name = name, o.metavar = metavar, o.help = help, o.kind = Kind::real;
  o.rlo = lo, o.rhi = hi, o.rlo_open = lo_open, o.rhi_open = hi_open;
  if (def) o.def = num(*def);
  opts_.push_back(o);
  return *this;
}
Spec& Spec::choice(const std::string& name, std::vector<std::string> choices, const std::string& help,
                   std::optional<std::string> def) {
  Option o;
  o.name = name, o.help = help, o.kind = Kind::choice, o.choices = std::move(choices), o.def = std::move(def);
  opts_.push_back(o);
  return *this;
}
Spec& Spec::path(const std::string& name, PathKind kind, const std::string& metavar, const std::string& help,
                 std::optional<std::string> def) {
  Option o;
  o.name = name, o.metavar = metavar, o.help = help, o.kind = Kind::path, o.path_kind = kind, o.def = std::move(def);
  opts_.push_back(o);
  return *this;
}
Spec& Spec::profile(const std::string& help, std::optional<std::string> def) {
  return choice("--profile", {"smoke", "quick", "paper"}, help, std::move(def));
}
Spec& Spec::threads(const std::string& help, std::optional<int64_t> def) {
  return integer("--threads", "T", help, 1, kMaxThreads, def);
}
Spec& Spec::positional(const std::string& name, const std::string& help, bool required, bool many) {
  pos_.push_back({name, help, required, many});
  return *this;
}
Spec& Spec::passthrough(const std::string& prefix, const std::string& help) {
  pass_prefix_ = prefix, pass_help_ = help;
  return *this;
}
Spec& Spec::rest(const std::string& metavar, const std::string& help) {
  rest_ = true, rest_metavar_ = metavar, rest_help_ = help;
  return *this;
}
Spec& Spec::alias(const std::string& a) {
  last().alias = a;
  return *this;
}
Spec& Spec::repeated() {
  last().repeated = true;
  return *this;
}
Spec& Spec::required() {
  last().required = true;
  return *this;
}
Spec& Spec::hint(const std::string& h) {
  last().hint = h;
  return *this;
}
Spec& Spec::epilog(const std::string& text) {
  epilog_ = text;
  return *this;
}

const Option* Spec::find(const std::string& name) const {
  for (const auto& o : opts_)
    if (o.name == name || (!o.alias.empty() && o.alias == name)) return &o;
  return nullptr;
}

Values Spec::parse(const std::vector<std::string>& argv) const {
  Values v;
  v.spec_ = this;
  for (const auto& a : argv) {
    if (a == "--") break;
    if (a == "--help" || a == "-h") {
      v.help_ = true;
      return v;
    }
  }
  bool options_done = false;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& a = argv[i];
    if (!options_done && a == "--") {
      options_done = true;
      continue;
    }
    if (!options_done && !pass_prefix_.empty() && a.rfind(pass_prefix_, 0) == 0) {
      v.pass_.push_back(a);
      continue;
    }
    if (options_done || !looks_like_option(a)) {
      if (rest_) {
        v.pass_.push_back(a);
        continue;
      }
      v.pos_.push_back(a);
      continue;
    }
    const size_t eq = a.find('=');
    const std::string key = a.substr(0, eq);
    const Option* o = find(key);
    if (!o) {
      if (rest_) {  // a launcher: what it does not know goes to the program it runs
        v.pass_.push_back(a);
        continue;
      }
      throw UsageError("unknown option '" + key + "'");
    }
    std::string value;
    if (o->kind == Kind::flag) {
      if (eq != std::string::npos) {
        const std::string b = a.substr(eq + 1);
        if (b != "true" && b != "false")
          throw UsageError(o->name + " is a flag: give it alone or as " + o->name + "=true|false, got '" + a + "'");
        value = b;
      } else {
        value = "true";
      }
    } else if (eq != std::string::npos) {
      value = a.substr(eq + 1);
    } else {
      if (i + 1 >= argv.size()) throw UsageError(o->name + " needs a value (" + default_metavar(*o) + ")");
      if (argv[i + 1].rfind("--", 0) == 0 && argv[i + 1].size() > 2)
        throw UsageError(o->name + " needs a value (" + default_metavar(*o) + "), got option '" + argv[i + 1] + "'");
      value = argv[++i];
    }
    if (o->kind != Kind::path) check_value(*o, value);  // paths after the whole line is read
    auto& slot = v.given_[o->name];
    if (!o->repeated) slot.clear();  // as Google Benchmark: the last one wins
    slot.push_back(value);
  }
  for (const auto& o : opts_) {
    auto it = v.given_.find(o.name);
    if (it == v.given_.end()) {
      if (o.required) throw UsageError("needs " + o.name + " " + default_metavar(o));
      continue;
    }
  }
  // Positionals: counts.
  size_t need = 0;
  bool many = false;
  for (const auto& p : pos_) need += p.required, many |= p.many;
  if (v.pos_.size() < need) {
    for (size_t k = v.pos_.size(); k < pos_.size(); ++k)
      if (pos_[k].required) throw UsageError("needs " + pos_[k].name);
  }
  if (!many && v.pos_.size() > pos_.size())
    throw UsageError("unexpected argument '" + v.pos_[pos_.size()] + "'");
  // Paths last, so a usage error is reported before a file system one.
  for (const auto& o : opts_)
    if (o.kind == Kind::path)
      if (auto it = v.given_.find(o.name); it != v.given_.end())
        for (const auto& p : it->second) check_value(o, p);
  return v;
}

std::string Spec::help() const {
  std::string s = "usage: " + prog_;
  if (!opts_.empty()) s += " [options]";
  for (const auto& p : pos_) s += " " + std::string(p.required ? "" : "[") + p.name + (p.many ? "..." : "") + (p.required ? "" : "]");
  if (rest_) s += " [" + rest_metavar_ + "]";
  s += "\n";
  if (!summary_.empty()) s += "  " + summary_ + "\n";
  std::vector<std::pair<std::string, std::string>> rows;
  for (const auto& p : pos_) rows.emplace_back(p.name, p.help);
  for (const auto& o : opts_) {
    std::string left = (o.alias.empty() ? "" : o.alias + ", ") + o.name;
    if (o.kind != Kind::flag) left += " " + default_metavar(o);
    std::string right = o.help;
    if (o.kind == Kind::integer)
      right += " [" + std::to_string(o.ilo) + ", " + std::to_string(o.ihi) + "]";
    if (o.kind == Kind::real) {
      const std::string r = range_text(o.rlo, o.rhi, o.rlo_open, o.rhi_open);
      if (!r.empty()) right += " (" + r.substr(1) + ")";
    }
    if (o.def && !o.def->empty()) right += " (default " + *o.def + ")";
    if (o.required) right += " (required)";
    if (o.repeated) right += " (repeatable)";
    rows.emplace_back(left, right);
  }
  if (!pass_prefix_.empty()) rows.emplace_back(pass_prefix_ + "*", pass_help_);
  if (rest_) rows.emplace_back(rest_metavar_, rest_help_);
  rows.emplace_back("-h, --help", "this help");
  size_t w = 0;
  for (const auto& r : rows) w = std::max(w, r.first.size());
  w = std::min<size_t>(w, 30);
  s += "\n";
  for (const auto& [l, r] : rows) {
    s += "  " + l;
    if (l.size() > w) s += "\n  " + std::string(w, ' ');
    else s += std::string(w - l.size(), ' ');
    s += "  " + r + "\n";
  }
  if (!epilog_.empty()) s += "\n" + epilog_ + (epilog_.back() == '\n' ? "" : "\n");
  return s;
}

// ---- Values --------------------------------------------------------------------------------
const Option& Values::opt(const std::string& name) const {
  const Option* o = spec_ ? spec_->find(name) : nullptr;
  if (!o) throw std::logic_error("args: option " + name + " is not declared");
  return *o;
}
bool Values::declared(const std::string& name) const { return spec_ && spec_->find(name); }
bool Values::has(const std::string& name) const {
  return given_.count(opt(name).name) != 0;
}
bool Values::flag(const std::string& name) const {
  const Option& o = opt(name);
  const auto it = given_.find(o.name);
  return it != given_.end() && it->second.back() == "true";
}
std::string Values::str(const std::string& name) const {
  const Option& o = opt(name);
  const auto it = given_.find(o.name);
  if (it != given_.end()) return it->second.back();
  return o.def.value_or("");
}
int64_t Values::integer(const std::string& name) const {
  const Option& o = opt(name);
  const std::string s = str(name);
  if (s.empty()) throw std::logic_error("args: " + name + " has no value and no default");
  return parse_integer(o.name, s, o.ilo, o.ihi);
}
double Values::real(const std::string& name) const {
  const Option& o = opt(name);
  const std::string s = str(name);
  if (s.empty()) throw std::logic_error("args: " + name + " has no value and no default");
  return parse_real(o.name, s, o.rlo, o.rhi, o.rlo_open, o.rhi_open);
}
std::vector<std::string> Values::all(const std::string& name) const {
  const auto it = given_.find(opt(name).name);
  return it == given_.end() ? std::vector<std::string>{} : it->second;
}

// ---- Command tables ------------------------------------------------------------------------
std::string table_help(const std::string& prog, const std::string& summary, const std::vector<Command>& table,
                       const std::string& footer) {
  std::string s = "usage: " + prog + " <command> [options]\n";
  if (!summary.empty()) s += "  " + summary + "\n";
  s += "\ncommands:\n";
  size_t w = 0;
  for (const auto& c : table)
    if (!c.hidden) w = std::max(w, c.name.size());
  for (const auto& c : table)
    if (!c.hidden) s += "  " + c.name + std::string(w - c.name.size() + 2, ' ') + c.summary + "\n";
  s += "\n`" + prog + " <command> --help` lists a command's options.\n";
  if (!footer.empty()) s += footer;
  return s;
}

int report_usage(const std::string& prog, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n(see %s --help)\n", prog.c_str(), what.c_str(), prog.c_str());
  return 2;
}

int run_single(const Spec& spec, const std::vector<std::string>& argv, const std::function<int(const Values&)>& run) {
  try {
    const Values v = spec.parse(argv);
    if (v.help()) {
      std::fputs(spec.help().c_str(), stdout);
      return 0;
    }
    return run(v);
  } catch (const UsageError& e) {
    return report_usage(spec.prog(), e.what());
  }
}

int dispatch(const std::string& prog, const std::string& summary, const std::vector<Command>& table,
             const std::vector<std::string>& argv, const std::string& footer) {
  if (argv.empty()) {
    std::fputs(table_help(prog, summary, table, footer).c_str(), stderr);
    return 2;
  }
  const std::string& name = argv[0];
  if (name == "help" || name == "--help" || name == "-h") {
    std::fputs(table_help(prog, summary, table, footer).c_str(), stdout);
    return 0;
  }
  const Command* cmd = nullptr;
  for (const auto& c : table)
    if (c.name == name) cmd = &c;
  if (!cmd) {
    std::fprintf(stderr, "%s: unknown command '%s'\n(see %s help)\n", prog.c_str(), name.c_str(), prog.c_str());
    return 2;
  }
  const std::string full = prog + " " + name;
  const std::vector<std::string> rest(argv.begin() + 1, argv.end());
  try {
    if (cmd->raw) return cmd->raw(rest);
    const Spec spec = cmd->spec();
    return run_single(spec, rest, cmd->run);
  } catch (const UsageError& e) {
    return report_usage(full, e.what());
  } catch (const Error& e) {
    std::fprintf(stderr, "%s: error: %s\n", full.c_str(), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: unexpected error: %s\n", full.c_str(), e.what());
    return 1;
  }
}

}  // namespace rooflab::args

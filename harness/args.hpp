#pragma once
// One argument parser for every rooflab program, in Google Benchmark's flag style:
// `--name=value`, `--name value`, `--flag`, positionals, `--` ends the options. Options are
// declared once (kind, range, help) and the help text is generated from the declarations, so
// what a command accepts and what its --help says cannot drift apart.
//
// Errors: a malformed command line (unknown option, missing value, a number that is junk, out
// of range, overflowing, inf or NaN, an unknown choice) throws UsageError (exit 2); a path that
// names a missing input or an output that cannot be created throws rooflab::Error (exit 1).
// Both messages name the option and the value.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/error.hpp"

namespace rooflab::args {

struct UsageError : Error {
  using Error::Error;
};

inline constexpr int64_t kMaxThreads = 1024;

enum class Kind { flag, string, integer, real, choice, path };
enum class PathKind {
  any,          // not checked (the command checks it, e.g. collectively over MPI ranks)
  input_file,   // must be an existing regular file
  input_dir,    // must be an existing directory
  output_dir,   // a directory, or creatable: not under a regular file, its parent writable
  output_file,  // not a directory; its directory as output_dir
};

struct Option {
  std::string name;      // "--threads"
  std::string alias;     // "-n" (optional)
  std::string metavar;   // "T"
  std::string help;
  Kind kind = Kind::string;
  PathKind path_kind = PathKind::any;
  std::optional<std::string> def;  // default, as text (parsed like a given value)
  int64_t ilo = std::numeric_limits<int64_t>::min(), ihi = std::numeric_limits<int64_t>::max();
  double rlo = -std::numeric_limits<double>::infinity(), rhi = std::numeric_limits<double>::infinity();
  bool rlo_open = false, rhi_open = false;
  std::vector<std::string> choices;
  bool repeated = false, required = false;
  std::string hint;  // appended to path errors: how to make the missing input
};

struct Positional {
  std::string name, help;
  bool required = true;
  bool many = false;  // takes every remaining positional
};

class Values;

// The declarations of one command. Builder methods return *this; the modifiers (alias,
// repeated, required, hint) apply to the option declared last.
class Spec {
 public:
  Spec(std::string prog, std::string summary) : prog_(std::move(prog)), summary_(std::move(summary)) {}

  Spec& flag(const std::string& name, const std::string& help);
  Spec& string(const std::string& name, const std::string& metavar, const std::string& help,
               std::optional<std::string> def = std::nullopt);
  Spec& integer(const std::string& name, const std::string& metavar, const std::string& help, int64_t lo,
                int64_t hi, std::optional<int64_t> def = std::nullopt);
  // A finite number in [lo, hi] (open ends with lo_open / hi_open); inf and NaN are refused.
  Spec& real(const std::string& name, const std::string& metavar, const std::string& help, double lo, double hi,
             std::optional<double> def = std::nullopt, bool lo_open = false, bool hi_open = false);
  Spec& choice(const std::string& name, std::vector<std::string> choices, const std::string& help,
               std::optional<std::string> def = std::nullopt);
  Spec& path(const std::string& name, PathKind kind, const std::string& metavar, const std::string& help,
             std::optional<std::string> def = std::nullopt);
  // smoke | quick | paper: the one profile vocabulary of every command.
  Spec& profile(const std::string& help, std::optional<std::string> def = "quick");
  // --threads T in [1, kMaxThreads]: one bound for every command, so a count that wraps (2^32 + 1)
  // or that no machine can run is refused the same way everywhere.
  Spec& threads(const std::string& help, std::optional<int64_t> def = std::nullopt);
  Spec& positional(const std::string& name, const std::string& help, bool required = true, bool many = false);
  // Arguments starting with `prefix` are kept verbatim (Values::passthrough), e.g. "--benchmark_".
  Spec& passthrough(const std::string& prefix, const std::string& help);
  // Every argument after the options this spec knows is kept verbatim (a launcher's tail).
  Spec& rest(const std::string& metavar, const std::string& help);
  Spec& alias(const std::string& a);
  Spec& repeated();
  Spec& required();
  Spec& hint(const std::string& h);
  Spec& epilog(const std::string& text);

  // Parses argv (without the program / command name). --help / -h sets Values::help() and
  // skips the other checks. Throws UsageError or Error (see the top of this file).
  Values parse(const std::vector<std::string>& argv) const;
  std::string help() const;
  const std::string& prog() const { return prog_; }
  const std::string& summary() const { return summary_; }
  const Option* find(const std::string& name) const;

 private:
  std::string prog_, summary_, epilog_, pass_prefix_, pass_help_, rest_metavar_, rest_help_;
  std::vector<Option> opts_;
  std::vector<Positional> pos_;
  bool rest_ = false;
  Option& last();
};

class Values {
 public:
  bool help() const { return help_; }
  bool has(const std::string& name) const;  // given on the command line
  bool declared(const std::string& name) const;  // an option of this command
  bool flag(const std::string& name) const;
  std::string str(const std::string& name) const;  // value, else default, else ""
  int64_t integer(const std::string& name) const;
  double real(const std::string& name) const;
  std::filesystem::path path(const std::string& name) const { return str(name); }
  std::vector<std::string> all(const std::string& name) const;  // every value of a repeated option
  const std::vector<std::string>& positionals() const { return pos_; }
  std::string positional(size_t i) const { return i < pos_.size() ? pos_[i] : ""; }
  const std::vector<std::string>& passthrough() const { return pass_; }

 private:
  friend class Spec;
  const Spec* spec_ = nullptr;
  bool help_ = false;
  std::map<std::string, std::vector<std::string>> given_;
  std::vector<std::string> pos_, pass_;
  const Option& opt(const std::string& name) const;
};

// The checks behind the option kinds, for values that do not come from a command line
// (an entry of a comma list, a file's field). `what` names the value in the message.
int64_t parse_integer(const std::string& what, const std::string& text, int64_t lo, int64_t hi);
double parse_real(const std::string& what, const std::string& text, double lo, double hi, bool lo_open = false,
                  bool hi_open = false);
void check_path(const std::string& what, const std::string& path, PathKind kind, const std::string& hint = "");

// A command of a command table: `prog name [options]`.
struct Command {
  std::string name, summary;
  std::function<Spec()> spec;                               // the options (null: `raw` parses)
  std::function<int(const Values&)> run;
  std::function<int(const std::vector<std::string>&)> raw;  // a command with its own table / parser
  bool hidden = false;                                      // not listed by help
  bool timed = false;  // times kernels: runs under the timed OpenMP policy (diag::apply_timed_omp_policy)
};

// The help of a table: every command with its one-line summary, then `footer`.
std::string table_help(const std::string& prog, const std::string& summary, const std::vector<Command>& table,
                       const std::string& footer);
// Runs argv[0] of the table with argv[1..]: `help` / `--help` print the table (exit 0), no
// command prints it on stderr (exit 2). A UsageError prints `prog cmd: what` and a hint line
// (exit 2); an Error `prog cmd: error: what` (exit 1).
int dispatch(const std::string& prog, const std::string& summary, const std::vector<Command>& table,
             const std::vector<std::string>& argv, const std::string& footer = "");
// One command without a table: --help prints the spec's help (0); a UsageError prints the
// message and a hint line (2). Errors (rooflab::Error) propagate to the caller.
int run_single(const Spec& spec, const std::vector<std::string>& argv, const std::function<int(const Values&)>& run);
// Prints a usage error of `prog` in the common format; returns 2.
int report_usage(const std::string& prog, const std::string& what);

}  // namespace rooflab::args

// harness/args: the one argument parser of every rooflab command line. Every option kind,
// both spellings (--name=value, --name value), and each class of bad input with the message
// that names the option and the value.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "harness/args.hpp"

namespace fs = std::filesystem;
using namespace rooflab;
using namespace rooflab::args;

namespace {
Spec demo() {
  Spec s("rooflab demo", "a command for the tests");
  s.flag("--verbose", "more output")
      .string("--filter", "REGEX", "which cases")
      .integer("--threads", "T", "threads", 1, 1024, 2)
      .alias("-t")
      .real("--tol", "X", "tolerance", 0, 1, 1e-9)
      .real("--reg", "R", "regularization", 0, std::numeric_limits<double>::infinity(), std::nullopt, true)
      .choice("--dtype", {"f64", "f32"}, "element type", "f64")
      .profile("which sizes")
      .string("--case", "NAME", "a case")
      .repeated()
      .passthrough("--benchmark_", "Google Benchmark's flags");
  return s;
}

// The message of the UsageError `f` throws ("" if none).
template <class F>
std::string usage_of(F f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("not a usage error: ") + e.what();
  }
  return "";
}
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const UsageError& e) {
    return std::string("a usage error: ") + e.what();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

struct TempDir {
  fs::path p = fs::temp_directory_path() / ("rooflab_args_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(p); }
  ~TempDir() { fs::remove_all(p); }
};
}  // namespace

TEST(Args, BothSpellingsFlagsAndDefaults) {
  const Spec s = demo();
  const Values v = s.parse({"--threads=4", "--filter", "sinkhorn/.*", "--verbose", "--dtype=f32"});
  EXPECT_EQ(v.integer("--threads"), 4);
  EXPECT_EQ(v.str("--filter"), "sinkhorn/.*");
  EXPECT_TRUE(v.flag("--verbose"));
  EXPECT_EQ(v.str("--dtype"), "f32");
  EXPECT_TRUE(v.has("--threads"));
  EXPECT_FALSE(v.has("--tol"));
  EXPECT_DOUBLE_EQ(v.real("--tol"), 1e-9);        // the default
  EXPECT_EQ(v.str("--profile"), "quick");
  EXPECT_FALSE(demo().parse({}).flag("--verbose"));
  EXPECT_FALSE(s.parse({"--verbose=false"}).flag("--verbose"));
  EXPECT_EQ(s.parse({"-t", "3"}).integer("--threads"), 3);  // alias
  EXPECT_EQ(s.parse({"--threads", "3", "--threads", "5"}).integer("--threads"), 5);  // the last one wins
}

TEST(Args, RepeatedPassthroughPositionalsAndHelp) {
  Spec s = demo();
  s.positional("RUN", "a run directory").positional("MORE", "more", false, true);
  const Values v = s.parse({"r1", "--case", "a", "--benchmark_repetitions=3", "--case=b", "x", "--", "--not-an-option"});
  EXPECT_EQ(v.all("--case"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(v.passthrough(), (std::vector<std::string>{"--benchmark_repetitions=3"}));
  EXPECT_EQ(v.positionals(), (std::vector<std::string>{"r1", "x", "--not-an-option"}));
  EXPECT_TRUE(s.parse({"--threads", "junk", "--help"}).help());  // help before any check
  const std::string h = s.help();
  for (const char* want : {"usage: rooflab demo [options] RUN [MORE...]", "--threads T", "[1, 1024]", "(default 2)",
                           "--dtype f64|f32", "--profile smoke|quick|paper", "(repeatable)", "--benchmark_*", "-t, --threads",
                           "--reg R", "> 0", "--help"})
    EXPECT_NE(h.find(want), std::string::npos) << want << " not in\n" << h;
}

TEST(Args, IntegersOverflowJunkNegativeRange) {
  const Spec s = demo();
  // Each bad value: a usage error naming the option, the value and the range.
  for (const char* bad : {"0", "-1", "1025", "2147483648", "9223372036854775808", "99999999999999999999999", "1.5",
                          "2x", "", " 2", "0x10", "two", "1e3", "--", "+"}) {
    const std::string m = usage_of([&] { s.parse({std::string("--threads=") + bad}); });
    EXPECT_NE(m.find("--threads must be an integer in [1, 1024], got '" + std::string(bad) + "'"), std::string::npos)
        << bad << ": " << m;
  }
  EXPECT_NE(usage_of([&] { s.parse({"--threads=9223372036854775808"}); }).find("(out of range)"), std::string::npos);
  EXPECT_EQ(s.parse({"--threads=+7"}).integer("--threads"), 7);
  EXPECT_EQ(parse_integer("x", "-9223372036854775808", INT64_MIN, INT64_MAX), INT64_MIN);
  EXPECT_NE(usage_of([] { parse_integer("--seed", "-9223372036854775809", INT64_MIN, INT64_MAX); }).find("out of range"),
            std::string::npos);
}

TEST(Args, RealsRejectInfNanJunkAndRange) {
  const Spec s = demo();
  for (const char* bad : {"inf", "-inf", "nan", "NaN", "infinity", "1e999", "-1", "1.5", "x", "", "1e-3x", " 0.5"}) {
    const std::string m = usage_of([&] { s.parse({"--tol", bad}); });
    EXPECT_NE(m.find("--tol must be a finite number in [0, 1], got '" + std::string(bad) + "'"), std::string::npos)
        << bad << ": " << m;
  }
  EXPECT_DOUBLE_EQ(s.parse({"--tol", "0"}).real("--tol"), 0.0);
  EXPECT_DOUBLE_EQ(s.parse({"--tol=1e-12"}).real("--tol"), 1e-12);
  // An open end: > 0.
  EXPECT_NE(usage_of([&] { s.parse({"--reg=0"}); }).find("--reg must be a finite number > 0, got '0'"), std::string::npos);
  EXPECT_NE(usage_of([&] { s.parse({"--reg=inf"}); }).find("(not finite)"), std::string::npos);
  EXPECT_DOUBLE_EQ(s.parse({"--reg", "1e300"}).real("--reg"), 1e300);
}

TEST(Args, ChoicesAndProfiles) {
  const Spec s = demo();
  EXPECT_EQ(usage_of([&] { s.parse({"--dtype", "f16"}); }), "--dtype must be f64 or f32, got 'f16'");
  EXPECT_EQ(usage_of([&] { s.parse({"--profile=full"}); }), "--profile must be smoke, quick or paper, got 'full'");
  EXPECT_EQ(usage_of([&] { s.parse({"--profile="}); }), "--profile must be smoke, quick or paper, got ''");
  EXPECT_EQ(s.parse({"--profile", "smoke"}).str("--profile"), "smoke");
}

TEST(Args, UnknownMissingUnexpected) {
  Spec s = demo();
  EXPECT_EQ(usage_of([&] { s.parse({"--bogus"}); }), "unknown option '--bogus'");
  EXPECT_EQ(usage_of([&] { s.parse({"--bogus=1"}); }), "unknown option '--bogus'");
  EXPECT_EQ(usage_of([&] { s.parse({"-x"}); }), "unknown option '-x'");
  EXPECT_EQ(usage_of([&] { s.parse({"--threads"}); }), "--threads needs a value (T)");
  EXPECT_EQ(usage_of([&] { s.parse({"--filter", "--verbose"}); }), "--filter needs a value (REGEX), got option '--verbose'");
  EXPECT_EQ(usage_of([&] { s.parse({"--verbose=yes"}); }).rfind("--verbose is a flag", 0), 0u);
  EXPECT_EQ(usage_of([&] { s.parse({"stray"}); }), "unexpected argument 'stray'");
  s.string("--machine", "FILE", "machine.json").required();
  EXPECT_EQ(usage_of([&] { s.parse({}); }), "needs --machine FILE");
  Spec p("rooflab p", "");
  p.positional("RUN", "a run");
  EXPECT_EQ(usage_of([&] { p.parse({}); }), "needs RUN");
  EXPECT_EQ(p.parse({"-"}).positional(0), "-");  // "-" and "-5" are values, not options
  EXPECT_EQ(p.parse({"-5"}).positional(0), "-5");
}

TEST(Args, PathsInputsAndOutputs) {
  TempDir t;
  const fs::path file = t.p / "f.json";
  std::ofstream(file) << "{}";
  Spec s("rooflab demo", "");
  s.path("--in", PathKind::input_file, "FILE", "input", std::nullopt)
      .hint("; run `rooflab make-it` first")
      .path("--dir", PathKind::input_dir, "DIR", "input directory")
      .path("--out", PathKind::output_dir, "DIR", "output directory", ".")
      .path("--plan", PathKind::output_file, "FILE", "output file");
  // Inputs: missing -> an error naming it and how to make it; the wrong kind.
  EXPECT_EQ(error_of([&] { s.parse({"--in", (t.p / "none.json").string()}); }),
            "--in " + (t.p / "none.json").string() + " not found; run `rooflab make-it` first");
  EXPECT_NE(error_of([&] { s.parse({"--in", t.p.string()}); }).find("is a directory, not a file"), std::string::npos);
  EXPECT_NE(error_of([&] { s.parse({"--dir", (t.p / "nope").string()}); }).find("does not exist"), std::string::npos);
  EXPECT_NE(error_of([&] { s.parse({"--dir", file.string()}); }).find("is not a directory"), std::string::npos);
  EXPECT_EQ(s.parse({"--in", file.string(), "--dir", t.p.string()}).path("--in"), file);
  // Outputs: under a regular file, a file itself, not creatable; a missing parent is fine
  // (created when written) and nothing is created by the check.
  EXPECT_NE(error_of([&] { s.parse({"--out", (file / "sub").string()}); }).find("is not a directory"), std::string::npos);
  EXPECT_NE(error_of([&] { s.parse({"--out", file.string()}); }).find("is a file, not a directory"), std::string::npos);
  EXPECT_NE(error_of([&] { s.parse({"--plan", t.p.string()}); }).find("is a directory; it names a file"), std::string::npos);
  EXPECT_NE(error_of([&] { s.parse({"--plan", (file / "p.txt").string()}); }).find("is not a directory"), std::string::npos);
  const fs::path deep = t.p / "a" / "b" / "c";
  EXPECT_EQ(s.parse({"--out", deep.string()}).path("--out"), deep);
  EXPECT_FALSE(fs::exists(t.p / "a"));
  EXPECT_EQ(usage_of([&] { s.parse({"--out="}); }), "--out needs a non-empty path");
  if (::geteuid() != 0) {  // root may write anywhere
    EXPECT_NE(error_of([&] { s.parse({"--out", "/proc/rooflab-x"}); }).find("cannot create output directory"),
              std::string::npos);
  }
  // A usage error comes before a file-system one.
  EXPECT_EQ(usage_of([&] { s.parse({"--in", "/nonexistent", "--bogus"}); }), "unknown option '--bogus'");
}

TEST(Args, DispatchExitCodes) {
  int ran = 0;
  std::vector<Command> table = {
      {"go", "run it", [] { return Spec("rooflab go", "").integer("--n", "N", "n", 1, 3, 1); },
       [&](const Values& v) { ran = int(v.integer("--n")); return 0; }, nullptr, false},
      {"fail", "fails", [] { return Spec("rooflab fail", ""); }, [](const Values&) -> int { throw Error("boom"); },
       nullptr, false}};
  EXPECT_EQ(dispatch("rooflab", "", table, {}), 2);
  EXPECT_EQ(dispatch("rooflab", "", table, {"help"}), 0);
  EXPECT_EQ(dispatch("rooflab", "", table, {"nope"}), 2);
  EXPECT_EQ(dispatch("rooflab", "", table, {"go", "--n", "4"}), 2);
  EXPECT_EQ(dispatch("rooflab", "", table, {"go", "--help"}), 0);
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(dispatch("rooflab", "", table, {"go", "--n=3"}), 0);
  EXPECT_EQ(ran, 3);
  EXPECT_EQ(dispatch("rooflab", "", table, {"fail"}), 1);
  const std::string h = table_help("rooflab", "", table, "");
  EXPECT_NE(h.find("  go    run it"), std::string::npos) << h;
}

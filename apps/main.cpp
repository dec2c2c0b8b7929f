// The `rooflab` command line: one binary, subcommands. Exit codes: 0 success, 1 error
// (message on stderr), 2 usage error, 3 a variant failed verification (reported, not timed),
// 4 a performance regression found by `rooflab compare`.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "harness/bench_driver.hpp"
#include "apps/commands.hpp"
#include "harness/counters/counters.hpp"
#include "harness/error.hpp"
#include "harness/json_io.hpp"
#include "microbench/characterize.hpp"
#include "roofline/evaluate.hpp"

namespace fs = std::filesystem;
using namespace rooflab;

namespace {

const char* kUsage = R"(usage: rooflab <command> [options]

commands:
  list          list the benchmarks of a profile          [--profile P] [--filter REGEX] [--verbose]
  characterize  measure the machine -> DIR/machine.json    [--profile P] [--out DIR] [--threads T] [--no-likwid]
  bench         verify + time benchmarks -> DIR/bench.json [--profile P] [--filter REGEX] [--case NAME]...
                                                           [--out DIR] [--machine FILE] [--benchmark_* flags]
  model         roofline prediction vs measurement -> model.json
                                                           [--run DIR] | [--bench FILE --machine FILE --out FILE]
  counters      cache-miss counters -> DIR/counters.json   [--filter REGEX] [--case NAME]... [--backend B]
                                                           [--machine FILE] [--ll-level L2|L3] [--runs K] [--out DIR]
  report        HTML report + Markdown summary of a run    RUN [--baseline BASE] [--markdown] (`rooflab report --help`)
  claims        the papers' claims vs a run -> DIR/claims.{json,md}   --run DIR
  compare       regression gate: BASE vs NEW bench.json    BASE NEW [--metric time|efficiency] [--threshold 0.10]
                (Mann-Whitney U per benchmark; exit 4 when significantly slower; `rooflab compare --help`)
  sinkhorn      solve (unbalanced) OT to a tolerance -> JSON (`rooflab sinkhorn --help`)
  rtamm         RTAMM pool / unit costs / adaptive-vs-oracle evaluation (`rooflab rtamm help`)
  gemm-knobs    sfc_ca's k_layers / kbf: autotune, analytic model, nearest neighbour (`rooflab gemm-knobs help`)
  mpi           distributed Sinkhorn (mpiexec rooflab_mpi)  --np P [rooflab_mpi options] (`rooflab mpi --help`)
  gpu-characterize  CUDA device bandwidth + peak FLOP/s -> DIR/machine.json "gpu" section (`rooflab gpu-characterize --help`)
  info          build and CPU facts
  help          this text

profiles: smoke (every family and variant once at tiny sizes, seconds), quick (small sizes, minutes),
          paper (the papers' sizes, hours)
benchmark names: <family>/<variant>[/<isa>]/<dtype>/<dims>[/<key>:<value>]*/threads:<T>
exit codes: 0 ok, 1 error, 2 usage, 3 a variant failed verification, 4 a performance regression (compare)
)";

using Usage = UsageError;

// Minimal option parsing: --key value / --key=value / --flag; unknown options are errors.
struct Args {
  std::vector<std::string> rest;
  size_t i = 0;
  explicit Args(std::vector<std::string> a) : rest(std::move(a)) {}
  bool done() const { return i >= rest.size(); }
  std::string peek() const { return rest[i]; }
  bool flag(const std::string& name) {
    if (rest[i] == name) { ++i; return true; }
    return false;
  }
  bool opt(const std::string& name, std::string& value) {
    const std::string& a = rest[i];
    if (a == name) {
      if (i + 1 >= rest.size()) throw Usage(name + " needs a value");
      value = rest[i + 1];
      i += 2;
      return true;
    }
    if (a.rfind(name + "=", 0) == 0) {
      value = a.substr(name.size() + 1);
      ++i;
      return true;
    }
    return false;
  }
  [[noreturn]] void unknown() const { throw Usage("unknown option '" + rest[i] + "'"); }
};

int to_int(const std::string& s, const char* what) {
  try {
    size_t pos = 0;
    int v = std::stoi(s, &pos);
    if (pos == s.size()) return v;
  } catch (...) {
  }
  throw Usage(std::string(what) + " must be an integer, got '" + s + "'");
}

void check_profile(const std::string& p) {
  for (const auto& k : known_profiles())
    if (k == p) return;
  throw Usage("unknown profile '" + p + "' (known: " + known_profiles_string() + ")");
}

void warn_if_unoptimized() {
  if (std::string(ROOFLAB_BUILD_TYPE) != "Release" || std::string(ROOFLAB_SANITIZER) != "")
    std::fprintf(stderr,
                 "warning: this rooflab is a %s build%s%s: timings are not representative; "
                 "use the release preset\n",
                 ROOFLAB_BUILD_TYPE, ROOFLAB_SANITIZER[0] ? " with sanitizer " : "", ROOFLAB_SANITIZER);
}

int cmd_list(Args a) {
  std::string profile = "quick", filter;
  bool verbose = false;
  while (!a.done()) {
    if (a.opt("--profile", profile) || a.opt("--filter", filter)) continue;
    if (a.flag("--verbose")) { verbose = true; continue; }
    a.unknown();
  }
  check_profile(profile);
  if (verbose) {
    for (const auto& f : families()) {
      std::printf("%s: %s\n", f.name.c_str(), f.description.c_str());
      for (const auto& v : f.variants) {
        std::string isas;
        for (Isa i : v.isas)
          isas += std::string(isas.empty() ? " [" : ",") + std::string(to_string(i)) +
                  (isa_supported(i) ? "" : " (not on this CPU)");
        if (!isas.empty()) isas += "]";
        std::printf("  %-14s %s%s\n", v.name.c_str(), v.description.c_str(), isas.c_str());
      }
    }
  }
  auto cases = filter_cases(expand_cases(profile), filter);
  for (const auto& c : cases) std::printf("%s\n", c.name().c_str());
  std::fprintf(stderr, "%zu benchmarks in profile %s%s\n", cases.size(), profile.c_str(),
               filter.empty() ? "" : (" matching '" + filter + "'").c_str());
  return cases.empty() ? 1 : 0;
}

int cmd_characterize(Args a) {
  microbench::CharacterizeOptions o;
  std::string out = ".", threads;
  while (!a.done()) {
    if (a.opt("--profile", o.profile) || a.opt("--out", out)) continue;
    if (a.opt("--threads", threads)) { o.max_threads = to_int(threads, "--threads"); continue; }
    if (a.flag("--no-likwid")) { o.likwid = false; continue; }
    a.unknown();
  }
  check_profile(o.profile);
  if (!threads.empty() && o.max_threads < 1) throw Usage("--threads must be >= 1");
  ensure_writable_dir(out);
  warn_if_unoptimized();
  o.progress = [](const std::string& line) { std::fprintf(stderr, "[characterize] %s\n", line.c_str()); };
  json m = microbench::characterize(o);
  const fs::path dest = fs::path(out) / "machine.json";
  write_json_atomic(dest, m);
  for (const auto& w : m["caches"].value("warnings", json::array()))
    std::fprintf(stderr, "warning: %s\n", w.get<std::string>().c_str());
  std::printf("%s\n", dest.c_str());
  return 0;
}

int cmd_bench(Args a) {
  BenchOptions o;
  std::string out = ".", machine, name;
  while (!a.done()) {
    if (a.opt("--profile", o.profile) || a.opt("--filter", o.filter) || a.opt("--out", out) ||
        a.opt("--machine", machine))
      continue;
    if (a.opt("--case", name)) { o.cases.push_back(name); continue; }
    if (a.peek().rfind("--benchmark_", 0) == 0) { o.benchmark_args.push_back(a.peek()); ++a.i; continue; }
    a.unknown();
  }
  check_profile(o.profile);
  o.out_dir = out;
  if (machine.empty() && fs::exists(fs::path(out) / "machine.json")) machine = (fs::path(out) / "machine.json").string();
  o.machine = machine;
  warn_if_unoptimized();
  return run_bench(o);
}

int cmd_model(Args a) {
  std::string run, bench, machine, out;
  while (!a.done()) {
    if (a.opt("--run", run) || a.opt("--bench", bench) || a.opt("--machine", machine) || a.opt("--out", out))
      continue;
    a.unknown();
  }
  if (!run.empty()) {
    if (bench.empty()) bench = (fs::path(run) / "bench.json").string();
    if (machine.empty()) machine = (fs::path(run) / "machine.json").string();
    if (out.empty()) out = (fs::path(run) / "model.json").string();
  }
  if (bench.empty()) throw Usage("model needs --run DIR or --bench FILE");
  if (!fs::exists(bench)) throw Error(bench + " not found; run `rooflab bench --out DIR` first");
  if (out.empty()) out = (fs::path(bench).parent_path() / "model.json").string();
  return roofline::model_main(bench, machine, out);
}

std::string python_interpreter() {
  if (const char* p = std::getenv("ROOFLAB_PYTHON")) return p;
  const fs::path venv = fs::path(ROOFLAB_SOURCE_DIR) / ".venv/bin/python";
  return fs::exists(venv) ? venv.string() : "python3";
}

// Replaces this process with `python plots/<script> args...` (the Python side of rooflab).
[[noreturn]] void exec_python(const char* script_name, const std::vector<std::string>& args) {
  const fs::path script = fs::path(ROOFLAB_SOURCE_DIR) / "plots" / script_name;
  const std::string py = python_interpreter();
  std::vector<std::string> argv = {py, script.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  execvp(py.c_str(), cargv.data());
  throw Error("cannot run " + py + " (set ROOFLAB_PYTHON or run ./run_all.sh once to make .venv)");
}

int cmd_info() {
  std::printf("rooflab %s (%s build%s%s)\n", ROOFLAB_VERSION, ROOFLAB_BUILD_TYPE,
              ROOFLAB_SANITIZER[0] ? ", sanitizer " : "", ROOFLAB_SANITIZER);
  std::printf("best ISA on this CPU: %s%s%s\n", std::string(to_string(best_isa())).c_str(),
              isa_cap() ? " (capped by ROOFLAB_MAX_ISA=" : "",
              isa_cap() ? (std::string(to_string(*isa_cap())) + ")").c_str() : "");
  std::printf("families:");
  for (const auto& f : families()) std::printf(" %s", f.name.c_str());
  std::printf("\n");
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return 2;
  }
  const std::string cmd = args[0];
  Args rest({args.begin() + 1, args.end()});
  try {
    if (cmd == "help" || cmd == "--help" || cmd == "-h") { std::fputs(kUsage, stdout); return 0; }
    if (cmd == "--version") { std::printf("rooflab %s\n", ROOFLAB_VERSION); return 0; }
    if (cmd == "list") return cmd_list(rest);
    if (cmd == "characterize") return cmd_characterize(rest);
    if (cmd == "bench") return cmd_bench(rest);
    if (cmd == "model") return cmd_model(rest);
    if (cmd == "report") exec_python("report.py", rest.rest);  // RUN, --baseline, --markdown: report.py parses
    if (cmd == "compare") exec_python("compare.py", rest.rest);
    if (cmd == "claims") exec_python("claims.py", rest.rest);
    if (cmd == "info") return cmd_info();
    if (cmd == "counters") return counters::counters_main(rest.rest);
    if (cmd == "run-case") return counters::run_case_main(rest.rest);
    if (cmd == "sinkhorn") return sinkhorn::solve_main(rest.rest);
    if (cmd == "gpu-characterize") return sinkhorn_cuda::gpu_characterize_main(rest.rest);
    if (cmd == "rtamm") return rtamm::rtamm_main(rest.rest);
    if (cmd == "gemm-knobs") return gemm::knobs::knobs_main(rest.rest);
    if (cmd == "mpi") return cli::mpi_main(rest.rest, argv[0]);
    throw Usage("unknown command '" + cmd + "'");
  } catch (const Usage& e) {
    std::fprintf(stderr, "rooflab %s: %s\n(see `rooflab help`)\n", cmd.c_str(), e.what());
    return 2;
  } catch (const Error& e) {
    std::fprintf(stderr, "rooflab %s: error: %s\n", cmd.c_str(), e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "rooflab %s: unexpected error: %s\n", cmd.c_str(), e.what());
    return 1;
  }
}

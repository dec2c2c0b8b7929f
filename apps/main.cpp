// The `rooflab` command line: one binary, subcommands. Exit codes: 0 success, 1 error
// (message on stderr), 2 usage error, 3 a variant failed verification (reported, not timed),
// 4 a performance regression found by `rooflab compare`.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "apps/commands.hpp"
#include "harness/args.hpp"
#include "harness/bench_driver.hpp"
#include "harness/counters/counters.hpp"
#include "harness/diagnostics.hpp"
#include "harness/error.hpp"
#include "harness/families.hpp"
#include "harness/host_caches.hpp"
#include "harness/isa_choice.hpp"
#include "harness/json_io.hpp"
#include "microbench/characterize.hpp"
#include "roofline/evaluate.hpp"
#include "roofline/mpi_model.hpp"
#include "roofline/predict_on.hpp"

namespace fs = std::filesystem;
using namespace rooflab;

namespace {

const char* kFooter = R"(
profiles: smoke (every family and variant once at tiny sizes, seconds), quick (small sizes, minutes),
          paper (the papers' sizes, hours)
benchmark names: <family>/<variant>[/<isa>]/<dtype>/<dims>[/<key>:<value>]*/threads:<T>
exit codes: 0 ok, 1 error, 2 usage, 3 a variant failed verification, 4 a performance regression (compare)
)";

using args::PathKind;
using args::Spec;
using args::Values;

void warn_if_unoptimized() {
  if (std::string(ROOFLAB_BUILD_TYPE) != "Release" || std::string(ROOFLAB_SANITIZER) != "")
    std::fprintf(stderr,
                 "warning: this rooflab is a %s build%s%s: timings are not representative; "
                 "use the release preset\n",
                 ROOFLAB_BUILD_TYPE, ROOFLAB_SANITIZER[0] ? " with sanitizer " : "", ROOFLAB_SANITIZER);
}

// ---- list ----------------------------------------------------------------------------------
Spec list_spec() {
  return Spec("rooflab list", "the benchmarks of a profile, one name a line (stderr: how many)")
      .profile("which sizes")
      .string("--filter", "REGEX", "only names matching REGEX (searched, as --benchmark_filter)")
      .flag("--verbose", "first every family and variant with its description and ISAs")
      .flag("--json", "every selected case with its model (flops, bytes, traffic, ...) and the families (variants, "
                       "own kernel or baseline, ISAs) as JSON on stdout")
      .path("--machine", PathKind::input_file, "FILE",
            "machine.json whose ISA calibration (`rooflab isa-calibrate`) picks the default ISAs, as `bench --machine`");
}

// `list --json`: the facts a figure needs per case, from the variant rows, and the registry's
// families (docs/json.md#list).
void print_cases_json(const std::vector<Case>& cases, const std::string& profile, const std::string& filter) {
  json out = {{"schema", "rooflab.list/1"}, {"profile", profile}, {"filter", filter}};
  out.update(families_json());
  json rows = json::array();
  for (const auto& c : cases) {
    rows.push_back(case_fields(c));
  }
  out["cases"] = rows;
  std::printf("%s\n", out.dump(1).c_str());
}

int cmd_list(const Values& v) {
  const std::string profile = v.str("--profile"), filter = v.str("--filter");
  if (v.has("--machine")) cli::use_machine_isa_choice(v.str("--machine"));
  if (v.flag("--verbose") && !v.flag("--json")) {
    for (const auto& f : families()) {
      std::printf("%s: %s\n", f.name.c_str(), f.description.c_str());
      for (const auto& var : f.variants) {
        std::string isas;
        for (Isa i : var.isas)
          isas += std::string(isas.empty() ? " [" : ",") + std::string(to_string(i)) +
                  (isa_supported(i) ? "" : " (not on this CPU)");
        if (!isas.empty()) isas += "]";
        std::printf("  %-14s %s%s\n", var.name.c_str(), var.description.c_str(), isas.c_str());
        for (DType dt : var.isas.empty() ? std::vector<DType>{} : var.dtypes) {
          const std::string key = isa_choice_key(f.name, var.name, dt);
          if (const auto it = isa_choices().find(key); it != isa_choices().end())
            std::printf("  %-14s default ISA %s: %s (measured, --machine)\n", "", std::string(to_string(dt)).c_str(),
                        std::string(to_string(it->second)).c_str());
          for (const auto& [k, value] : knob_choices())  // "<key>/<isa>/<knob>"
            if (k.rfind(key + "/", 0) == 0) {
              const std::string rest = k.substr(key.size() + 1), isa = rest.substr(0, rest.find('/'));
              std::printf("  %-14s %s %s at %s: %s (measured, --machine)\n", "", rest.substr(isa.size() + 1).c_str(),
                          std::string(to_string(dt)).c_str(), isa.c_str(), value.c_str());
            }
        }
      }
    }
  }
  auto cases = filter_cases(expand_cases(profile), filter);
  if (v.flag("--json")) {
    if (!cases.empty()) print_cases_json(cases, profile, filter);
  } else {
    for (const auto& c : cases) std::printf("%s\n", c.name().c_str());
  }
  std::fprintf(stderr, "%zu benchmarks in profile %s%s\n", cases.size(), profile.c_str(),
               filter.empty() ? "" : (" matching '" + filter + "'").c_str());
  return cases.empty() ? 1 : 0;
}

// ---- characterize --------------------------------------------------------------------------
Spec characterize_spec() {
  return Spec("rooflab characterize", "measure the machine's ceilings -> DIR/machine.json")
      .profile("how long to measure")
      .path("--out", PathKind::output_dir, "DIR", "where machine.json goes", ".")
      .threads("the most threads the bandwidth / compute curves use (default: every core this process may run on)")
      .flag("--no-likwid", "skip the cross-check against likwid-bench");
}

int cmd_characterize(const Values& v) {
  microbench::CharacterizeOptions o;
  o.profile = v.str("--profile");
  if (v.has("--threads")) o.max_threads = int(v.integer("--threads"));
  o.likwid = !v.flag("--no-likwid");
  const std::string out = v.str("--out");
  ensure_writable_dir(out);
  warn_if_unoptimized();
  o.progress = [](const std::string& line) { std::fprintf(stderr, "[characterize] %s\n", line.c_str()); };
  json m = microbench::characterize(o);
  const fs::path dest = fs::path(out) / "machine.json";
  write_json_atomic(dest, m);
  for (const auto& w : m["caches"].value("warnings", json::array()))
    std::fprintf(stderr, "warning: %s\n", w.get<std::string>().c_str());
  for (const auto& w : m["bandwidth"].value("warnings", json::array()))
    std::fprintf(stderr, "warning: bandwidth %s\n", w.get<std::string>().c_str());
  for (const auto& w : m["likwid_bench"].value("disagreements", json::array()))
    std::fprintf(stderr, "warning: %s\n", w.get<std::string>().c_str());
  std::printf("%s\n", dest.c_str());
  return 0;
}

// ---- bench ---------------------------------------------------------------------------------
Spec bench_spec() {
  return Spec("rooflab bench", "verify, then time benchmarks -> DIR/bench.json")
      .profile("which sizes")
      .string("--filter", "REGEX", "only names matching REGEX")
      .string("--case", "NAME", "this benchmark (a name of the grammar below), added to the selection")
      .repeated()
      .path("--out", PathKind::output_dir, "DIR", "where bench.json goes", ".")
      .path("--machine", PathKind::input_file, "FILE",
            "machine.json: roofline efficiency on the console (not in bench.json); its ISA calibration "
            "(`rooflab isa-calibrate`) picks the profile's default ISAs (default: DIR/machine.json)")
      .hint("; run `rooflab characterize` first (--out DIR)")
      .choice("--calibration", {"auto", "on", "off"},
              "also time each case's in-core calibration shapes (small, cache-resident; marked \"calibration\" in "
              "bench.json, never evaluated) for `rooflab model`'s ECM in-core time; auto: on for the quick and paper "
              "profiles, off for smoke and --case runs",
              "auto")
      .integer("--rounds", "N",
               "time the selection N times, every other round in reverse order; each case keeps its best round "
               "and bench.json records each round's median (a host whose speed changes between rounds shows)",
               1, 9, 1)
      .passthrough("--benchmark_", "Google Benchmark's flags (repetitions, min_time, ...), passed on")
      .epilog("benchmark names: <family>/<variant>[/<isa>]/<dtype>/<dims>[/<key>:<value>]*/threads:<T>\n"
              "exit codes: 0 every case verified and timed, 3 some case failed (reported in bench.json)");
}

int cmd_bench(const Values& v) {
  BenchOptions o;
  o.profile = v.str("--profile");
  o.filter = v.str("--filter");
  o.cases = v.all("--case");
  o.benchmark_args = v.passthrough();
  o.out_dir = v.str("--out");
  o.calibration = v.str("--calibration");
  o.rounds = int(v.integer("--rounds"));
  std::string machine = v.str("--machine");
  if (machine.empty() && fs::exists(o.out_dir / "machine.json")) machine = (o.out_dir / "machine.json").string();
  o.machine = machine;
  if (!machine.empty()) cli::use_machine_isa_choice(machine, false);  // run_bench warns about a bad file
  warn_if_unoptimized();
  return run_bench(o);
}

// ---- model ---------------------------------------------------------------------------------
Spec model_spec() {
  return Spec("rooflab model", "roofline prediction vs measurement -> DIR/model.json (and a table on stdout)")
      .path("--run", PathKind::input_dir, "DIR", "a run directory: DIR/bench.json, DIR/machine.json -> DIR/model.json")
      .hint("; make it with `rooflab bench --out DIR`")
      .path("--bench", PathKind::input_file, "FILE", "bench.json (default: DIR/bench.json)")
      .hint("; run `rooflab bench --out DIR` first")
      .path("--machine", PathKind::input_file, "FILE", "machine.json (default: DIR/machine.json)")
      .hint("; run `rooflab characterize` first (--out DIR)")
      .path("--out", PathKind::output_dir, "DIR",
            "where model.json (with --predict-on: predict_on.json) goes (default: --run DIR or RUN_A, else the "
            "directory of --bench)")
      .path("--mpi-sweep", PathKind::input_dir, "DIR",
            "instead: the MPI core-sharing model of DIR/mpi_sweep.json, stored into it (no other option)")
      .flag("--remodel",
            "re-derive each case's model (traffic, per-level ECM traffic, working set) with this build's family tables "
            "and the cache sizes of the machine that ran it (machine.json caches.reported, else measured) instead of "
            "the ones bench.json recorded: a bench.json of an older build or of another CPU priced by this build's "
            "model, as scripts/perf_gate.sh does with its baseline")
      .hint("; make it with `scripts/mpi_sweep.sh --run DIR`")
      .path("--predict-on", PathKind::input_file, "B.json",
            "instead: every case of RUN_A (--run or the positional) predicted on machine B from B's machine.json: the "
            "model's time from B's ceilings and A's measured time carried by the model's B / A ratio -> "
            "predict_on.json in --out DIR (default RUN_A) and a table")
      .hint("; make it with `rooflab characterize --out DIR` on machine B")
      .path("--measured", PathKind::input_file, "FILE",
            "with --predict-on: B's bench.json, to report each prediction's error per family (default: the "
            "bench.json beside B.json, when there is one)")
      .positional("RUN_A", "with --predict-on: A's run directory (bench.json, machine.json), as --run", false);
}

// The registry's per-variant models (Variant::predictions) for roofline::evaluate, which does not
// know the registry. A case of a family or variant this build lacks has none.
json variant_predictions(const std::string& name, const roofline::Machine& machine) {
  const Case c = parse_case_name(name);
  const Family* fam = find_family(c.family);
  const Variant* var = fam ? fam->find(c.variant) : nullptr;
  if (!var || !var->predictions) return json::object();
  return var->predictions(c, machine);
}

// `model --predict-on B.json RUN_A` (roofline/predict_on.hpp).
int cmd_predict_on(const Values& v) {
  if (v.has("--bench") || v.has("--machine"))
    throw args::UsageError("--predict-on reads RUN_A/bench.json and RUN_A/machine.json: give RUN_A, not --bench / --machine");
  std::string run = v.str("--run");
  if (!v.positionals().empty()) {
    if (!run.empty() && run != v.positional(0))
      throw args::UsageError("two run directories given: " + v.positional(0) + " and --run " + run);
    run = v.positional(0);
  }
  if (v.positionals().size() > 1) throw args::UsageError("one RUN_A only, got " + std::to_string(v.positionals().size()));
  if (run.empty()) throw args::UsageError("--predict-on B.json needs A's run directory (RUN_A, or --run DIR)");
  if (!fs::is_directory(run)) throw Error("run directory " + run + " not found (make it with ./run_all.sh --out DIR)");
  roofline::PredictOnInput in;
  in.bench_a = fs::path(run) / "bench.json";
  in.machine_a = fs::path(run) / "machine.json";
  in.machine_b = v.str("--predict-on");
  if (v.has("--measured")) {
    in.bench_b = v.str("--measured");
  } else if (const fs::path beside = in.machine_b.parent_path() / "bench.json"; fs::is_regular_file(beside)) {
    in.bench_b = beside;
  }
  const std::string out = v.has("--out") ? v.str("--out") : run;
  ensure_writable_dir(out);
  return roofline::predict_on_main(in, fs::path(out) / "predict_on.json", variant_predictions);
}

int cmd_model(const Values& v) {
  std::string run = v.str("--run"), bench = v.str("--bench"), machine = v.str("--machine"), out = v.str("--out");
  if (v.has("--mpi-sweep")) {
    if (!run.empty() || !bench.empty() || !machine.empty() || !out.empty() || v.has("--predict-on") ||
        v.has("--measured") || !v.positionals().empty())
      throw args::UsageError("--mpi-sweep DIR takes no other option (it reads and rewrites DIR/mpi_sweep.json)");
    return roofline::mpi::mpi_sweep_main(v.str("--mpi-sweep"));
  }
  if (v.has("--predict-on")) {
    if (v.flag("--remodel")) throw args::UsageError("--remodel goes with --run DIR or --bench FILE, not --predict-on");
    return cmd_predict_on(v);
  }
  if (v.has("--measured") || !v.positionals().empty())
    throw args::UsageError(v.has("--measured") ? "--measured goes with --predict-on B.json"
                                               : "a run directory is given with --run DIR (RUN_A: with --predict-on)");
  if (!run.empty()) {
    if (bench.empty()) bench = (fs::path(run) / "bench.json").string();
    if (machine.empty()) machine = (fs::path(run) / "machine.json").string();
    if (out.empty()) out = run;
  }
  if (bench.empty()) throw args::UsageError("needs --run DIR or --bench FILE");
  if (!fs::exists(bench)) throw Error(bench + " not found; run `rooflab bench --out DIR` first");
  if (out.empty()) out = fs::path(bench).parent_path().string();
  if (out.empty()) out = ".";
  ensure_writable_dir(out);
  if (!v.flag("--remodel")) return roofline::model_main(bench, machine, fs::path(out) / "model.json", variant_predictions);
  // The family tables read the caches through host_cache_sizes(): the baseline's machine's, not this host's.
  if (machine.empty() || !fs::exists(machine))
    throw Error("--remodel needs the machine.json of the machine that ran " + bench +
                " (its cache sizes shape the model): give --machine FILE or --run DIR");
  const auto sizes = machine_cache_sizes(read_machine_json(machine), machine);
  if (!sizes) throw Error(machine + " has no \"caches\" section: --remodel cannot know the cache sizes of the machine that ran " + bench);
  const ScopedHostCaches scope(*sizes);
  const roofline::Remodel remodel = [](const std::string& name) {
    const Case c = parse_case_name(name);
    validate_case(c);
    return case_fields(c);
  };
  return roofline::model_main(bench, machine, fs::path(out) / "model.json", variant_predictions, remodel);
}

// ---- the Python side -----------------------------------------------------------------------
std::string python_interpreter() {
  if (const char* p = std::getenv("ROOFLAB_PYTHON")) return p;
  const fs::path venv = fs::path(ROOFLAB_SOURCE_DIR) / ".venv/bin/python";
  return fs::exists(venv) ? venv.string() : "python3";
}

// Replaces this process with `python plots/<script> args...`; the script parses its own
// arguments (argparse: the same exit codes, --help).
[[noreturn]] void exec_python(const char* script_name, const std::vector<std::string>& args) {
  const fs::path script = fs::path(ROOFLAB_SOURCE_DIR) / "plots" / script_name;
  const std::string py = python_interpreter();
  // fleet runs rooflab again (the nodes' batch script, collect's history add): this very binary.
  std::error_code ec;
  if (const fs::path self = fs::read_symlink("/proc/self/exe", ec); !ec) setenv("ROOFLAB_EXE", self.c_str(), 1);
  std::vector<std::string> argv = {py, script.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<char*> cargv;
  for (auto& s : argv) cargv.push_back(s.data());
  cargv.push_back(nullptr);
  std::fflush(nullptr);
  execvp(py.c_str(), cargv.data());
  throw Error("cannot run " + py + " (set ROOFLAB_PYTHON or run ./run_all.sh once to make .venv)");
}

// ---- info ----------------------------------------------------------------------------------
Spec info_spec() { return Spec("rooflab info", "build and CPU facts"); }

int cmd_info(const Values&) {
  std::printf("rooflab %s (%s build%s%s)\n", ROOFLAB_VERSION, ROOFLAB_BUILD_TYPE,
              ROOFLAB_SANITIZER[0] ? ", sanitizer " : "", ROOFLAB_SANITIZER);
  std::printf("best ISA on this CPU: %s%s%s\n", std::string(to_string(best_isa())).c_str(),
              isa_cap() ? " (capped by ROOFLAB_MAX_ISA=" : "",
              isa_cap() ? (std::string(to_string(*isa_cap())) + ")").c_str() : "");
  std::printf("cpu signature: %s\n", cpu_signature().c_str());  // what machine.json's host.cpu_signature is checked against
  // What characterize measures on and bench's threads run on (taskset, srun's binding, a cpuset).
  std::printf("cpus of this process: %s (%ld online)\n", diag::cpu_list(diag::process_cpus()).c_str(),
              sysconf(_SC_NPROCESSORS_ONLN));
  std::printf("families:");
  for (const auto& f : families()) std::printf(" %s", f.name.c_str());
  std::printf("\n");
  return 0;
}

const char* g_argv0 = "rooflab";

// The command table: `rooflab help` and every `--help` are generated from it.
std::vector<args::Command> command_table() {
  using Raw = std::function<int(const std::vector<std::string>&)>;
  auto raw = [](std::string name, std::string summary, Raw run, bool hidden = false, bool timed = false) {
    return args::Command{std::move(name), std::move(summary), nullptr, nullptr, std::move(run), hidden, timed};
  };
  auto python = [](const char* script) -> Raw {
    return [script](const std::vector<std::string>& a) -> int { exec_python(script, a); };
  };
  return {
      {"list", "list the benchmarks of a profile (--json: with their model)", list_spec, cmd_list, nullptr, false},
      {"characterize", "measure the machine -> DIR/machine.json", characterize_spec, cmd_characterize, nullptr, false,
       true},
      {"bench", "verify + time benchmarks -> DIR/bench.json", bench_spec, cmd_bench, nullptr, false, true},
      {"isa-calibrate", "time each ISA of the per-ISA variants -> machine.isa_choice.json (the default ISAs)",
       cli::isa_calibrate_spec, cli::isa_calibrate_run, nullptr, false, true},
      {"model", "roofline prediction vs measurement -> DIR/model.json", model_spec, cmd_model, nullptr, false},
      {"counters", "cache-miss counters -> DIR/counters.json", counters::counters_spec, counters::counters_run, nullptr,
       false},
      {"run-case", "verify and count one case (what `counters` runs under valgrind)", counters::run_case_spec,
       counters::run_case_run, nullptr, true},
      raw("report", "HTML report + Markdown summary of a run", python("report.py")),
      raw("claims", "the papers' claims vs a run -> DIR/claims.{json,md}", python("claims.py")),
      raw("compare", "regression gate: BASE vs NEW bench.json (exit 4 when significantly slower)", python("compare.py")),
      raw("history", "results history: add/import runs to SQLite or PostgreSQL, list, check for change points",
          python("history.py")),
      raw("fleet", "Slurm: characterize + bench + model on N nodes (submit), follow (status), gather (collect)",
          python("fleet.py")),
      {"sinkhorn", "solve (unbalanced) OT to a tolerance -> JSON", sinkhorn::solve_spec, sinkhorn::solve_run, nullptr,
       false},
      raw("rtamm", "RTAMM pool / unit costs / calibration / adaptive-vs-oracle evaluation", rtamm::rtamm_main, false, true),
      raw("gemm-knobs", "sfc_ca's k_layers / kbf: autotune, analytic model, nearest neighbour", gemm::knobs::knobs_main, false,
          true),
      raw("mpi", "distributed Sinkhorn: mpiexec -n P rooflab_mpi ...",
          [](const std::vector<std::string>& a) { return cli::mpi_main(a, g_argv0); }),
      {"gpu-characterize", "CUDA device bandwidth + peak FLOP/s -> DIR/machine.gpu.json (machine.json's \"gpu\" section)",
       sinkhorn_cuda::gpu_characterize_spec, sinkhorn_cuda::gpu_characterize_run, nullptr, false},
      {"info", "build and CPU facts", info_spec, cmd_info, nullptr, false},
  };
}
}  // namespace

int main(int argc, char** argv) {
  // The commands that time kernels run OpenMP with a bounded spin (may re-execute this program).
  if (argc > 1)
    for (const auto& c : command_table())
      if (c.timed && c.name == argv[1]) rooflab::diag::apply_timed_omp_policy(argv);
  g_argv0 = argv[0];
  const std::vector<std::string> a(argv + 1, argv + argc);
  if (a.size() == 1 && a[0] == "--version") {
    std::printf("rooflab %s\n", ROOFLAB_VERSION);
    return 0;
  }
  return args::dispatch("rooflab", "benchmarks, machine ceilings and roofline models of the papers' kernels",
                        command_table(), a, kFooter);
}

// sinkhorn_cuda_family_check: the sinkhorn_cuda family through the registry on a device, for a
// lent GPU machine that lacks Google Benchmark and the other families' libraries (built by
// device_build.sh; families_cuda_only.cpp supplies families() with this family only).
// What `rooflab gpu-characterize` + `rooflab bench` + `rooflab model` do, minus Google
// Benchmark: merges the "gpu" section into RUN/machine.json, then for every case of the
// profile (and the extra --case names) validate_case, make, verify against the reference,
// times run() (median of --reps after two warm-ups), and writes RUN/bench.json (the
// rooflab.bench/1 fields the model reads) and RUN/model.json (roofline::evaluate).
// Exit 0 all verified, 3 a verification failed, 1 an error, 77 no device.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/commands.hpp"
#include "harness/args.hpp"
#include "harness/error.hpp"
#include "harness/families.hpp"
#include "harness/json_io.hpp"
#include "harness/measure.hpp"
#include "kernels/sinkhorn/cuda/sinkhorn_cuda.hpp"
#include "roofline/evaluate.hpp"

using namespace rooflab;
using json = nlohmann::json;

namespace {
int run_check(const args::Values& v) {
  const std::filesystem::path run = v.positional(0);
  const std::string profile = v.str("--profile");
  const int reps = int(v.integer("--reps"));
  const std::vector<std::string> names = v.all("--case");
  if (const std::string why = sinkhorn_cuda::unavailable_reason(); !why.empty()) {
    std::printf("skipped: %s\n", why.c_str());
    return 77;
  }
  int rc = 0;
  try {
    if (int r = sinkhorn_cuda::gpu_characterize_main({"--out", run.string()}); r != 0) return r;
    std::vector<Case> cases = expand_cases(profile);
    for (const auto& n : names) cases.push_back(parse_case_name(n));
    json benchmarks = json::array();
    for (size_t k = 0; k < cases.size(); ++k) {
      const Case& c = cases[k];
      json f = case_fields(c);
      json e = {{"name", c.name()}, {"run_name", c.name()}, {"run_type", "iteration"}, {"time_unit", "ms"}};
      try {
        validate_case(c);
        auto inst = variant_of(c).make(c);
        const Verification v = inst->verify();
        f["verification"] = {{"ok", v.ok}, {"max_err", v.max_err}, {"tol", v.tol}, {"detail", v.detail}};
        if (!v.ok) throw Error("verification failed: " + v.detail);
        measure::Policy pol;  // two warm-ups, then --reps single runs (the device syncs in run())
        pol.warmup = 2, pol.repetitions = reps, pol.runs_per_sample = 1, pol.quiet.mark = false;
        std::vector<double> t = measure::measure([&] { inst->run(); }, pol).seconds();
        for (size_t r = 0; r < t.size(); ++r) {
          json it = e;
          it["repetition_index"] = r;
          it["real_time"] = t[r] * 1e3;
          it["rooflab"] = f;
          benchmarks.push_back(it);
        }
        std::printf("[%zu/%zu] %s: ok (max err %.3g, tol %.3g), median %.4f ms\n", k + 1, cases.size(), c.name().c_str(),
                    v.max_err, v.tol, measure::stats(t).median * 1e3);
      } catch (const std::exception& ex) {
        rc = std::string(ex.what()).rfind("verification failed", 0) == 0 ? 3 : (rc ? rc : 1);
        e["error_occurred"] = true;
        e["error_message"] = ex.what();
        e["rooflab"] = f;
        benchmarks.push_back(e);
        std::printf("[%zu/%zu] %s: FAILED: %s\n", k + 1, cases.size(), c.name().c_str(), ex.what());
      }
    }
    const json bench = {{"schema", "rooflab.bench/1"}, {"profile", profile}, {"machine", "machine.json"},
                        {"note", "written by sinkhorn_cuda_family_check (registry path, no Google Benchmark)"},
                        {"context", json::object()}, {"benchmarks", benchmarks}};
    write_json_atomic(run / "bench.json", bench);
    roofline::model_main(run / "bench.json", run / "machine.json", run / "model.json");
  } catch (const std::exception& ex) {
    std::printf("error: %s\n", ex.what());
    return 1;
  }
  return rc;
}
}  // namespace

int main(int argc, char** argv) {
  const args::Spec spec =
      args::Spec("sinkhorn_cuda_family_check", "gpu-characterize + bench + model of the sinkhorn_cuda family "
                                               "without Google Benchmark; exit 77 without a device")
          .positional("RUN_DIR", "holds machine.json; gets machine.gpu.json, bench.json, model.json")
          .profile("the cases of this profile")
          .integer("--reps", "K", "timed runs per case (after two warm-ups)", 1, 10000, 20)
          .string("--case", "NAME", "a further case by name").repeated();
  try {
    return args::run_single(spec, {argv + 1, argv + argc}, run_check);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sinkhorn_cuda_family_check: error: %s\n", e.what());
    return 1;
  }
}

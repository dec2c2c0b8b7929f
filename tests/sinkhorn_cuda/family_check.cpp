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
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "apps/commands.hpp"
#include "harness/error.hpp"
#include "harness/families.hpp"
#include "harness/json_io.hpp"
#include "kernels/sinkhorn/cuda/sinkhorn_cuda.hpp"
#include "roofline/evaluate.hpp"

using namespace rooflab;
using json = nlohmann::json;

namespace {
json fields_of(const Case& c) {
  const Model m = variant_of(c).model(c);
  json params = json::object();
  for (const auto& [k, v] : c.params) params[k] = v;
  json traffic = json::array();
  for (const auto& t : m.traffic) traffic.push_back({{"bytes", t.bytes}, {"kernel", t.kernel}});
  return {{"name", c.name()}, {"family", c.family}, {"variant", c.variant}, {"isa", nullptr},
          {"dtype", std::string(to_string(c.dtype))}, {"dims", c.dims}, {"params", params}, {"threads", c.threads},
          {"flops", m.flops}, {"bytes", m.bytes()}, {"working_set", m.working_set},
          {"intensity", m.flops / m.bytes()}, {"compute_ceiling", m.compute_ceiling}, {"model_note", m.note},
          {"traffic", traffic}};
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s RUN_DIR [--profile quick|paper] [--reps K] [--case NAME]...\n", argv[0]);
    return 2;
  }
  const std::filesystem::path run = argv[1];
  std::string profile = "quick";
  int reps = 20;
  std::vector<std::string> names;
  for (int i = 2; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--profile")) profile = argv[i + 1];
    else if (!std::strcmp(argv[i], "--reps")) reps = std::stoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--case")) names.push_back(argv[i + 1]);
  }
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
      json f = fields_of(c);
      json e = {{"name", c.name()}, {"run_name", c.name()}, {"run_type", "iteration"}, {"time_unit", "ms"}};
      try {
        validate_case(c);
        auto inst = variant_of(c).make(c);
        const Verification v = inst->verify();
        f["verification"] = {{"ok", v.ok}, {"max_err", v.max_err}, {"tol", v.tol}, {"detail", v.detail}};
        if (!v.ok) throw Error("verification failed: " + v.detail);
        inst->run(), inst->run();
        std::vector<double> t;
        for (int r = 0; r < reps; ++r) {
          const auto t0 = std::chrono::steady_clock::now();
          inst->run();
          t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        for (size_t r = 0; r < t.size(); ++r) {
          json it = e;
          it["repetition_index"] = r;
          it["real_time"] = t[r] * 1e3;
          it["rooflab"] = f;
          benchmarks.push_back(it);
        }
        std::sort(t.begin(), t.end());
        std::printf("[%zu/%zu] %s: ok (max err %.3g, tol %.3g), median %.4f ms\n", k + 1, cases.size(), c.name().c_str(),
                    v.max_err, v.tol, t[t.size() / 2] * 1e3);
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

// The PAPI back end: preset data-cache-miss and cycle events of the calling thread.
// PAPI can initialize and even accept events on a machine whose counters are not exposed
// (a VM without a virtual PMU) and then read 0; probe() therefore calibrates on a loop that
// must miss in L1 and reports a reading of 0 as unavailable rather than as a measurement.
#include <fstream>
#include <vector>

#include "harness/counters/counters.hpp"
#include "harness/error.hpp"

#ifdef ROOFLAB_HAVE_PAPI
#include <papi.h>
#endif

namespace rooflab::counters {
namespace {

[[maybe_unused]] std::string perf_paranoid_note() {  // used only with PAPI
  std::ifstream in("/proc/sys/kernel/perf_event_paranoid");
  std::string v;
  if (!(in >> v)) return "";
  return "; /proc/sys/kernel/perf_event_paranoid = " + v;
}

class PapiBackend final : public Backend {
 public:
  std::string name() const override { return "papi"; }

#ifndef ROOFLAB_HAVE_PAPI
  Availability probe() override {
    return {false, "rooflab was built without PAPI (apt-get install libpapi-dev and reconfigure "
                   "with -DROOFLAB_WITH_PAPI=ON)"};
  }
  void start() override { throw Error("PAPI back end unavailable"); }
  std::map<std::string, double> stop() override { throw Error("PAPI back end unavailable"); }
#else
  ~PapiBackend() override {
    if (eventset_ != PAPI_NULL) {
      PAPI_cleanup_eventset(eventset_);
      PAPI_destroy_eventset(&eventset_);
    }
  }

  Availability probe() override {
    if (!probed_) {
      result_ = do_probe();
      probed_ = true;
    }
    return result_;
  }

  std::map<std::string, std::string> config() const override {
    std::string ev;
    for (const auto& n : names_) ev += (ev.empty() ? "" : ",") + n;
    std::map<std::string, std::string> c = {
        {"events", ev},
        {"scope", "the calling thread (OpenMP worker threads of threads:T>1 cases are not counted)"},
        {"calibration", calibration_}};
    if (!skipped_.empty()) c["not_counted"] = skipped_;
    return c;
  }

  void start() override {
    if (int r = PAPI_start(eventset_); r != PAPI_OK)
      throw Error(std::string("PAPI_start failed: ") + PAPI_strerror(r));
  }

  std::map<std::string, double> stop() override {
    std::vector<long long> v(names_.size(), 0);
    if (int r = PAPI_stop(eventset_, v.data()); r != PAPI_OK)
      throw Error(std::string("PAPI_stop failed: ") + PAPI_strerror(r));
    std::map<std::string, double> out;
    for (size_t i = 0; i < names_.size(); ++i) out[names_[i]] = double(v[i]);
    return out;
  }

 private:
  Availability do_probe() {
    const int ver = PAPI_is_initialized() ? PAPI_VER_CURRENT : PAPI_library_init(PAPI_VER_CURRENT);
    if (ver != PAPI_VER_CURRENT)
      return {false, ver > 0 ? "PAPI library version differs from the headers rooflab was built with"
                             : std::string("PAPI_library_init failed: ") + PAPI_strerror(ver)};
    if (int r = PAPI_create_eventset(&eventset_); r != PAPI_OK)
      return {false, std::string("PAPI_create_eventset failed: ") + PAPI_strerror(r)};
    const std::pair<int, const char*> wanted[] = {{PAPI_L1_DCM, "PAPI_L1_DCM"},
                                                  {PAPI_L2_DCM, "PAPI_L2_DCM"},
                                                  {PAPI_L3_DCM, "PAPI_L3_DCM"},
                                                  {PAPI_TOT_CYC, "PAPI_TOT_CYC"},
                                                  {PAPI_TOT_INS, "PAPI_TOT_INS"}};
    for (const auto& [code, name] : wanted) {
      int r = PAPI_query_event(code);
      if (r == PAPI_OK) r = PAPI_add_event(eventset_, code);
      if (r == PAPI_OK) {
        names_.push_back(name);
      } else {
        skipped_ += (skipped_.empty() ? "" : "; ") + std::string(name) + ": " + PAPI_strerror(r);
      }
    }
    if (names_.empty())
      return {false, "no PAPI preset event can be counted (" + skipped_ +
                         "): no hardware PMU exposed (e.g. in a VM) or access denied" +
                         perf_paranoid_note()};
    // Calibration: a sweep over 8 MiB, four times, must miss in L1 and take cycles.
    std::vector<double> buf(size_t(1) << 20, 1.0);
    start();
    double sum = 0;
    for (int rep = 0; rep < 4; ++rep)
      for (size_t i = 0; i < buf.size(); i += 8) sum += buf[i];
    volatile double sink = sum;
    (void)sink;
    const auto v = stop();
    double total = 0;
    calibration_.clear();
    for (const auto& [n, x] : v) {
      total += x;
      calibration_ += (calibration_.empty() ? "" : ", ") + n + "=" + std::to_string((long long)x);
    }
    calibration_ = "4 sweeps of 8 MiB: " + calibration_;
    if (total == 0)
      return {false, "PAPI counters read 0 (no hardware PMU exposed, e.g. in a VM)" + perf_paranoid_note()};
    return {true, ""};
  }

  bool probed_ = false;
  Availability result_;
  int eventset_ = PAPI_NULL;
  std::vector<std::string> names_;
  std::string skipped_, calibration_;
#endif
};
}  // namespace

std::unique_ptr<Backend> make_papi_backend() { return std::make_unique<PapiBackend>(); }

std::unique_ptr<Backend> make_backend(const std::string& name) {
  if (name == "papi") return make_papi_backend();
  if (name == "likwid") return make_likwid_backend();
  throw Error("unknown in-process counter back end '" + name + "' (papi or likwid)");
}
}  // namespace rooflab::counters

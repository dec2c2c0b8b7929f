// The likwid marker-API back end. The marker API counts only when the program runs under
// `likwid-perfctr -m -g GROUP`; otherwise it reports unavailable with the command to use.
#include <cstdlib>
#include <vector>

#include "harness/counters/counters.hpp"
#include "harness/counters/likwid_session.hpp"
#include "harness/error.hpp"

#ifdef ROOFLAB_HAVE_LIKWID
#include <likwid-marker.h>
#include <likwid.h>
#endif

namespace rooflab::counters {
namespace detail {

bool likwid_marker_env() {
  for (const char* v : {"LIKWID_MODE", "LIKWID_FILEPATH", "LIKWID_EVENTS"}) {
    const char* s = std::getenv(v);
    if (!s || !*s) return false;
  }
  return true;
}

#ifdef ROOFLAB_HAVE_LIKWID
namespace {
struct Session {
  bool tried = false, initialized = false;
  std::string region;
  std::vector<double> before, after;
};
Session& session() {
  static Session s;
  return s;
}

bool ensure_init() {
  Session& s = session();
  if (s.tried) return s.initialized;
  if (!likwid_marker_env()) return false;
  s.tried = true;
  LIKWID_MARKER_INIT;
  // markerInit reports failures (e.g. no MSR access) only on stderr; registering a region
  // fails afterwards when it did not initialize.
  s.initialized = likwid_markerRegisterRegion("rooflab") == 0;
  if (s.initialized) std::atexit([] { LIKWID_MARKER_CLOSE; });
  return s.initialized;
}

// Accumulated values of a region (likwid sums over all start/stop pairs of a tag).
std::vector<double> read_region(const std::string& region) {
  int n = 256;
  std::vector<double> ev(size_t(n), 0.0);
  double time = 0;
  int count = 0;
  LIKWID_MARKER_GET(region.c_str(), &n, ev.data(), &time, &count);
  ev.resize(size_t(n > 0 ? n : 0));
  return ev;
}
}  // namespace

void likwid_region_start(const std::string& region) {
  if (!ensure_init()) return;
  Session& s = session();
  s.region = region;
  s.before = read_region(region);
  LIKWID_MARKER_START(region.c_str());
}

void likwid_region_stop(const std::string& region) {
  if (!session().initialized) return;
  LIKWID_MARKER_STOP(region.c_str());
  session().after = read_region(region);
}

bool likwid_initialized() { return ensure_init(); }

std::map<std::string, double> likwid_last_region() {
  const Session& s = session();
  if (s.after.empty()) throw Error("likwid returned no events for region " + s.region);
  std::map<std::string, double> out;
  const int group = perfmon_getIdOfActiveGroup();
  for (size_t i = 0; i < s.after.size(); ++i) {
    const char* n = perfmon_getEventName(group, int(i));
    const std::string name = n ? n : "event" + std::to_string(i);
    out[name] = s.after[i] - (i < s.before.size() ? s.before[i] : 0.0);
  }
  return out;
}
#else
bool likwid_initialized() { return false; }
void likwid_region_start(const std::string&) {}
void likwid_region_stop(const std::string&) {}
std::map<std::string, double> likwid_last_region() { return {}; }
#endif
}  // namespace detail

namespace {
class LikwidBackend final : public Backend {
 public:
  std::string name() const override { return "likwid"; }

  Availability probe() override {
#ifndef ROOFLAB_HAVE_LIKWID
    return {false, "rooflab was built without likwid (install likwid, i.e. likwid-marker.h and "
                   "liblikwid, and reconfigure with -DROOFLAB_WITH_LIKWID=ON)"};
#else
    if (!detail::likwid_marker_env())
      return {false,
              "the likwid marker API counts only under likwid-perfctr with -m (LIKWID_MODE, "
              "LIKWID_FILEPATH, LIKWID_EVENTS are not set); run e.g. `likwid-perfctr -C 0 -m -g "
              "L2CACHE rooflab counters --backend likwid ...` (groups: likwid-perfctr -a)"};
    if (!detail::likwid_initialized())
      return {false, "likwid_markerInit failed under likwid-perfctr (see likwid's message on "
                     "stderr, e.g. 'Cannot get access to MSRs': no hardware counters in a VM, or "
                     "the msr module / access daemon is missing)"};
    return {true, ""};
#endif
  }

  std::map<std::string, std::string> config() const override {
    const char* events = std::getenv("LIKWID_EVENTS");
    return {{"events", events ? events : ""},
            {"scope", "the calling thread's core (likwid-perfctr -C pins it); OpenMP worker "
                      "threads of threads:T>1 cases are not counted"}};
  }

  // The marker region itself is started and stopped by region_begin/region_end.
  void start() override {}
  std::map<std::string, double> stop() override { return detail::likwid_last_region(); }
};
}  // namespace

std::unique_ptr<Backend> make_likwid_backend() { return std::make_unique<LikwidBackend>(); }
}  // namespace rooflab::counters

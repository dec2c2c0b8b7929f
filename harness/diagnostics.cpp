#include "harness/diagnostics.hpp"

#include "harness/measure.hpp"

#include <cpuid.h>
#include <sched.h>
#ifdef _OPENMP  // not in rooflab_smpi's build (apps/smpi)
#include <omp.h>
#endif
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <sstream>
#include <thread>
#include <vector>

namespace rooflab::diag {
namespace {
std::string read_word(const char* path) {
  std::ifstream in(path);
  std::string w;
  in >> w;
  return w;
}
std::string fmt(double v, int prec = 2) {
  std::ostringstream os;
  os.precision(prec);
  os << std::fixed << v;
  return os.str();
}
}  // namespace

std::optional<double> load_average() {
  std::ifstream in("/proc/loadavg");
  double l;
  if (in >> l) return l;
  return std::nullopt;
}

int procs_running() { return proc_stat().procs_running; }

ProcStat proc_stat() {
  ProcStat st;
  std::ifstream in("/proc/stat");
  std::string key;
  while (in >> key) {
    if (key == "cpu") {  // user nice system idle iowait irq softirq steal ...
      int64_t v[8];
      int n = 0;
      while (n < 8 && in >> v[n]) ++n;
      if (n == 8) st.steal_ticks = v[7];
    } else if (key.rfind("cpu", 0) == 0) {
      ++st.cpus;
    } else if (key == "procs_running") {
      long v = 0;
      if (in >> v) st.procs_running = int(v);
      break;  // after the cpu lines: nothing else needed
    }
    in.clear();
    in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');  // the intr line is long
  }
  return st;
}

double clock_tick_s() {
  static const double tick = [] {
    const long hz = sysconf(_SC_CLK_TCK);
    return hz > 0 ? 1.0 / double(hz) : 0.01;
  }();
  return tick;
}

int64_t process_cpu_ns() {
  timespec ts{};
  if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return -1;
  return int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

namespace {
// Sums `per_thread` over this process's threads (/proc/self/task/<tid>/<file>; a thread that
// ended meanwhile is simply not counted); -1 when no thread's file could be read.
int64_t sum_over_threads(const char* file, const std::function<bool(std::ifstream&, int64_t&)>& per_thread) {
  std::error_code ec;
  int64_t sum = 0;
  bool any = false;
  for (const auto& e : std::filesystem::directory_iterator("/proc/self/task", ec)) {
    std::ifstream in(e.path() / file);
    int64_t v = 0;
    if (per_thread(in, v)) sum += v, any = true;
  }
  return any ? sum : -1;
}
}  // namespace

int64_t runqueue_wait_ns() {
  return sum_over_threads("schedstat", [](std::ifstream& in, int64_t& waiting) {
    int64_t on_cpu = 0;
    return bool(in >> on_cpu >> waiting);
  });
}

int own_running_threads() {
  return int(sum_over_threads("stat", [](std::ifstream& in, int64_t& running) {
    std::string line;
    if (!std::getline(in, line)) return false;
    const size_t p = line.rfind(')');  // the command name may hold spaces and parentheses
    if (p == std::string::npos || p + 2 >= line.size()) return false;
    running = line[p + 2] == 'R';
    return true;
  }));
}

namespace {
constexpr const char* kPolicyMarker = "ROOFLAB_OMP_POLICY";  // set when rooflab chose the policy
std::string g_policy_note;

// With OMP_PROC_BIND (or OMP_PLACES) set, libgomp binds the initial thread to the first place
// when it loads; an exec'd process inherits that one-place mask, and its libgomp then sees one
// CPU and runs every thread there (measured: 2-thread GEMM at 1-thread speed). The places'
// union is the mask libgomp started from: hand it back before exec.
void widen_to_omp_places() {
#ifdef _OPENMP
  if (omp_get_num_places() <= 0) return;  // no binding: the mask is the one the process started with
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int id : process_cpus())
    if (id < CPU_SETSIZE) CPU_SET(id, &set);
  if (CPU_COUNT(&set) > 0) sched_setaffinity(0, sizeof set, &set);
#endif
}

// An environment variable as JSON: its value, or null when unset (for the records below).
nlohmann::json env_json(const char* name) {
  const char* v = std::getenv(name);
  return v ? nlohmann::json(v) : nlohmann::json(nullptr);
}
}  // namespace

void apply_timed_omp_policy(char** argv) {
  if (std::getenv(kPolicyMarker)) return;  // the re-executed process (or a child of one): done
  if (std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT")) return;  // the user's choice
  setenv("GOMP_SPINCOUNT", kTimedSpinCount, 1);
  setenv(kPolicyMarker, "1", 1);
  std::fflush(nullptr);
  widen_to_omp_places();
  execv("/proc/self/exe", argv);
  const std::string why = std::strerror(errno);
  unsetenv("GOMP_SPINCOUNT");
  unsetenv(kPolicyMarker);
  g_policy_note = "re-execution with GOMP_SPINCOUNT=" + std::string(kTimedSpinCount) + " failed: " + why;
}

nlohmann::json omp_wait_policy() {
  const nlohmann::json wait = env_json("OMP_WAIT_POLICY"), spin = env_json("GOMP_SPINCOUNT");
  std::string by = std::getenv(kPolicyMarker) ? "rooflab" : (wait.is_null() && spin.is_null()) ? "libgomp default" : "user";
  return {{"OMP_WAIT_POLICY", wait}, {"GOMP_SPINCOUNT", spin}, {"set_by", by}, {"note", g_policy_note}};
}

std::vector<int> process_cpus() {
  std::vector<int> ids;
#ifdef _OPENMP
  for (int p = 0, places = omp_get_num_places(); p < places; ++p) {
    std::vector<int> place(size_t(std::max(0, omp_get_place_num_procs(p))));
    omp_get_place_proc_ids(p, place.data());
    for (int id : place)
      if (id >= 0) ids.push_back(id);
  }
#endif
  cpu_set_t set;
  if (ids.empty() && sched_getaffinity(0, sizeof set, &set) == 0)
    for (int id = 0; id < CPU_SETSIZE; ++id)
      if (CPU_ISSET(id, &set)) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

std::string cpu_list(const std::vector<int>& cpus) {
  std::string s;
  for (int id : cpus) {
    if (!s.empty()) s += ',';
    s += std::to_string(id);
  }
  return s;
}

nlohmann::json omp_affinity() {
#ifdef _OPENMP
  const int procs = omp_get_num_procs(), places = omp_get_num_places();
#else
  cpu_set_t set;
  const int procs = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 0, places = 0;
#endif
  return {{"OMP_PROC_BIND", env_json("OMP_PROC_BIND")}, {"OMP_PLACES", env_json("OMP_PLACES")},
          {"procs", procs}, {"places", places}};
}

QuietBudget::QuietBudget(double total_s, std::function<int()> running)
    : total_s_(total_s), running_(running ? std::move(running) : std::function<int()>(procs_running)) {}

void QuietBudget::reset(double total_s) {
  total_s_ = total_s;
  waited_s_ = 0;
  exhausted_ = false;
  waits_ = not_quiet_ = 0;
}

bool QuietBudget::wait(int threads, Clock::time_point deadline) {
  ++waits_;
  const auto t0 = Clock::now();
  // The budget's end, when it ends before the caller's deadline.
  if (total_s_ >= 0) {
    const auto end = t0 + std::chrono::duration_cast<Clock::duration>(
                              std::chrono::duration<double>(std::max(0.0, total_s_ - waited_s_)));
    deadline = std::min(deadline, end);
  }
  bool quiet = false;
  for (;;) {
    const int r = running_();
    if (r < 0 || r <= threads) {
      quiet = true;
      break;
    }
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  waited_s_ += std::chrono::duration<double>(Clock::now() - t0).count();
  not_quiet_ += !quiet;
  if (!quiet && total_s_ >= 0 && waited_s_ >= total_s_ && !exhausted_) {
    exhausted_ = true;
    std::fprintf(stderr,
                 "warning: waited %.1f s in all for a quiet machine (this command's budget, --quiet-budget); "
                 "measuring on without waiting: the figures are taken under load (\"quiet_budget\": "
                 "{\"exhausted\": true} in the output)\n",
                 waited_s_);
  }
  return quiet;
}

bool QuietBudget::wait(int threads, double max_s) {
  return wait(threads, Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(std::max(0.0, max_s))));
}

nlohmann::json QuietBudget::to_json() const {
  return {{"budget_s", total_s_ >= 0 ? nlohmann::json(total_s_) : nlohmann::json(nullptr)},
          {"waited_s", waited_s_},
          {"waits", waits_},
          {"waits_not_quiet", not_quiet_},
          {"exhausted", exhausted_}};
}

QuietBudget& quiet_budget() {
  static QuietBudget b;
  return b;
}

void set_quiet_budget(double total_s) { quiet_budget().reset(total_s); }

double default_quiet_budget_s(std::string_view profile) {
  if (profile == "smoke") return 5.0;  // proves the pipeline; its figures are rough anyway
  return profile == "paper" || profile == "full" ? 300.0 : 20.0;
}

bool wait_quiet(int threads, std::chrono::steady_clock::time_point deadline) {
  return quiet_budget().wait(threads, deadline);
}

std::string cpufreq_governor() { return read_word("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"); }

std::optional<bool> boost_enabled() {
  if (const std::string b = read_word("/sys/devices/system/cpu/cpufreq/boost"); !b.empty()) return b == "1";
  if (const std::string n = read_word("/sys/devices/system/cpu/intel_pstate/no_turbo"); !n.empty()) return n == "0";
  return std::nullopt;
}

bool virtualized() {
  unsigned a, b, c, d;
  return __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 31));
}

std::string hardware_counters_problem() {
  perf_event_attr attr{};
  attr.type = PERF_TYPE_HARDWARE;
  attr.size = sizeof attr;
  attr.config = PERF_COUNT_HW_CPU_CYCLES;
  attr.disabled = 1;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  const long fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
  if (fd < 0) {
    const int e = errno;
    std::string why = std::string("perf_event_open(cycles) fails: ") + std::strerror(e);
    if (e == EACCES || e == EPERM)
      why += " (perf_event_paranoid = " + read_word("/proc/sys/kernel/perf_event_paranoid") + ")";
    else if (e == ENOENT || e == EOPNOTSUPP || e == ENODEV)
      why += " (no hardware PMU exposed)";
    return why;
  }
  ioctl(int(fd), PERF_EVENT_IOC_RESET, 0);
  ioctl(int(fd), PERF_EVENT_IOC_ENABLE, 0);
  volatile double x = 1;
  for (int i = 0; i < 200000; ++i) x = x * 1.0000001 + 1e-9;
  ioctl(int(fd), PERF_EVENT_IOC_DISABLE, 0);
  long long count = 0;
  const bool ok = read(int(fd), &count, sizeof count) == sizeof count;
  close(int(fd));
  if (!ok || count <= 0) return "the cycle counter opens but reads 0 (no hardware PMU behind it)";
  return "";
}

std::vector<std::string> environment(int ncores) {
  std::vector<std::string> w;
  if (std::string(ROOFLAB_BUILD_TYPE) != "Release" && std::string(ROOFLAB_BUILD_TYPE) != "RelWithDebInfo")
    w.push_back(std::string("built as ") + ROOFLAB_BUILD_TYPE +
                ": kernels are not optimized; configure with the release preset");
  if (ROOFLAB_SANITIZER[0])
    w.push_back(std::string("built with sanitizer ") + ROOFLAB_SANITIZER + ": timings are not representative");
  if (const auto l = load_average(); l && *l > 0.5 * ncores)
    w.push_back("load average " + fmt(*l) + " on " + std::to_string(ncores) +
                " cores before the run: other processes compete for the cores; rerun on a quiet machine");
  const std::string gov = cpufreq_governor();
  if (gov.empty())
    w.push_back("the cpufreq governor cannot be read (no cpufreq in sysfs, usual in a VM): the clock "
                "is not known to be fixed");
  else if (gov != "performance")
    w.push_back("cpufreq governor is '" + gov + "': the clock may ramp during the run; 'performance' is steadier");
  if (const auto b = boost_enabled(); !b)
    w.push_back("turbo/boost state cannot be read: clock speed may vary with load and temperature");
  else if (*b)
    w.push_back("turbo/boost is enabled: single-thread runs may clock higher than multi-thread ones");
  if (virtualized()) {
    const std::string pmu = hardware_counters_problem();
    w.push_back("running in a virtual machine" + (pmu.empty() ? std::string(" (hardware counters work)")
                                                              : ": no hardware counters (" + pmu +
                                                                    "); cache misses come from the cachegrind simulation"));
  }
  return w;
}

std::vector<std::string> timing(const nlohmann::json& gbench, double cv_max, int min_reps) {
  std::map<std::string, std::vector<double>> times;
  std::vector<std::string> order;
  for (const auto& b : gbench.value("benchmarks", nlohmann::json::array())) {
    if (b.value("run_type", "") != "iteration" || b.value("error_occurred", false)) continue;
    const std::string name = b.value("run_name", b.value("name", ""));
    if (!times.count(name)) order.push_back(name);
    times[name].push_back(b.value("real_time", 0.0));
  }
  std::vector<std::pair<double, std::string>> noisy;
  int fewest = 1 << 30;
  for (const auto& name : order) {
    const auto& t = times[name];
    fewest = std::min(fewest, int(t.size()));
    if (t.size() < 2) continue;
    const double cv = measure::stats(t).cv;  // the driver's statistics (sample standard deviation)
    if (cv > cv_max) noisy.emplace_back(cv, name);
  }
  std::vector<std::string> w;
  if (!noisy.empty()) {
    std::sort(noisy.rbegin(), noisy.rend());
    std::string list;
    for (size_t i = 0; i < noisy.size() && i < 5; ++i)
      list += std::string(i ? ", " : "") + noisy[i].second + " (" + fmt(100 * noisy[i].first, 1) + "%)";
    if (noisy.size() > 5) list += ", and " + std::to_string(noisy.size() - 5) + " more";
    w.push_back(std::to_string(noisy.size()) + " of " + std::to_string(order.size()) +
                " benchmarks are unstable (coefficient of variation above " + fmt(100 * cv_max, 0) + "%): " + list);
  }
  if (!order.empty() && fewest < min_reps)
    w.push_back("only " + std::to_string(fewest) + " repetitions per benchmark: `rooflab compare` needs >= " +
                std::to_string(min_reps) + " for its U test (--benchmark_repetitions=" + std::to_string(min_reps) + ")");
  return w;
}

}  // namespace rooflab::diag

#pragma once
// Self-diagnosis, as nanobench does it: conditions that make timings unreliable, said on the
// console and recorded in machine.json / bench.json ("diagnostics": [strings]) so the report
// shows them next to the numbers they affect.
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace rooflab::diag {

std::optional<double> load_average();  // 1-minute load average (/proc/loadavg)

// Runnable tasks on the whole machine (/proc/stat procs_running, the caller included); -1 when
// unknown. On a shared machine a timing sample counts as "quiet" when no more tasks than the
// sample's own threads were runnable just before and just after it.
int procs_running();

// One read of /proc/stat: procs_running, and the hypervisor's steal (the "cpu" line's 8th value:
// time the host ran something else while a vCPU had work, summed over CPUs, in USER_HZ ticks).
// A stolen vCPU still runs its task as far as the guest's scheduler knows: no run-queue wait,
// no extra runnable task; this counter is the only trace. -1 / 0 where unknown.
struct ProcStat {
  int procs_running = -1;
  int64_t steal_ticks = -1;
  int cpus = 0;  // the "cpuN" lines: the CPUs the steal is summed over
};
ProcStat proc_stat();
double clock_tick_s();  // one USER_HZ tick, 1 / sysconf(_SC_CLK_TCK) (10 ms where USER_HZ is 100)
// CPU time of this process's threads so far (CLOCK_PROCESS_CPUTIME_ID: the sum of their
// on-CPU times, threads that ended included; with paravirt steal accounting it leaves out steal);
// -1 when unreadable.
int64_t process_cpu_ns();

// Nanoseconds this process's threads have spent runnable but waiting for a CPU, summed
// (/proc/self/task/*/schedstat, second field); -1 when the kernel does not expose it. Its growth
// over a sample is the time the sample lost to other tasks on its cores: the direct sign of an
// oversubscribed core, which a snapshot of runnable tasks misses while the sample's threads sleep.
int64_t runqueue_wait_ns();
// This process's threads that are runnable now (state R in /proc/self/task/*/stat, the caller
// included); -1 when unknown. A library's own helper threads that spin after a call (OpenBLAS)
// are runnable tasks of the process, not load from others.
int own_running_threads();

// The OpenMP wait policy of the commands that time kernels. libgomp's default spins a waiting
// thread up to 300000 times before it sleeps: on a core another process shares, each barrier then
// burns the time slice the late thread needs, and a kernel with many short parallel regions runs
// many times slower (docs/measuring.md). A bounded spin (libgomp's own value when it knows threads outnumber CPUs)
// bounds that loss; what it costs imbalanced kernels on a quiet machine: docs/measuring.md.
inline constexpr const char* kTimedSpinCount = "1000";
// Call first in main(), before anything can start OpenMP: libgomp reads its environment when it
// is loaded, before main, so when the user set neither OMP_WAIT_POLICY nor GOMP_SPINCOUNT this
// sets GOMP_SPINCOUNT=kTimedSpinCount and re-executes the program once (/proc/self/exe, same
// arguments). Returns only when no re-execution was needed or it failed (then the runtime's
// default stays, and omp_wait_policy() says why).
void apply_timed_omp_policy(char** argv);
// {"OMP_WAIT_POLICY": str|null, "GOMP_SPINCOUNT": str|null, "set_by": "rooflab"|"user"|"libgomp default",
//  "note": str}: what the OpenMP runtime of this process runs with, for bench.json / machine.json.
nlohmann::json omp_wait_policy();
// {OMP_PROC_BIND, OMP_PLACES (null: unset), procs: the CPUs this process may run its OpenMP
// threads on (omp_get_num_procs: the affinity mask it started with, e.g. taskset / srun / a
// container's cpuset), places: the OpenMP places (0: threads not bound)}.
nlohmann::json omp_affinity();
// The OS indices of the CPUs this process may run its threads on, ascending: the union of the
// OpenMP places where libgomp binds (it has already bound this thread to the first place),
// else this thread's affinity mask (taskset, srun's binding, a container's cpuset). Empty when
// neither can be read.
std::vector<int> process_cpus();
// "0,1,5": CPU indices as taskset's -c takes them (for messages and `rooflab info`).
std::string cpu_list(const std::vector<int>& cpus);

// A command's total allowance for waiting on a quiet machine. Each wait is bounded, but a
// command that waits before each of many samples on a loaded machine adds the waits up to
// minutes (RTAMM units + evaluate: 8 min under load vs 0.6 quiet). The budget bounds the sum:
// once spent, waits return at once, one warning is printed, and the command measures on and
// records to_json() next to its figures, so they are known to be taken under load.
class QuietBudget {
 public:
  using Clock = std::chrono::steady_clock;
  // `running`: runnable tasks now (procs_running by default; tests inject a machine that is
  // never quiet). `total_s` < 0: unbounded.
  explicit QuietBudget(double total_s = -1, std::function<int()> running = {});
  // Polls every 20 ms until at most `threads` tasks are runnable, until `deadline` or until the
  // budget is spent; false when it did not get quiet. An unknown count (-1) is quiet.
  bool wait(int threads, Clock::time_point deadline);
  bool wait(int threads, double max_s);
  void reset(double total_s);          // a new command: nothing waited yet
  double total_s() const { return total_s_; }
  double waited_s() const { return waited_s_; }
  bool exhausted() const { return exhausted_; }
  int64_t waits() const { return waits_; }
  int64_t not_quiet() const { return not_quiet_; }  // waits that ended without quiet
  // {"budget_s", "waited_s", "waits", "waits_not_quiet", "exhausted"} (budget_s null: unbounded)
  nlohmann::json to_json() const;

 private:
  double total_s_;
  std::function<int()> running_;
  double waited_s_ = 0;
  bool exhausted_ = false;
  int64_t waits_ = 0, not_quiet_ = 0;
};

// The budget of this process's command: every diag::wait_quiet draws from it (unbounded until
// a command sets it). Commands call set_quiet_budget() once before timing; not thread-safe
// (waits happen between samples, on one thread).
QuietBudget& quiet_budget();
void set_quiet_budget(double total_s);
// The default total per command: smoke 5 s (it proves the pipeline; its figures are rough
// anyway), quick 20 s, paper / full 300 s (hours of timing, where waiting minutes for quiet
// is worth it).
double default_quiet_budget_s(std::string_view profile);

// quiet_budget().wait(...): polls (every 20 ms) until at most `threads` tasks are runnable, or
// until `deadline`, or until the command's budget is spent; false when it never got that quiet.
bool wait_quiet(int threads, std::chrono::steady_clock::time_point deadline);
inline bool wait_quiet(int threads, double max_s) {
  return wait_quiet(threads, std::chrono::steady_clock::now() +
                                 std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                     std::chrono::duration<double>(max_s)));
}
std::string cpufreq_governor();        // cpu0's cpufreq governor, "" when not exposed

// Turbo / boost: true = enabled, false = disabled, nullopt = cannot be read (no
// cpufreq/boost or intel_pstate/no_turbo in sysfs, as in most VMs).
std::optional<bool> boost_enabled();

// "" when a hardware cycle counter can be opened and counts (perf_event_open); otherwise
// why not (errno text, "reads 0", perf_event_paranoid), e.g. in a VM without a virtual PMU.
std::string hardware_counters_problem();
bool virtualized();  // the CPUID hypervisor bit

// The machine-state warnings: unoptimized build, load, governor / boost not fixed or not
// readable, virtualized without counters. `ncores` = the machine's cores (the load check).
std::vector<std::string> environment(int ncores);

// Timing warnings over Google Benchmark's JSON output (per-repetition "iteration" entries):
// benchmarks whose coefficient of variation exceeds cv_max (named, worst first) and runs with
// fewer repetitions than `min_reps` (what `rooflab compare` needs for its U test).
std::vector<std::string> timing(const nlohmann::json& gbench, double cv_max = 0.05, int min_reps = 9);

}  // namespace rooflab::diag

#pragma once
// Self-diagnosis, as nanobench does it: conditions that make timings unreliable, said on the
// console and recorded in machine.json / bench.json ("diagnostics": [strings]) so the report
// shows them next to the numbers they affect.
#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rooflab::diag {

std::optional<double> load_average();  // 1-minute load average (/proc/loadavg)

// Runnable tasks on the whole machine (/proc/stat procs_running, the caller included); -1 when
// unknown. On a shared machine a timing sample counts as "quiet" when no more tasks than the
// sample's own threads were runnable just before and just after it.
int procs_running();
// Polls (every 20 ms) until at most `threads` tasks are runnable, or until `deadline`; false when
// it never got that quiet. An unknown count is taken as quiet.
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

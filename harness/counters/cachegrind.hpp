#pragma once
// The "cachegrind" back end: valgrind's cache simulator (the one cachegrind uses), driven
// through callgrind so that only the kernel region is counted.
//
// Why callgrind and not cachegrind: valgrind 3.19's cachegrind counts the whole program and
// cannot be restricted to a region. Callgrind runs the same simulator and honours client
// requests: region_begin() zeroes the costs (CALLGRIND_ZERO_STATS) and region_end() dumps
// them (CALLGRIND_DUMP_STATS_AT "rooflab-region:<case>") into a file of their own. The
// simulator runs from program start, so the counted runs see the cache state the timed
// benchmark sees (data touched by verification and a warm-up run), and every thread is
// counted (callgrind's collection toggles are per thread, its dumps are not).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/counters/counters.hpp"
#include "harness/families.hpp"

namespace rooflab::counters {

// One simulated cache as valgrind's --D1/--LL take it: "size,assoc,line".
struct CacheGeometry {
  int64_t size = 0;
  int assoc = 0;
  int line = 0;
  std::string arg() const;  // "32768,8,64"
  bool operator==(const CacheGeometry&) const = default;
};

// Valgrind simulates only caches whose set count (size / (assoc * line)) is a power of two,
// with a power-of-two line of at least 16 bytes. Returns the valid geometry nearest to the
// request: the size closest to `size` (exact when possible), then the associativity closest
// to `assoc` (e.g. 24 MiB 16-way -> 24 MiB 12-way; 20 MiB 16-way -> 20 MiB 20-way).
// Throws rooflab::Error when no cache of that size can be simulated (size < 2 lines).
CacheGeometry valgrind_geometry(int64_t size, int assoc, int line);

// Which caches to simulate, and where each number came from.
struct SimulatedCaches {
  std::optional<CacheGeometry> d1, ll;  // nullopt: valgrind's default (host CPUID)
  std::string d1_source, ll_source;     // e.g. "machine.json caches.measured.L1 (path)"
  int64_t d1_requested = 0, ll_requested = 0;  // bytes asked for, before rounding
  std::string ll_level;                 // "L2" or "L3"
};
// `machine` may be null (no machine.json). `ll_level` is "L2", "L3" or "" (= L3 when the
// machine has one, else L2). Associativity and line size come from this machine's sysfs
// (/sys/devices/system/cpu/cpu0/cache) when it lists the level, else 8/64 (L1, L2), 16/64 (L3).
SimulatedCaches simulated_caches(const nlohmann::json* machine, const std::string& machine_path,
                                 const std::string& ll_level);

// One callgrind output file: its dump trigger and its total cost per event.
struct CallgrindDump {
  std::string trigger;                  // "Client Request: rooflab-region:<case>", ...
  std::map<std::string, double> totals; // from `totals:` (or `summary:`) by `events:` names
};
// Throws rooflab::Error naming the file when it cannot be read or has no events/totals.
CallgrindDump parse_callgrind_file(const std::filesystem::path& file);

std::string region_dump_tag(const std::string& region);  // "rooflab-region:<region>"

// Sums the dumps among `files` whose trigger is the region's tag; `count` is how many.
struct RegionTotals {
  std::map<std::string, double> events;
  int count = 0;
};
RegionTotals sum_region_dumps(const std::vector<std::filesystem::path>& files,
                              const std::string& region);

// L1_miss_rate = (D1mr + D1mw) / (Dr + Dw), LL_miss_rate = (DLmr + DLmw) / (Dr + Dw);
// empty when the events are missing or there were no data accesses (never a fake 0).
std::map<std::string, double> cachegrind_derived(const std::map<std::string, double>& events);

// True in ASan/TSan/MSan builds, whose runtimes refuse to start under valgrind.
bool sanitizer_refuses_valgrind();

// What valgrind runs for a case. Valgrind 3.19 cannot execute AVX-512 instructions (and hides
// AVX-512 from CPUID), so an avx512 case is simulated as its AVX2 sibling (same variant, dtype,
// sizes and parameters; the same algorithm and blocking with 256-bit vectors), else its scalar
// sibling, so that the cache-miss figure has a row for it on every machine. `simulated` is the
// case itself when it needs no substitute; empty (with `reason`) when it needs one and none
// is declared or accepts the case.
struct ValgrindCase {
  std::optional<Case> simulated;
  std::string note;    // why a sibling was simulated (empty when it is the case itself)
  std::string reason;  // why nothing can be simulated (when `simulated` is empty)
};
// `declared`: the variant's ISAs; `check` validates a candidate (empty string = acceptable,
// else the reason, as validate_case() would throw it). Pure, so tests can pass any table.
ValgrindCase valgrind_case(const Case& c, const std::vector<Isa>& declared,
                           const std::function<std::string(const Case&)>& check);
// The same with the registry: the variant's declared ISAs and validate_case().
ValgrindCase valgrind_case(const Case& c);

// Runs cases under valgrind, one child process each.
class CachegrindRunner {
 public:
  CachegrindRunner(SimulatedCaches caches, double timeout_s);
  // Finds valgrind ($ROOFLAB_VALGRIND, else PATH) and asks its version.
  Availability probe();
  nlohmann::json config() const;  // the counters.json "config" of this back end
  // The counters.json row for `c`: status "ok" with per-run events, or "failed" + message.
  // An avx512 case runs as valgrind_case()'s sibling, named in the row's "simulated_as" and
  // "note"; a case simulated earlier by this runner (the sibling itself, say) reuses that
  // simulation (deterministic, so running it again would only cost time).
  nlohmann::json run(const Case& c, int runs);
  // The valgrind command line run() uses (for the message of a failed row and for tests).
  std::vector<std::string> command(const Case& c, int runs,
                                   const std::filesystem::path& out_file,
                                   const std::filesystem::path& log_file) const;

 private:
  SimulatedCaches caches_;
  double timeout_s_;
  std::string valgrind_;  // path, after probe()
  std::string version_;
  std::map<std::string, nlohmann::json> done_;  // "<simulated name>#<runs>" -> its ok row
};

}  // namespace rooflab::counters

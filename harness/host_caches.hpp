#pragma once
// This machine's data caches as the OS lists them (sysfs, cpu0), for defaults that depend on
// the cache sizes (GEMM blockings, the RTAMM pool without a machine.json) and the geometry
// of the simulated caches. Measured capacities live in machine.json; these are what a kernel
// can know without one.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace rooflab {
struct HostCache {
  int64_t size = 0;  // bytes (per core for L1/L2; the L3 is shared)
  int assoc = 0;     // ways; 0 when sysfs does not say
  int line = 0;      // bytes; 0 when sysfs does not say
};
// The data or unified cache of `level` (1..3) of cpu0, if sysfs lists it.
std::optional<HostCache> host_cache(int level);

struct HostCacheSizes {
  int64_t l1 = 0, l2 = 0, l3 = 0;
  std::string source;  // "sysfs" or which levels fell back to the assumed 32 KiB / 512 KiB / 8 MiB
};
// L1d / L2 / L3 sizes of this machine, each level sysfs does not list replaced by a typical
// size (named in `source`). Read once. Inside a ScopedHostCaches: that machine's sizes.
const HostCacheSizes& host_cache_sizes();

// The cache sizes the OS of the machine that wrote `machine` (a machine.json) listed: per level
// caches.reported (hwloc: what sysfs said there, hence what its bench's blockings and models
// used), else caches.measured, else the assumed size (named in `source`). nullopt without a
// "caches" object.
std::optional<HostCacheSizes> machine_cache_sizes(const nlohmann::json& machine, const std::string& what);

// While alive, host_cache_sizes() and host_cache() answer with `sizes` (associativity and line
// unknown: 0) on this thread: `rooflab model --remodel` re-derives a case's model, blocking
// included, as it was on the machine that ran it, not with this host's caches.
class ScopedHostCaches {
 public:
  explicit ScopedHostCaches(HostCacheSizes sizes);
  ~ScopedHostCaches();
  ScopedHostCaches(const ScopedHostCaches&) = delete;
  ScopedHostCaches& operator=(const ScopedHostCaches&) = delete;

 private:
  HostCacheSizes sizes_;
  const HostCacheSizes* prev_;
};
}  // namespace rooflab

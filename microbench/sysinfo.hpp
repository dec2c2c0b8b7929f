#pragma once
// What the machine says about itself: hwloc topology (cores, cache sizes and sharing), CPU
// model, hypervisor, memory. Everything here is "reported"; measure.hpp measures.
#include <sched.h>

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rooflab::microbench {

struct CacheInfo {
  size_t size = 0;         // bytes per instance
  // instances[t] = number of distinct instances of this level covering cores 0..t (of
  // Topology::core_cpu), so
  // aggregate capacity with T threads is size * instances[T-1].
  std::vector<int> instances;
};

// The cores this process may run on (diag::process_cpus(): taskset, srun's binding, a cpuset):
// characterize pins its threads to these only, one per core.
struct Topology {
  int cores = 0;          // cores with a PU this process may run on
  int pus = 0;            // those PUs
  int machine_cores = 0;  // every core hwloc reports
  std::vector<int> core_cpu;               // OS index of the first such PU of each core
  std::map<std::string, CacheInfo> caches;  // "L1" (data), "L2", "L3"; absent if unknown
};

Topology read_topology();  // via hwloc; throws rooflab::Error if hwloc fails

struct HostInfo {
  std::string hostname, cpu_model;
  std::optional<double> cpu_mhz_reported;  // /proc/cpuinfo "cpu MHz" of the first CPU
  bool virtualized = false;
  std::string hypervisor;                   // "KVM", "VMware", ... or "" if unknown
};
HostInfo read_host_info();

size_t available_memory();  // MemAvailable from /proc/meminfo (sysconf fallback)

// Pins the calling thread to one CPU for the object's lifetime, restoring its previous
// affinity afterwards (OpenMP reuses pool threads, so pins must not leak).
class ScopedPin {
 public:
  explicit ScopedPin(int cpu);
  ~ScopedPin();
  ScopedPin(const ScopedPin&) = delete;
  ScopedPin& operator=(const ScopedPin&) = delete;

 private:
  cpu_set_t saved_;
  bool restore_ = false;
};

// 2 MiB-aligned buffer with transparent huge pages requested, so TLB misses do not masquerade
// as a cache level in the curves. Contents are uninitialised (the caller first-touches).
class PageBuffer {
 public:
  PageBuffer() = default;
  explicit PageBuffer(size_t bytes);
  PageBuffer(PageBuffer&& o) noexcept;
  PageBuffer& operator=(PageBuffer&& o) noexcept;
  ~PageBuffer();
  void* data() const { return p_; }
  size_t bytes() const { return bytes_; }

 private:
  void* p_ = nullptr;
  size_t bytes_ = 0;
};

std::string format_bytes(double bytes);  // "32 KiB", "1.5 MiB"

}  // namespace rooflab::microbench

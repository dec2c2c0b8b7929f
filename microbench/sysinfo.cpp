#include "microbench/sysinfo.hpp"

#include <cpuid.h>
#include <hwloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <new>
#include <set>
#include <sstream>

#include "harness/buffer.hpp"
#include "harness/diagnostics.hpp"
#include "harness/error.hpp"

namespace rooflab::microbench {

Topology read_topology() {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0 || hwloc_topology_load(topo) != 0)
    throw Error("microbench: hwloc could not load the machine topology");
  std::unique_ptr<hwloc_topology, void (*)(hwloc_topology_t)> guard(topo,
                                                                     hwloc_topology_destroy);
  Topology t;
  const hwloc_obj_type_t core_type =
      hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;  // some VMs expose PUs only
  t.machine_cores = hwloc_get_nbobjs_by_type(topo, core_type);
  if (t.machine_cores <= 0) throw Error("microbench: hwloc reports no cores");
  // hwloc leaves out what a cgroup cpuset forbids, not what the affinity mask does (taskset,
  // srun --cpu-bind): a thread pinned outside the mask would take a CPU the user did not give.
  std::unique_ptr<hwloc_bitmap_s, void (*)(hwloc_bitmap_t)> allowed(hwloc_bitmap_alloc(), hwloc_bitmap_free),
      pu(hwloc_bitmap_alloc(), hwloc_bitmap_free);
  const std::vector<int> cpus = diag::process_cpus();
  if (cpus.empty()) hwloc_bitmap_fill(allowed.get());
  for (int id : cpus) hwloc_bitmap_set(allowed.get(), unsigned(id));
  std::vector<hwloc_obj_t> cores;
  for (int c = 0; c < t.machine_cores; ++c) {
    hwloc_obj_t core = hwloc_get_obj_by_type(topo, core_type, c);
    hwloc_bitmap_and(pu.get(), core->cpuset, allowed.get());
    if (hwloc_bitmap_iszero(pu.get())) continue;
    cores.push_back(core);
    t.core_cpu.push_back(hwloc_bitmap_first(pu.get()));
    t.pus += hwloc_bitmap_weight(pu.get());
  }
  t.cores = int(cores.size());
  if (t.cores == 0)
    throw Error("microbench: none of the " + std::to_string(t.machine_cores) +
                " cores hwloc reports has a CPU this process may run on (CPUs " + diag::cpu_list(cpus) + ")");
  const std::pair<const char*, hwloc_obj_type_t> levels[] = {
      {"L1", HWLOC_OBJ_L1CACHE}, {"L2", HWLOC_OBJ_L2CACHE}, {"L3", HWLOC_OBJ_L3CACHE}};
  for (auto [name, type] : levels) {
    hwloc_obj_t first = hwloc_get_obj_by_type(topo, type, 0);
    if (!first || first->attr->cache.size == 0) continue;
    CacheInfo info;
    info.size = static_cast<size_t>(first->attr->cache.size);
    std::set<hwloc_obj_t> seen;
    for (hwloc_obj_t core : cores) {
      hwloc_obj_t cache = hwloc_get_ancestor_obj_by_type(topo, type, core);
      seen.insert(cache ? cache : core);  // no ancestor: treat as private to the core
      info.instances.push_back(static_cast<int>(seen.size()));
    }
    t.caches[name] = info;
  }
  return t;
}

namespace {
std::string cpuid_hypervisor(bool& present) {
  unsigned a, b, c, d;
  present = __get_cpuid(1, &a, &b, &c, &d) && (c & (1u << 31));
  if (!present) return "";
  __cpuid(0x40000000, a, b, c, d);
  char sig[13] = {};
  std::memcpy(sig, &b, 4);
  std::memcpy(sig + 4, &c, 4);
  std::memcpy(sig + 8, &d, 4);
  const std::pair<const char*, const char*> known[] = {
      {"KVMKVMKVM", "KVM"},        {"Microsoft Hv", "Hyper-V"}, {"VMwareVMware", "VMware"},
      {"XenVMMXenVMM", "Xen"},     {"TCGTCGTCGTCG", "QEMU"},   {"ACRNACRNACRN", "ACRN"},
      {"bhyve bhyve ", "bhyve"},   {" lrpepyh  vr", "Parallels"}, {"VBoxVBoxVBox", "VirtualBox"},
      {"QNXQVMBSQG", "QNX"},       {"Linux KVM Hv", "KVM (Hyper-V enlightenments)"}};
  for (auto [s, name] : known)
    if (std::strncmp(sig, s, std::strlen(s)) == 0) return name;
  return sig[0] ? std::string(sig) : "";
}
}  // namespace

HostInfo read_host_info() {
  HostInfo h;
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) == 0) h.hostname = name;
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string key = line.substr(0, line.find_last_not_of(" \t", colon - 1) + 1);
    std::string val = colon + 2 <= line.size() ? line.substr(colon + 2) : "";
    if (key == "model name" && h.cpu_model.empty()) h.cpu_model = val;
    if (key == "cpu MHz" && !h.cpu_mhz_reported) h.cpu_mhz_reported = std::atof(val.c_str());
    if (key == "flags" && val.find(" hypervisor") != std::string::npos) h.virtualized = true;
  }
  bool cpuid_hv = false;
  h.hypervisor = cpuid_hypervisor(cpuid_hv);
  h.virtualized = h.virtualized || cpuid_hv;
  return h;
}

size_t available_memory() {
  std::ifstream in("/proc/meminfo");
  for (std::string key; in >> key;) {
    size_t kib = 0;
    in >> kib;
    if (key == "MemAvailable:") return kib * 1024;
    in.ignore(1 << 20, '\n');
  }
  return static_cast<size_t>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

ScopedPin::ScopedPin(int cpu) {
  CPU_ZERO(&saved_);
  restore_ = sched_getaffinity(0, sizeof saved_, &saved_) == 0;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0)
    throw Error("microbench: cannot pin a thread to CPU " + std::to_string(cpu));
}
ScopedPin::~ScopedPin() {
  if (restore_) sched_setaffinity(0, sizeof saved_, &saved_);
}

PageBuffer::PageBuffer(size_t bytes) {
  bytes_ = bytes;
  try {
    p_ = allocate_pages(bytes);  // the kernels' policy (harness/buffer.hpp): ceilings on their pages
  } catch (const std::bad_alloc&) {
    throw Error("microbench: cannot allocate " + format_bytes(double(bytes_)));
  }
}
PageBuffer::PageBuffer(PageBuffer&& o) noexcept : p_(o.p_), bytes_(o.bytes_) {
  o.p_ = nullptr;
  o.bytes_ = 0;
}
PageBuffer& PageBuffer::operator=(PageBuffer&& o) noexcept {
  std::swap(p_, o.p_);
  std::swap(bytes_, o.bytes_);
  return *this;
}
PageBuffer::~PageBuffer() { std::free(p_); }

std::string format_bytes(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  if (std::fabs(bytes - std::round(bytes)) < 0.05)
    std::snprintf(buf, sizeof buf, "%.0f %s", bytes, units[u]);
  else
    std::snprintf(buf, sizeof buf, "%.1f %s", bytes, units[u]);
  return buf;
}

}  // namespace rooflab::microbench

#include "harness/host_caches.hpp"

#include <filesystem>
#include <fstream>

namespace rooflab {
namespace fs = std::filesystem;

namespace {
thread_local const HostCacheSizes* g_override = nullptr;  // ScopedHostCaches

// sysfs sizes read "48K", "1024K", "32768K" (or plain bytes, or "M").
int64_t parse_size(const std::string& s) {
  size_t pos = 0;
  int64_t v = 0;
  try {
    v = std::stoll(s, &pos);
  } catch (const std::exception&) {
    return 0;
  }
  const std::string unit = s.substr(pos);
  if (unit == "K") return v << 10;
  if (unit == "M") return v << 20;
  if (unit.empty()) return v;
  return 0;
}
int to_int(const std::string& s) {
  try {
    return std::stoi(s);
  } catch (const std::exception&) {
    return 0;
  }
}
}  // namespace

std::optional<HostCache> host_cache(int level) {
  if (g_override) {
    const int64_t v = level == 1 ? g_override->l1 : level == 2 ? g_override->l2 : level == 3 ? g_override->l3 : 0;
    if (v > 0) return HostCache{v, 0, 0};
    return std::nullopt;
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/sys/devices/system/cpu/cpu0/cache", ec)) {
    if (entry.path().filename().string().rfind("index", 0) != 0) continue;
    auto read = [&](const char* f) {
      std::ifstream in(entry.path() / f);
      std::string s;
      in >> s;
      return s;
    };
    if (read("level") != std::to_string(level) || read("type") == "Instruction") continue;
    HostCache c{parse_size(read("size")), to_int(read("ways_of_associativity")),
                to_int(read("coherency_line_size"))};
    return c;
  }
  return std::nullopt;
}

const HostCacheSizes& host_cache_sizes() {
  if (g_override) return *g_override;
  static const HostCacheSizes sizes = [] {
    HostCacheSizes s;
    const int64_t assumed[3] = {32 << 10, 512 << 10, 8 << 20};
    int64_t* out[3] = {&s.l1, &s.l2, &s.l3};
    std::string missing;
    for (int l = 1; l <= 3; ++l) {
      const auto c = host_cache(l);
      *out[l - 1] = c && c->size > 0 ? c->size : assumed[l - 1];
      if (!(c && c->size > 0)) missing += (missing.empty() ? "L" : ", L") + std::to_string(l);
    }
    s.source = missing.empty() ? "sysfs (cpu0)"
                               : "sysfs (cpu0); " + missing + " not listed, assumed 32 KiB / 512 KiB / 8 MiB";
    return s;
  }();
  return sizes;
}
std::optional<HostCacheSizes> machine_cache_sizes(const nlohmann::json& m, const std::string& what) {
  if (!m.is_object() || !m.contains("caches") || !m["caches"].is_object()) return std::nullopt;
  const auto& c = m["caches"];
  HostCacheSizes s;
  const int64_t assumed[3] = {32 << 10, 512 << 10, 8 << 20};
  int64_t* out[3] = {&s.l1, &s.l2, &s.l3};
  std::string from;
  for (int l = 0; l < 3; ++l) {
    const std::string lvl = "L" + std::to_string(l + 1);
    const char* used = nullptr;
    for (const char* src : {"reported", "measured"})
      if (c.contains(src) && c[src].is_object() && c[src].contains(lvl) && c[src][lvl].is_number() &&
          c[src][lvl].get<double>() > 0) {
        *out[l] = int64_t(c[src][lvl].get<double>());
        used = src;
        break;
      }
    if (!used) *out[l] = assumed[l];
    from += (l ? ", " : "") + lvl + " " + (used ? used : "assumed");
  }
  s.source = what + " caches (" + from + ")";
  return s;
}

ScopedHostCaches::ScopedHostCaches(HostCacheSizes sizes) : sizes_(std::move(sizes)), prev_(g_override) {
  g_override = &sizes_;
}
ScopedHostCaches::~ScopedHostCaches() { g_override = prev_; }
}  // namespace rooflab

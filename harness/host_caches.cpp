#include "harness/host_caches.hpp"

#include <filesystem>
#include <fstream>

namespace rooflab {
namespace fs = std::filesystem;

namespace {
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
}  // namespace rooflab

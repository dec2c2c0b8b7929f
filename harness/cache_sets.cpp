#include "harness/cache_sets.hpp"

#include <algorithm>

#include "harness/host_caches.hpp"

namespace rooflab {

CacheGeometry vipt_geometry(int64_t size, int ways, int line, const std::string& source) {
  CacheGeometry g;
  g.size = size;
  g.line = line > 0 ? line : 64;
  const bool assumed = ways <= 0 || line <= 0;
  // VIPT: the index bits lie inside the 4 KiB page offset, so one way is 4 KiB.
  g.ways = ways > 0 ? ways : int(std::max<int64_t>(1, size / 4096));
  g.sets = int(std::max<int64_t>(1, size / (int64_t(g.ways) * g.line)));
  g.source = source.empty() ? "" : source;
  if (assumed)
    g.source += std::string(g.source.empty() ? "" : "; ") + "L1 " + std::to_string(g.ways) + "-way, " +
                std::to_string(g.line) + " B lines assumed by the VIPT rule (sets = 4 KiB / line)";
  return g;
}

CacheGeometry l1_geometry() {
  const int64_t size = host_cache_sizes().l1;
  const auto c = host_cache(1);
  // sysfs's ways and line, if it lists them for an L1 of that size (inside a ScopedHostCaches
  // host_cache answers 0 for both: the VIPT rule).
  if (c && c->size == size && c->assoc > 0 && c->line > 0 && size % (int64_t(c->assoc) * c->line) == 0) {
    CacheGeometry g{size, c->assoc, c->line, int(size / (int64_t(c->assoc) * c->line)), "sysfs (cpu0)"};
    return g;
  }
  return vipt_geometry(size, 0, 0, "");
}

std::vector<int> lines_per_set(const CacheGeometry& g, int64_t offset, int64_t rows, int64_t row_bytes, int64_t stride) {
  std::vector<int> n(size_t(std::max(1, g.sets)), 0);
  if (row_bytes <= 0 || g.line <= 0) return n;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t first = (offset + r * stride) / g.line, last = (offset + r * stride + row_bytes - 1) / g.line;
    for (int64_t l = first; l <= last; ++l) ++n[size_t(l % int64_t(n.size()))];
  }
  return n;
}

void add_lines(std::vector<int>& into, const std::vector<int>& more) {
  for (size_t i = 0; i < into.size() && i < more.size(); ++i) into[i] += more[i];
}
}  // namespace rooflab

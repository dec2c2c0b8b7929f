#pragma once
// Which sets of a set-associative cache a strided block of memory falls into: a family model asks
// whether the tiles it keeps in L1 really stay there (docs/model.md#cross-cpu: a 64 x 64 f32 tile
// with rows 2 KiB apart lands in 8 of the L1's 64 sets, 32 lines a set, and is streamed from L2
// at every k although its 16 KiB are half the L1).
#include <cstdint>
#include <string>
#include <vector>

namespace rooflab {
struct CacheGeometry {
  int64_t size = 0;  // bytes
  int ways = 0;
  int line = 0;      // bytes
  int sets = 0;      // size / (ways x line)
  std::string source{};  // braced so that {size, ways, line} aggregates need not name it
};

// The L1 data cache of the machine at hand: size from host_cache_sizes() (inside a
// ScopedHostCaches: that machine's), ways and line from sysfs where it lists them. Where it does
// not (a machine.json records sizes only), the VIPT rule: an L1 indexed by the 4 KiB page offset
// (Zen 3/4/5, Intel since Sandy Bridge: 32 KiB 8-way, 48 KiB 12-way) has 4096 / line sets, so
// ways = size / 4 KiB, with a 64-byte line; `source` names the assumption.
CacheGeometry l1_geometry();
// The same rule for a cache of `size` bytes whose ways and line are unknown (0).
CacheGeometry vipt_geometry(int64_t size, int ways = 0, int line = 0, const std::string& source = "");

// How many lines of `rows` rows of `row_bytes` bytes each, `stride` bytes apart, starting at
// byte `offset` of a set-aligned base, fall into each of g.sets sets (size g.sets).
std::vector<int> lines_per_set(const CacheGeometry& g, int64_t offset, int64_t rows, int64_t row_bytes, int64_t stride);
// Adds `more` into `into` (same geometry).
void add_lines(std::vector<int>& into, const std::vector<int>& more);
}  // namespace rooflab

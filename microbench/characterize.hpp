#pragma once
// `rooflab characterize`: measures the machine model (machine.json, schema
// "rooflab.machine/1", see docs/json.md): bandwidth per working-set size and thread count,
// compute ceilings, pointer-chase latency, cache capacities detected from the curves next to
// the ones hwloc reports, and a likwid-bench cross-check where it is installed.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rooflab::microbench {

struct CharacterizeOptions {
  // "quick": 2 sizes per octave, short samples (about a minute on 2 cores);
  // "paper": 4 sizes per octave, longer and more samples;
  // "smoke": every field of quick, 2 sizes per octave up to just past the DRAM floor, thread
  // counts 1, 2, 4, .. and all cores, fewer and shorter samples, likwid-bench load at 1 thread
  // only (seconds on 2 cores; `run_all.sh --profile smoke`);
  // "tiny": for unit tests (1 per octave up to 1 MiB: no L3 / DRAM levels; about a second).
  std::string profile = "quick";
  int max_threads = 0;  // 0 = all cores; thread counts 1..max are measured
  bool likwid = true;   // run likwid-bench where installed
  std::function<void(const std::string&)> progress;  // one line per step
  // Largest working set of the sweeps in bytes; 0 = the profile's default (quick/paper:
  // 8x max(largest reported cache, 32 MiB), smoke 4.5x; at most 1 GiB and 1/6 of available
  // memory).
  size_t max_bytes = 0;
};

// The working sets of the sweeps: 4 KiB x 2^(k / per_octave) rounded to whole cache lines,
// up to max_ws (the last one).
std::vector<size_t> sweep_sizes(size_t max_ws, int per_octave);

// Throws rooflab::Error for bad options (unknown profile, more threads than cores, ...).
nlohmann::json characterize(const CharacterizeOptions& opt);

}  // namespace rooflab::microbench

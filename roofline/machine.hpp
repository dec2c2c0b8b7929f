#pragma once
// The machine model: the ceilings measured by `rooflab characterize`, read from machine.json.
// The model reads only this file (docs/json.md), so the same predictions can be evaluated
// against another machine's file.
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/isa.hpp"

namespace rooflab::roofline {

// One cache level as the model places working sets: its capacity and where it came from.
struct CacheLevel { std::string name; double bytes; std::string source; };
// machine.json's caches, in order L1, L2, L3 (those present): per level the measured capacity,
// else the reported one (a VM's read-bandwidth curve may show no step for a level as fast as
// the next, e.g. a Zen 4's L2 for one core). `source` is "measured" or "reported". The one rule
// for every consumer (the roofline/ECM model, RTAMM's blocking pool).
std::vector<CacheLevel> cache_levels(const nlohmann::json& machine);

struct Machine {
  nlohmann::json raw;
  std::filesystem::path path;
  // Capacities used to place a working set: measured where detected, else reported.
  // In order L1, L2, L3 (those present). `source` says which.
  using Level = CacheLevel;
  std::vector<Level> caches;

  // GFLOP/s of a compute ceiling ("fma_f64", "add_f32", "addmin_f32", ...) at `threads`
  // (the largest measured thread count <= threads), of the widest ISA measured
  // (compute.ceilings). Throws Error when absent.
  double compute(const std::string& key, int threads) const;
  // The same ceiling of one ISA's table (compute.by_isa[isa]); Isa::none: the widest, as
  // above. A file without that table (older than by_isa, or from a CPU without the ISA)
  // gives the widest one's, with a note saying so. Throws Error when the key is absent.
  struct ComputeCeiling {
    double gflops = 0;
    std::string isa;   // the table used: "avx2", ..., or "" when the file names none
    std::string note;  // non-empty when it is not the table asked for
  };
  ComputeCeiling find_compute(const std::string& key, int threads, Isa isa) const;
  // compute.isa: the widest ISA measured ("" in a file without it).
  std::string best_compute_isa() const;
  // GB/s of a bandwidth kernel at a level ("L1".."DRAM"), same thread rule. Throws Error.
  // S-stream kernels ("read_s4", "update_s2": S concurrent streams per thread) are read from
  // bandwidth.streams.levels, the 1-stream ones from bandwidth.levels.
  double bandwidth(const std::string& level, const std::string& kernel, int threads) const;
  // The same, nullopt when machine.json lacks it (no level, kernel or value at <= threads).
  std::optional<double> find_bandwidth(const std::string& level, const std::string& kernel,
                                       int threads) const;
  // The same ceiling as a kernel of one ISA reaches it: bandwidth.by_isa[isa].levels for a
  // cache level (16-, 32- and 64-byte accesses get different shares of L1 and L2); DRAM,
  // S-stream kernels and Isa::none (or the widest ISA) give bandwidth.levels, measured with
  // the widest ISA (bandwidth.isa; DRAM is not measured per ISA, docs/json.md). A file without
  // by_isa (older), without that ISA (a CPU that lacks it) or without the kernel in that ISA's
  // table gives bandwidth.levels' value, with a note. Throws Error as bandwidth() does.
  struct BandwidthCeiling {
    double gbps = 0;
    std::string isa;       // the table used ("" when the file names none)
    std::string note;      // non-empty when it is not the table asked for
    bool no_by_isa = false;  // the note's reason: the file has no bandwidth.by_isa at all
  };
  BandwidthCeiling find_bandwidth(const std::string& level, const std::string& kernel, int threads,
                                  Isa isa) const;
  // The fastest DRAM traffic any bandwidth kernel reached at <= threads threads (1-stream and
  // S-stream tables alike), and that kernel's name; {0, ""} when none is measured. predict()'s
  // one DRAM ceiling for every stream: a bound no mix of streams may beat (docs/model.md).
  std::pair<double, std::string> best_dram_traffic(int threads) const;
  // The most threads machine.json measured (the largest key of compute.ceilings' tables;
  // characterize measures 1..the cores its process may run on); 0 when it has none.
  int measured_threads() const;
  // bandwidth.isa: the ISA of bandwidth.levels; compute.isa in files from before it.
  std::string best_bandwidth_isa() const;
  // The level a working set of `bytes` lives in with `threads` threads: L1 and L2 are taken
  // as private (aggregate = threads x capacity), L3 as shared; DRAM when it fits nowhere.
  std::string level_for(double bytes, int threads) const;

  // The device ceilings of machine.json's "gpu" section (`rooflab gpu-characterize`): a
  // model names them with a "gpu:" prefix (compute "gpu:fma_f32", traffic "gpu:read").
  // No thread counts: one value per key. Each throws Error when the section or key is absent.
  bool has_gpu() const { return raw.contains("gpu"); }
  double gpu_compute(const std::string& key) const;                           // GFLOP/s
  double gpu_bandwidth(const std::string& level, const std::string& kernel) const;  // GB/s
  // "L2" when the working set fits in half the device's L2 (and L2 was measured), else "DRAM".
  std::string gpu_level_for(double bytes) const;
};

// "gpu:read" -> "read" (true); "read" -> unchanged (false).
bool strip_gpu_prefix(std::string& key);

// A bandwidth kernel name as a base kernel and a stream count: "read_s4" -> {"read", 4},
// "update" -> {"update", 1}. A model names "<kernel>_s<S>" for traffic that S concurrent
// streams per thread carry (e.g. 4 matrix rows processed at once).
struct StreamKernel { std::string base; int streams = 1; };
StreamKernel split_streams(const std::string& kernel);

// Loads and validates machine.json; throws Error naming the file and the command that
// produces it (`rooflab characterize`).
Machine load_machine(const std::filesystem::path& path);
Machine machine_from_json(const nlohmann::json& j, const std::filesystem::path& path = {});

}  // namespace rooflab::roofline

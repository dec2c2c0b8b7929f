#pragma once
// Classic roofline prediction for one timed unit of a variant:
//   t = max(flops / compute ceiling, sum_i bytes_i / bandwidth(level, kernel_i))
// with the level chosen from the working set and the machine's capacities.
// A model naming "gpu:" ceilings is predicted from machine.json's "gpu" section instead.
// The compute ceiling is the one of the kernel's own ISA (pricing_isa, compute.by_isa), and so
// is the in-cache bandwidth (bandwidth.by_isa; DRAM: the widest ISA's table).
//
// A traffic term may name an S-stream kernel ("read_s4": S concurrent streams per thread, as
// in a kernel that walks 4 matrix rows at once). Its ceiling is the S-stream one where
// machine.json has it at the level; otherwise the 1-stream kernel's ("read"), with a note:
// the prediction still works on a machine.json from before the S-stream ceilings (or at a
// level they were not measured for), but its floor is then too slow where more streams
// draw more bandwidth, so the efficiency can exceed 1.
// At DRAM the bound then takes all the bytes as one pipe at the fastest DRAM traffic measured at
// the thread count, when that is faster (Machine::best_dram_traffic): a prefetching kernel read
// faster than the read ceiling (docs/model.md). memory_time_kernels_s keeps the per-term time.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "roofline/machine.hpp"
#include "roofline/model.hpp"

namespace rooflab::roofline {

struct Prediction {
  std::string level;          // L1 | L2 | L3 | DRAM
  std::string bound;          // "compute" | "memory"
  double time_s = 0;
  double compute_time_s = 0;
  double memory_time_s = 0;
  // The memory time at each stream's own ceiling (read, update, ...), before the one-pipe DRAM
  // ceiling of the bound (predict.cpp): what the ECM's fallback prices, a prediction, not a bound.
  double memory_time_kernels_s = 0;
  double compute_gflops = 0;  // the compute ceiling used
  std::string compute_isa;    // the ISA whose table priced it ("" when no compute term / gpu)
  double bandwidth_gbps = 0;  // effective bandwidth over the traffic terms (bytes / memory time)
  std::string bandwidth_isa;  // the ISA whose bandwidth table priced the traffic (the widest at DRAM)
  std::vector<std::string> bandwidth_kernels;  // ceiling used per traffic term (after fallback)
  std::vector<std::string> notes;              // fallbacks and other caveats
  std::string compute_note;                    // the compute fallback's note (also in notes)
};

// Which ISA's compute ceilings price a case: the ISA it runs (its own, or the one a run-time
// dispatch picked) when known; vendor code without one (a baseline, or rooflab's driver over a
// vendor back end: Variant::code_path) the widest measured (Isa::none: libraries dispatch to
// their best code); rooflab's own code without one is built for baseline x86-64 (scalar), or for
// the host's ISA in a -march=native build.
Isa pricing_isa(Isa runs_isa, bool vendor_code);
Isa own_code_isa();  // the ISA this build compiles ISA-less code for

// Throws Error when the machine lacks a ceiling the model names. `isa` selects the compute
// and the in-cache bandwidth tables (Machine::find_compute, find_bandwidth; Isa::none: the
// widest); a fallback is in `notes`.
Prediction predict(const Model& m, const Machine& machine, int threads, Isa isa = Isa::none);
nlohmann::json to_json(const Prediction& p);

}  // namespace rooflab::roofline

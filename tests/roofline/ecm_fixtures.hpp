#pragma once
// The two fixture machines and models the ECM tests share (test_ecm.cpp, test_calibration.cpp):
// an AVX2-only AMD (Zen 3 like, overlap rule assumed "overlapping") and an AVX-512 Intel (Xeon
// like, assumed "serial"), with round numbers so expected times can be worked out by hand.
#include <nlohmann/json.hpp>

#include "harness/json_io.hpp"
#include "roofline/machine.hpp"
#include "roofline/model.hpp"

namespace rooflab::roofline::test {
inline nlohmann::json zen3_json() { return read_json_file(ROOFLAB_TEST_DIR "/roofline/ecm_zen3_avx2.json"); }
inline nlohmann::json xeon_json() { return read_json_file(ROOFLAB_TEST_DIR "/roofline/ecm_xeon_avx512.json"); }
inline Machine with_rule(nlohmann::json j, const char* rule) {
  j["ecm"] = {{"overlap", rule}, {"source", "test"}};
  return machine_from_json(j);
}

// Zen 3 fixture, avx2 at 1 thread, working set in DRAM:
//   T_OL  = 3.2e9 / 32 GF/s = 0.1;  T_nOL = 2e10 / 200 GB/s (L1 read) = 0.1
//   overlapping: T_L1L2 = 8e9 / 100 = 0.08, T_L2L3 = 4e9 / 50 = 0.08, T_L3Mem = 3e9 / 20 = 0.15
//   serial:      8e9 x (1/100 - 1/200) = 0.04, 4e9 x (1/50 - 1/100) = 0.04, 3e9 x (1/20 - 1/50) = 0.09
inline Model zen3_model(double working_set = 1e9) {
  Model m;
  m.flops = 3.2e9;
  m.compute_ceiling = "fma_f64";
  m.working_set = working_set;
  m.traffic = {{3e9, "read"}};
  m.phases = {LevelTraffic{{{2e10, "read"}}, {{8e9, "read"}}, {{4e9, "read"}}, {{3e9, "read"}}, "test", 3.2e9}};
  return m;
}

// Xeon fixture, avx512 at 1 thread, DRAM:
//   T_OL = 6.4e9 / 64 = 0.1; T_nOL = 4e10 / 400 = 0.1
//   serial (assumed for Intel): 1.6e10 x (1/160 - 1/400) = 0.06, 8e9 x (1/80 - 1/160) = 0.05,
//     3e9 x (1/20 - 1/80) = 0.1125 -> 0.3225
//   overlapping: max(0.1, 0.1, 1.6e10/160 = 0.1, 8e9/80 = 0.1, 3e9/20 = 0.15) = 0.15
inline Model xeon_model() {
  Model m;
  m.flops = 6.4e9;
  m.compute_ceiling = "fma_f64";
  m.working_set = 1e9;
  m.phases = {LevelTraffic{{{4e10, "read"}}, {{1.6e10, "read"}}, {{8e9, "read"}}, {{3e9, "read"}}, "", 6.4e9}};
  return m;
}
}  // namespace rooflab::roofline::test

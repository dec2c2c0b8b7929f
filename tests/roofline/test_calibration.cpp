// The ECM's in-core time from calibration runs of the kernel itself (roofline/calibration.hpp):
// the fit's arithmetic, how the measured in-core time combines with the transfer terms under
// both overlap rules on the AVX2-only AMD and AVX-512 Intel fixtures, the lookup in `rooflab
// model` (a case without calibration falls back to the ceiling and says so; calibration rows are
// never evaluated), and the families' calibration shapes. Expected values worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "harness/bench_driver.hpp"
#include "harness/error.hpp"
#include "harness/families.hpp"
#include "harness/host_caches.hpp"
#include "harness/json_io.hpp"
#include "roofline/calibration.hpp"
#include "roofline/ecm.hpp"
#include "roofline/evaluate.hpp"
#include "ecm_fixtures.hpp"

using namespace rooflab;
using namespace rooflab::roofline;
using namespace rooflab::roofline::test;

namespace {
CoreFit core(double t) {
  CoreFit f;
  f.time_s = t;
  return f;
}
}  // namespace

// One unit: the cost per flop of the one calibration run, times the case's flops.
TEST(CalibrationFit, OneUnitScalesTheCalibrationRate) {
  const auto f = fit_core({{"flop", 4e9}}, {{"k", {{"flop", 1e8}}, 0.002}});
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->time_s, 0.08, 1e-12);  // 4e9 x 2e-11
  EXPECT_NEAR(f->cost_s.at("flop"), 2e-11, 1e-20);
  EXPECT_EQ(f->cases, std::vector<std::string>{"k"});
  EXPECT_NEAR(f->max_rel_residual, 0, 1e-12);
}

// Sinkhorn's four units from the four calibration shapes, with times made from known costs:
// 1 ns an element, 30 ns a row, 2 ns a column, 1 us a call; the 4097 x 1 case is then
// 4097 + 4097 x 30 + 2 + 1000 ns.
TEST(CalibrationFit, FourUnitsSeparatePerRowAndPerCallCosts) {
  auto t = [](double M, double N) { return (M * N * 1 + M * 30 + N * 2 + 1000) * 1e-9; };
  auto w = [](double M, double N) { return WorkUnits{{"element", M * N}, {"row", M}, {"col", N}, {"call", 1}}; };
  std::vector<CalibrationSample> s;
  for (auto [M, N] : {std::pair<double, double>{1, 1024}, {1024, 1}, {64, 64}, {128, 256}}) s.push_back({"c", w(M, N), t(M, N)});
  const auto f = fit_core(w(4097, 1), s);
  ASSERT_TRUE(f);
  EXPECT_NEAR(f->time_s, t(4097, 1), 1e-12);
  EXPECT_NEAR(f->cost_s.at("row"), 30e-9, 1e-13);
  EXPECT_NEAR(f->cost_s.at("call"), 1e-6, 1e-11);
  const auto g = fit_core(w(1023, 517), s);
  ASSERT_TRUE(g);
  EXPECT_NEAR(g->time_s, t(1023, 517), 1e-10);
}

// A unit whose exact cost would be negative (noise) is dropped: the best non-negative subset wins.
TEST(CalibrationFit, NegativeCostsAreDroppedAndNothingUsableIsNullopt) {
  // element 1 ns, but the two shapes say a call "costs" -0.5 us: the fit keeps element alone.
  const std::vector<CalibrationSample> s = {{"a", {{"element", 1000}, {"call", 1}}, 0.5e-6},
                                            {"b", {{"element", 2000}, {"call", 1}}, 1.5e-6}};
  const auto f = fit_core({{"element", 4000}, {"call", 1}}, s);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->cost_s.at("call"), 0);
  EXPECT_GT(f->cost_s.at("element"), 0);
  EXPECT_GT(f->max_rel_residual, 0);
  EXPECT_FALSE(fit_core({{"flop", 1e9}}, {}));
  EXPECT_FALSE(fit_core({{"flop", 1e9}}, {{"x", {{"element", 1}}, 1e-6}}));  // no sample has the unit
}

CoreFit core(double t, const char* level) {
  CoreFit f = core(t);
  f.level = level;
  return f;
}

// The measured in-core time replaces T_OL; the transfers beyond the calibration's level add to
// it (combined by the rule), with no floor from the rule's data term (its in-cache terms are in
// the calibration): T = T_core + beyond. Zen 3 fixture, calibration in L2: beyond = overlapping
// max(0.08, 0.15) = 0.15, serial 0.04 + 0.09 = 0.13 (the data term, 0.27, no longer a floor).
TEST(CalibrationEcm, Zen3OverlappingAndSerial) {
  const Machine over = machine_from_json(zen3_json());  // AMD: overlapping (assumed)
  const CoreFit slow = core(0.3, "L2"), fast = core(0.12, "L2"), in_l3 = core(0.3, "L3");
  Ecm e = ecm(zen3_model(), over, 1, Isa::avx2, &slow);
  EXPECT_EQ(e.in_core, "calibration");
  EXPECT_NEAR(e.t_ol_peak, 0.1, 1e-12);
  EXPECT_NEAR(e.t_ol, 0.3, 1e-12);
  EXPECT_NEAR(e.t_beyond, 0.15, 1e-12);
  EXPECT_NEAR(e.time_s, 0.45, 1e-12);
  EXPECT_NEAR(ecm(zen3_model(), over, 1, Isa::avx2, &fast).time_s, 0.27, 1e-12);
  EXPECT_NEAR(ecm(zen3_model(), over, 1, Isa::avx2, &in_l3).time_s, 0.45, 1e-12);  // only T_L3Mem beyond L3
  const Machine serial = with_rule(zen3_json(), "serial");
  EXPECT_NEAR(ecm(zen3_model(), serial, 1, Isa::avx2, &slow).time_s, 0.43, 1e-12);
  EXPECT_NEAR(ecm(zen3_model(), serial, 1, Isa::avx2, &fast).time_s, 0.25, 1e-12);  // 0.12 + 0.13, below data 0.27
  EXPECT_NEAR(ecm(zen3_model(), serial, 1, Isa::avx2, &in_l3).time_s, 0.39, 1e-12);  // 0.3 + 0.09
  const auto j = to_json(ecm(zen3_model(), over, 1, Isa::avx2, &slow));
  EXPECT_EQ(j["in_core"], "calibration");
  EXPECT_NEAR(j["T_core_calibrated"].get<double>(), 0.3, 1e-12);
  EXPECT_NEAR(j["T_beyond_calibration"].get<double>(), 0.15, 1e-12);
  const auto p = to_json(ecm(zen3_model(), over, 1, Isa::avx2));
  EXPECT_EQ(p["in_core"], "peak");
  EXPECT_TRUE(p["T_core_calibrated"].is_null());
  EXPECT_NEAR(p["time_s"].get<double>(), 0.15, 1e-12);  // unchanged without calibration
}

// Xeon fixture, calibration in L2: beyond serial 0.05 + 0.1125 = 0.1625;
// overlapping beyond max(0.1, 0.15) = 0.15, data 0.15.
TEST(CalibrationEcm, XeonSerialAndACalibrationBelowTheCeiling) {
  const Machine x = machine_from_json(xeon_json());  // Intel: serial (assumed)
  const CoreFit slow = core(0.5, "L2"), fast = core(0.2, "L2"), impossible = core(0.05, "L2");
  EXPECT_NEAR(ecm(xeon_model(), x, 1, Isa::avx512, &slow).time_s, 0.6625, 1e-12);
  EXPECT_NEAR(ecm(xeon_model(), x, 1, Isa::avx512, &fast).time_s, 0.3625, 1e-12);
  EXPECT_NEAR(ecm(xeon_model(), with_rule(xeon_json(), "overlapping"), 1, Isa::avx512, &fast).time_s, 0.35, 1e-12);
  // Faster than the ceiling allows: the ceiling's T_OL (0.1) stays the floor, with a note.
  const Ecm e = ecm(xeon_model(), with_rule(xeon_json(), "overlapping"), 1, Isa::avx512, &impossible);
  EXPECT_NEAR(e.t_ol, 0.1, 1e-12);
  EXPECT_NEAR(e.time_s, 0.25, 1e-12);
  ASSERT_FALSE(e.notes.empty());
  EXPECT_NE(e.notes.back().find("below T_OL"), std::string::npos);
}

// No per-level traffic (sfc_ca, vendors, rtamm): T = T_core + the roofline memory time 0.1 when
// the working set lies beyond the calibration's level.
TEST(CalibrationEcm, FallbackModelsTakeTheMeasuredInCoreTime) {
  Model m;
  m.flops = 1.6e9;  // T_OL 0.05 on either fixture's 32 GF/s avx2 FMA
  m.compute_ceiling = "fma_f64";
  m.working_set = 1e9;  // DRAM
  m.traffic = {{2e9, "read"}};
  const CoreFit l3 = core(0.14, "L3"), dram = core(0.14, "DRAM");
  for (const nlohmann::json& j : {zen3_json(), xeon_json()}) {
    const Ecm e = ecm(m, machine_from_json(j), 1, Isa::avx2, &l3);
    EXPECT_TRUE(e.fallback);
    EXPECT_NEAR(e.t_ol_peak, 0.05, 1e-12);
    EXPECT_NEAR(e.time_s, 0.24, 1e-12);
    EXPECT_NEAR(ecm(m, machine_from_json(j), 1, Isa::avx2, &dram).time_s, 0.14, 1e-12);  // nothing beyond DRAM
  }
}

// The measured overlap (CoreFit::overlap, from a probe): only that share of the transfers beyond
// the calibration's level is added. Zen 3 overlapping: 0.3 + 0.4 x 0.15 = 0.36; serial 0.3 +
// 0.4 x 0.13 = 0.352. Xeon serial: 0.5 + 0.4 x 0.1625 = 0.565; overlap 0: the in-core time alone.
TEST(CalibrationEcm, MeasuredOverlapScalesTheTransfersBeyond) {
  CoreFit f = core(0.3, "L2");
  f.overlap = 0.4;
  const Ecm e = ecm(zen3_model(), machine_from_json(zen3_json()), 1, Isa::avx2, &f);
  EXPECT_NEAR(e.t_beyond, 0.06, 1e-12);
  EXPECT_NEAR(e.time_s, 0.36, 1e-12);
  EXPECT_NEAR(ecm(zen3_model(), with_rule(zen3_json(), "serial"), 1, Isa::avx2, &f).time_s, 0.352, 1e-12);
  CoreFit x = core(0.5, "L2");
  x.overlap = 0.4;
  EXPECT_NEAR(ecm(xeon_model(), machine_from_json(xeon_json()), 1, Isa::avx512, &x).time_s, 0.565, 1e-12);
  x.overlap = 0;
  EXPECT_NEAR(ecm(xeon_model(), machine_from_json(xeon_json()), 1, Isa::avx512, &x).time_s, 0.5, 1e-12);
  const auto j = to_json(f);
  EXPECT_NEAR(j["overlap"].get<double>(), 0.4, 1e-12);
  EXPECT_TRUE(j["overlap_probe"].is_null());
}

// bench.json with one case, its calibration run (a smaller shape) and a case without one.
TEST(CalibrationEvaluate, LookupFallbackAndCalibrationRowsNotEvaluated) {
  nlohmann::json fields = {{"family", "f"}, {"variant", "v"}, {"isa", "avx2"}, {"dtype", "f64"}, {"threads", 1},
                           {"params", nlohmann::json::object()}, {"library", nullptr}, {"flops", 1.6e9},
                           {"working_set", 1e9}, {"compute_ceiling", "fma_f64"},
                           {"traffic", {{{"bytes", 2e9}, {"kernel", "read"}}}}};
  nlohmann::json bench = {{"schema", "rooflab.bench/1"}, {"benchmarks", nlohmann::json::array()}};
  auto add = [&](const std::string& name, double flops, double ms, bool calibration, int threads) {
    nlohmann::json f = fields;
    f["name"] = name;
    f["flops"] = flops;
    if (calibration) f["working_set"] = 1e5;  // L2 on the fixture (32 KiB < 1e5 B <= 512 KiB)
    f["core_work"] = {{"flop", flops}};
    f["threads"] = threads;
    f["calibration"] = calibration;
    bench["benchmarks"].push_back({{"name", name}, {"run_type", "iteration"}, {"real_time", ms}, {"time_unit", "ms"},
                                   {"rooflab", f}});
  };
  // calibrated: 1.6e9 x 1e-10 = 0.16 s in-core + 0.1 s from DRAM (beyond the calibration's L2)
  add("f/v/avx2/f64/big/threads:1", 1.6e9, 250, false, 1);
  add("f/v/avx2/f64/small/threads:1", 1e7, 1, true, 1);     // 1e-10 s a flop
  add("f/v/avx2/f64/big/threads:2", 1.6e9, 130, false, 2);  // no 2-thread calibration: 0.08 s
  const nlohmann::json machine = zen3_json();
  const auto m = evaluate(bench, &machine, "bench.json", "machine.json");
  const auto& rows = m["rows"];
  ASSERT_EQ(rows.size(), 2u);  // the calibration row is apart
  ASSERT_EQ(m["calibration_rows"].size(), 1u);
  EXPECT_TRUE(m["calibration_rows"][0]["calibration"].get<bool>());
  EXPECT_EQ(m["calibration_rows"][0]["ecm"]["in_core"], "peak");
  EXPECT_EQ(rows[0]["ecm"]["in_core"], "calibration");
  EXPECT_NEAR(rows[0]["ecm"]["time_s"].get<double>(), 0.26, 1e-12);
  EXPECT_EQ(rows[0]["ecm"]["calibration"]["level"], "L2");
  EXPECT_EQ(rows[0]["ecm"]["calibration"]["cases"][0], "f/v/avx2/f64/small/threads:1");
  EXPECT_NE(rows[0]["ecm"]["in_core_source"].get<std::string>().find("calibration"), std::string::npos);
  EXPECT_FALSE(rows[0]["calibration"].get<bool>());
  EXPECT_EQ(rows[1]["ecm"]["in_core"], "peak");
  // 2 threads on the fixture: max(T_OL 1.6e9 / 64 GF/s, memory 2e9 / 25 GB/s) = 0.08
  EXPECT_NEAR(rows[1]["ecm"]["time_s"].get<double>(), 0.08, 1e-12);
  EXPECT_NE(rows[1]["ecm"]["in_core_source"].get<std::string>().find("no calibration case"), std::string::npos);
  EXPECT_EQ(m["accuracy"]["all"]["cases"], 2);  // the calibration row is not counted
  // accuracy() itself skips a calibration row handed to it.
  nlohmann::json all = rows;
  all.push_back(m["calibration_rows"][0]);
  EXPECT_EQ(accuracy(all)["all"]["cases"], 2);
  EXPECT_EQ(m["accuracy"]["all"]["ecm"]["cases"], 2);
  EXPECT_NEAR(m["accuracy"]["all"]["ecm"]["within_10"].get<double>(), 0.5, 1e-12);  // 0.25 vs 0.26; 0.13 vs 0.08
  bench["benchmarks"][1]["rooflab"]["calibration"] = "yes";
  EXPECT_THROW(evaluate(bench, &machine, "bench.json", "machine.json"), Error);

  // An overlap probe of the same case in L3 (1e7 B on the fixture: 512 KiB < 1e7 <= 32 MiB):
  // 4e8 flops = 0.04 s in-core at the fit's 1e-10 s a flop, 5e8 B read from L3 = 0.01 s
  // beyond the calibration's L2; measured 46 ms: the kernel adds (0.046 - 0.04) / 0.01 = 0.6
  // of it. The big case: 0.16 + 0.6 x 0.1 (its DRAM time) = 0.22. The probe is never fitted.
  bench["benchmarks"][1]["rooflab"]["calibration"] = true;
  add("f/v/avx2/f64/probe/threads:1", 4e8, 46, true, 1);
  bench["benchmarks"].back()["rooflab"]["working_set"] = 1e7;
  bench["benchmarks"].back()["rooflab"]["traffic"] = {{{"bytes", 5e8}, {"kernel", "read"}}};
  bench["benchmarks"].back()["rooflab"]["calibration_probe"] = true;
  const auto p = evaluate(bench, &machine, "bench.json", "machine.json");
  ASSERT_EQ(p["calibration_rows"].size(), 2u);
  const auto& c = p["rows"][0]["ecm"]["calibration"];
  EXPECT_NEAR(c["overlap"].get<double>(), 0.6, 1e-9);
  EXPECT_EQ(c["overlap_probe"], "f/v/avx2/f64/probe/threads:1");
  EXPECT_EQ(c["overlap_level"], "L3");
  EXPECT_EQ(c["cases"].size(), 1u);  // the probe is not fitted
  EXPECT_NEAR(c["time_s"].get<double>(), 0.16, 1e-9);
  EXPECT_NEAR(p["rows"][0]["ecm"]["time_s"].get<double>(), 0.22, 1e-9);
  // A probe slower than T_core + T_beyond: the kernel streams slower than the ceilings (typical's
  // page walks), so its transfers cost more than at the ceilings: (0.08 - 0.04) / 0.01 = 4, not
  // clamped to 1: 0.16 + 4 x 0.1 = 0.56.
  bench["benchmarks"].back()["real_time"] = 80;
  const auto slow = evaluate(bench, &machine, "bench.json", "machine.json")["rows"][0]["ecm"];
  EXPECT_NEAR(slow["calibration"]["overlap_measured"].get<double>(), 4, 1e-9);
  EXPECT_NEAR(slow["time_s"].get<double>(), 0.56, 1e-9);
  bench["benchmarks"].back()["real_time"] = 46;

  // A probe prices the cases of its own level or deeper, the deepest usable one first. A DRAM
  // probe (1e9 B): 0.04 s in-core, 5e8 B at DRAM's read 20 GB/s (its own ceiling, not the
  // bound's fastest traffic) = 0.025 beyond; measured 45 ms: 0.2. The DRAM case takes it:
  // 0.16 + 0.2 x 0.1 = 0.18; an L3 case (1e7 B, 5e8 B from L3 = 0.01) the L3 probe's 0.6:
  // 0.04 + 0.6 x 0.01 = 0.046.
  add("f/v/avx2/f64/probe_dram/threads:1", 4e8, 45, true, 1);
  bench["benchmarks"].back()["rooflab"]["working_set"] = 1e9;
  bench["benchmarks"].back()["rooflab"]["traffic"] = {{{"bytes", 5e8}, {"kernel", "read"}}};
  bench["benchmarks"].back()["rooflab"]["calibration_probe"] = true;
  add("f/v/avx2/f64/mid/threads:1", 4e8, 47, false, 1);
  bench["benchmarks"].back()["rooflab"]["working_set"] = 1e7;
  bench["benchmarks"].back()["rooflab"]["traffic"] = {{{"bytes", 5e8}, {"kernel", "read"}}};
  const auto lv = evaluate(bench, &machine, "bench.json", "machine.json");
  const auto& big = lv["rows"][0]["ecm"];
  EXPECT_EQ(big["calibration"]["overlap_probe"], "f/v/avx2/f64/probe_dram/threads:1");
  EXPECT_EQ(big["calibration"]["overlap_level"], "DRAM");
  EXPECT_NEAR(big["calibration"]["overlap"].get<double>(), 0.2, 1e-9);
  EXPECT_NEAR(big["time_s"].get<double>(), 0.18, 1e-9);
  const auto& mid = lv["rows"][2]["ecm"];
  ASSERT_EQ(lv["rows"][2]["name"], "f/v/avx2/f64/mid/threads:1");
  EXPECT_EQ(mid["calibration"]["overlap_probe"], "f/v/avx2/f64/probe/threads:1");
  EXPECT_NEAR(mid["time_s"].get<double>(), 0.046, 1e-9);
  // Without the L3 probe, the L3 case has none (a deeper probe never prices it): all added.
  bench["benchmarks"].erase(bench["benchmarks"].begin() + 3);
  const auto only_dram = evaluate(bench, &machine, "bench.json", "machine.json");
  ASSERT_EQ(only_dram["rows"][2]["name"], "f/v/avx2/f64/mid/threads:1");
  EXPECT_TRUE(only_dram["rows"][2]["ecm"]["calibration"]["overlap_probe"].is_null());
  EXPECT_NEAR(only_dram["rows"][2]["ecm"]["time_s"].get<double>(), 0.05, 1e-9);
  EXPECT_NEAR(only_dram["rows"][0]["ecm"]["time_s"].get<double>(), 0.18, 1e-9);
}

// The families' calibration shapes: valid cases, none of them an evaluated case, same variant,
// ISA, dtype, params and threads; Sinkhorn declares its four in-core units.
TEST(CalibrationFamilies, ShapesAreValidAndNeverAnEvaluatedCase) {
  for (const char* profile : {"smoke", "quick"}) {
    const std::vector<Case> cases = select_cases(profile, "", {});
    std::set<std::string> names;
    for (const auto& c : cases) names.insert(c.name());
    const std::vector<Case> cal = calibration_cases_of(cases);
    EXPECT_FALSE(cal.empty()) << profile;
    std::set<std::string> seen;
    for (const Case& k : cal) {
      EXPECT_FALSE(names.count(k.name())) << k.name();
      EXPECT_TRUE(seen.insert(k.name()).second) << k.name();
      EXPECT_NO_THROW(validate_case(k)) << k.name();
    }
  }
  const Case sfc = parse_case_name("gemm/sfc_ca/avx2/f64/2048x2048x2048/k_layers:2/kbf:2/threads:2");
  const auto cal = calibration_cases_of({sfc});
  ASSERT_EQ(cal.size(), 1u);
  EXPECT_EQ(cal[0].name(), "gemm/sfc_ca/avx2/f64/384x384x512/k_layers:2/kbf:2/threads:2");
  const auto sk = case_fields(parse_case_name("sinkhorn/c2r/f64/4097x1/part:iter/threads:1"));
  EXPECT_EQ(sk["core_work"]["row"], 4097.0);
  EXPECT_EQ(sk["core_work"]["element"], 4097.0);
  EXPECT_EQ(sk["core_work"]["col"], 1.0);
  EXPECT_EQ(sk["core_work"]["call"], 1.0);
  const auto g = case_fields(parse_case_name("gemm/blocked/avx2/f64/64x64x64/threads:1"));
  EXPECT_EQ(g["core_work"]["flop"], g["flops"]);
  // sfc_ca: the flops its BRGEMM runs, K padded to whole bk = 128 blocks, a tile's edge to whole
  // MR x NR blocks (avx512 f64 8 x 24: N 777 -> 8 x 96 + 24; avx2 f64 4 x 12: 8 x 96 + 12); the
  // calibration shape runs exactly its flops.
  const auto s512 = case_fields(parse_case_name("gemm/sfc_ca/avx512/f64/1000x777x513/k_layers:1/kbf:2/threads:1"));
  EXPECT_EQ(s512["core_work"]["brgemm_flop"], 2.0 * 1000 * 792 * 640);
  EXPECT_FALSE(s512["core_work"].contains("flop"));
  const auto s2 = case_fields(parse_case_name("gemm/sfc_ca/avx2/f64/1000x777x513/k_layers:1/kbf:2/threads:1"));
  EXPECT_EQ(s2["core_work"]["brgemm_flop"], 2.0 * 1000 * 780 * 640);
  const auto scal = case_fields(parse_case_name("gemm/sfc_ca/avx512/f64/384x384x256/k_layers:1/kbf:2/threads:1"));
  EXPECT_EQ(scal["core_work"]["brgemm_flop"], scal["flops"]);
  // The loop orders calibrate at the case's strides: M / 4 for ijk / jik, M / 2 for jki / kji;
  // the row walks (ikj, kij) at 384 x 384 x 256.
  auto shape = [](const char* name) { return calibration_cases_of({parse_case_name(name)}).at(0).name(); };
  EXPECT_EQ(shape("gemm/ijk/f64/512x512x512/threads:2"), "gemm/ijk/f64/128x512x512/threads:2");
  EXPECT_EQ(shape("gemm/jik/f64/512x512x512/threads:2"), "gemm/jik/f64/128x512x512/threads:2");
  EXPECT_EQ(shape("gemm/jki/f64/512x512x512/threads:2"), "gemm/jki/f64/256x512x512/threads:2");
  EXPECT_EQ(shape("gemm/kji/f32/512x512x512/threads:1"), "gemm/kji/f32/256x512x512/threads:1");
  EXPECT_EQ(shape("gemm/ikj/f64/512x512x512/threads:2"), "gemm/ikj/f64/384x384x256/threads:2");
}

// Overlap probes (Family::overlap_probes): marked, one level deeper, none for the loop orders
// or the tiled Floyd-Warshall schedules.
TEST(CalibrationFamilies, OverlapProbes) {
  std::set<std::string> probes;
  const auto cal = calibration_cases_of({parse_case_name("gemm/blocked/avx2/f32/1000x777x513/threads:2"),
                                         parse_case_name("gemm/ijk/f64/512x512x512/threads:2"),
                                         parse_case_name("sinkhorn/c2r/f64/4096x4096/part:row/threads:1"),
                                         parse_case_name("floyd_warshall/naive/f32/1024x1024/threads:1"),
                                         parse_case_name("floyd_warshall/bdl/avx2/f32/1024x1024/sched:rec/bs:64/task:256/threads:1")},
                                        &probes);
  // Sinkhorn: 3/4 of the rows at the row length, in DRAM where the case's matrix (128 MiB) is at
  // least twice this machine's L3 (sysfs); in L3 for a matrix of 2x the L2s up to the L3
  // (1023 x 517 f64, 4.2 MB); none for one within the L2s.
  const HostCacheSizes& hc = host_cache_sizes();
  std::set<std::string> expect = {"gemm/blocked/avx2/f32/768x768x256/threads:2", "floyd_warshall/naive/f32/896x896/threads:1"};
  // 4096 x 4096 f64: DRAM beside an L3 of up to 64 MiB, in L3 beside one of 128 MiB or more (the
  // Xeon guests' 260-300 MiB); none between.
  const double big = 128.0 * 1024 * 1024;
  if (big >= 2.0 * double(hc.l3) || (big >= 2.0 * double(hc.l2) && big <= double(hc.l3)))
    expect.insert("sinkhorn/c2r/f64/3072x4096/part:row/threads:1");
  EXPECT_EQ(probes, expect);
  std::set<std::string> l3;
  calibration_cases_of({parse_case_name("sinkhorn/c2r/f64/1023x517/part:row/threads:1")}, &l3);
  const double b = 1023.0 * 517 * 8;
  if (b >= 2.0 * double(hc.l2) && b <= double(hc.l3))
    EXPECT_EQ(l3, std::set<std::string>{"sinkhorn/c2r/f64/767x517/part:row/threads:1"});
  else
    EXPECT_TRUE(l3.empty());
  std::set<std::string> none;
  calibration_cases_of({parse_case_name("sinkhorn/c2r/f64/128x256/part:row/threads:1")}, &none);
  EXPECT_TRUE(none.empty());
  for (const auto& name : probes)
    EXPECT_TRUE(std::any_of(cal.begin(), cal.end(), [&](const Case& k) { return k.name() == name; })) << name;
  // Without the set, no probes (the calibration shape only).
  EXPECT_EQ(calibration_cases_of({parse_case_name("gemm/blocked/avx2/f32/1000x777x513/threads:2")}).size(), 1u);
}

// Floyd-Warshall: calibration shapes at the case's row stride (tiled: N x N x LD, one group per
// stride), whole rows for flat; in-core units on the schedule's critical path.
TEST(CalibrationFamilies, FloydWarshallShapesAndUnits) {
  const Case simd = parse_case_name("floyd_warshall/simd/avx2/f32/1024x1024/sched:blocked/layout:std/bs:64/threads:2");
  std::vector<std::string> names;
  for (const Case& k : calibration_cases_of({simd})) names.push_back(k.name());
  EXPECT_EQ(names, (std::vector<std::string>{
                       "floyd_warshall/simd/avx2/f32/128x128x1024/sched:blocked/layout:std/bs:64/threads:2",
                       "floyd_warshall/simd/avx2/f32/256x256x1024/sched:blocked/layout:std/bs:64/threads:2",
                       "floyd_warshall/simd/avx2/f32/384x384x1024/sched:blocked/layout:std/bs:64/threads:2",
                       "floyd_warshall/simd/avx2/f32/512x512x1024/sched:blocked/layout:std/bs:64/threads:2"}));
  // The case and its shapes share the group (the stride: 4 KiB); 777 (padded 832) has its own.
  EXPECT_EQ(case_fields(simd)["calibration_group"], "row stride 4096 B");
  EXPECT_EQ(case_fields(calibration_cases_of({simd})[0])["calibration_group"], "row stride 4096 B");
  EXPECT_EQ(case_fields(parse_case_name("floyd_warshall/simd/avx2/f32/777x777/sched:blocked/layout:std/bs:64/threads:2"))
                ["calibration_group"], "row stride 3328 B");
  // Padded 128 (smoke, N = 97): only the 128 shape fits the stride.
  EXPECT_EQ(calibration_cases_of({parse_case_name("floyd_warshall/bdl/avx2/f32/97x97/sched:rec/bs:64/task:256/threads:2")}).size(), 1u);
  const Case naive = parse_case_name("floyd_warshall/naive/f32/1024x1024/threads:2");
  EXPECT_EQ(calibration_cases_of({naive})[3].name(), "floyd_warshall/naive/f32/512x512/threads:2");
  EXPECT_TRUE(case_fields(naive)["calibration_group"].is_null());
  // flat, 2 threads: each k, a thread's 512 rows of 1024 updates; 1024 steps.
  const auto nw = case_fields(naive)["core_work"];
  EXPECT_EQ(nw["update"], 1024.0 * 512 * 1024);
  EXPECT_EQ(nw["row"], 1024.0 * 512);
  EXPECT_EQ(nw["step"], 1024.0);
  // blocked, 2 threads, nt = 16: per pivot step the pivot tile (plain), then ceil(30 / 2) pivot
  // row / column and ceil(225 / 2) = 113 other tile ops (register-blocked): 16 x 1 and 16 x 128
  // tiles of 64^3 updates.
  const double tile = 64.0 * 64 * 64;
  const auto rb = case_fields(parse_case_name("floyd_warshall/regblock/avx2/f32/1024x1024/sched:blocked/layout:bdl/bs:64/threads:2"))["core_work"];
  EXPECT_EQ(rb["update"], 16 * 1 * tile);
  EXPECT_EQ(rb["update_regblock"], 16 * 128 * tile);
  EXPECT_EQ(rb["step"], 16.0);
  // recursive, 1 thread: every tile op on the path, the 16 pivot tiles plain (i == j == k).
  const auto r1 = case_fields(parse_case_name("floyd_warshall/regblock/avx2/f32/1024x1024/sched:rec/layout:bdl/bs:64/task:256/threads:1"))["core_work"];
  EXPECT_EQ(r1["update"], 16 * tile);
  EXPECT_EQ(r1["update_regblock"], (4096 - 16) * tile);
  // recursive, 2 threads: the critical path lies between half and all of the work, and a
  // diagonal call below the task size (4 tiles) runs on one thread.
  const auto r2 = case_fields(parse_case_name("floyd_warshall/regblock/avx2/f32/1024x1024/sched:rec/layout:bdl/bs:64/task:256/threads:2"))["core_work"];
  const double all2 = r2["update"].get<double>() + r2["update_regblock"].get<double>();
  EXPECT_GE(all2, 2048 * tile);
  EXPECT_LT(all2, 2048 * tile * 1.15);
  const auto small = case_fields(parse_case_name("floyd_warshall/bdl/avx2/f32/128x128x1024/sched:rec/bs:64/task:256/threads:2"))["core_work"];
  EXPECT_EQ(small["update"], 8 * tile);  // 2^3 tile ops, all on one thread
  EXPECT_FALSE(small.contains("update_regblock"));
  // 4 tiles a side: the top call in parallel, its 2-tile diagonal calls serial: per phase
  // 8 (diagonal) + 8 (4 pieces of 4 ops) + 4 (2 pieces of 4) twice = 40 of the 64 tile ops.
  const auto four = case_fields(parse_case_name("floyd_warshall/bdl/avx2/f32/256x256x1024/sched:rec/bs:64/task:256/threads:2"))["core_work"];
  EXPECT_EQ(four["update"], 40 * tile);
}

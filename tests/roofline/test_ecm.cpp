// The ECM prediction's arithmetic (roofline/ecm.hpp) on two fixture machines with round
// numbers: an AVX2-only AMD (Zen 3 like, overlap rule assumed "overlapping") and an AVX-512
// Intel (Xeon like, assumed "serial"). Expected values are worked out by hand in the comments.
#include <gtest/gtest.h>

#include "harness/error.hpp"
#include "harness/families.hpp"
#include "harness/json_io.hpp"
#include "harness/registry.hpp"
#include "roofline/ecm.hpp"
#include "roofline/evaluate.hpp"
#include "roofline/predict.hpp"
#include "ecm_fixtures.hpp"

using namespace rooflab;
using namespace rooflab::roofline;
using namespace rooflab::roofline::test;

namespace {
// T_OL, T_nOL, T_L1L2, T_L2L3, T_L3Mem and the time, against hand-computed values.
void expect_ecm(const Ecm& e, std::initializer_list<double> want) {
  const double got[] = {e.t_ol, e.t_nol, e.t_l1l2, e.t_l2l3, e.t_l3mem, e.time_s};
  const char* names[] = {"T_OL", "T_nOL", "T_L1L2", "T_L2L3", "T_L3Mem", "time"};
  ASSERT_EQ(want.size(), 6u);
  int i = 0;
  for (double w : want) {
    EXPECT_NEAR(got[i], w, 1e-12) << names[i];
    ++i;
  }
}

}  // namespace

TEST(EcmRule, AssumedFromVendorAndSaidSo) {
  const OverlapRule amd = overlap_rule(machine_from_json(zen3_json()));
  EXPECT_EQ(amd.rule, "overlapping");
  EXPECT_FALSE(amd.measured);
  EXPECT_NE(amd.source.find("assumed, not measured"), std::string::npos);
  EXPECT_NE(amd.source.find("AMD"), std::string::npos);
  const OverlapRule intel = overlap_rule(machine_from_json(xeon_json()));
  EXPECT_EQ(intel.rule, "serial");
  EXPECT_FALSE(intel.measured);
  EXPECT_NE(intel.source.find("Intel"), std::string::npos);
  nlohmann::json other = zen3_json();
  other["host"]["cpu"] = "Some ARM core";
  const OverlapRule unknown = overlap_rule(machine_from_json(other));
  EXPECT_EQ(unknown.rule, "serial");
  EXPECT_NE(unknown.source.find("no known vendor"), std::string::npos);
}

TEST(EcmRule, MeasuredFieldWinsAndBadValueIsAnError) {
  const OverlapRule r = overlap_rule(with_rule(zen3_json(), "serial"));
  EXPECT_EQ(r.rule, "serial");
  EXPECT_TRUE(r.measured);
  EXPECT_EQ(r.source, "test");
  EXPECT_THROW(overlap_rule(with_rule(zen3_json(), "sometimes")), Error);
}

// characterize writes "undecided" when its fits do not tell the rules apart: the vendor's rule
// is then assumed, labelled as such, and the undecided measurement named.
TEST(EcmRule, UndecidedMeasurementFallsBackToTheVendorAssumption) {
  const OverlapRule r = overlap_rule(with_rule(zen3_json(), "undecided"));
  EXPECT_EQ(r.rule, "overlapping");
  EXPECT_FALSE(r.measured);
  EXPECT_NE(r.source.find("assumed, not measured"), std::string::npos);
  EXPECT_NE(r.source.find("undecided"), std::string::npos);
  EXPECT_EQ(overlap_rule(with_rule(xeon_json(), "undecided")).rule, "serial");
}

TEST(EcmZen3, OverlappingRuleInDram) {
  const Ecm e = ecm(zen3_model(), machine_from_json(zen3_json()), 1, Isa::avx2);
  EXPECT_FALSE(e.fallback);
  EXPECT_EQ(e.overlap.rule, "overlapping");
  EXPECT_EQ(e.level, "DRAM");
  expect_ecm(e, {0.1, 0.1, 0.08, 0.08, 0.15, 0.15});
  EXPECT_EQ(e.compute_isa, "avx2");
  EXPECT_EQ(e.bandwidth_isa, "avx2");
}

TEST(EcmZen3, SerialRuleInDram) {
  const Ecm e = ecm(zen3_model(), with_rule(zen3_json(), "serial"), 1, Isa::avx2);
  EXPECT_EQ(e.overlap.rule, "serial");
  expect_ecm(e, {0.1, 0.1, 0.04, 0.04, 0.09, 0.1 + 0.04 + 0.04 + 0.09});
}

// Working set in L2 (32 KiB < 1e5 B <= 512 KiB): the L2<-L3 and L3<-DRAM terms are not priced.
TEST(EcmZen3, OnlyBoundariesOutsideTheLevelArePriced) {
  const Ecm o = ecm(zen3_model(1e5), machine_from_json(zen3_json()), 1, Isa::avx2);
  EXPECT_EQ(o.level, "L2");
  EXPECT_EQ(o.t_l2l3, 0);
  EXPECT_EQ(o.t_l3mem, 0);
  EXPECT_NEAR(o.time_s, 0.1, 1e-12);  // max(0.1, 0.1, 0.08)
  const Ecm s = ecm(zen3_model(1e5), with_rule(zen3_json(), "serial"), 1, Isa::avx2);
  EXPECT_NEAR(s.time_s, 0.14, 1e-12);  // 0.1 + 0.04
  EXPECT_EQ(s.capacity_bytes, 524288.0);
  EXPECT_EQ(s.capacity_source, "measured");
}

// A pure stream of B bytes from level X through every level reproduces the measured B / bw(X)
// under both rules: the transfer costs are derived so (ecm.hpp).
TEST(EcmBothMachines, PureStreamReproducesMeasuredBandwidth) {
  struct Case { nlohmann::json j; Isa isa; double ws; const char* level; double gbps; };
  const Case cases[] = {{zen3_json(), Isa::avx2, 1e9, "DRAM", 25.0}, {zen3_json(), Isa::avx2, 1e6, "L3", 80.0},
                        {xeon_json(), Isa::avx512, 1e9, "DRAM", 25.0}, {xeon_json(), Isa::avx512, 1e5, "L2", 200.0},
                        {xeon_json(), Isa::avx2, 1e7, "L3", 75.0}};
  for (const Case& c : cases)
    for (const char* rule : {"serial", "overlapping"}) {
      Model m;
      m.working_set = c.ws;
      m.traffic = {{1e9, "update"}};
      m.phases = {LevelTraffic{{{1e9, "update"}}, {{1e9, "update"}}, {{1e9, "update"}}, {{1e9, "update"}}, ""}};
      const Ecm e = ecm(m, with_rule(c.j, rule), 1, c.isa);
      EXPECT_EQ(e.level, c.level);
      EXPECT_NEAR(e.time_s, 1e9 / (c.gbps * 1e9), 1e-12) << c.level << " " << rule;
    }
}


TEST(EcmXeon, SerialRuleAssumedForIntel) {
  const Ecm e = ecm(xeon_model(), machine_from_json(xeon_json()), 1, Isa::avx512);
  EXPECT_EQ(e.overlap.rule, "serial");
  EXPECT_FALSE(e.overlap.measured);
  expect_ecm(e, {0.1, 0.1, 0.06, 0.05, 0.1125, 0.3225});
  const Ecm o = ecm(xeon_model(), with_rule(xeon_json(), "overlapping"), 1, Isa::avx512);
  EXPECT_NEAR(o.time_s, 0.15, 1e-12);
}

// An avx2 kernel on the AVX-512 machine is priced with the avx2 tables:
//   T_OL = 6.4e9 / 32 = 0.2; T_nOL = 4e10 / 250 = 0.16; 1.6e10 x (1/125 - 1/250) = 0.064;
//   8e9 x (1/62.5 - 1/125) = 0.064; DRAM (widest table) 3e9 x (1/20 - 1/62.5) = 0.102 -> 0.39
TEST(EcmXeon, Avx2KernelUsesAvx2Ceilings) {
  const Ecm e = ecm(xeon_model(), machine_from_json(xeon_json()), 1, Isa::avx2);
  EXPECT_EQ(e.compute_isa, "avx2");
  EXPECT_EQ(e.bandwidth_isa, "avx2");
  expect_ecm(e, {0.2, 0.16, 0.064, 0.064, 0.102, 0.39});
  EXPECT_TRUE(e.notes.empty());
}

// No per-level traffic: the ECM is the roofline's single-level terms, and says so.
//   T_OL = 1.6e9 / 32 = 0.05, memory 2e9 / 20 GB/s (DRAM read) = 0.1
TEST(EcmFallback, NoPerLevelTrafficUsesRooflineTerms) {
  Model m;
  m.flops = 1.6e9;
  m.compute_ceiling = "fma_f64";
  m.working_set = 1e9;
  m.traffic = {{2e9, "read"}};
  for (const char* rule : {"serial", "overlapping"}) {
    const Ecm e = ecm(m, with_rule(zen3_json(), rule), 1, Isa::avx2);
    EXPECT_TRUE(e.fallback);
    EXPECT_NEAR(e.t_ol, 0.05, 1e-12);
    EXPECT_NEAR(e.t_mem_fallback, 0.1, 1e-12);
    EXPECT_NEAR(e.time_s, 0.1, 1e-12);
    ASSERT_FALSE(e.notes.empty());
    EXPECT_NE(e.notes[0].find("no per-level traffic"), std::string::npos);
    const auto j = to_json(e);
    EXPECT_TRUE(j["fallback"].get<bool>());
    EXPECT_TRUE(j["T_nOL"].is_null());
    EXPECT_NEAR(j["T_mem_roofline"].get<double>(), 0.1, 1e-12);
  }
}

// The roofline bound's DRAM ceiling is one pipe: every stream at the fastest DRAM traffic measured
// at the thread count (a prefetching kernel read faster than the read ceiling, docs/model.md);
// the ECM's fallback keeps each stream's own ceiling. Zen 3: 3e9 B read, read 20 GB/s (0.15 s),
// fastest update / triad / copy 25 (0.12); 2 threads: update 30 (0.1). Xeon: the S-stream
// table's update_s4, 40 GB/s (0.075). An in-cache working set keeps its per-kernel ceilings.
TEST(RooflineBound, DramCeilingIsTheFastestMeasuredTraffic) {
  Model m;
  m.working_set = 1e9;
  m.traffic = {{3e9, "read"}};
  const Prediction z = predict(m, machine_from_json(zen3_json()), 1, Isa::avx2);
  EXPECT_NEAR(z.memory_time_s, 0.12, 1e-12);
  EXPECT_NEAR(z.memory_time_kernels_s, 0.15, 1e-12);
  EXPECT_EQ(z.bandwidth_kernels, std::vector<std::string>{"read"});  // each term's own kernel, as before
  ASSERT_FALSE(z.notes.empty());
  EXPECT_NE(z.notes.back().find("fastest DRAM traffic"), std::string::npos);
  EXPECT_NEAR(predict(m, machine_from_json(zen3_json()), 2, Isa::avx2).time_s, 0.1, 1e-12);
  const Prediction x = predict(m, machine_from_json(xeon_json()), 1, Isa::avx512);
  EXPECT_NEAR(x.time_s, 0.075, 1e-12);
  EXPECT_NE(x.notes.back().find("'update_s4' 40.0 GB/s"), std::string::npos);
  const Ecm e = ecm(m, machine_from_json(zen3_json()), 1, Isa::avx2);
  EXPECT_NEAR(e.time_s, 0.15, 1e-12);
  m.working_set = 1e7;  // L3 on both: the level's own read ceiling
  const Prediction l3 = predict(m, machine_from_json(zen3_json()), 1, Isa::avx2);
  EXPECT_EQ(l3.level, "L3");
  EXPECT_NEAR(l3.memory_time_s, l3.memory_time_kernels_s, 1e-15);
  EXPECT_EQ(l3.bandwidth_kernels, std::vector<std::string>{"read"});
}

// Working sets near a capacity (Zen 3 fixture, L3 32 MiB): priced where they are placed, marked.
TEST(EcmStraddle, NearCapacityIsMarkedWithTheLevelPriced) {
  const Machine z = machine_from_json(zen3_json());
  const Ecm over = ecm(zen3_model(40.0 * (1 << 20)), z, 1, Isa::avx2);  // 40 MiB > 32 MiB
  EXPECT_EQ(over.level, "DRAM");
  EXPECT_TRUE(over.straddles);
  ASSERT_FALSE(over.notes.empty());
  EXPECT_NE(over.notes.back().find("part of it may stay in L3"), std::string::npos);
  const Ecm fill = ecm(zen3_model(20.0 * (1 << 20)), z, 1, Isa::avx2);  // 20 of 32 MiB
  EXPECT_EQ(fill.level, "L3");
  EXPECT_TRUE(fill.straddles);
  EXPECT_EQ(fill.t_l3mem, 0);
  const Ecm far = ecm(zen3_model(100.0 * (1 << 20)), z, 1, Isa::avx2);
  EXPECT_EQ(far.level, "DRAM");
  EXPECT_FALSE(far.straddles);
}

// The case: a 134 MB matrix on a CPU whose measured L3 is 260 MiB (reported 32 MiB):
// the measured capacity places it in L3, so no L3<-DRAM transfer is priced.
TEST(EcmStraddle, MeasuredCapacityPlacesALargeMatrixInL3) {
  nlohmann::json j = xeon_json();
  j["caches"]["reported"]["L3"] = 33554432;
  j["caches"]["measured"]["L3"] = 272629760;
  Model m = xeon_model();
  m.working_set = 134e6;
  const Ecm e = ecm(m, machine_from_json(j), 1, Isa::avx512);
  EXPECT_EQ(e.level, "L3");
  EXPECT_EQ(e.capacity_bytes, 272629760.0);
  EXPECT_EQ(e.capacity_source, "measured");
  EXPECT_EQ(e.t_l3mem, 0);
  EXPECT_NEAR(e.time_s, 0.1 + 0.06 + 0.05, 1e-12);
  const auto js = to_json(e);
  EXPECT_EQ(js["level"], "L3");
  EXPECT_EQ(js["capacity_source"], "measured");
}

// Serial rule where a level measured no slower than the one above: that transfer costs 0, noted.
TEST(EcmZen3, SerialTransferClampedAtZeroWithNote) {
  nlohmann::json j = zen3_json();
  j["bandwidth"]["levels"]["L2"]["read"]["1"] = 250.0;  // avx2 is the widest: bandwidth.levels
  const Ecm e = ecm(zen3_model(1e5), with_rule(j, "serial"), 1, Isa::avx2);
  EXPECT_EQ(e.t_l1l2, 0);
  ASSERT_FALSE(e.notes.empty());
  EXPECT_NE(e.notes.back().find("is not below"), std::string::npos);
}

// bench.json -> model.json: each row gets "ecm" beside the roofline, and "accuracy" counts the
// shares within 10% / 20% of each.
TEST(EcmEvaluate, RowsCarryEcmAndAccuracyShares) {
  nlohmann::json lv = {{"l1", {{{"bytes", 2e10}, {"kernel", "read"}}}}, {"l2", {{{"bytes", 8e9}, {"kernel", "read"}}}},
                       {"l3", {{{"bytes", 4e9}, {"kernel", "read"}}}}, {"mem", {{{"bytes", 3e9}, {"kernel", "read"}}}},
                       {"note", "t"}, {"flops", 3.2e9}};
  nlohmann::json fields = {{"family", "f"}, {"threads", 1}, {"flops", 3.2e9}, {"working_set", 1e9},
                           {"compute_ceiling", "fma_f64"}, {"isa", "avx2"}, {"library", nullptr},
                           {"traffic", {{{"bytes", 3.75e9}, {"kernel", "update"}}}}};
  nlohmann::json bench = {{"schema", "rooflab.bench/1"}, {"benchmarks", nlohmann::json::array()}};
  // a: ECM 0.15 s, roofline 3.75e9 / 25 (update, also the fastest DRAM traffic) = 0.15 s,
  //    measured 0.16 (both within 10%)
  // b: same model without ecm_traffic (fallback = roofline 0.15), measured 0.2 (neither within 20%)
  // c: ECM 0.15, measured 0.17 (within 20%, not 10%)
  const std::pair<const char*, double> runs[] = {{"f/a/f64/1/threads:1", 160}, {"f/b/f64/1/threads:1", 200},
                                                 {"f/c/f64/1/threads:1", 170}};
  for (const auto& [name, ms] : runs) {
    nlohmann::json f = fields;
    f["name"] = name;
    f["ecm_traffic"] = std::string(name).find("/b/") != std::string::npos ? nlohmann::json(nullptr) : nlohmann::json::array({lv});
    bench["benchmarks"].push_back({{"name", name}, {"run_type", "iteration"}, {"real_time", ms},
                                   {"time_unit", "ms"}, {"rooflab", f}});
  }
  const nlohmann::json machine = zen3_json();
  const auto m = evaluate(bench, &machine, "bench.json", "machine.json");
  const auto& a = m["rows"][0];
  ASSERT_TRUE(a["ecm"].is_object());
  EXPECT_NEAR(a["ecm"]["time_s"].get<double>(), 0.15, 1e-12);
  EXPECT_NEAR(a["ecm"]["T_L3Mem"].get<double>(), 0.15, 1e-12);
  EXPECT_EQ(a["ecm"]["overlap"], "overlapping");
  EXPECT_FALSE(a["ecm"]["overlap_measured"].get<bool>());
  EXPECT_EQ(a["ecm"]["level"], "DRAM");
  EXPECT_NEAR(a["ecm"]["efficiency"].get<double>(), 0.15 / 0.16, 1e-12);
  EXPECT_TRUE(m["rows"][1]["ecm"]["fallback"].get<bool>());
  const auto& acc = m["accuracy"]["all"];
  EXPECT_EQ(acc["cases"], 3);
  EXPECT_NEAR(acc["roofline"]["within_10"].get<double>(), 1.0 / 3, 1e-12);
  EXPECT_NEAR(acc["ecm"]["within_10"].get<double>(), 1.0 / 3, 1e-12);
  EXPECT_NEAR(acc["ecm"]["within_20"].get<double>(), 2.0 / 3, 1e-12);
  EXPECT_EQ(m["accuracy"]["f"]["cases"], 3);
  // A malformed ecm_traffic is an error naming the key.
  bench["benchmarks"][0]["rooflab"]["ecm_traffic"] = 3;
  EXPECT_THROW(evaluate(bench, &machine, "bench.json", "machine.json"), Error);
}

// The families carry their per-level traffic into bench.json's fields.
TEST(EcmFamilies, GemmBlockedAndFloydWarshallDeclarePerLevelTraffic) {
  const auto blocked = case_fields(parse_case_name("gemm/blocked/avx2/f64/512x512x512/threads:1"));
  ASSERT_EQ(blocked["ecm_traffic"].size(), 2u);  // packing, then the micro-kernel
  EXPECT_EQ(blocked["ecm_traffic"][0]["name"], "pack");
  EXPECT_EQ(blocked["ecm_traffic"][0]["flops"], 0.0);
  EXPECT_EQ(blocked["ecm_traffic"][1]["flops"], blocked["flops"]);
  for (const auto& ph : blocked["ecm_traffic"])
    for (const char* k : {"l1", "l2", "l3", "mem"}) EXPECT_FALSE(ph[k].empty()) << k;
  const auto loops = case_fields(parse_case_name("gemm/ijk/f64/64x64x64/threads:1"));
  EXPECT_TRUE(loops["ecm_traffic"].is_null());
  auto l1_bytes = [](const nlohmann::json& f) {
    double b = 0;
    for (const auto& t : f["ecm_traffic"][0]["l1"]) b += t["bytes"].get<double>();
    return b;
  };
  // Register blocking cuts the core's L1 traffic (C once per tile op instead of bs times).
  const auto rb = case_fields(parse_case_name("floyd_warshall/regblock/avx2/f32/1024x1024/sched:rec/layout:bdl/bs:64/task:256/threads:1"));
  const auto plain = case_fields(parse_case_name("floyd_warshall/bdl/avx2/f32/1024x1024/sched:rec/bs:64/task:256/threads:1"));
  ASSERT_EQ(rb["ecm_traffic"].size(), 2u);  // relax, and the bdl conversions
  ASSERT_EQ(plain["ecm_traffic"].size(), 2u);
  EXPECT_EQ(rb["ecm_traffic"][1]["name"], "convert");
  EXPECT_LT(l1_bytes(rb), 0.5 * l1_bytes(plain));
  const auto flat = case_fields(parse_case_name("floyd_warshall/naive/f32/256x256/threads:1"));
  // The padded matrix's work is executed: 777 -> 832 for 64-tiles.
  const auto padded = case_fields(parse_case_name("floyd_warshall/bdl/avx2/f32/777x777/sched:rec/bs:64/task:256/threads:1"));
  EXPECT_EQ(padded["flops"], 2.0 * 777 * 777 * 777);
  EXPECT_EQ(padded["ecm_traffic"][0]["flops"], 2.0 * 832 * 832 * 832);
  ASSERT_EQ(flat["ecm_traffic"].size(), 1u);
  EXPECT_NEAR(flat["ecm_traffic"][0]["l2"][0]["bytes"].get<double>(), 2.0 * 256 * 256 * 256 * 4, 1);
}

// A phase's flops price T_OL (a kernel the compiler leaves scalar counts W lanes per flop), and
// phases add up: Zen 3, avx2, DRAM, overlapping:
//   phase 1 (6.4e9 flops): max(0.2, 0.1, 0.08, 0.08, 0.15) = 0.2
//   phase 2 (a copy, no flops): 1e9 update at every level: max(1e9 / 400, 1e9 / 160, 1e9 / 80,
//   1e9 / 25) = 0.04  -> 0.24
TEST(EcmZen3, PhasesAddUpAndPriceTheirOwnFlops) {
  Model m = zen3_model();
  m.phases[0].flops = 6.4e9;
  const std::vector<Traffic> copy = {{1e9, "update"}};
  m.phases.push_back({copy, copy, copy, copy, "copy", 0, "convert"});
  const Ecm e = ecm(m, machine_from_json(zen3_json()), 1, Isa::avx2);
  ASSERT_EQ(e.phases.size(), 2u);
  EXPECT_NEAR(e.phases[0].time_s, 0.2, 1e-12);
  EXPECT_NEAR(e.phases[1].time_s, 0.04, 1e-12);
  EXPECT_EQ(e.phases[1].t_ol, 0);
  EXPECT_NEAR(e.time_s, 0.24, 1e-12);
  EXPECT_NEAR(e.t_ol, 0.2, 1e-12);
  EXPECT_EQ(to_json(e)["phases"][1]["name"], "convert");
  // The scalar regblock kernel prices its flops at 16 / s lanes (not vectorized), the
  // vectorized ones at their flops.
  const auto sc = case_fields(parse_case_name("floyd_warshall/regblock/scalar/f32/256x256/sched:rec/layout:bdl/bs:64/task:256/threads:1"));
  const auto v = case_fields(parse_case_name("floyd_warshall/regblock/avx2/f32/256x256/sched:rec/layout:bdl/bs:64/task:256/threads:1"));
  EXPECT_GT(sc["ecm_traffic"][0]["flops"].get<double>(), 2 * sc["flops"].get<double>());
  EXPECT_EQ(v["ecm_traffic"][0]["flops"], v["flops"]);
}

namespace {
Model model_of(const char* name) {
  const Case c = parse_case_name(name);
  return variant_of(c).model(c);
}
}  // namespace

// Sinkhorn's column pass (c2r, portable code priced at scalar), Zen 3 fixture, A = 250000 x 64
// f64 (MN s = 1.28e8 B, DRAM; the 512-byte vectors stay in L1 on any host), a sum sweep (A read)
// then a scale sweep (A update), each T_OL = MN / 4 GF/s (scalar add_f64) = 0.004 and T_nOL =
// 3 MN s / 75 GB/s (L1 triad) = 0.00512:
//   overlapping: sum max(0.004, 0.00512, 1.28e8 / 40 = 0.0032, 1.28e8 / 25 = 0.00512, 1.28e8 / 20
//     = 0.0064) = 0.0064; scale max(.., 2.56e8 / 80 = 0.0032, 2.56e8 / 50 = 0.00512, 2.56e8 / 25
//     = 0.01024) = 0.01024 -> 0.01664 (sums: T_L1L2 0.0064, T_L2L3 0.01024, T_L3Mem 0.01664)
//   serial: sum 0.00512 + 1.28e8 (1/40 - 1/50) + 1.28e8 (1/25 - 1/40) + 1.28e8 (1/20 - 1/25) =
//     0.00512 + 0.00064 + 0.00192 + 0.00128; scale 0.00512 + 2.56e8 (1/80 - 1/100) + 2.56e8
//     (1/50 - 1/80) + 2.56e8 (1/25 - 1/50) = 0.00512 + 0.00064 + 0.00192 + 0.00512
//     -> 0.02176 (sums: T_L1L2 0.00128, T_L2L3 0.00384, T_L3Mem 0.0064)
TEST(EcmSinkhorn, C2rColumnPassBothRules) {
  const Model m = model_of("sinkhorn/c2r/f64/250000x64/part:col/threads:1");
  ASSERT_EQ(m.phases.size(), 2u);
  EXPECT_EQ(m.phases[0].name, "col_sum");
  EXPECT_EQ(m.phases[1].name, "col_scale");
  const Ecm o = ecm(m, machine_from_json(zen3_json()), 1, Isa::scalar);
  EXPECT_EQ(o.level, "DRAM");
  expect_ecm(o, {0.008, 0.01024, 0.0064, 0.01024, 0.01664, 0.01664});
  const Ecm s = ecm(m, with_rule(zen3_json(), "serial"), 1, Isa::scalar);
  expect_ecm(s, {0.008, 0.01024, 0.00128, 0.00384, 0.0064, 0.02176});
  EXPECT_TRUE(s.overlap.measured);
}

// mapuot avx512 on the Xeon fixture, A = 250000 x 64 f64, groups of 4 rows (2 KiB, the tail
// sweep from L1 on any host), DRAM through the 4-stream update ceiling:
//   T_OL = 4 MN / 32 GF/s = 0.002; T_nOL = (MN s + colf 2 MN s / 4) / 400 + (2 MN s + next
//   2 MN s / 4) / 500 = 1.92e8 / 400 + 3.2e8 / 500 = 0.00112; each boundary 2 MN s = 2.56e8 update
//   serial (Intel, assumed): 2.56e8 (1/200 - 1/500) = 0.000768, 2.56e8 (1/100 - 1/200) = 0.00128,
//     2.56e8 (1/40 update_s4 - 1/100) = 0.00384 -> 0.00112 + 0.000768 + 0.00128 + 0.00384 = 0.007008
//   overlapping: max(0.002, 0.00112, 0.00128, 0.00256, 2.56e8 / 40 = 0.0064) = 0.0064
TEST(EcmSinkhorn, MapuotStreamsFourRowsFromDram) {
  const Model m = model_of("sinkhorn/mapuot/avx512/f64/250000x64/threads:1");
  ASSERT_EQ(m.phases.size(), 1u);
  const Ecm s = ecm(m, machine_from_json(xeon_json()), 1, Isa::avx512);
  EXPECT_EQ(s.overlap.rule, "serial");
  expect_ecm(s, {0.002, 0.00112, 0.000768, 0.00128, 0.00384, 0.007008});
  const Ecm o = ecm(m, with_rule(xeon_json(), "overlapping"), 1, Isa::avx512);
  expect_ecm(o, {0.002, 0.00112, 0.00128, 0.00256, 0.0064, 0.0064});
}

// The other variants' terms: an iteration is a row pass and a column pass of two sweeps each;
// typical's column walk
// moves a whole line per element once its M lines exceed the caches (64 / s = 8x c2r's A
// traffic) and prices its scalar flops at 16 / s lanes; a short walk (64 lines) crosses once;
// the micro-kernel reads its sums once per mr rows; a row longer than half of L1 crosses L1
// twice (read, then update); fused_uv only reads K.
TEST(EcmSinkhorn, EveryVariantDeclaresPerLevelTraffic) {
  auto bytes = [](const std::vector<Traffic>& v) {
    double b = 0;
    for (const auto& t : v) b += t.bytes;
    return b;
  };
  const double MN = 4e6 * 4, s = 8;
  const Model it = model_of("sinkhorn/c2r/f64/4000000x4/part:iter/threads:1");
  ASSERT_EQ(it.phases.size(), 4u);  // row sum, row scale, column sum, column scale
  EXPECT_EQ(it.phases[0].name, "row_sum");
  EXPECT_EQ(it.phases[3].name, "col_scale");
  EXPECT_EQ(bytes(it.phases[0].l2), 2 * MN * s);  // a short row: in with the sums, out later
  EXPECT_EQ(bytes(it.phases[1].l2), 0);
  EXPECT_EQ(bytes(it.phases[2].l2), MN * s);
  EXPECT_EQ(bytes(it.phases[3].l2), 2 * MN * s);
  const Model ty = model_of("sinkhorn/typical/f64/4000000x4/part:col/threads:1");
  ASSERT_EQ(ty.phases.size(), 2u);
  for (const auto* lv : {&ty.phases[0].l2, &ty.phases[0].l3, &ty.phases[0].mem}) EXPECT_EQ(bytes(*lv), 8 * MN * s);
  for (const auto* lv : {&ty.phases[1].l2, &ty.phases[1].l3, &ty.phases[1].mem}) EXPECT_EQ(bytes(*lv), 8 * 2 * MN * s);
  EXPECT_EQ(ty.phases[0].flops + ty.phases[1].flops, 2 * 2 * MN);
  const Model short_walk = model_of("sinkhorn/typical/f64/64x4096/part:col/threads:1");
  EXPECT_EQ(bytes(short_walk.phases[0].l2) + bytes(short_walk.phases[1].l2), 3 * 64 * 4096 * s);
  const Model mk = model_of("sinkhorn/microkernel/avx2/f64/4000000x4/part:col/threads:1");
  EXPECT_EQ(bytes(mk.phases[0].l1) + bytes(mk.phases[1].l1), 3 * MN * s + 3 * MN * s / 4);
  EXPECT_EQ(mk.phases[0].mem[0].kernel, "read_s4");
  EXPECT_EQ(mk.phases[1].mem[0].kernel, "update_s4");
  const Model long_row = model_of("sinkhorn/blocked/f64/4x1000000/mc:8/nc:256/part:row/threads:1");
  EXPECT_EQ(bytes(long_row.phases[0].l2), 4e6 * s);  // read by the sums, then updated by the scale
  EXPECT_EQ(bytes(long_row.phases[1].l2), 2 * 4e6 * s);
  const Model uv = model_of("sinkhorn/fused_uv/avx2/f64/4000000x4/threads:1");
  ASSERT_EQ(uv.phases.size(), 1u);
  EXPECT_EQ(bytes(uv.phases[0].mem), MN * s);
  EXPECT_EQ(uv.phases[0].mem[0].kernel, "read_s4");
  EXPECT_EQ(uv.phases[0].flops, 4 * MN);
}

// The model's arithmetic on a fixture machine.json with round numbers.
#include <gtest/gtest.h>

#include <algorithm>

#include "harness/error.hpp"
#include "harness/json_io.hpp"
#include "roofline/evaluate.hpp"
#include "roofline/machine.hpp"
#include "roofline/predict.hpp"

using namespace rooflab;
using namespace rooflab::roofline;

static Machine fixture() { return load_machine(ROOFLAB_TEST_DIR "/core/fixture_machine.json"); }

TEST(Machine, LevelsFromMeasuredCapacities) {
  Machine m = fixture();
  ASSERT_EQ(m.caches.size(), 3u);
  EXPECT_EQ(m.caches[2].bytes, 33554432.0);  // measured L3 wins over the (false) reported one
  EXPECT_EQ(m.level_for(16 << 10, 1), "L1");
  EXPECT_EQ(m.level_for(48 << 10, 1), "L2");
  EXPECT_EQ(m.level_for(48 << 10, 2), "L1");       // private L1s: 2 x 32 KiB
  EXPECT_EQ(m.level_for(900 << 10, 2), "L2");
  EXPECT_EQ(m.level_for(30 << 20, 1), "L3");
  EXPECT_EQ(m.level_for(64 << 20, 2), "DRAM");     // shared L3 does not scale with threads
}

TEST(Machine, ThreadLookupUsesLargestMeasuredCountNotAbove) {
  Machine m = fixture();
  EXPECT_EQ(m.compute("fma_f64", 1), 40.0);
  EXPECT_EQ(m.compute("fma_f64", 8), 80.0);
  EXPECT_EQ(m.bandwidth("DRAM", "read", 2), 16.0);
  EXPECT_THROW(m.compute("addmin_f32", 1), Error);
  EXPECT_THROW(m.bandwidth("DRAM", "triad", 1), Error);
}

TEST(Predict, MemoryBoundSumsTrafficTerms) {
  Model md;
  md.flops = 2e8;                     // 2e8 / 20 GF/s = 10 ms
  md.traffic = {{1e9, "read"}, {1.6e9, "update"}};  // 1e9/10 GB/s + 1.6e9/8 GB/s = 0.3 s
  md.working_set = 1e9;
  md.compute_ceiling = "add_f64";
  Prediction p = predict(md, fixture(), 1);
  EXPECT_EQ(p.level, "DRAM");
  EXPECT_EQ(p.bound, "memory");
  // The bound prices DRAM as one pipe at the fastest traffic measured (read, 10 GB/s): 0.26 s;
  // each stream at its own ceiling (the ECM's fallback) 0.3 s.
  EXPECT_NEAR(p.memory_time_kernels_s, 0.3, 1e-12);
  EXPECT_NEAR(p.memory_time_s, 0.26, 1e-12);
  EXPECT_NEAR(p.compute_time_s, 0.01, 1e-12);
  EXPECT_NEAR(p.time_s, 0.26, 1e-12);
  EXPECT_NEAR(p.bandwidth_gbps, 10, 1e-9);
}

TEST(Predict, ComputeBoundInCache) {
  Model md;
  md.flops = 8e9;                     // 8e9 / 80 GF/s = 0.1 s at 2 threads
  md.traffic = {{1e6, "read"}};
  md.working_set = 16 << 10;
  md.compute_ceiling = "fma_f64";
  Prediction p = predict(md, fixture(), 2);
  EXPECT_EQ(p.level, "L1");
  EXPECT_EQ(p.bound, "compute");
  EXPECT_NEAR(p.time_s, 0.1, 1e-12);
}

// More threads than machine.json measured (characterize on fewer cores, an affinity mask or
// --threads): priced with its largest count, and said, since the time is then too slow.
TEST(Predict, MoreThreadsThanMeasuredIsSaid) {
  const Machine m = fixture();
  EXPECT_EQ(m.measured_threads(), 2);
  Model md;
  md.flops = 8e9;
  md.traffic = {{1e6, "read"}};
  md.working_set = 16 << 10;
  md.compute_ceiling = "fma_f64";
  auto says = [](const Prediction& p) {
    return std::count_if(p.notes.begin(), p.notes.end(),
                         [](const std::string& n) { return n.find("measured up to 2 thread(s)") != std::string::npos; });
  };
  EXPECT_EQ(says(predict(md, m, 2)), 0);
  const Prediction p = predict(md, m, 8);
  EXPECT_NEAR(p.time_s, 0.1, 1e-12);  // 80 GF/s, the 2-thread ceiling
  ASSERT_EQ(says(p), 1);
  EXPECT_NE(p.notes[0].find("up to 4x too slow"), std::string::npos) << p.notes[0];
  // SMT: 4 hardware threads on the 2 measured cores share those cores' ceilings, no note; more
  // than the hardware threads, a note.
  nlohmann::json smt = m.raw;
  smt["host"]["threads"] = 4;
  const Machine ms = machine_from_json(smt, "smt.json");
  EXPECT_EQ(says(predict(md, ms, 4)), 0);
  EXPECT_EQ(says(predict(md, ms, 8)), 1);
  // characterize --threads 2 on 4 cores: every case above 2 threads.
  smt["host"]["cores"] = 4;
  const Machine mt = machine_from_json(smt, "threads.json");
  const Prediction q = predict(md, mt, 4);
  ASSERT_EQ(says(q), 1);
  EXPECT_NE(q.notes[0].find("with --threads 2"), std::string::npos) << q.notes[0];
}

TEST(Predict, MissingCeilingIsAnError) {
  Model md;
  md.flops = 1;
  md.compute_ceiling = "addmin_f32";
  EXPECT_THROW(predict(md, fixture(), 1), Error);
}

// The fixture plus bandwidth.streams: DRAM read at 4 streams 2x the 1-stream read.
static Machine with_streams() {
  nlohmann::json j = read_json_file(ROOFLAB_TEST_DIR "/core/fixture_machine.json");
  j["bandwidth"]["streams"] = {
      {"counts", {2, 4, 8}},
      {"kernels", {"read", "update"}},
      {"levels", {{"DRAM", {{"read_s4", {{"1", 20.0}, {"2", 32.0}}}, {"update_s4", {{"1", 16.0}}}}}}}};
  return machine_from_json(j);
}

TEST(Machine, StreamKernelNamesSplitIntoBaseAndCount) {
  EXPECT_EQ(split_streams("read_s4").base, "read");
  EXPECT_EQ(split_streams("read_s4").streams, 4);
  EXPECT_EQ(split_streams("update_s16").streams, 16);
  for (const char* plain : {"read", "copy_nt", "triad_nt", "read_s", "read_sx", "_s4", "read_s0"}) {
    EXPECT_EQ(split_streams(plain).base, plain);
    EXPECT_EQ(split_streams(plain).streams, 1) << plain;
  }
}

TEST(Machine, StreamCeilingsComeFromTheStreamsSection) {
  const Machine m = with_streams();
  EXPECT_EQ(m.bandwidth("DRAM", "read_s4", 2), 32.0);
  EXPECT_EQ(m.bandwidth("DRAM", "update_s4", 2), 16.0);  // largest measured count <= 2
  EXPECT_EQ(m.bandwidth("DRAM", "read", 2), 16.0);       // the 1-stream table is unchanged
  EXPECT_EQ(m.find_bandwidth("DRAM", "read_s4", 1).value_or(0), 20.0);
  EXPECT_FALSE(m.find_bandwidth("DRAM", "read_s8", 1));
  EXPECT_FALSE(m.find_bandwidth("L3", "read_s4", 1));
  EXPECT_FALSE(fixture().find_bandwidth("DRAM", "read_s4", 1));  // no streams section
  EXPECT_THROW(fixture().bandwidth("DRAM", "read_s4", 1), Error);
}

// A model naming read_s4 gets the 4-stream ceiling where machine.json has it...
TEST(Predict, StreamKernelUsesItsOwnCeiling) {
  Model md;
  md.traffic = {{3.2e9, "read_s4"}, {1.6e9, "update"}};  // 3.2e9 / 32 + 1.6e9 / 12 GB/s
  md.working_set = 1e9;
  const Prediction p = predict(md, with_streams(), 2);
  EXPECT_NEAR(p.memory_time_kernels_s, 0.1 + 1.6 / 12, 1e-12);
  EXPECT_NEAR(p.memory_time_s, 4.8 / 32, 1e-12);  // the bound: one pipe at read_s4's 32 GB/s
  EXPECT_EQ(p.bandwidth_kernels, (std::vector<std::string>{"read_s4", "update"}));
  ASSERT_EQ(p.notes.size(), 1u);
  EXPECT_NE(p.notes[0].find("'read_s4' 32.0 GB/s"), std::string::npos);
  EXPECT_EQ(to_json(p)["bandwidth_kernels"][0], "read_s4");
}

// ...and the 1-stream one, with a note, where it does not (an old machine.json, a stream
// count that was not measured, or a cache level).
TEST(Predict, StreamKernelFallsBackToOneStreamWithANote) {
  Model md;
  md.traffic = {{1.6e9, "read_s4"}, {0.8e9, "read_s8"}};
  md.working_set = 1e9;
  const Prediction old = predict(md, fixture(), 2);  // DRAM read 16 GB/s for both terms
  EXPECT_NEAR(old.memory_time_s, 0.15, 1e-12);  // read is the fastest DRAM traffic: one pipe changes nothing
  EXPECT_EQ(old.bandwidth_kernels, (std::vector<std::string>{"read", "read"}));
  ASSERT_EQ(old.notes.size(), 2u);
  EXPECT_NE(old.notes[0].find("'read_s4'"), std::string::npos);
  EXPECT_NE(old.notes[0].find("re-run `rooflab characterize`"), std::string::npos);
  EXPECT_EQ(to_json(old)["notes"].size(), 2u);

  Machine omitted = fixture();  // a writer that dropped them on purpose (the perf gate) says why
  omitted.raw["bandwidth"]["streams"] = {{"omitted", "the gate leaves them out"}};
  const Prediction gate = predict(md, omitted, 2);
  ASSERT_EQ(gate.notes.size(), 2u);
  EXPECT_NE(gate.notes[0].find("(efficiency can exceed 1); left out of machine.json: the gate leaves them out"),
            std::string::npos) << gate.notes[0];
  EXPECT_EQ(gate.notes[0].find("re-run"), std::string::npos) << gate.notes[0];

  const Prediction mixed = predict(md, with_streams(), 2);  // read_s4 measured, read_s8 not
  EXPECT_NEAR(mixed.memory_time_kernels_s, 1.6 / 32 + 0.8 / 16, 1e-12);
  EXPECT_NEAR(mixed.memory_time_s, 2.4 / 32, 1e-12);  // the bound's one pipe at read_s4's 32 GB/s
  EXPECT_EQ(mixed.bandwidth_kernels, (std::vector<std::string>{"read_s4", "read"}));
  ASSERT_EQ(mixed.notes.size(), 2u);
  EXPECT_NE(mixed.notes[0].find("'read_s8'"), std::string::npos);

  md.working_set = 16 << 10;  // L1: S-stream ceilings exist for DRAM only
  const Prediction l1 = predict(md, with_streams(), 1);
  EXPECT_NEAR(l1.memory_time_s, 2.4e9 / 100e9, 1e-12);
  ASSERT_EQ(l1.notes.size(), 2u);
  EXPECT_NE(l1.notes[0].find("DRAM only"), std::string::npos);
}

TEST(Machine, BadFilesGiveClearErrors) {
  EXPECT_THROW(load_machine("/nonexistent/machine.json"), Error);
  EXPECT_THROW(machine_from_json(nlohmann::json{{"schema", "rooflab.machine/2"}}), Error);
  EXPECT_THROW(machine_from_json(nlohmann::json{{"schema", "rooflab.machine/1"}}), Error);
}

// bench.json -> model.json: median over repetitions, efficiency = predicted / median,
// failed cases keep their message and get no time.
TEST(Evaluate, MediansEfficiencyAndFailures) {
  nlohmann::json fields = {{"name", "f/v/f64/10/threads:1"}, {"family", "f"}, {"variant", "v"},
                           {"threads", 1}, {"flops", 2e8}, {"bytes", 1e9}, {"working_set", 1e9},
                           {"compute_ceiling", "add_f64"},
                           {"traffic", {{{"bytes", 1e9}, {"kernel", "read"}}}}};
  nlohmann::json bench = {{"schema", "rooflab.bench/1"}, {"benchmarks", nlohmann::json::array()}};
  for (double ms : {120.0, 100.0, 200.0})
    bench["benchmarks"].push_back({{"name", "f/v/f64/10/threads:1"}, {"run_type", "iteration"},
                                   {"real_time", ms}, {"time_unit", "ms"}, {"rooflab", fields}});
  nlohmann::json failed = fields;
  failed["name"] = "f/w/f64/10/threads:1";
  bench["benchmarks"].push_back({{"name", "f/w/f64/10/threads:1"}, {"run_type", "iteration"},
                                 {"error_occurred", true}, {"error_message", "verification failed: x"},
                                 {"rooflab", failed}});
  nlohmann::json machine = read_json_file(ROOFLAB_TEST_DIR "/core/fixture_machine.json");
  auto m = evaluate(bench, &machine, "bench.json", "machine.json");
  ASSERT_EQ(m["rows"].size(), 2u);
  const auto& ok = m["rows"][0];
  EXPECT_EQ(ok["status"], "ok");
  EXPECT_NEAR(ok["median_s"].get<double>(), 0.12, 1e-12);
  EXPECT_NEAR(ok["predicted_s"].get<double>(), 0.1, 1e-12);  // 1e9 B / 10 GB/s
  EXPECT_NEAR(ok["efficiency"].get<double>(), 0.1 / 0.12, 1e-12);
  EXPECT_NEAR(ok["gbps"].get<double>(), 1e9 / 0.12 / 1e9, 1e-9);
  EXPECT_EQ(m["rows"][1]["status"], "failed");
  EXPECT_EQ(m["rows"][1]["message"], "verification failed: x");
  EXPECT_FALSE(m["rows"][1].contains("median_s"));
}

// A variant's own models (the registry's Variant::predictions, passed in by the caller) land in
// the row's "predictions"; one that cannot price the case leaves the classic roofline standing.
TEST(Evaluate, ExtraPredictionsPerRowAndTheirFailure) {
  nlohmann::json fields = {{"family", "f"}, {"threads", 1}, {"flops", 2e8}, {"working_set", 1e9}, {"compute_ceiling", "add_f64"},
                           {"traffic", {{{"bytes", 1e9}, {"kernel", "read"}}}}};
  nlohmann::json bench = {{"schema", "rooflab.bench/1"}, {"benchmarks", nlohmann::json::array()}};
  for (const char* name : {"f/a/f64/10/threads:1", "f/b/f64/10/threads:1", "f/c/f64/10/threads:1"}) {
    fields["name"] = name;
    bench["benchmarks"].push_back({{"name", name}, {"run_type", "iteration"}, {"real_time", 100.0},
                                   {"time_unit", "ms"}, {"rooflab", fields}});
  }
  const nlohmann::json machine = read_json_file(ROOFLAB_TEST_DIR "/core/fixture_machine.json");
  std::vector<std::string> asked;
  auto extra = [&](const std::string& name, const Machine& mach) -> nlohmann::json {
    asked.push_back(name);
    if (name.rfind("f/b/", 0) == 0) throw Error("b: the machine lacks what this model needs");
    if (name.rfind("f/c/", 0) == 0) return nlohmann::json::object();
    return {{"tight", {{"time_s", 0.05}, {"add_f64", mach.compute("add_f64", 1)}}}};
  };
  auto m = evaluate(bench, &machine, "bench.json", "machine.json", extra);
  ASSERT_EQ(m["rows"].size(), 3u);
  EXPECT_EQ(asked.size(), 3u);
  EXPECT_EQ(m["rows"][0]["predictions"]["tight"]["time_s"], 0.05);
  EXPECT_GT(m["rows"][0]["predictions"]["tight"]["add_f64"].get<double>(), 0);  // the machine reached it
  EXPECT_NEAR(m["rows"][1]["predicted_s"].get<double>(), 0.1, 1e-12);  // still predicted
  EXPECT_EQ(m["rows"][1]["predictions"], nlohmann::json::object());
  EXPECT_EQ(m["rows"][1]["predictions_missing"], "b: the machine lacks what this model needs");
  EXPECT_EQ(m["rows"][2]["predictions"], nlohmann::json::object());
  EXPECT_FALSE(m["rows"][2].contains("predictions_missing"));
  // Without a machine nothing is asked: every prediction needs one.
  asked.clear();
  auto none = evaluate(bench, nullptr, "bench.json", "", extra);
  EXPECT_TRUE(asked.empty());
  EXPECT_EQ(none["rows"][0]["predictions"], nlohmann::json::object());
}

// ---- Per-ISA compute ceilings (compute.by_isa) -------------------------------------------
// The fixture plus one table per ISA with distinct round numbers: scalar 10, avx2 40, avx512 80
// GFLOP/s of fma_f64 at 1 thread; compute.ceilings repeats the widest (avx512).
static nlohmann::json by_isa_json() {
  nlohmann::json j = read_json_file(ROOFLAB_TEST_DIR "/core/fixture_machine.json");
  auto table = [](double g) {
    return nlohmann::json{{"ceilings", {{"fma_f64", {{"1", g}, {"2", 2 * g}}}, {"add_f64", {{"1", g / 2}}}}},
                          {"ceilings_median", {{"fma_f64", {{"1", 0.9 * g}}}}}};
  };
  j["compute"]["isa"] = "avx512";
  j["compute"]["by_isa"] = {{"scalar", table(10)}, {"avx2", table(40)}, {"avx512", table(80)}};
  j["compute"]["ceilings"] = j["compute"]["by_isa"]["avx512"]["ceilings"];
  // In-cache bandwidth per ISA as characterize writes it: the widest's repeats bandwidth.levels;
  // L1 read at 1 thread: scalar 25, avx2 50, avx512 100 GB/s.
  const auto& lv = j["bandwidth"]["levels"];
  j["bandwidth"]["isa"] = "avx512";
  j["bandwidth"]["by_isa"] = {
      {"scalar", {{"levels", {{"L1", {{"read", {{"1", 25.0}, {"2", 50.0}}}}}, {"L2", {{"read", {{"1", 20.0}}}}}}}}},
      {"avx2", {{"levels", {{"L1", {{"read", {{"1", 50.0}, {"2", 100.0}}}}}}}}},
      {"avx512", {{"levels", {{"L1", lv["L1"]}, {"L2", lv["L2"]}, {"L3", lv["L3"]}}}}}};
  return j;
}

TEST(Machine, ComputeCeilingOfEachIsa) {
  const Machine m = machine_from_json(by_isa_json());
  EXPECT_EQ(m.find_compute("fma_f64", 1, Isa::scalar).gflops, 10.0);
  EXPECT_EQ(m.find_compute("fma_f64", 2, Isa::avx2).gflops, 80.0);
  EXPECT_EQ(m.find_compute("fma_f64", 1, Isa::avx512).gflops, 80.0);
  EXPECT_EQ(m.find_compute("fma_f64", 1, Isa::none).gflops, 80.0);  // the widest
  EXPECT_EQ(m.compute("fma_f64", 1), 80.0);
  EXPECT_EQ(m.find_compute("add_f64", 1, Isa::avx2).isa, "avx2");
  EXPECT_TRUE(m.find_compute("add_f64", 1, Isa::avx2).note.empty());
  EXPECT_THROW(m.find_compute("addmin_f32", 1, Isa::avx2).gflops, Error);
  // A file from a CPU without AVX-512: the widest it has, and a note naming the ISA.
  nlohmann::json j = by_isa_json();
  j["compute"]["by_isa"].erase("avx512");
  j["compute"]["isa"] = "avx2";
  const auto c = machine_from_json(j).find_compute("fma_f64", 1, Isa::avx512);
  EXPECT_EQ(c.gflops, 80.0);  // compute.ceilings, as written above
  EXPECT_EQ(c.isa, "avx2");
  EXPECT_NE(c.note.find("no avx512 compute ceilings"), std::string::npos) << c.note;
}

TEST(Predict, PricingIsaRule) {
  EXPECT_EQ(pricing_isa(Isa::avx2, false), Isa::avx2);
  EXPECT_EQ(pricing_isa(Isa::avx512, true), Isa::avx512);
  EXPECT_EQ(pricing_isa(Isa::none, true), Isa::none);     // a library (baseline or back end): its best code
  EXPECT_EQ(pricing_isa(Isa::none, false), own_code_isa());  // own code: what the build targets
#if !defined(__AVX2__)
  EXPECT_EQ(own_code_isa(), Isa::scalar);  // built for baseline x86-64
#endif
}

namespace {
// One compute-bound row per pricing case: 8e9 flops of fma_f64 at 1 thread, 1 s measured.
nlohmann::json isa_bench() {
  nlohmann::json bench = {{"schema", "rooflab.bench/1"}, {"benchmarks", nlohmann::json::array()}};
  auto row = [&](const std::string& name, const nlohmann::json& isa, const nlohmann::json* library,
                 const char* runs_isa = nullptr) {
    nlohmann::json f = {{"name", name}, {"family", "f"}, {"isa", isa}, {"threads", 1}, {"flops", 8e9},
                        {"working_set", 16 << 10}, {"compute_ceiling", "fma_f64"},
                        {"traffic", {{{"bytes", 1e3}, {"kernel", "read"}}}}};
    if (library) f["library"] = *library;
    if (runs_isa) f["runs_isa"] = runs_isa;
    bench["benchmarks"].push_back({{"name", name}, {"run_type", "iteration"}, {"real_time", 1.0},
                                   {"time_unit", "s"}, {"rooflab", f}});
  };
  const nlohmann::json none = nullptr, lib = "openblas";
  row("f/own_avx2/avx2/f64/10/threads:1", "avx2", &none);
  row("f/own/f64/10/threads:1", nullptr, &none);
  row("f/openblas/f64/10/threads:1", nullptr, &lib);
  row("f/old/f64/10/threads:1", nullptr, nullptr);  // an older bench.json: no "library"
  row("f/dispatch/f64/10/threads:1", nullptr, &none, "avx2");  // picks its ISA at run time
  // Own driver over a vendor back end (gemm/sfc_ca_libxsmm): the library's code, no "library".
  row("f/backend/f64/10/threads:1", nullptr, &none);
  bench["benchmarks"].back()["rooflab"]["code_path"] = {{"library", "libxsmm"}};
  return bench;
}
const nlohmann::json& row_named(const nlohmann::json& model, const std::string& prefix) {
  for (const auto& r : model["rows"])
    if (r["name"].get<std::string>().rfind(prefix, 0) == 0) return r;
  throw Error("no row " + prefix);
}
}  // namespace

// Each row is priced against its own ISA's table: avx2 code against avx2, rooflab's own code
// without an ISA against scalar, a vendor baseline against the widest; model.json says which.
TEST(Evaluate, EachRowPricedAgainstItsOwnIsa) {
  if (own_code_isa() != Isa::scalar) GTEST_SKIP() << "a -march=native build prices own code at its ISA";
  const nlohmann::json machine = by_isa_json();
  const auto m = evaluate(isa_bench(), &machine, "bench.json", "machine.json");
  const auto& avx2 = row_named(m, "f/own_avx2/");
  EXPECT_EQ(avx2["compute_isa"], "avx2");
  EXPECT_EQ(avx2["ceiling_gflops"], 40.0);
  EXPECT_NEAR(avx2["predicted_s"].get<double>(), 8e9 / 40e9, 1e-12);
  EXPECT_TRUE(avx2["prediction_notes"].empty());
  const auto& own = row_named(m, "f/own/");
  EXPECT_EQ(own["compute_isa"], "scalar");
  EXPECT_EQ(own["bandwidth_isa"], "scalar");  // its L1 traffic too
  EXPECT_NEAR(own["predicted_s"].get<double>(), 8e9 / 10e9, 1e-12);
  EXPECT_EQ(own["library"], nullptr);
  const auto& lib = row_named(m, "f/openblas/");
  EXPECT_EQ(lib["compute_isa"], "avx512");
  EXPECT_EQ(lib["library"], "openblas");
  EXPECT_NEAR(lib["predicted_s"].get<double>(), 8e9 / 80e9, 1e-12);
  EXPECT_TRUE(lib["prediction_notes"].empty());
  // No "library": as before by_isa (the widest), and a note saying why.
  const auto& old = row_named(m, "f/old/");
  EXPECT_EQ(old["compute_isa"], "avx512");
  ASSERT_EQ(old["prediction_notes"].size(), 1u);
  EXPECT_NE(old["prediction_notes"][0].get<std::string>().find("re-run `rooflab bench`"), std::string::npos);
  // Own code that dispatches at run time: the ISA it ran, not scalar.
  const auto& dispatch = row_named(m, "f/dispatch/");
  EXPECT_EQ(dispatch["compute_isa"], "avx2");
  EXPECT_NEAR(dispatch["predicted_s"].get<double>(), 8e9 / 40e9, 1e-12);
  // A vendor back end runs the library's best code: the widest, as a baseline.
  const auto& backend = row_named(m, "f/backend/");
  EXPECT_EQ(backend["compute_isa"], "avx512");
  EXPECT_NEAR(backend["predicted_s"].get<double>(), 8e9 / 80e9, 1e-12);
}

// A machine.json without by_isa (older files, the committed gate baseline) prices every row
// against compute.ceilings and says so where that is not the row's ISA: never an error.
TEST(Evaluate, MachineWithoutByIsaFallsBackWithANote) {
  const nlohmann::json machine = read_json_file(ROOFLAB_TEST_DIR "/core/fixture_machine.json");  // isa avx2
  ASSERT_FALSE(machine["compute"].contains("by_isa"));
  const auto m = evaluate(isa_bench(), &machine, "bench.json", "machine.json");
  const auto& avx2 = row_named(m, "f/own_avx2/");
  EXPECT_EQ(avx2["compute_isa"], "avx2");  // compute.ceilings is the avx2 table: nothing to say
  EXPECT_NEAR(avx2["predicted_s"].get<double>(), 8e9 / 40e9, 1e-12);
  EXPECT_TRUE(avx2["prediction_notes"].empty());
  const auto& own = row_named(m, "f/own/");
  EXPECT_EQ(own["status"], "ok");
  EXPECT_EQ(own["compute_isa"], "avx2");
  EXPECT_NEAR(own["predicted_s"].get<double>(), 8e9 / 40e9, 1e-12);
  ASSERT_EQ(own["prediction_notes"].size(), 1u);
  const std::string note = own["prediction_notes"][0];
  EXPECT_NE(note.find("compute.by_isa"), std::string::npos) << note;
  EXPECT_NE(note.find("not scalar's"), std::string::npos) << note;
  EXPECT_NE(note.find("`rooflab characterize`"), std::string::npos) << note;
  EXPECT_NE(note.find("bandwidth.by_isa"), std::string::npos) << note;  // one reason, one note
  EXPECT_EQ(own["bandwidth_isa"], "avx2");
  EXPECT_FALSE(own.contains("prediction_missing"));
}

// ---- Per-ISA in-cache bandwidth (bandwidth.by_isa) ----------------------------------------
TEST(Machine, BandwidthOfEachIsaInCacheAndTheWidestAtDram) {
  const Machine m = machine_from_json(by_isa_json());
  EXPECT_EQ(m.best_bandwidth_isa(), "avx512");
  auto bw = [&](const char* level, const char* kernel, int t, Isa isa) {
    return m.find_bandwidth(level, kernel, t, isa);
  };
  EXPECT_EQ(bw("L1", "read", 1, Isa::scalar).gbps, 25.0);
  EXPECT_EQ(bw("L1", "read", 1, Isa::scalar).isa, "scalar");
  EXPECT_TRUE(bw("L1", "read", 1, Isa::scalar).note.empty());
  EXPECT_EQ(bw("L1", "read", 4, Isa::avx2).gbps, 100.0);  // largest measured count <= 4
  EXPECT_EQ(bw("L2", "read", 1, Isa::scalar).gbps, 20.0);
  EXPECT_EQ(bw("L1", "read", 1, Isa::avx512).gbps, 100.0);
  EXPECT_EQ(bw("L1", "read", 1, Isa::none).gbps, 100.0);  // the widest
  EXPECT_EQ(bw("L1", "read", 1, Isa::none).isa, "avx512");
  // DRAM (and S-stream kernels) are the widest ISA's for every ISA, by design: no note.
  const auto dram = bw("DRAM", "read", 2, Isa::scalar);
  EXPECT_EQ(dram.gbps, 16.0);
  EXPECT_EQ(dram.isa, "avx512");
  EXPECT_TRUE(dram.note.empty());
  // A kernel or level the ISA's table lacks: the widest one's, with a note naming it.
  const auto upd = bw("L1", "update", 1, Isa::avx2);
  EXPECT_EQ(upd.gbps, 80.0);
  EXPECT_EQ(upd.isa, "avx512");
  EXPECT_NE(upd.note.find("no avx2 'update' bandwidth at L1"), std::string::npos) << upd.note;
  EXPECT_EQ(bw("L3", "read", 1, Isa::scalar).gbps, 25.0);
  EXPECT_FALSE(bw("L3", "read", 1, Isa::scalar).note.empty());
  EXPECT_THROW(bw("L1", "triad", 1, Isa::scalar), Error);  // absent everywhere: as bandwidth()
  // A CPU without AVX-512: its widest, and a note naming the ISA.
  nlohmann::json j = by_isa_json();
  j["bandwidth"]["by_isa"].erase("avx512");
  j["bandwidth"]["isa"] = "avx2";
  const auto no512 = machine_from_json(j).find_bandwidth("L1", "read", 1, Isa::avx512);
  EXPECT_EQ(no512.isa, "avx2");
  EXPECT_NE(no512.note.find("no avx512 bandwidth ceilings"), std::string::npos) << no512.note;
  // A file from before bandwidth.by_isa: bandwidth.levels, named by compute.isa, with a note.
  j = by_isa_json();
  j["bandwidth"].erase("by_isa");
  j["bandwidth"].erase("isa");
  const auto old = machine_from_json(j).find_bandwidth("L1", "read", 1, Isa::scalar);
  EXPECT_EQ(old.gbps, 100.0);
  EXPECT_EQ(old.isa, "avx512");
  EXPECT_TRUE(old.no_by_isa);
  EXPECT_NE(old.note.find("bandwidth.by_isa"), std::string::npos) << old.note;
  EXPECT_NE(old.note.find("re-run `rooflab characterize`"), std::string::npos) << old.note;
}

// A row's in-cache traffic is priced against the same ISA as its compute; DRAM traffic against
// the one DRAM table.
TEST(Predict, InCacheTrafficPricedAgainstTheComputeIsa) {
  const Machine m = machine_from_json(by_isa_json());
  Model md;
  md.flops = 1e6;
  md.traffic = {{1e9, "read"}};
  md.working_set = 16 << 10;  // L1
  md.compute_ceiling = "fma_f64";
  const Prediction s = predict(md, m, 1, Isa::scalar);
  EXPECT_EQ(s.compute_isa, "scalar");
  EXPECT_EQ(s.bandwidth_isa, "scalar");
  EXPECT_NEAR(s.memory_time_s, 1e9 / 25e9, 1e-12);
  EXPECT_TRUE(s.notes.empty());
  EXPECT_EQ(to_json(s)["bandwidth_isa"], "scalar");
  const Prediction a = predict(md, m, 1, Isa::avx2);
  EXPECT_NEAR(a.memory_time_s, 1e9 / 50e9, 1e-12);
  EXPECT_EQ(a.bandwidth_isa, "avx2");
  const Prediction w = predict(md, m, 1);  // Isa::none: a vendor baseline, the widest
  EXPECT_NEAR(w.memory_time_s, 1e9 / 100e9, 1e-12);
  md.working_set = 1e9;  // DRAM
  const Prediction d = predict(md, m, 2, Isa::scalar);
  EXPECT_NEAR(d.memory_time_s, 1e9 / 16e9, 1e-12);
  EXPECT_EQ(d.bandwidth_isa, "avx512");
  EXPECT_TRUE(d.notes.empty());
  // A file with compute.by_isa but no bandwidth.by_isa (the previous characterize): the
  // bandwidth fallback is its own note.
  nlohmann::json j = by_isa_json();
  j["bandwidth"].erase("by_isa");
  md.working_set = 16 << 10;
  const Prediction o = predict(md, machine_from_json(j), 1, Isa::avx2);
  EXPECT_NEAR(o.memory_time_s, 1e9 / 100e9, 1e-12);
  ASSERT_EQ(o.notes.size(), 1u);
  EXPECT_NE(o.notes[0].find("bandwidth.by_isa"), std::string::npos) << o.notes[0];
}

// The error loading a machine.json named m.json gives, "" when it loads.
static std::string message(const nlohmann::json& j) {
  try {
    machine_from_json(j, "m.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Machine, MalformedBandwidthByIsaIsOneClearError) {
  EXPECT_EQ(message(by_isa_json()), "");
  using Mutate = void (*)(nlohmann::json&);
  const std::pair<Mutate, std::string> cases[] = {
      {[](nlohmann::json& j) { j["bandwidth"]["by_isa"]["sse9"] = j["bandwidth"]["by_isa"]["avx2"]; },
       "bandwidth.by_isa has key \"sse9\": ISAs are scalar, avx2 or avx512"},
      {[](nlohmann::json& j) { j["bandwidth"]["by_isa"]["avx2"].erase("levels"); },
       "bandwidth.by_isa.avx2 has no \"levels\""},
      {[](nlohmann::json& j) { j["bandwidth"]["by_isa"]["scalar"]["levels"]["L1"]["read"] = {{"1", "fast"}}; },
       "bandwidth.by_isa.scalar.levels.L1.read.1 must be a finite number, got \"fast\""},
      {[](nlohmann::json& j) { j["bandwidth"]["isa"] = 3; },
       "bandwidth.isa must be scalar, avx2 or avx512, got 3"}};
  for (const auto& [mutate, says] : cases) {
    nlohmann::json j = by_isa_json();
    mutate(j);
    EXPECT_EQ(message(j), "m.json: " + says + " (re-run `rooflab characterize`)");
  }
}

// A malformed by_isa is one clear error naming the file and the key.
TEST(Machine, MalformedByIsaIsOneClearError) {
  nlohmann::json j = by_isa_json();
  EXPECT_EQ(message(j), "");
  j["compute"]["by_isa"]["avx3"] = j["compute"]["by_isa"]["avx2"];
  EXPECT_EQ(message(j), "m.json: compute.by_isa has key \"avx3\": ISAs are scalar, avx2 or avx512 "
                        "(re-run `rooflab characterize`)");
  j = by_isa_json();
  j["compute"]["by_isa"]["avx2"].erase("ceilings");
  EXPECT_EQ(message(j), "m.json: compute.by_isa.avx2 has no \"ceilings\" (re-run `rooflab characterize`)");
  j = by_isa_json();
  j["compute"]["by_isa"]["scalar"]["ceilings"]["fma_f64"] = {{"one", 1.0}};
  EXPECT_NE(message(j).find("compute.by_isa.scalar.ceilings.fma_f64 has key \"one\""), std::string::npos);
  j = by_isa_json();
  j["compute"]["by_isa"]["avx512"]["ceilings_median"]["fma_f64"]["1"] = "fast";
  EXPECT_NE(message(j).find("compute.by_isa.avx512.ceilings_median.fma_f64.1 must be a finite number"),
            std::string::npos);
  j = by_isa_json();
  j["compute"]["by_isa"] = nlohmann::json::array();
  EXPECT_NE(message(j).find("compute.by_isa must be an object"), std::string::npos);
  j = by_isa_json();
  j["compute"]["isa"] = "sse9";
  EXPECT_NE(message(j).find("compute.isa must be scalar, avx2 or avx512"), std::string::npos);
}

TEST(JsonIo, AtomicWriteRoundTripAndSchema) {
  const auto dir = std::filesystem::temp_directory_path() / "rooflab_test_jsonio";
  std::filesystem::remove_all(dir);
  nlohmann::json j = {{"schema", "rooflab.model/1"}, {"rows", {{{"x", 1.5}}}}};
  write_json_atomic(dir / "sub" / "a.json", j);
  EXPECT_EQ(read_json_file(dir / "sub" / "a.json"), j);
  EXPECT_NO_THROW(require_schema(j, "rooflab.model", 1, "a.json"));
  EXPECT_THROW(require_schema(j, "rooflab.bench", 1, "a.json"), Error);
  // No temp files left behind.
  size_t n = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(dir / "sub")) ++n;
  EXPECT_EQ(n, 1u);
  EXPECT_THROW(read_json_file(dir / "missing.json"), Error);
  std::filesystem::remove_all(dir);
}

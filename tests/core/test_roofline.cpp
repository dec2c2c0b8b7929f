// The model's arithmetic on a fixture machine.json with round numbers.
#include <gtest/gtest.h>

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
  EXPECT_NEAR(p.memory_time_s, 0.3, 1e-12);
  EXPECT_NEAR(p.compute_time_s, 0.01, 1e-12);
  EXPECT_NEAR(p.time_s, 0.3, 1e-12);
  EXPECT_NEAR(p.bandwidth_gbps, 2.6e9 / 0.3 / 1e9, 1e-9);
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
  EXPECT_NEAR(p.memory_time_s, 0.1 + 1.6 / 12, 1e-12);
  EXPECT_EQ(p.bandwidth_kernels, (std::vector<std::string>{"read_s4", "update"}));
  EXPECT_TRUE(p.notes.empty());
  EXPECT_EQ(to_json(p)["bandwidth_kernels"][0], "read_s4");
}

// ...and the 1-stream one, with a note, where it does not (an old machine.json, a stream
// count that was not measured, or a cache level).
TEST(Predict, StreamKernelFallsBackToOneStreamWithANote) {
  Model md;
  md.traffic = {{1.6e9, "read_s4"}, {0.8e9, "read_s8"}};
  md.working_set = 1e9;
  const Prediction old = predict(md, fixture(), 2);  // DRAM read 16 GB/s for both terms
  EXPECT_NEAR(old.memory_time_s, 0.15, 1e-12);
  EXPECT_EQ(old.bandwidth_kernels, (std::vector<std::string>{"read", "read"}));
  ASSERT_EQ(old.notes.size(), 2u);
  EXPECT_NE(old.notes[0].find("'read_s4'"), std::string::npos);
  EXPECT_NE(old.notes[0].find("re-run `rooflab characterize`"), std::string::npos);
  EXPECT_EQ(to_json(old)["notes"].size(), 2u);

  const Prediction mixed = predict(md, with_streams(), 2);  // read_s4 measured, read_s8 not
  EXPECT_NEAR(mixed.memory_time_s, 1.6 / 32 + 0.8 / 16, 1e-12);
  EXPECT_EQ(mixed.bandwidth_kernels, (std::vector<std::string>{"read_s4", "read"}));
  ASSERT_EQ(mixed.notes.size(), 1u);
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

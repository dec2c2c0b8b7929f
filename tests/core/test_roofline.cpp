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

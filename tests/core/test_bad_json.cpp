// Bad JSON inputs to the C++ readers (bench.json for `rooflab model`, machine.json for every
// prediction, any file through read_json_file): each is one rooflab::Error naming the file and
// what is wrong, never a crash, an nlohmann exception or a silently wrong number.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "harness/error.hpp"
#include "harness/json_io.hpp"
#include "roofline/evaluate.hpp"
#include "roofline/machine.hpp"

namespace fs = std::filesystem;
using namespace rooflab;

namespace {
// The message of the rooflab::Error `f` throws; fails the test on another exception or none.
std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not a rooflab::Error: " << e.what();
    return "";
  }
  ADD_FAILURE() << "accepted";
  return "";
}

json machine() {
  return json::parse(R"({"schema": "rooflab.machine/1", "created": "T",
    "caches": {"measured": {"L1": 32768, "L2": 524288, "L3": 33554432}},
    "bandwidth": {"levels": {"L1": {"read": {"1": 100.0}}, "L2": {"read": {"1": 50.0}},
                             "L3": {"read": {"1": 25.0}}, "DRAM": {"read": {"1": 10.0}}}},
    "compute": {"ceilings": {"fma_f64": {"1": 40.0}}}})");
}

json bench() {
  return json::parse(R"({"schema": "rooflab.bench/1", "benchmarks": [
    {"name": "x/threads:1", "run_type": "iteration", "real_time": 2.0, "time_unit": "ms",
     "rooflab": {"name": "gemm/loops/ijk/f64/8x8x8/threads:1", "threads": 1, "flops": 1024,
                 "bytes": 1536, "working_set": 1536, "compute_ceiling": "fma_f64",
                 "traffic": [{"bytes": 1536, "kernel": "read"}]}}]})");
}

std::string evaluate_error(const json& b) {
  return error_of([&] {
    const json m = machine();
    roofline::evaluate(b, &m, "run/bench.json", "run/machine.json");
  });
}
std::string machine_error(const json& m) {
  return error_of([&] { roofline::machine_from_json(m, "run/machine.json"); });
}
}  // namespace

TEST(BadJson, TheGoodFilesAreRead) {
  const json m = machine();
  const json r = roofline::evaluate(bench(), &m, "run/bench.json", "run/machine.json");
  ASSERT_EQ(r["rows"].size(), 1u);
  EXPECT_EQ(r["rows"][0]["status"], "ok");
  EXPECT_DOUBLE_EQ(r["rows"][0]["median_s"].get<double>(), 2e-3);
}

TEST(BadJson, EveryTimeUnitIsConvertedAndAnUnknownOneIsAnError) {
  const json m = machine();
  const std::pair<const char*, double> units[] = {{"ns", 2e-9}, {"us", 2e-6}, {"ms", 2e-3}, {"s", 2.0}};
  for (const auto& [unit, seconds] : units) {
    json b = bench();
    b["benchmarks"][0]["time_unit"] = unit;
    EXPECT_DOUBLE_EQ(roofline::evaluate(b, &m, "b", "m")["rows"][0]["median_s"].get<double>(), seconds) << unit;
  }
  for (const json& bad : {json("min"), json("sec"), json(""), json("NS")}) {
    json b = bench();
    b["benchmarks"][0]["time_unit"] = bad;
    const std::string e = evaluate_error(b);
    EXPECT_NE(e.find("unknown time_unit"), std::string::npos) << e;
    EXPECT_NE(e.find("run/bench.json"), std::string::npos) << e;
    EXPECT_NE(e.find("x/threads:1"), std::string::npos) << e;  // the benchmark
  }
  json b = bench();
  b["benchmarks"][0].erase("time_unit");
  EXPECT_NE(evaluate_error(b).find("no \"time_unit\""), std::string::npos);
  b = bench();
  b["benchmarks"][0]["time_unit"] = 3;
  EXPECT_NE(evaluate_error(b).find("must be a string"), std::string::npos);
}

TEST(BadJson, BenchOfTheWrongShapeIsAnErrorNamingTheKey) {
  struct Case { std::function<void(json&)> edit; const char* expect; };
  const Case cases[] = {
      {[](json& b) { b["benchmarks"] = nullptr; }, "\"benchmarks\" must be a list"},
      {[](json& b) { b["benchmarks"] = json::object(); }, "\"benchmarks\" must be a list"},
      {[](json& b) { b.erase("benchmarks"); }, "\"benchmarks\" must be a list"},
      {[](json& b) { b["benchmarks"][0] = "x"; }, "entry must be an object"},
      {[](json& b) { b["benchmarks"][0]["rooflab"] = nullptr; }, "\"rooflab\" must be an object"},
      {[](json& b) { b["benchmarks"][0]["rooflab"] = json::array(); }, "\"rooflab\" must be an object"},
      {[](json& b) { b["benchmarks"][0]["real_time"] = "2"; }, "\"real_time\" must be a finite number"},
      {[](json& b) { b["benchmarks"][0]["real_time"] = -1.0; }, "\"real_time\" must be a finite number"},
      {[](json& b) { b["benchmarks"][0].erase("real_time"); }, "no \"real_time\""},
      {[](json& b) { b["benchmarks"][0]["rooflab"]["flops"] = "many"; }, "\"flops\" must be a finite number"},
      {[](json& b) { b["benchmarks"][0]["rooflab"]["flops"] = -5; }, "\"flops\" must be a finite number"},
      {[](json& b) { b["benchmarks"][0]["rooflab"]["traffic"] = json::object(); }, "\"traffic\" must be a list"},
      {[](json& b) { b["benchmarks"][0]["rooflab"]["traffic"] = json::array({1}); }, "entry must be an object"},
      {[](json& b) { b["benchmarks"][0]["rooflab"]["traffic"][0]["kernel"] = 7; }, "\"kernel\" must be a string"},
      {[](json& b) { b["benchmarks"][0]["rooflab"]["threads"] = 0; }, "\"threads\" must be an integer"},
      {[](json& b) { b["benchmarks"][0]["rooflab"]["threads"] = "2"; }, "\"threads\" must be an integer"},
      {[](json& b) { b["benchmarks"][0]["rooflab"]["threads"] = 1e12; }, "\"threads\" must be an integer"},
      {[](json& b) { b["benchmarks"][0]["rooflab"]["name"] = 5; }, "\"name\" must be a string"},
      {[](json& b) { b["benchmarks"][0]["error_occurred"] = "yes"; }, "\"error_occurred\" must be true or false"},
      {[](json& b) { b["schema"] = "rooflab.model/1"; }, "expected rooflab.bench/1"},
  };
  for (const auto& c : cases) {
    json b = bench();
    c.edit(b);
    const std::string e = evaluate_error(b);
    EXPECT_NE(e.find(c.expect), std::string::npos) << "expected '" << c.expect << "' in: " << e;
  }
}

TEST(BadJson, MachineOfTheWrongShapeIsAnErrorNamingTheKey) {
  struct Case { std::function<void(json&)> edit; const char* expect; };
  const Case cases[] = {
      {[](json& m) { m["caches"] = nullptr; }, "caches must be an object"},
      {[](json& m) { m["caches"]["measured"] = json::array(); }, "caches.measured must be an object"},
      {[](json& m) { m["bandwidth"] = json::array(); }, "bandwidth must be an object"},
      {[](json& m) { m["bandwidth"]["levels"] = nullptr; }, "bandwidth.levels must be an object"},
      {[](json& m) { m["bandwidth"]["levels"]["L1"] = 5; }, "bandwidth.levels.L1 must be an object"},
      {[](json& m) { m["bandwidth"]["levels"]["L1"]["read"] = json::array({1}); }, "bandwidth.levels.L1.read must be an object"},
      {[](json& m) { m["bandwidth"]["levels"]["L1"]["read"] = {{"one", 1.0}}; }, "thread counts must be integers"},
      {[](json& m) { m["bandwidth"]["levels"]["L1"]["read"] = {{"0", 1.0}}; }, "thread counts must be integers"},
      {[](json& m) { m["bandwidth"]["levels"]["L1"]["read"] = {{"99999999999", 1.0}}; }, "thread counts must be integers"},
      {[](json& m) { m["bandwidth"]["levels"]["L1"]["read"]["1"] = "fast"; }, "must be a finite number"},
      {[](json& m) { m["bandwidth"]["streams"] = 1; }, "bandwidth.streams must be an object"},
      {[](json& m) { m["compute"] = "x"; }, "compute must be an object"},
      {[](json& m) { m["compute"]["ceilings"] = json::array(); }, "compute.ceilings must be an object"},
      {[](json& m) { m["compute"]["ceilings"]["fma_f64"] = 40.0; }, "compute.ceilings.fma_f64 must be an object"},
      {[](json& m) { m["compute"]["ceilings"]["fma_f64"] = {{"x2", 40.0}}; }, "thread counts must be integers"},
      {[](json& m) { m["gpu"] = json::array(); }, "gpu must be an object"},
      {[](json& m) { m.erase("bandwidth"); }, "no bandwidth.levels"},
      {[](json& m) { m["schema"] = "rooflab.bench/1"; }, "expected rooflab.machine/1"},
  };
  for (const auto& c : cases) {
    json m = machine();
    c.edit(m);
    const std::string e = machine_error(m);
    EXPECT_NE(e.find(c.expect), std::string::npos) << "expected '" << c.expect << "' in: " << e;
    EXPECT_NE(e.find("run/machine.json"), std::string::npos) << e;
  }
}

TEST(BadJson, UnreadableFilesAreAnErrorNamingTheFile) {
  const fs::path dir = fs::temp_directory_path() / ("rooflab_bad_json_" + std::to_string(::getpid()));
  fs::create_directories(dir / "sub.json");
  auto write = [&](const char* name, const std::string& bytes) {
    std::ofstream(dir / name, std::ios::binary) << bytes;
    return dir / name;
  };
  const std::pair<fs::path, const char*> cases[] = {
      {dir / "none.json", "missing or not readable"},
      {dir / "sub.json", "is a directory"},
      {write("empty.json", ""), "is empty"},
      {write("truncated.json", R"({"schema": "rooflab.bench/1", "benchmarks": [)"), "not valid JSON"},
      {write("latin1.json", "{\"cpu\": \"caf\xe9\"}"), "not valid JSON"},
      {write("binary.json", std::string("\x00\x01\x02", 3)), "not valid JSON"},
      {write("trailing.json", "{} {}"), "not valid JSON"},
  };
  for (const auto& [path, expect] : cases) {
    const std::string e = error_of([&] { read_json_file(path); });
    EXPECT_NE(e.find(expect), std::string::npos) << path << ": " << e;
    EXPECT_NE(e.find(path.filename().string()), std::string::npos) << e;
  }
  fs::remove_all(dir);
}

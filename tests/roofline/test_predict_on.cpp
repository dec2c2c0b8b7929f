// `rooflab model --predict-on` (roofline/predict_on.hpp) on the stored gate runs of two CPU
// classes (results/baselines/gate: AMD Zen 3, AVX2; gate-zen5: AMD Zen 5, AVX-512): the model's
// prediction on B is the one `rooflab model` makes with B's machine.json, the carried one is A's
// time x B / A, errors are against B's own medians, and what B lacks is said per row.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>

#include "harness/error.hpp"
#include "harness/json_io.hpp"
#include "roofline/evaluate.hpp"
#include "roofline/predict_on.hpp"

using namespace rooflab;
using namespace rooflab::roofline;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {
const fs::path kZen3 = fs::path(ROOFLAB_SOURCE_ROOT) / "results/baselines/gate";
const fs::path kZen5 = fs::path(ROOFLAB_SOURCE_ROOT) / "results/baselines/gate-zen5";

// A scratch directory per test.
fs::path scratch(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("rooflab_predict_on_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

PredictOnInput zen3_on_zen5(bool measured = true) {
  return {kZen3 / "bench.json", kZen3 / "machine.json", kZen5 / "machine.json",
          measured ? kZen5 / "bench.json" : fs::path()};
}

std::map<std::string, json> by_name(const json& rows) {
  std::map<std::string, json> m;
  for (const auto& r : rows) m[r["name"].get<std::string>()] = r;
  return m;
}

json row_of(const json& d, const std::string& prefix) {
  for (const auto& r : d["rows"])
    if (r["name"].get<std::string>().rfind(prefix, 0) == 0) return r;
  ADD_FAILURE() << "no row " << prefix;
  return json::object();
}
}  // namespace

TEST(PredictOn, ModelIsRooflabModelWithBsCeilingsAndCarriedScalesAsTime) {
  const json d = predict_on(zen3_on_zen5());
  EXPECT_EQ(d["schema"], "rooflab.predict_on/1");
  const json bench = read_json_file(kZen3 / "bench.json");
  const json mb = read_machine_json(kZen5 / "machine.json");
  const json ma = read_machine_json(kZen3 / "machine.json");
  const auto on_b = by_name(evaluate(bench, &mb, kZen3 / "bench.json", kZen5 / "machine.json")["rows"]);
  const auto on_a = by_name(evaluate(bench, &ma, kZen3 / "bench.json", kZen3 / "machine.json")["rows"]);
  const json measured = read_json_file(kZen5 / "bench.json");
  const auto meas_b = by_name(evaluate(measured, nullptr, kZen5 / "bench.json", {})["rows"]);
  ASSERT_EQ(d["rows"].size(), 5u);
  for (const auto& r : d["rows"]) {
    const std::string n = r["name"];
    SCOPED_TRACE(n);
    EXPECT_TRUE(r["b_lacks"].empty()) << r["b_lacks"].dump();
    EXPECT_DOUBLE_EQ(r["predicted_b"]["roofline_model"].get<double>(), on_b.at(n)["predicted_s"].get<double>());
    EXPECT_DOUBLE_EQ(r["predicted_b"]["ecm_model"].get<double>(), on_b.at(n)["ecm"]["time_s"].get<double>());
    const double ta = on_a.at(n)["median_s"], pa = on_a.at(n)["predicted_s"], pb = on_b.at(n)["predicted_s"];
    EXPECT_DOUBLE_EQ(r["predicted_b"]["roofline_carried"].get<double>(), ta * pb / pa);
    // carried = A's time / A's efficiency x ... : B's efficiency comes out as A's
    EXPECT_NEAR(pb / r["predicted_b"]["roofline_carried"].get<double>(), on_a.at(n)["efficiency"].get<double>(), 1e-12);
    EXPECT_EQ(r["matched"], "same name");
    const double mbs = meas_b.at(n)["median_s"];
    EXPECT_DOUBLE_EQ(r["measured_b_s"].get<double>(), mbs);
    EXPECT_DOUBLE_EQ(r["error"]["roofline_model"].get<double>(), pb / mbs - 1);
    EXPECT_EQ(r["b"]["compute_isa"], on_b.at(n)["compute_isa"]);
  }
  // per family and all; the within-20% share is a share of the family's cases
  for (const char* f : {"gemm", "floyd_warshall", "sinkhorn", "all"}) ASSERT_TRUE(d["accuracy"].contains(f)) << f;
  EXPECT_EQ(d["accuracy"]["all"]["roofline_carried"]["cases"], 5);
  EXPECT_EQ(d["accuracy"]["sinkhorn"]["ecm_model"]["cases"], 3);
  const double w = d["accuracy"]["all"]["roofline_model"]["within_20"];
  EXPECT_NEAR(w * 5, std::round(w * 5), 1e-12);
  // B's ceilings named: the gemm's fma_f64 of avx2 and the DRAM read of the Sinkhorn kernels
  const std::string used = d["b_ceilings_used"].dump();
  EXPECT_NE(used.find("compute fma_f64 avx2 1T"), std::string::npos) << used;
  EXPECT_NE(used.find("bandwidth DRAM read"), std::string::npos) << used;
  EXPECT_EQ(d["b"]["isa"].size(), 3u);
}

TEST(PredictOn, WithoutMeasuredTimesNoErrors) {
  const json d = predict_on(zen3_on_zen5(false));
  EXPECT_TRUE(d["accuracy"].is_null());
  EXPECT_TRUE(d["measured_b"].is_null());
  for (const auto& r : d["rows"]) {
    EXPECT_TRUE(r["error"].is_null());
    EXPECT_TRUE(r["predicted_b"]["roofline_carried"].is_number());
  }
}

// A kernel of an ISA B has not (avx512 on the Zen 3): priced with B's avx2 and said so, and
// B's time found under its avx2 name.
TEST(PredictOn, IsaMissingOnBIsSaidPerRowAndMatchedWithoutIt) {
  const fs::path dir = scratch("isa");
  json bench = read_json_file(kZen5 / "bench.json");
  for (auto& b : bench["benchmarks"]) {
    if (!b.contains("rooflab")) continue;
    std::string n = b["rooflab"]["name"];
    if (n.rfind("gemm/blocked/avx2/", 0) != 0) continue;
    n.replace(n.find("/avx2/"), 6, "/avx512/");
    b["rooflab"]["name"] = n;
    b["rooflab"]["isa"] = "avx512";
  }
  write_json_atomic(dir / "bench.json", bench);
  const json d = predict_on({dir / "bench.json", kZen5 / "machine.json", kZen3 / "machine.json", kZen3 / "bench.json"});
  const json r = row_of(d, "gemm/blocked/avx512/");
  ASSERT_EQ(r["b_lacks"].size(), 1u);
  EXPECT_NE(r["b_lacks"][0].get<std::string>().find("B has no avx512"), std::string::npos);
  EXPECT_NE(r["b_lacks"][0].get<std::string>().find("priced with B's avx2"), std::string::npos);
  EXPECT_TRUE(r["predicted_b"]["roofline_model"].is_number());
  EXPECT_EQ(r["matched"], "as gemm/blocked/avx2/f64/512x512x512/threads:1 (B ran avx2)");
  EXPECT_TRUE(r["error"]["roofline_model"].is_number());
  EXPECT_TRUE(row_of(d, "sinkhorn/c2r/")["b_lacks"].empty());
  fs::remove_all(dir);
}

// B without DRAM ceilings: no number for the DRAM-bound cases, and the row says why.
TEST(PredictOn, LevelMissingOnBGivesNoNumberButAReason) {
  const fs::path dir = scratch("level");
  json m = read_json_file(kZen5 / "machine.json");
  m["bandwidth"]["levels"].erase("DRAM");
  if (m["bandwidth"].contains("streams")) m["bandwidth"].erase("streams");
  write_json_atomic(dir / "machine.json", m);
  const json d = predict_on({kZen3 / "bench.json", kZen3 / "machine.json", dir / "machine.json", {}});
  const json r = row_of(d, "sinkhorn/c2r/");
  EXPECT_TRUE(r["predicted_b"]["roofline_model"].is_null());
  EXPECT_TRUE(r["predicted_b"]["roofline_carried"].is_null());
  ASSERT_FALSE(r["b_lacks"].empty());
  EXPECT_NE(r["b_lacks"].dump().find("roofline: no prediction on B"), std::string::npos) << r["b_lacks"].dump();
  fs::remove_all(dir);
}

// More threads than B's ceilings were measured at: priced with the most there are, and said.
TEST(PredictOn, ThreadsBeyondBsCeilingsAreSaid) {
  const fs::path dir = scratch("threads");
  json bench = read_json_file(kZen3 / "bench.json");
  for (auto& b : bench["benchmarks"])
    if (b.contains("rooflab") && b["rooflab"]["name"].get<std::string>().rfind("gemm/", 0) == 0) b["rooflab"]["threads"] = 2;
  write_json_atomic(dir / "bench.json", bench);
  fs::copy_file(kZen3 / "machine.json", dir / "machine.json");
  const json d = predict_on({dir / "bench.json", dir / "machine.json", kZen5 / "machine.json", {}});
  EXPECT_NE(row_of(d, "gemm/")["b_lacks"].dump().find("B's ceilings were measured at up to 1 thread(s)"),
            std::string::npos)
      << row_of(d, "gemm/")["b_lacks"].dump();
  fs::remove_all(dir);
}

TEST(PredictOn, MissingFilesAreErrorsNamingThem) {
  try {
    predict_on({kZen3 / "bench.json", kZen3 / "machine.json", "/nonexistent/B.json", {}});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/B.json not found"), std::string::npos) << e.what();
  }
  EXPECT_THROW(predict_on({"/nonexistent/bench.json", kZen3 / "machine.json", kZen5 / "machine.json", {}}), Error);
}

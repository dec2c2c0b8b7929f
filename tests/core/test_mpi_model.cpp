// The MPI sweep's core-sharing model (roofline/mpi_model): the documented terms on a synthetic
// sweep with round numbers, the stored table and claim rows of a real sweep
// (tests/fixtures/mpi_run: `scripts/mpi_sweep.sh --quick` on a 2-CPU machine, numbers rounded
// to 4 digits) recomputed, the interleaved claim runs preferred, failed runs kept.
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "harness/error.hpp"
#include "harness/json_io.hpp"
#include "roofline/mpi_model.hpp"

using namespace rooflab;
using namespace rooflab::roofline::mpi;
namespace fs = std::filesystem;

namespace {
const fs::path kFixture = fs::path(ROOFLAB_TEST_DIR) / "fixtures/mpi_run/mpi_sweep.json";

json synthetic() {
  return json::parse(R"({"cpus": 2, "pingpong": {"alpha_s": 1e-6, "beta_bytes_per_s": 1e9, "gamma_s_per_byte": 0},
    "timeslice": {"spin_gap_s": 4e-3, "yield_round_s": 5e-6},
    "runs": [{"id": "one", "design": "mpich", "ranks": 1, "ranks_per_node": 1, "comm_only": false,
              "dims": [100, 64], "dtype": "f64", "kernel": "microkernel", "compute_time_per_iter_s": 0.010,
              "time_per_iter_s": 0.010, "predicted_comm_s": 0.0, "allreduce_rounds": 0}]})");
}
json base() {
  return json::parse(R"({"ranks_per_node": 8, "chunks": 4, "dims": [100, 64], "dtype": "f64", "kernel": "microkernel",
    "predicted_comm_s": 1e-4, "allreduce_rounds": 10, "time_per_iter_s": 1.0, "comm_only": false})");
}
json with(json j, const json& more) {
  j.update(more);
  return j;
}

// Relative closeness as pytest.approx(rel=1e-3) (the fixture stores 4 digits).
void expect_near_rel(const json& got, const json& want, const std::string& what, double rel = 1e-3) {
  if (want.is_null()) {
    EXPECT_TRUE(got.is_null()) << what << ": got " << got.dump() << ", want null";
    return;
  }
  ASSERT_TRUE(got.is_number()) << what << ": got " << got.dump() << ", want " << want.dump();
  const double g = got.get<double>(), w = want.get<double>();
  EXPECT_LE(std::abs(g - w), rel * std::abs(w) + 1e-12) << what << ": got " << g << ", want " << w;
}
}  // namespace

TEST(MpiModel, PredictTermsOnASyntheticSweep) {
  json doc = synthetic();
  const json k = constants(doc);
  const json spin = predict(with(base(), {{"design", "ring"}, {"ranks", 8}, {"wait", "spin"}}), k);
  EXPECT_EQ(spin["regime"], "shared-spin");
  EXPECT_EQ(spin["ranks_per_core"], 4);
  EXPECT_DOUBLE_EQ(spin["predicted_comm_s"].get<double>(), 1e-4 + 10 * 3 * 4e-3);
  EXPECT_DOUBLE_EQ(spin["predicted_compute_s"].get<double>(), 0.010 * 13 / 100 * 4);  // ceil(100 / 8) rows
  const json yld = predict(with(base(), {{"design", "ring"}, {"ranks", 8}, {"wait", "yield"}}), k);
  EXPECT_EQ(yld["regime"], "shared-yield");
  EXPECT_DOUBLE_EQ(yld["predicted_comm_s"].get<double>(), 1e-4 + 10 * 3 * 5e-6);
  // Two ranks on two CPUs: alpha-beta only; coffee's overlap hides chunks 2..C under the column scale.
  const json cof = predict(with(base(), {{"design", "coffee"}, {"ranks", 2}, {"overlap", true}}), k);
  EXPECT_EQ(cof["regime"], "unshared");
  EXPECT_EQ(cof["sharing_comm_s"].get<double>(), 0);
  const double hidden = std::min(1e-4, 0.005 / 3) * 3 / 4;
  EXPECT_DOUBLE_EQ(cof["hidden_by_overlap_s"].get<double>(), hidden);
  EXPECT_DOUBLE_EQ(cof["predicted_iter_s"].get<double>(), 0.005 + 1e-4 - hidden);
  // No overlap, or one chunk: nothing hidden.
  EXPECT_EQ(predict(with(base(), {{"design", "coffee"}, {"ranks", 2}, {"overlap", false}}), k)["hidden_by_overlap_s"], 0.0);
  EXPECT_EQ(predict(with(base(), {{"design", "coffee"}, {"ranks", 2}, {"overlap", true}, {"chunks", 1}}), k)
                ["hidden_by_overlap_s"], 0.0);
  // Without the time-slice calibration a shared run has no prediction (never a made-up one).
  doc.erase("timeslice");
  const json none = predict(with(base(), {{"design", "ring"}, {"ranks", 8}}), constants(doc));
  EXPECT_TRUE(none["predicted_comm_s"].is_null());
  EXPECT_TRUE(none["predicted_iter_s"].is_null());
  // Nor a run whose size has no P = 1 run.
  const json other = predict(with(base(), {{"design", "ring"}, {"ranks", 2}, {"dims", {50, 64}}}), k);
  EXPECT_TRUE(other["predicted_compute_s"].is_null());
  EXPECT_TRUE(other["predicted_iter_s"].is_null());
}

TEST(MpiModel, ConstantsAreTheMeasuredOnes) {
  const json sweep = read_json_file(kFixture);
  const json k = constants(sweep);
  EXPECT_EQ(k["cpus"], 2);
  EXPECT_EQ(k["spin_gap_s"], sweep["timeslice"]["spin_gap_s"]);
  EXPECT_GT(k["spin_gap_s"].get<double>(), 0);
  EXPECT_EQ(k["alpha_s"], sweep["pingpong"]["alpha_s"]);
  // The fastest P = 1 run per kernel.
  double c1 = INFINITY;
  for (const auto& r : sweep["runs"])
    if (r["ranks"] == 1 && !r["comm_only"].get<bool>() && r["kernel"] == "microkernel")
      c1 = std::min(c1, r["compute_time_per_iter_s"].get<double>());
  bool found = false;
  for (const auto& e : k["compute_1rank_s"])
    if (e["kernel"] == "microkernel") {
      found = true;
      EXPECT_EQ(e["seconds"].get<double>(), c1);
    }
  EXPECT_TRUE(found);
  EXPECT_EQ(k["compute_1rank_s"], sweep["model"]["constants"]["compute_1rank_s"]);
}

// The table the sweep stored (computed by the model when the sweep ran) is what the model
// computes from the sweep's runs: every row, every number.
TEST(MpiModel, StoredTableIsRecomputed) {
  const json sweep = read_json_file(kFixture);
  const json t = table(sweep);
  const json& stored = sweep["model_table"];
  ASSERT_EQ(t.size(), stored.size());
  size_t full = 0;
  for (const auto& r : sweep["runs"]) full += !r["comm_only"].get<bool>() && r["ranks"].get<int>() >= 2;
  EXPECT_EQ(t.size(), full);
  for (size_t i = 0; i < t.size(); ++i) {
    const std::string id = t[i]["id"];
    EXPECT_EQ(id, stored[i]["id"]) << "row " << i << " (the table's order)";
    for (const char* key : {"regime", "ranks_per_core", "rounds", "comm_only_id", "wait", "kernel"})
      EXPECT_EQ(t[i][key], stored[i][key]) << id << " " << key;
    for (const char* key : {"predicted_comm_s", "measured_comm_s", "comm_ratio", "alpha_beta_comm_s", "sharing_comm_s",
                            "predicted_compute_s", "hidden_by_overlap_s", "predicted_iter_s", "measured_iter_s",
                            "iter_ratio"})
      expect_near_rel(t[i][key], stored[i][key], id + " " + key, 2e-3);
  }
  const json s = summary(t);
  for (const char* reg : {"unshared", "shared-spin", "shared-yield"}) {
    EXPECT_EQ(s[reg]["rows"], sweep["model_summary"][reg]["rows"]) << reg;
    EXPECT_GT(s[reg]["rows"].get<int>(), 0) << reg;
    expect_near_rel(s[reg]["iter_ratio"]["median"], sweep["model_summary"][reg]["iter_ratio"]["median"], reg, 2e-3);
  }
}

TEST(MpiModel, ClaimRowsOfTheSweepsRuns) {
  const json sweep = read_json_file(kFixture);
  const json c = claims(sweep);
  EXPECT_EQ(c["source"], "runs");  // the fixture has no interleaved claim runs (--claim-reps 0)
  EXPECT_EQ(c["coffee_cpu_vs_ring_one_node"].size(), 4u);
  const json& again = c["coffee_mpi_vs_ring_one_node"];
  const json& stored = sweep["claims"]["coffee_mpi_vs_ring_one_node"];
  ASSERT_EQ(again.size(), stored.size());
  for (size_t i = 0; i < again.size(); ++i) {
    EXPECT_EQ(again[i]["ranks"], stored[i]["ranks"]);
    EXPECT_EQ(again[i]["ids"], stored[i]["ids"]);
    EXPECT_EQ(again[i]["chunks"], stored[i]["chunks"]);
    expect_near_rel(again[i]["speedup"], stored[i]["speedup"], "speedup");
  }
}

TEST(MpiModel, ClaimsPreferTheInterleavedRepetitions) {
  auto run = [](const std::string& what, int P, int rep, double t) {
    return json{{"id", "claim_" + what + "_p" + std::to_string(P) + "_rep" + std::to_string(rep)},
                {"design", what == "coffee" ? "coffee" : "ring"}, {"ranks", P}, {"ranks_per_node", P},
                {"kernel", what == "ringtypical" ? "typical" : "microkernel"}, {"dims", {64, 64}}, {"dtype", "f64"},
                {"oversubscribed", false}, {"chunks", 4}, {"time_per_iter_s", t}, {"comm_only", false}};
  };
  // Per repetition: typical, ring, coffee; the machine is 2x slower in repetition 2.
  const std::map<int, std::array<double, 3>> times = {{1, {10.0, 2.0, 2.5}}, {2, {20.0, 4.0, 5.0}}, {3, {12.0, 2.0, 2.0}}};
  json claim_runs = json::array();
  for (const auto& [k, ts] : times) {
    claim_runs.push_back(run("ringtypical", 2, k, ts[0]));
    claim_runs.push_back(run("ring", 2, k, ts[1]));
    claim_runs.push_back(run("coffee", 2, k, ts[2]));
  }
  // A sweep run that disagrees must not be used when claim runs exist.
  json ring = run("ring", 2, 9, 100.0);
  ring["id"] = "ring_p2";
  const json c = claims({{"runs", {ring}}, {"claim_runs", claim_runs}});
  EXPECT_EQ(c["source"], "claim_runs");
  ASSERT_EQ(c["coffee_cpu_vs_ring_one_node"].size(), 1u);
  const json& cpu = c["coffee_cpu_vs_ring_one_node"][0];
  EXPECT_EQ(cpu["repetitions"], 3);
  EXPECT_DOUBLE_EQ(cpu["speedup"].get<double>(), 5.0);  // ratios 5, 5, 6
  EXPECT_DOUBLE_EQ(cpu["speedup_range"][0].get<double>(), 5.0);
  EXPECT_DOUBLE_EQ(cpu["speedup_range"][1].get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(cpu["ring_microkernel_s"].get<double>(), 2.0);
  ASSERT_EQ(c["coffee_mpi_vs_ring_one_node"].size(), 1u);
  const json& mpi = c["coffee_mpi_vs_ring_one_node"][0];
  EXPECT_DOUBLE_EQ(mpi["speedup"].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(mpi["speedup_range"][0].get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(mpi["speedup_range"][1].get<double>(), 1.0);
  EXPECT_EQ(mpi["chunks"], 4);
}

// A sweep whose P = 1 runs failed keeps its runs, with an empty model and why; without failed
// runs the same error is an error.
TEST(MpiModel, FailedRunsLeaveTheModelOutWithAReason) {
  json doc = synthetic();
  doc["runs"].push_back(with(base(), {{"id", "ring_p2"}, {"design", "ring"}, {"ranks", 2}, {"dims", nullptr}}));
  doc["runs"].push_back(with(base(), {{"id", "ring_p2_comm"}, {"design", "ring"}, {"ranks", 2}, {"comm_only", true}}));
  json ok = doc;
  EXPECT_THROW(add_model(ok, "sweep.json"), Error);
  doc["failed_runs"] = {{{"id", "mpich_p1"}}};
  add_model(doc, "sweep.json");
  EXPECT_TRUE(doc["model"].is_null());
  EXPECT_TRUE(doc["model_table"].empty());
  EXPECT_NE(doc["model_error"].get<std::string>().find("not computed (1 runs failed)"), std::string::npos);
}

TEST(MpiModel, CommandRewritesTheSweepWithTheModel) {
  const fs::path dir = fs::temp_directory_path() / ("rooflab_mpi_model_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  json doc = read_json_file(kFixture);
  for (const char* k : {"model", "model_table", "model_summary", "claims"}) doc.erase(k);
  write_json_atomic(dir / "mpi_sweep.json", doc);
  testing::internal::CaptureStdout();
  EXPECT_EQ(mpi_sweep_main(dir), 0);
  const std::string out = testing::internal::GetCapturedStdout();
  EXPECT_NE(out.find("shared-spin"), std::string::npos);
  const json got = read_json_file(dir / "mpi_sweep.json");
  const json want = read_json_file(kFixture);
  EXPECT_EQ(got["model_table"].size(), want["model_table"].size());
  EXPECT_EQ(got["claims"]["source"], "runs");
  EXPECT_NE(got["model"]["formula"].get<std::string>().find("ceil(P / c)"), std::string::npos);
  EXPECT_EQ(got["runs"], want["runs"]);  // the measurements are kept as they were
  fs::remove_all(dir);
  EXPECT_THROW(mpi_sweep_main(dir), Error);  // no mpi_sweep.json
}

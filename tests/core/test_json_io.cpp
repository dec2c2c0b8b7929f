// json_io: what other commands measure about the machine is written beside machine.json, never
// into it, and joined when read; a section measured for an earlier machine.json is not joined.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "harness/error.hpp"
#include "harness/json_io.hpp"

namespace fs = std::filesystem;
using namespace rooflab;

TEST(JsonIo, MachineSectionsAreWrittenBesideAndJoinedWhenRead) {
  const fs::path dir = fs::temp_directory_path() / ("rooflab_json_io_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path m = dir / "machine.json";
  const json original = {{"schema", "rooflab.machine/1"}, {"created", "T1"}, {"compute", {{"x", 1}}}};
  write_json_atomic(m, original);
  write_machine_section(m, "mpi", json{{"alpha_s", 2e-6}});
  write_machine_section(m, "mpi", json{{"alpha_s", 3e-6}});  // replaces, does not nest
  write_machine_section(m, "rtamm", json{{"units", json::array()}});
  EXPECT_EQ(read_json_file(m), original);                    // machine.json is never edited
  EXPECT_TRUE(fs::exists(dir / "machine.mpi.json"));
  const json j = read_machine_json(m);
  EXPECT_EQ(j["compute"]["x"], 1);
  EXPECT_DOUBLE_EQ(j["mpi"]["alpha_s"].get<double>(), 3e-6);
  EXPECT_EQ(j["mpi"].size(), 1u);
  EXPECT_TRUE(j.contains("rtamm"));
  EXPECT_FALSE(j.contains("stale_sections"));

  // Re-characterizing the directory makes the sections stale: not joined, named with the reason.
  write_json_atomic(m, json{{"schema", "rooflab.machine/1"}, {"created", "T2"}});
  const json k = read_machine_json(m);
  EXPECT_FALSE(k.contains("mpi"));
  ASSERT_TRUE(k.contains("stale_sections"));
  EXPECT_NE(k["stale_sections"]["mpi"].get<std::string>().find("T1"), std::string::npos);

  // A section file that is not one, or names another section, is an error naming it.
  write_json_atomic(dir / "machine.gpu.json", json{{"schema", "rooflab.machine_section/1"}, {"section", "mpi"},
                                                   {"machine_created", "T2"}, {"value", 1}});
  try {
    read_machine_json(m);
    FAIL() << "mismatched section accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("machine.gpu.json"), std::string::npos) << e.what();
  }
  write_text_atomic(dir / "machine.gpu.json", "{\"schema\": ");
  EXPECT_THROW(read_machine_json(m), Error);
  fs::remove_all(dir);
}

TEST(JsonIo, MergeMachineSectionRejectsMissingOrForeignFiles) {
  const fs::path dir = fs::temp_directory_path() / ("rooflab_json_io2_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  try {
    write_machine_section(dir / "none.json", "mpi", json::object());
    FAIL() << "missing file accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rooflab characterize"), std::string::npos) << e.what();
  }
  write_json_atomic(dir / "bench.json", json{{"schema", "rooflab.bench/1"}});
  EXPECT_THROW(write_machine_section(dir / "bench.json", "mpi", json::object()), Error);
  fs::remove_all(dir);
}

// A section fitted on another (fitted_on) is joined only while that one is the revision it was
// fitted on and is joined itself; otherwise it is named under "stale_sections" with both files.
TEST(JsonIo, ASectionFittedOnAnotherIsStaleOnceThatOneIsRewritten) {
  const fs::path dir = fs::temp_directory_path() / ("rooflab_json_io3_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path m = dir / "machine.json";
  write_json_atomic(m, json{{"schema", "rooflab.machine/1"}, {"created", "T1"}});
  write_machine_section(m, "base", json{{"v", 1}});
  write_machine_section(m, "fit", json{{"scale", 2}}, {"base"});
  const json f = read_json_file(dir / "machine.fit.json");
  EXPECT_EQ(f["fitted_on"]["base"], read_json_file(dir / "machine.base.json")["revision"]);
  json j = read_machine_json(m);
  EXPECT_EQ(j["fit"]["scale"], 2);
  EXPECT_FALSE(j.contains("stale_sections"));
  // Rewritten with the same value within the same second: still another revision.
  write_machine_section(m, "base", json{{"v", 1}});
  j = read_machine_json(m);
  EXPECT_FALSE(j.contains("fit"));
  EXPECT_EQ(j["base"]["v"], 1);
  const std::string why = j["stale_sections"]["fit"];
  EXPECT_NE(why.find("machine.fit.json was fitted on machine.base.json revision"), std::string::npos) << why;
  EXPECT_NE(why.find("machine.base.json is now revision"), std::string::npos) << why;
  // Refitted: joined again. Its base gone or itself stale: stale too.
  write_machine_section(m, "fit", json{{"scale", 3}}, {"base"});
  EXPECT_EQ(read_machine_json(m)["fit"]["scale"], 3);
  fs::remove(dir / "machine.base.json");
  EXPECT_NE(read_machine_json(m)["stale_sections"]["fit"].get<std::string>().find("machine.base.json is missing"),
            std::string::npos);
  write_machine_section(m, "base", json{{"v", 2}});
  write_machine_section(m, "fit", json{{"scale", 4}}, {"base"});
  json later = read_json_file(dir / "machine.base.json");
  later["machine_created"] = "T0";
  write_json_atomic(dir / "machine.base.json", later);
  j = read_machine_json(m);
  EXPECT_FALSE(j.contains("base"));
  EXPECT_FALSE(j.contains("fit"));
  EXPECT_NE(j["stale_sections"]["fit"].get<std::string>().find("machine.base.json is not used itself"),
            std::string::npos);
  // Fitted on a section machine.json carries inline: joined while no file replaces it.
  fs::remove(dir / "machine.base.json");
  write_json_atomic(m, json{{"schema", "rooflab.machine/1"}, {"created", "T1"}, {"base", {{"v", 0}}}});
  write_machine_section(m, "fit", json{{"scale", 5}}, {"base"});
  EXPECT_EQ(read_json_file(dir / "machine.fit.json")["fitted_on"]["base"], "inline");
  EXPECT_EQ(read_machine_json(m)["fit"]["scale"], 5);
  write_machine_section(m, "base", json{{"v", 1}});
  EXPECT_FALSE(read_machine_json(m).contains("fit"));
  // Fitted on nothing that exists: refused when written; a malformed fitted_on: an error naming the file.
  EXPECT_THROW(write_machine_section(m, "fit", json::object(), {"nothing"}), Error);
  json bad = read_json_file(dir / "machine.fit.json");
  bad["fitted_on"] = json::array({"base"});
  write_json_atomic(dir / "machine.fit.json", bad);
  try {
    read_machine_json(m);
    FAIL() << "a malformed fitted_on was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("machine.fit.json: \"fitted_on\""), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

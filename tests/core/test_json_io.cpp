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

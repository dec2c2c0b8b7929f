// json_io: machine.json sections written by other commands are merged without losing the rest.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include "harness/error.hpp"
#include "harness/json_io.hpp"

namespace fs = std::filesystem;
using namespace rooflab;

TEST(JsonIo, MergeMachineSectionKeepsOtherKeys) {
  const fs::path dir = fs::temp_directory_path() / ("rooflab_json_io_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path m = dir / "machine.json";
  write_json_atomic(m, json{{"schema", "rooflab.machine/1"}, {"compute", {{"x", 1}}}});
  merge_machine_section(m, "mpi", json{{"alpha_s", 2e-6}});
  merge_machine_section(m, "mpi", json{{"alpha_s", 3e-6}});  // replaces, does not nest
  const json j = read_json_file(m);
  EXPECT_EQ(j["compute"]["x"], 1);
  EXPECT_DOUBLE_EQ(j["mpi"]["alpha_s"].get<double>(), 3e-6);
  EXPECT_EQ(j["mpi"].size(), 1u);
  fs::remove_all(dir);
}

TEST(JsonIo, MergeMachineSectionRejectsMissingOrForeignFiles) {
  const fs::path dir = fs::temp_directory_path() / ("rooflab_json_io2_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  try {
    merge_machine_section(dir / "none.json", "mpi", json::object());
    FAIL() << "missing file accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("rooflab characterize"), std::string::npos) << e.what();
  }
  write_json_atomic(dir / "bench.json", json{{"schema", "rooflab.bench/1"}});
  EXPECT_THROW(merge_machine_section(dir / "bench.json", "mpi", json::object()), Error);
  fs::remove_all(dir);
}

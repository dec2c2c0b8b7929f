#include "harness/json_io.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>

#include "harness/error.hpp"

namespace rooflab {
namespace fs = std::filesystem;

void write_text_atomic(const fs::path& path, const std::string& text) {
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  ensure_writable_dir(dir);
  // A hidden sibling, so the rename is atomic (same file system).
  std::string name = ".";
  name += path.filename().string();
  name += ".tmp." + std::to_string(getpid());
  const fs::path tmp = dir / name;
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error("cannot write " + tmp.string());
    out << text;
    out.flush();
    if (!out) throw Error("write failed for " + tmp.string() + " (disk full?)");
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp);
    throw Error("cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message());
  }
}

void write_json_atomic(const fs::path& path, const json& j) {
  write_text_atomic(path, j.dump(2) + "\n");
}

json read_json_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw Error("cannot read " + path.string() + " (missing or not readable)");
  try {
    return json::parse(in);
  } catch (const json::exception& e) {
    throw Error(path.string() + " is not valid JSON: " + e.what());
  }
}

void require_schema(const json& j, const std::string& kind, int major, const fs::path& path) {
  const std::string want = kind + "/" + std::to_string(major);
  if (!j.is_object() || !j.contains("schema") || !j["schema"].is_string())
    throw Error(path.string() + ": no \"schema\" key; expected " + want);
  const std::string got = j["schema"];
  if (got != want) throw Error(path.string() + ": schema is " + got + ", expected " + want);
}

void merge_machine_section(const fs::path& machine_json, const std::string& section, const json& value) {
  if (!fs::exists(machine_json))
    throw Error("machine model " + machine_json.string() + " not found; run `rooflab characterize --out DIR` first");
  json j = read_json_file(machine_json);
  require_schema(j, "rooflab.machine", 1, machine_json);
  j[section] = value;
  write_json_atomic(machine_json, j);
}

void ensure_writable_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    throw Error("cannot create output directory " + dir.string() +
                (ec ? ": " + ec.message() : std::string()));
  if (access(dir.c_str(), W_OK) != 0)
    throw Error("output directory " + dir.string() + " is not writable");
}

std::string utc_timestamp() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}
}  // namespace rooflab

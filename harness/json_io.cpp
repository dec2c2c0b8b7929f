#include "harness/json_io.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <algorithm>
#include <fstream>
#include <vector>

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
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw Error(path.string() + " is a directory, expected a JSON file");
  std::ifstream in(path);
  if (!in) throw Error("cannot read " + path.string() + " (missing or not readable)");
  if (in.peek() == std::ifstream::traits_type::eof()) throw Error(path.string() + " is empty, expected JSON");
  try {
    return json::parse(in);  // rejects truncated files and ill-formed UTF-8 in strings
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

fs::path machine_section_path(const fs::path& machine_json, const std::string& section) {
  return (machine_json.has_parent_path() ? machine_json.parent_path() : fs::path(".")) /
         ("machine." + section + ".json");
}

void write_machine_section(const fs::path& machine_json, const std::string& section, const json& value) {
  if (!fs::exists(machine_json))
    throw Error("machine model " + machine_json.string() + " not found; run `rooflab characterize --out DIR` first");
  const json m = read_json_file(machine_json);
  require_schema(m, "rooflab.machine", 1, machine_json);
  write_json_atomic(machine_section_path(machine_json, section),
                    json{{"schema", "rooflab.machine_section/1"},
                         {"section", section},
                         {"machine_created", m.value("created", "")},
                         {"created", utc_timestamp()},
                         {"value", value}});
}

json read_machine_json(const fs::path& machine_json) {
  json m = read_json_file(machine_json);
  require_schema(m, "rooflab.machine", 1, machine_json);
  const fs::path dir = machine_json.has_parent_path() ? machine_json.parent_path() : fs::path(".");
  std::error_code ec;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.size() > 13 && n.rfind("machine.", 0) == 0 && n.compare(n.size() - 5, 5, ".json") == 0 &&
        n != "machine.json")
      files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());  // a fixed order, whatever the directory's
  for (const auto& f : files) {
    const json c = read_json_file(f);
    require_schema(c, "rooflab.machine_section", 1, f);
    const std::string section = c.value("section", "");
    const std::string expected = f.filename().string().substr(8, f.filename().string().size() - 13);
    if (section != expected || !c.contains("value"))
      throw Error(f.string() + ": section \"" + section + "\" does not match its file name (expected \"" + expected + "\")");
    // A section measured against an earlier characterization of this directory is stale: the
    // ceilings it was taken beside are gone, so it is not joined (its command says to re-run).
    if (c.value("machine_created", "") != m.value("created", "")) {
      m["stale_sections"][section] = f.filename().string() + " was measured for the machine.json of " +
                                     c.value("machine_created", "?") + "; machine.json is now from " +
                                     m.value("created", "?");
      continue;
    }
    m[section] = c["value"];
  }
  return m;
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

#include "harness/json_io.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <vector>

#include "harness/error.hpp"
#include "harness/isa.hpp"
#include "harness/machine_cpu.hpp"

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

namespace {
// What a dependent section records of the section it was fitted on: the file's revision (unique
// per write, see write_machine_section), or "inline" for a section machine.json carries itself.
std::string section_revision(const json& file) { return file.value("revision", file.value("created", "")); }
}  // namespace

void write_machine_section(const fs::path& machine_json, const std::string& section, const json& value,
                           const std::vector<std::string>& fitted_on) {
  if (!fs::exists(machine_json))
    throw Error("machine model " + machine_json.string() + " not found; run `rooflab characterize --out DIR` first");
  const json m = read_json_file(machine_json);
  require_schema(m, "rooflab.machine", 1, machine_json);
  const std::string created = utc_timestamp();
  // The revision tells two writes apart even within one second (created has whole seconds).
  const auto ns = std::chrono::steady_clock::now().time_since_epoch().count();
  char rev[24];
  std::snprintf(rev, sizeof rev, "%08zx",
                std::hash<std::string>{}(value.dump() + "#" + std::to_string(ns) + "#" + std::to_string(getpid())) &
                    0xffffffffu);
  json file = {{"schema", "rooflab.machine_section/1"}, {"section", section},
               {"machine_created", m.value("created", "")}, {"created", created},
               {"revision", created + "#" + rev}, {"value", value}};
  for (const std::string& dep : fitted_on) {
    const fs::path df = machine_section_path(machine_json, dep);
    if (fs::exists(df)) {
      const json d = read_json_file(df);
      require_schema(d, "rooflab.machine_section", 1, df);
      file["fitted_on"][dep] = section_revision(d);
    } else if (m.contains(dep)) {
      file["fitted_on"][dep] = "inline";
    } else {
      throw Error(machine_section_path(machine_json, section).string() + " is fitted on " + df.string() +
                  ", which does not exist");
    }
  }
  write_json_atomic(machine_section_path(machine_json, section), file);
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
  struct Section {
    fs::path file;
    json doc;
    bool joined = true;
  };
  std::map<std::string, Section> secs;
  for (const auto& f : files) {
    json c = read_json_file(f);
    require_schema(c, "rooflab.machine_section", 1, f);
    const std::string section = c.value("section", "");
    const std::string expected = f.filename().string().substr(8, f.filename().string().size() - 13);
    if (section != expected || !c.contains("value"))
      throw Error(f.string() + ": section \"" + section + "\" does not match its file name (expected \"" + expected + "\")");
    if (c.contains("fitted_on") && !c["fitted_on"].is_object())
      throw Error(f.string() + ": \"fitted_on\" must be an object of section -> revision");
    if (!c.contains("fitted_on")) c["fitted_on"] = json::object();
    for (const auto& [dep, rev] : c["fitted_on"].items())
      if (!rev.is_string()) throw Error(f.string() + ": \"fitted_on\"." + dep + " must be a string");
    Section s{f, std::move(c)};
    // A section measured against an earlier characterization of this directory is stale: the
    // ceilings it was taken beside are gone, so it is not joined (its command says to re-run).
    if (s.doc.value("machine_created", "") != m.value("created", "")) {
      m["stale_sections"][section] = f.filename().string() + " was measured for the machine.json of " +
                                     s.doc.value("machine_created", "?") + "; machine.json is now from " +
                                     m.value("created", "?");
      s.joined = false;
    }
    secs.emplace(section, std::move(s));
  }
  // A section fitted on another (the rtamm calibration on the rtamm units) is stale when that one
  // was rewritten since, or is itself not joined: it belongs to values that are no longer there.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& [name, s] : secs) {
      if (!s.joined) continue;
      for (const auto& [dep, rev] : s.doc["fitted_on"].items()) {
        const std::string was = rev.get<std::string>();
        const std::string dep_file = "machine." + dep + ".json";
        const auto d = secs.find(dep);
        std::string why;
        if (d == secs.end()) {
          if (!(was == "inline" && m.contains(dep))) why = dep_file + " is missing";
        } else if (!d->second.joined) {
          why = dep_file + " is not used itself";
        } else if (section_revision(d->second.doc) != was) {
          why = dep_file + " is now revision " + section_revision(d->second.doc);
        }
        if (why.empty()) continue;
        m["stale_sections"][name] = s.file.filename().string() + " was fitted on " + dep_file + " revision " + was +
                                    "; " + why;
        s.joined = false;
        changed = true;
        break;
      }
    }
  }
  for (auto& [name, s] : secs)
    if (s.joined) m[name] = s.doc["value"];
  return m;
}

std::string machine_cpu(const json& machine, const std::string& older) {
  if (machine.contains("host") && machine["host"].is_object()) {
    const json& h = machine["host"];
    if (h.contains("cpu_signature") && h["cpu_signature"].is_string()) return h["cpu_signature"].get<std::string>();
  }
  return older;
}

std::string foreign_cpu(const json& machine, const fs::path& path, const std::string& older) {
  const std::string cpu = machine_cpu(machine, older);
  if (cpu.empty()) {
    static std::set<std::string> warned;
    if (warned.insert(fs::absolute(path).string()).second)
      std::fprintf(stderr, "warning: %s names no CPU (host.cpu_signature; written before it was recorded): its CPU "
                           "is unknown, taken as this one (\"%s\"); run `rooflab characterize` again to record it\n",
                   path.string().c_str(), cpu_signature().c_str());
    return "";
  }
  if (cpu == cpu_signature()) return "";
  return "measured on \"" + cpu + "\", this CPU is \"" + cpu_signature() + "\"";
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

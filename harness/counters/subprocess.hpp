#pragma once
// Runs a child process with its output in files and a wall-clock limit: the cachegrind back
// end's valgrind children can crash or run away, and must become a failed row, not a hang.
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

namespace rooflab::counters {

struct ChildResult {
  int exit_code = -1;     // valid when the child exited normally
  int term_signal = 0;    // non-zero when a signal ended it
  bool timed_out = false; // killed (SIGKILL to its process group) after the limit
  double seconds = 0;
  std::string describe() const;  // "exit code 3", "killed by signal 11 (Segmentation fault)", ...
  bool ok() const { return !timed_out && term_signal == 0 && exit_code == 0; }
};

// argv[0] must be a path (no PATH search). `env` entries override the inherited environment.
// Throws rooflab::Error when the process cannot be started.
ChildResult run_child(const std::vector<std::string>& argv,
                      const std::vector<std::pair<std::string, std::string>>& env,
                      const std::filesystem::path& stdout_file,
                      const std::filesystem::path& stderr_file, double timeout_s);

// The executable on PATH named `name`, or "" when there is none.
std::string find_on_path(const std::string& name);
// The last `max_lines` lines of a text file ("" when unreadable).
std::string tail_of_file(const std::filesystem::path& file, size_t max_lines);

}  // namespace rooflab::counters

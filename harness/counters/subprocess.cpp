#include "harness/counters/subprocess.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <deque>
#include <fstream>
#include <thread>

#include "harness/error.hpp"

extern char** environ;

namespace rooflab::counters {
namespace fs = std::filesystem;

std::string ChildResult::describe() const {
  if (timed_out) return "timed out after " + std::to_string(int(seconds)) + " s";
  if (term_signal) return "killed by signal " + std::to_string(term_signal) + " (" + strsignal(term_signal) + ")";
  return "exit code " + std::to_string(exit_code);
}

ChildResult run_child(const std::vector<std::string>& argv,
                      const std::vector<std::pair<std::string, std::string>>& env,
                      const fs::path& stdout_file, const fs::path& stderr_file, double timeout_s) {
  if (argv.empty()) throw Error("run_child: empty command");
  // Everything the child needs is built before fork(): after fork only async-signal-safe
  // calls are allowed (the parent may have OpenMP threads).
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    const std::string s = *e;
    bool overridden = false;
    for (const auto& [k, v] : env) overridden |= s.compare(0, k.size() + 1, k + "=") == 0;
    if (!overridden) env_strings.push_back(s);
  }
  for (const auto& [k, v] : env) env_strings.push_back(k + "=" + v);
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env_strings) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);

  const int out_fd = ::open(stdout_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  const int err_fd = ::open(stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out_fd < 0 || err_fd < 0) {
    if (out_fd >= 0) ::close(out_fd);
    if (err_fd >= 0) ::close(err_fd);
    throw Error("cannot create " + stdout_file.string() + " / " + stderr_file.string() + ": " +
                std::strerror(errno));
  }
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out_fd);
    ::close(err_fd);
    throw Error(std::string("fork failed: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::setpgid(0, 0);  // its own group, so a timeout kills valgrind and anything it started
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(err_fd, STDERR_FILENO);
    ::execve(cargv[0], cargv.data(), cenv.data());
    static const char msg[] = "rooflab: exec failed\n";
    [[maybe_unused]] auto n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(127);
  }
  ::close(out_fd);
  ::close(err_fd);

  ChildResult r;
  int status = 0;
  while (true) {
    const pid_t w = ::waitpid(pid, &status, WNOHANG);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (w == pid) break;
    if (w < 0 && errno != EINTR) throw Error(std::string("waitpid failed: ") + std::strerror(errno));
    if (r.seconds > timeout_s) {
      ::kill(-pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      r.timed_out = true;
      return r;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.term_signal = WTERMSIG(status);
  return r;
}

std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::string p = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= p.size()) {
    size_t end = p.find(':', start);
    if (end == std::string::npos) end = p.size();
    const fs::path cand = fs::path(p.substr(start, end - start).empty() ? "." : p.substr(start, end - start)) / name;
    if (::access(cand.c_str(), X_OK) == 0 && !fs::is_directory(cand)) return cand.string();
    start = end + 1;
  }
  return "";
}

std::string tail_of_file(const fs::path& file, size_t max_lines) {
  std::ifstream in(file);
  std::deque<std::string> lines;
  for (std::string l; std::getline(in, l);) {
    lines.push_back(l);
    if (lines.size() > max_lines) lines.pop_front();
  }
  std::string out;
  for (const auto& l : lines) out += (out.empty() ? "" : "\n") + l;
  return out;
}

}  // namespace rooflab::counters

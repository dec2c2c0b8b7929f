#pragma once
// Progress lines for long runs: "[i/N] what  elapsed 12s  eta 40s", on stderr so that
// stdout stays machine-readable.
#include <chrono>
#include <string>

namespace rooflab {
class Progress {
 public:
  Progress(std::string label, size_t total);
  // Marks item `index` (0-based) as started and prints a line.
  void start(size_t index, const std::string& what);
  void done(const std::string& summary = "");
  static std::string format_seconds(double s);

 private:
  std::string label_;
  size_t total_;
  std::chrono::steady_clock::time_point t0_;
};
}  // namespace rooflab

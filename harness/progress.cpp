#include "harness/progress.hpp"

#include <cstdio>

namespace rooflab {
Progress::Progress(std::string label, size_t total)
    : label_(std::move(label)), total_(total), t0_(std::chrono::steady_clock::now()) {}

std::string Progress::format_seconds(double s) {
  char buf[32];
  if (s < 60) std::snprintf(buf, sizeof buf, "%.0fs", s);
  else std::snprintf(buf, sizeof buf, "%dm%02ds", int(s) / 60, int(s) % 60);
  return buf;
}

void Progress::start(size_t index, const std::string& what) {
  const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  std::string eta = "?";
  if (index > 0) eta = format_seconds(el / double(index) * double(total_ - index));
  std::fprintf(stderr, "[%s %zu/%zu] %s  (elapsed %s, eta %s)\n", label_.c_str(), index + 1,
               total_, what.c_str(), format_seconds(el).c_str(), eta.c_str());
  std::fflush(stderr);
}

void Progress::done(const std::string& summary) {
  const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  std::fprintf(stderr, "[%s] done in %s%s%s\n", label_.c_str(), format_seconds(el).c_str(),
               summary.empty() ? "" : ": ", summary.c_str());
}
}  // namespace rooflab

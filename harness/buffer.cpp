#include "harness/buffer.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "harness/error.hpp"

namespace rooflab {

size_t available_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  size_t kb = 0;
  std::string unit;
  while (in >> key >> kb >> unit)
    if (key == "MemAvailable:") return kb * 1024;
  long pages = sysconf(_SC_AVPHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? size_t(pages) * size_t(page) : size_t(1) << 30;
}

void require_memory(size_t bytes, const char* what) {
  const size_t avail = available_memory_bytes();
  if (double(bytes) > 0.9 * double(avail)) {
    std::ostringstream os;
    os << what << " needs " << bytes / (1 << 20) << " MiB but only " << avail / (1 << 20)
       << " MiB of memory is available (limit 90%); choose smaller sizes";
    throw Error(os.str());
  }
}
}  // namespace rooflab

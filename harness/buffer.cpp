#include "harness/buffer.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <new>

#include <algorithm>
#include <cstddef>
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

size_t huge_page_bytes() {
  static const size_t bytes = [] {
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");
    size_t b = 0;
    return (in >> b) && b >= 4096 && (b & (b - 1)) == 0 ? b : size_t(2) << 20;
  }();
  return bytes;
}

void* allocate_pages(size_t bytes, size_t align) {
  const size_t huge = huge_page_bytes();
  if (bytes >= huge) align = std::max(align, huge);
  if (align < alignof(std::max_align_t)) align = alignof(std::max_align_t);
  const size_t rounded = (std::max<size_t>(bytes, 1) + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
  if (!p) throw std::bad_alloc();
  // A hint: where THP is "never" or the kernel lacks it, the call fails and 4 KiB pages remain.
  if (bytes >= huge) madvise(p, rounded, MADV_HUGEPAGE);
  return p;
}

std::string thp_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line, mode = "unknown";
  if (std::getline(in, line)) {
    const auto a = line.find('['), b = line.find(']');
    if (a != std::string::npos && b != std::string::npos && b > a) mode = line.substr(a + 1, b - a - 1);
  }
  return mode;
}

std::string page_policy() {
  std::ostringstream os;
  os << "THP " << thp_mode() << "; buffers >= " << huge_page_bytes() / 1024 << " KiB huge-page aligned, MADV_HUGEPAGE";
  return os.str();
}
}  // namespace rooflab

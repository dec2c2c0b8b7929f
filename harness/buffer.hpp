#pragma once
// Aligned, first-touch-friendly buffers. The harness owns all allocation; kernels never
// allocate in the hot path. fits_in_memory() is checked before any large allocation so a
// too-large problem is a clear error, not an OOM kill.
// Every buffer of the kernels and of the bandwidth microbenchmarks comes from allocate_pages(),
// so a ceiling is measured on the pages the kernels get: on a KVM Zen 4 a DRAM read stream ran
// at ~20 GB/s on 4 KiB pages and ~28 on 2 MiB ones, the gap the roofline had charged to the
// kernels.
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <span>
#include <string>

namespace rooflab {

size_t available_memory_bytes();  // MemAvailable from /proc/meminfo (or sysconf fallback)
// Throws rooflab::Error naming `what` when `bytes` exceeds 90% of available memory.
void require_memory(size_t bytes, const char* what);

// Buffers of at least one huge page are aligned to it and advised MADV_HUGEPAGE (transparent
// huge pages where the kernel allows them: THP "always" or "madvise"); smaller ones get `align`.
// Throws std::bad_alloc. Free with std::free.
void* allocate_pages(size_t bytes, size_t align = 64);
size_t huge_page_bytes();  // the THP size (/sys/kernel/mm/transparent_hugepage/hpage_pmd_size)
// How buffers get their pages here, for machine.json / bench.json: THP mode, huge page size,
// and the threshold allocate_pages() applies.
std::string page_policy();
std::string thp_mode();  // "always", "madvise", "never" (/sys/kernel/mm/transparent_hugepage/enabled) or "unknown"

template <class T>
struct AlignedBuffer {
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t n, size_t align = 64) : n_(n) {
    if (n == 0) return;
    p_ = static_cast<T*>(allocate_pages(n * sizeof(T), align));
  }
  AlignedBuffer(AlignedBuffer&& o) noexcept : p_(o.p_), n_(o.n_) { o.p_ = nullptr; o.n_ = 0; }
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    std::swap(p_, o.p_); std::swap(n_, o.n_); return *this;
  }
  AlignedBuffer(const AlignedBuffer&) = delete;
  ~AlignedBuffer() { std::free(p_); }
  T* data() { return p_; }
  const T* data() const { return p_; }
  size_t size() const { return n_; }
  T& operator[](size_t i) { return p_[i]; }
  const T& operator[](size_t i) const { return p_[i]; }
  std::span<T> span() { return {p_, n_}; }

 private:
  T* p_ = nullptr;
  size_t n_ = 0;
};
}  // namespace rooflab

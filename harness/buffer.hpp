#pragma once
// Aligned, first-touch-friendly buffers. The harness owns all allocation; kernels never
// allocate in the hot path. fits_in_memory() is checked before any large allocation so a
// too-large problem is a clear error, not an OOM kill.
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>
#include <span>

namespace rooflab {

size_t available_memory_bytes();  // MemAvailable from /proc/meminfo (or sysconf fallback)
// Throws rooflab::Error naming `what` when `bytes` exceeds 90% of available memory.
void require_memory(size_t bytes, const char* what);

template <class T>
struct AlignedBuffer {
  AlignedBuffer() = default;
  explicit AlignedBuffer(size_t n, size_t align = 64) : n_(n) {
    if (n == 0) return;
    size_t bytes = ((n * sizeof(T) + align - 1) / align) * align;
    p_ = static_cast<T*>(std::aligned_alloc(align, bytes));
    if (!p_) throw std::bad_alloc();
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

#pragma once
// Sinkhorn on a CUDA device (MAP-UOT Sec. 4.2): the "sinkhorn_cuda" family, its launch
// planning, the iteration drivers and the `rooflab gpu-characterize` subcommand.
//
// Variants (one iteration = row pass then column pass, as sinkhorn.hpp defines it):
//   mapuot    parts 1-4 of the paper: part 1 row factors from the row sums; part 2 scales
//             the rows and sums the columns (2-D tiles, shared-memory column sums, atomics);
//             part 3 column factors; part 4 scales the columns and sums the rows (1-D tiles,
//             warp-shuffle row sums, atomics). A is read and written twice per iteration.
//   fused_uv  the scaling-vector form with K read-only (POT's update, see FusedSolver):
//             K v with the part-4 kernel, u, K^T u with the part-2 kernel, v. K is read
//             twice per iteration and never written: half mapuot's traffic.
//   baseline  four separate passes, as CuPy runs POT's matrix form: row sums, row scale,
//             column sums, column scale (A read four times, written twice).
// The kernels build only when the build has nvcc; the family is always in the registry.
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/registry.hpp"
#include "kernels/sinkhorn/cuda/device.hpp"
#include "kernels/sinkhorn/cuda/tiling.hpp"

namespace rooflab {

const Family& sinkhorn_cuda_family();

namespace sinkhorn_cuda {

// Why the family cannot run here ("built without CUDA", "no CUDA device (...)"); empty when
// a device is usable.
std::string unavailable_reason();

// ---- Launch planning (host only, no device needed) ----------------------------------------
// 128-bit loads need every row start 16-byte aligned: A and lda * elem multiples of 16.
bool can_vectorize(const void* A, int64_t lda, size_t elem);
// Validates the tile against the CUDA limits and the shape (throws Error naming the value
// and the limit) and returns the launch. vectorize: 128-bit loads (vec = 16 / elem) or not.
Geometry plan_part2(int64_t M, int64_t N, int64_t lda, size_t elem, const Tile2& t, bool vectorize);
Geometry plan_part4(int64_t M, int64_t N, int64_t lda, size_t elem, const Tile4& t, bool vectorize);
// Throws Error when the tile is invalid whatever the shape (the registry's accepts()).
void validate_tile(const Tile2& t, size_t elem);
void validate_tile(const Tile4& t, size_t elem);

// ---- Backends and buffers ---------------------------------------------------------------
// The operations an iteration needs, as function pointers: device_backend() launches the
// CUDA kernels (device.hpp); the tests plug in a host emulation of the same thread
// decomposition, so the iteration recipes below are checked on machines without a device.
template <class T>
struct Backend {
  void* (*alloc)(size_t bytes);
  void (*release)(void* p) noexcept;
  void (*to_device)(void* dst, const void* src, size_t bytes);
  void (*to_host)(void* dst, const void* src, size_t bytes);
  void (*zero)(void* p, size_t bytes);
  void (*synchronize)();
  void (*part2)(const Geometry& g, const dev::PassArgs<T>& a);
  void (*part4)(const Geometry& g, const dev::PassArgs<T>& a);
  void (*factors)(T* out, T* sums, const T* target, int64_t n, T fi, bool keep);
  void (*scale)(T* A, int64_t M, int64_t N, int64_t lda, const T* rowf, const T* colf);
  void (*fill)(T* p, int64_t n, T v);
};
template <class T>
Backend<T> device_backend();

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer(const Backend<T>& b, size_t n)
      : b_(b), n_(n), p_(n ? static_cast<T*>(b.alloc(n * sizeof(T))) : nullptr) {}
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { b_.release(p_); }
  T* data() const { return p_; }
  size_t size() const { return n_; }
  void upload(const T* src) { b_.to_device(p_, src, n_ * sizeof(T)); }
  void download(T* dst) const { b_.to_host(dst, p_, n_ * sizeof(T)); }

 private:
  Backend<T> b_;
  size_t n_ = 0;
  T* p_ = nullptr;
};

// ---- Iteration drivers -------------------------------------------------------------------
// Owns the device vectors of one problem; the matrix lives in the caller's device buffer.
//   mapuot:   start() computes the row sums (read-only part 4 with unit weights); run() =
//             parts 1, 2, 3, 4 == one row+column iteration; the row sums of the next one are
//             left in rowsum.
//   uv:       start() sets u = v = 1; run() = K v, u, K^T u, v (POT's order).
//   baseline: run() = row sums, row factors, row scale, column sums, column factors, column
//             scale; the sums reuse the read-only part-4 / part-2 kernels with unit weights.
enum class Kind { mapuot, uv, baseline };
template <class T>
class Solver {
 public:
  Solver(const Backend<T>& b, Kind kind, T* A, int64_t M, int64_t N, int64_t lda, const T* r_host,
         const T* c_host, T fi, Tile2 t2, Tile4 t4);
  void start();
  void run();
  // mapuot's parts alone, for the tile sweep: part 2 / part 4 with unit weights (the same
  // kernel, tile and traffic as in run(); values stay bounded over repeated runs).
  void run_part2_only();
  void run_part4_only();
  void u(T* host) const { rowf_.download(host); }  // uv: row scalings
  void v(T* host) const { colf_.download(host); }  // uv: column scalings
  const Geometry& geometry2() const { return g2_; }
  const Geometry& geometry4() const { return g4_; }

 private:
  Backend<T> b_;
  Kind kind_;
  T* A_;
  int64_t M_, N_;
  T fi_;
  Geometry g2_, g4_;
  DeviceBuffer<T> r_, c_, rowf_, colf_, rowsum_, colsum_, ones_;
};

// ---- machine.json "gpu" section ---------------------------------------------------------
// The section from the measured numbers (separate from the measuring so it is testable
// without a device). Bandwidth per level ("DRAM": arrays far larger than L2; "L2": arrays
// that fit in it) in GB/s; compute ceilings in GFLOP/s.
struct GpuMeasurement {
  dev::Props props;
  dev::StreamResult dram, l2;
  size_t dram_array_bytes = 0, l2_array_bytes = 0;
  dev::PeakResult peak;
  int reps = 0;
};
nlohmann::json gpu_section(const GpuMeasurement& m);
}  // namespace sinkhorn_cuda
}  // namespace rooflab

// The "sinkhorn_cuda" family table: variants, models (GPU ceilings), instances, profiles.
// Always registered; without a usable device its profiles are empty and accepts() says why.
#include <algorithm>
#include <cmath>

#include "harness/buffer.hpp"
#include "harness/error.hpp"
#include "kernels/sinkhorn/cuda/sinkhorn_cuda.hpp"
#include "kernels/sinkhorn/sinkhorn.hpp"

namespace rooflab {
namespace {
using namespace sinkhorn_cuda;

// ---- Case parameters -------------------------------------------------------------------
// mapuot / fused_uv: ty, tx, ny (part-2 tile), rtx, rny (part-4 tile), fi; mapuot also part:
// iter (one iteration, parts 1-4), p2 or p4 (that kernel alone, for the tile sweep).
// baseline: fi only (its sum kernels use the default tiles).
enum class Part { iter, p2, p4 };
struct Params {
  int64_t M = 0, N = 0;
  Kind kind = Kind::mapuot;
  Part part = Part::iter;
  Tile2 t2;
  Tile4 t4;
  double fi = 1;
};

Kind kind_of(const std::string& v) {
  if (v == "mapuot") return Kind::mapuot;
  if (v == "fused_uv") return Kind::uv;
  if (v == "baseline") return Kind::baseline;
  throw Error("unknown sinkhorn_cuda variant '" + v + "' (known: mapuot, fused_uv, baseline)");
}

int tile_param(const Case& c, const char* key, int fallback) {
  const int64_t v = c.param_int(key, fallback);
  if (v < 1 || v > 1 << 20) throw Error(c.name() + ": " + key + " must be in 1..2^20, got " + std::to_string(v));
  return int(v);
}

Params params_of(const Case& c) {
  const std::string n = c.name();
  if (c.dims.size() != 2) throw Error(n + ": sinkhorn_cuda takes two sizes, MxN");
  Params p;
  p.M = c.dims[0], p.N = c.dims[1];
  p.kind = kind_of(c.variant);
  const bool tiles = p.kind != Kind::baseline;
  for (const auto& [k, v] : c.params) {
    if (k == "fi" || (k == "part" && p.kind == Kind::mapuot)) continue;
    if (tiles && (k == "ty" || k == "tx" || k == "ny" || k == "rtx" || k == "rny")) continue;
    throw Error(n + ": unknown parameter '" + k + "' for sinkhorn_cuda/" + c.variant +
                (p.kind == Kind::mapuot ? " (known: ty, tx, ny, rtx, rny, fi, part)"
                 : tiles                ? " (known: ty, tx, ny, rtx, rny, fi)"
                                        : " (known: fi; the baseline uses the default tiles)"));
  }
  const std::string part = c.param_str("part", "iter");
  if (part == "iter") p.part = Part::iter;
  else if (part == "p2") p.part = Part::p2;
  else if (part == "p4") p.part = Part::p4;
  else throw Error(n + ": part must be iter, p2 or p4, got '" + part + "'");
  p.fi = sinkhorn::parse_fi(c);
  p.t2 = {tile_param(c, "ty", Tile2{}.ty), tile_param(c, "tx", Tile2{}.tx), tile_param(c, "ny", Tile2{}.ny)};
  p.t4 = {tile_param(c, "rtx", Tile4{}.tx), tile_param(c, "rny", Tile4{}.ny)};
  const size_t elem = dtype_size(c.dtype);
  try {
    validate_tile(p.t2, elem);
    validate_tile(p.t4, elem);
  } catch (const Error& e) {
    throw Error(n + ": " + e.what());
  }
  if (c.threads != 1) throw Error(n + ": threads must be 1 (host threads; the device runs the kernel)");
  return p;
}

std::string accepts(const Case& c) {
  const std::string why = accepts_if_parses(params_of)(c);
  return why.empty() ? unavailable_reason() : why;
}

// ---- Model -----------------------------------------------------------------------------
// Ceilings are the device's ("gpu:" keys: machine.json's "gpu" section). Traffic in the
// bandwidth kernels' convention (update = read + write):
//   mapuot:   part 2 and part 4 each update A once -> 2 updates per iteration.
//   fused_uv: K v and K^T u each read K once -> 2 reads, no writes.
//   baseline: row sums (read), row scale (update), column sums (read), column scale (update).
// Vectors (r, c, factors, sums) add O(M + N) reads. Flops: one multiply and one add per
// element per kernel over A (the baseline counts its sum and scale kernels one op each).
Model model(const Case& c) {
  const Params p = params_of(c);
  const double s = double(dtype_size(c.dtype)), MN = double(p.M) * double(p.N);
  const double vec = double(2 * (p.M + p.N)) * s;
  const std::string dt = c.dtype == DType::f64 ? "f64" : "f32";
  Model m;
  m.working_set = MN * s + vec;
  m.compute_ceiling = "gpu:add_" + dt;
  if (p.kind == Kind::mapuot && p.part != Part::iter) {
    const bool p2 = p.part == Part::p2;
    m.flops = 2 * MN;
    m.traffic = {{2 * MN * s, "gpu:update"}, {double(p.M + p.N) * s, "gpu:read"}};
    m.note = std::string(p2 ? "part 2" : "part 4") + " alone (unit weights): A updated once + its weights and sums";
    return m;
  }
  m.flops = 4 * MN;
  if (p.kind == Kind::mapuot) {
    m.traffic = {{4 * MN * s, "gpu:update"}, {vec, "gpu:read"}};
    m.note = "mapuot (MAP-UOT Sec. 4.2): parts 2 and 4 each update A once per iteration";
  } else if (p.kind == Kind::uv) {
    m.traffic = {{2 * MN * s + vec, "gpu:read"}};
    m.compute_ceiling = "gpu:fma_" + dt;  // (K v)_i and (K^T u)_j: one FMA per element each
    m.note = "fused_uv: K read twice per iteration (K v, K^T u), never written";
  } else {
    m.traffic = {{2 * MN * s + vec, "gpu:read"}, {4 * MN * s, "gpu:update"}};
    m.note = "baseline: row sums + column sums read A, row scale + column scale update it";
  }
  if (p.fi != 1) m.note += "; fi < 1 adds one pow per row and column";
  return m;
}

size_t memory_bytes(const Case& c) {
  if (c.dims.size() != 2) return 0;
  const size_t s = dtype_size(c.dtype), M = size_t(c.dims[0]), N = size_t(c.dims[1]);
  // Host: A0 and the downloaded result, r, c, u, v; the reference's u, v, column sums.
  return 2 * M * N * s + 2 * (M + N) * s + (M + 2 * N) * sizeof(long double);
}

// ---- Instance --------------------------------------------------------------------------
// The CPU family's problem (sinkhorn::problem_entry / problem_targets).
template <class T>
class GpuInstance final : public Instance {
 public:
  explicit GpuInstance(const Params& p)
      : p_(p), A0_(size_t(p.M * p.N)), A_(size_t(p.M * p.N)), r_(size_t(p.M)), c_(size_t(p.N)),
        u_(size_t(p.M)), v_(size_t(p.N)) {
    for (size_t k = 0; k < A0_.size(); ++k) A0_[k] = T(sinkhorn::problem_entry(k));
    sinkhorn::problem_targets(r_.data(), p.M, c_.data(), p.N);
    const dev::Props d = dev::props();
    const double need = double(A0_.size() + 8 * size_t(p.M + p.N)) * sizeof(T);
    if (need > 0.9 * double(d.free_bytes))
      throw Error("sinkhorn_cuda: the problem needs " + std::to_string(need / 1e9) + " GB of device memory, " +
                  std::to_string(double(d.free_bytes) / 1e9) + " GB free on " + d.name);
    backend_ = device_backend<T>();
    dA_ = std::make_unique<DeviceBuffer<T>>(backend_, A0_.size());
    dA_->upload(A0_.data());
    solver_ = std::make_unique<Solver<T>>(backend_, p.kind, dA_->data(), p.M, p.N, p.N, r_.data(), c_.data(),
                                          T(p.fi), p.t2, p.t4);
    solver_->start();
  }

  void run() override {
    if (p_.part == Part::p2) solver_->run_part2_only();
    else if (p_.part == Part::p4) solver_->run_part4_only();
    else solver_->run();
  }

  // From A0: two iterations with the case's tiles (whatever part is timed), compared with
  // the long-double reference (matrix form; POT's scaling form for fused_uv).
  Verification verify() override {
    dA_->upload(A0_.data());
    solver_->start();
    solver_->run();
    solver_->run();
    const bool uv = p_.kind == Kind::uv;
    if (uv) {
      solver_->u(u_.data());
      solver_->v(v_.data());
      for (int64_t i = 0; i < p_.M; ++i)
        for (int64_t j = 0; j < p_.N; ++j)
          A_[size_t(i * p_.N + j)] = u_[size_t(i)] * A0_[size_t(i * p_.N + j)] * v_[size_t(j)];
    } else {
      dA_->download(A_.data());
    }
    sinkhorn::SkReference<T> ref(A0_.data(), p_.M, p_.N, p_.N, r_.data(), c_.data(), p_.fi,
                                 uv ? sinkhorn::Form::scaling : sinkhorn::Form::matrix);
    ref.iterate(), ref.iterate();
    const Verification v = compare(ref);
    dA_->upload(A0_.data());
    solver_->start();
    return v;
  }

 private:
  Verification compare(const sinkhorn::SkReference<T>& ref) const {
    // Any summation order (tiles, atomics) stays inside the (K-1)u bound of sk_error_bound;
    // +2 roundings for the products of the fused kernels / the plan, +2 for pow.
    const int extra = 2 + (p_.fi != 1 ? 2 : 0);
    return sinkhorn::verify_against(A_.data(), p_.N, ref, {p_.N, p_.M, p_.N, p_.M}, extra, "2 iterations");
  }

  Params p_;
  AlignedBuffer<T> A0_, A_, r_, c_, u_, v_;
  Backend<T> backend_{};
  std::unique_ptr<DeviceBuffer<T>> dA_;
  std::unique_ptr<Solver<T>> solver_;
};

std::unique_ptr<Instance> make(const Case& c) {
  const Params p = params_of(c);
  const std::string why = unavailable_reason();
  if (!why.empty()) throw Error(c.name() + ": " + why);
  return with_element_type(c.dtype, [&]<class T>() -> std::unique_ptr<Instance> {
    return std::make_unique<GpuInstance<T>>(p);
  });
}

// ---- Profiles --------------------------------------------------------------------------
struct Spec {
  Tile2 t2;
  Tile4 t4;
  std::string fi;          // "" = balanced
  std::string part = "iter";
};
Spec with_fi(const char* fi) {
  Spec s;
  s.fi = fi;
  return s;
}
Spec with_part(const char* part) {
  Spec s;
  s.part = part;
  return s;
}
Case make_case(const std::string& variant, DType dt, int64_t M, int64_t N, const Spec& s = {}) {
  Case c{"sinkhorn_cuda", variant, Isa::none, dt, {M, N}, {}, 1};
  if (variant != "baseline") {
    for (auto [k, v] : {std::pair<const char*, int>{"ty", s.t2.ty}, {"tx", s.t2.tx}, {"ny", s.t2.ny},
                        {"rtx", s.t4.tx}, {"rny", s.t4.ny}})
      c.params.emplace_back(k, std::to_string(v));
  }
  if (!s.fi.empty()) c.params.emplace_back("fi", s.fi);
  if (variant == "mapuot") c.params.emplace_back("part", s.part);
  return c;
}

const char* const kVariants[] = {"mapuot", "fused_uv", "baseline"};

std::vector<Case> cases(std::string_view profile) {
  std::vector<Case> out;
  if (!unavailable_reason().empty()) return out;  // nothing can run here
  if (profile == "smoke") {
    // Every variant once at an odd M != N (edge tiles), f32, and fused_uv in f64.
    for (const char* v : kVariants) out.push_back(make_case(v, DType::f32, 259, 131));
    out.push_back(make_case("fused_uv", DType::f64, 259, 131));
  } else if (profile == "quick") {
    for (DType dt : {DType::f32, DType::f64}) {
      for (const char* v : kVariants) out.push_back(make_case(v, dt, 4096, 4096));
      // Edge tiles and the scalar path: N not a multiple of the vector width or the tile,
      // a single row, a single column.
      for (auto [M, N] : {std::pair<int64_t, int64_t>{1023, 517}, {1, 4097}, {4097, 1}})
        for (const char* v : kVariants) out.push_back(make_case(v, dt, M, N));
    }
    // Other tiles (rows per thread not dividing M, several warps per row tile), fi < 1, parts.
    const Spec odd{{4, 64, 3}, {64, 5}, "", "iter"};
    for (const char* v : {"mapuot", "fused_uv"}) {
      out.push_back(make_case(v, DType::f64, 1023, 1028, odd));
      out.push_back(make_case(v, DType::f32, 1023, 517, with_fi("0.5")));
    }
    for (const char* part : {"p2", "p4"}) out.push_back(make_case("mapuot", DType::f32, 4096, 4096, with_part(part)));
  } else if (profile == "paper") {
    // MAP-UOT's 10240^2 f32 (the targets) and a size sweep (MAP-UOT Fig. 13), f64 at 10240^2.
    for (int64_t n : {2048, 4096, 8192, 10240, 16384})
      for (const char* v : kVariants) out.push_back(make_case(v, DType::f32, n, n));
    for (const char* v : kVariants) out.push_back(make_case(v, DType::f64, 10240, 10240));
    for (const char* part : {"p2", "p4"}) out.push_back(make_case("mapuot", DType::f32, 10240, 10240, with_part(part)));
  }
  return out;
}

}  // namespace

const Family& sinkhorn_cuda_family() {
  static const Family f = make_family(
      "sinkhorn_cuda", "Sinkhorn / unbalanced OT on a CUDA device, one iteration (MAP-UOT Sec. 4.2)",
      {accepts, model, make, cases, memory_bytes},
      {{"mapuot", "MAP-UOT GPU parts 1-4: 2-D tiles + smem column sums, 1-D tiles + shuffle row sums"},
       {"fused_uv", "scaling vectors u, v with K read-only: K v and K^T u with the same tiled kernels"},
       {"baseline", "four separate passes as CuPy runs them: row sums, row scale, column sums, column scale"}});
  return f;
}

}  // namespace rooflab

// The "sinkhorn" family table: variants, their models, the problem instance, the profiles.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <iterator>
#include <optional>
#include <string>
#include <type_traits>

#include "harness/buffer.hpp"
#include "harness/error.hpp"
#include "harness/host_caches.hpp"
#include "harness/isa_choice.hpp"
#include "kernels/sinkhorn/sinkhorn.hpp"

namespace rooflab {
namespace {
using namespace sinkhorn;

// ---- Case parameters -------------------------------------------------------------------
// part: which unit run() times — "iter" (row then column pass), "row" or "col". The fused
// variants (mapuot, fused_uv) only have iterations and take no part.
// fi: the unbalanced-OT exponent in (0, 1] (default 1 = balanced), e.g. fi:0.5.
enum class Part { iter, row, col };

struct Params {
  int64_t M = 0, N = 0;
  Part part = Part::iter;
  int64_t mc = 0, nc = 0;  // blocked / microkernel only
  double fi = 1;
  FusedPrefetch pf = FusedPrefetch::l2;  // mapuot / fused_uv only
  int threads = 1;
};

bool is_blocked(const std::string& variant) { return variant == "blocked" || variant == "microkernel"; }
bool is_fused(const std::string& variant) { return variant == "mapuot" || variant == "fused_uv"; }

Params params_of(const Case& c) {
  const std::string n = c.name();
  if (c.dims.size() != 2) throw Error(n + ": sinkhorn takes two sizes, MxN");
  Params p;
  p.M = c.dims[0];
  p.N = c.dims[1];
  p.threads = c.threads;
  const bool fused = is_fused(c.variant);
  const std::string part = c.param_str("part", "iter");
  if (part == "iter") p.part = Part::iter;
  else if (part == "row") p.part = Part::row;
  else if (part == "col") p.part = Part::col;
  else throw Error(n + ": part must be iter, row or col, got '" + part + "'");
  for (const auto& [k, v] : c.params) {
    if (k == "fi" || (k == "part" && !fused)) continue;
    if ((k == "mc" || k == "nc") && is_blocked(c.variant)) continue;
    if (k == "pf" && fused) continue;
    throw Error(n + ": unknown parameter '" + k + "' for sinkhorn/" + c.variant +
                (is_blocked(c.variant) ? " (known: mc, nc, fi, part)"
                 : fused              ? " (known: fi, pf; a run is one fused iteration)"
                                      : " (known: fi, part)"));
  }
  p.fi = parse_fi(c);
  if (fused) {
    const std::string pf = c.param_str("pf", kFusedPrefetchNames[0]);
    const auto parsed = parse_fused_prefetch(pf);
    if (!parsed) throw Error(n + ": pf (where the streamed rows are prefetched to) must be l1 or l2, got '" + pf + "'");
    p.pf = *parsed;
  }
  if (is_blocked(c.variant)) {
    const Blocking def = c.variant == "microkernel" ? microkernel_default_blocking(c.isa) : kBlockedDefault;
    p.mc = c.param_int("mc", def.mc);
    p.nc = c.param_int("nc", def.nc);
    if (p.mc < 1 || p.nc < 1) throw Error(n + ": mc and nc must be >= 1");
  }
  return p;
}

// Every variant runs on row slices (threads:T), typical too: its staged column walks work
// on a slice like any other, which is what the thread-scaling figure compares against.
// ---- Model -----------------------------------------------------------------------------
// Per element a pass does one add (its sum) and one multiply (its scaling): 2·M·N flops, no
// FMA, so the ceiling is the add ceiling. Minimal DRAM traffic per pass, in the bandwidth
// kernels' convention (update = read + write, counted 2x):
//   row pass:    the row is summed and scaled while it sits in L1/L2 -> one update of A
//   column pass: a read pass (the sums) and an update pass (the scaling)
// plus one read of the target vector r or c. The scratch work[N] is cache-resident.
// mapuot and fused_uv stream kFusedRows rows from DRAM at once, the micro-kernel's column
// pass its mr rows (config.hpp): their matrix traffic names the S-stream ceilings ("read_s4",
// "update_s4" for S = 4; roofline/predict.hpp), which draw more bandwidth per thread than one
// stream. Row-at-a-time passes and the vectors use the 1-stream ones.
std::string streams(const char* kernel, int rows) { return std::string(kernel) + "_s" + std::to_string(rows); }

// Per-level traffic for the ECM (Model::phases; bytes per run, the same convention). A pass is
// two sweeps in sequence, a sum sweep and a scale sweep (the scale needs every sum first), so
// two phases whose times add. A (M x N, s bytes per element) streams from the level it lives
// in; a length-N vector (work, factors, colf, next) stays in L1 when it fits in half of L1,
// else it comes from L2 each row (L1 <- L2 only). A boundary's upper cache has capacity Z (L1,
// L2 per thread, L3):
//   row pass:  sum: L1 A read; across a boundary the row comes in and the previous scaled row
//              goes out (1 update of A) when a row fits in Z / 2, else a read. scale: L1 A
//              update; across a boundary nothing when the row fits, else an update
//   col pass (c2r, blocked, microkernel): sum: L1 triad (A and work[j] loaded, work[j] stored),
//              A read across each boundary; scale: L1 triad (A and temp[j] loaded, A stored), A
//              update across each boundary. blocked keeps an nc-wide segment of the vector
//              (in L1 when it fits in half of it; with one panel, nc >= N, its walk is c2r's);
//              microkernel loads a strip of sums once per mr rows (L1: A read +
//              sums update / mr; A update + temp read / mr) and streams mr rows at once
//   typical col pass: the column walks are scalar with stride N: in L1 each access takes a slot
//              of the ISA's width vb (sum: read, scale: update per element); across a boundary
//              whose Z / 2 holds the walk's M lines A crosses once, else every access moves its
//              whole 64-byte line (64 / s x); its flops count vb / s each (unvectorized)
//   mapuot / fused_uv: one phase (software-pipelined sweeps): per group of G rows a sums sweep
//              (A read, colf loaded once per group) and a tail sweep (mapuot A update and colf,
//              fused_uv K read; next[j] updated once per group), the tail's A from L1 when G
//              rows fit in L1 / 2, else from L2 (L1 <- L2: the second read); beyond L2 A crosses
//              once (mapuot update, fused_uv read)
// Cache sizes are this host's (harness/host_caches), as the bench that records the model runs
// here.
std::vector<LevelTraffic> sinkhorn_phases(const Case& c, const Params& p) {
  const double s = double(dtype_size(c.dtype)), M = double(p.M), N = double(p.N), MN = M * N;
  const HostCacheSizes& hc = host_cache_sizes();
  const double z[3] = {double(hc.l1), double(hc.l2), double(hc.l3)};  // above L2, L3, DRAM
  const double vb = c.isa == Isa::avx512 ? 64 : c.isa == Isa::avx2 ? 32 : 16;
  const bool vec_in_l1 = N * s <= z[0] / 2;
  auto boundaries = [](LevelTraffic& lt, auto per_level) {
    lt.l2 = per_level(0), lt.l3 = per_level(1), lt.mem = per_level(2);
  };
  const std::string caches = "caches " + hc.source;
  std::vector<LevelTraffic> out;
  if (is_fused(c.variant)) {
    const bool uv = c.variant == "fused_uv";
    const double G = kFusedRows;
    const bool tail_in_l1 = G * N * s <= z[0] / 2;
    LevelTraffic lt;
    lt.name = "iter";
    lt.flops = 4 * MN;
    // sums: A read; tail: A read (fused_uv) or updated (mapuot); per group colf loaded once
    // per sweep that uses it (sums; mapuot's tail too) and next[j] updated once.
    const double colf = (uv ? 1 : 2) * MN * s / G, next = 2 * MN * s / G;
    if (uv)
      lt.l1 = {{2 * MN * s + colf, "read"}, {next, "update"}};
    else
      lt.l1 = {{MN * s + colf, "read"}, {2 * MN * s + next, "update"}};
    const std::string a_kernel = uv ? streams("read", kFusedRows) : streams("update", kFusedRows);
    const double a_bytes = uv ? MN * s : 2 * MN * s;
    boundaries(lt, [&](int b) -> std::vector<Traffic> {
      std::vector<Traffic> t = {{a_bytes, a_kernel}};
      if (b == 0 && !tail_in_l1) t.push_back({MN * s, "read"});  // the tail's re-read from L2
      if (b == 0 && !vec_in_l1) t.push_back({colf + next, "update"});  // colf, next from L2
      return t;
    });
    lt.note = std::string(uv ? "fused_uv" : "mapuot") + ": sums sweep + tail sweep per group of " +
              std::to_string(kFusedRows) + " rows (tail " + (tail_in_l1 ? "from L1" : "re-read from L2") + "); " + caches;
    return {lt};
  }
  const bool row = p.part != Part::col, col = p.part != Part::row;
  // Each pass is two sweeps in sequence (the scale needs every sum first), so two phases.
  auto phase = [&](const char* name, double flops, std::vector<Traffic> l1, const std::string& note) {
    LevelTraffic lt;
    lt.name = name;
    lt.flops = flops;
    lt.l1 = std::move(l1);
    lt.note = note + "; " + caches;
    return lt;
  };
  if (row) {
    // The sum sweep brings the row in (and the previous row's scaled lines out) when a row fits
    // in Z / 2; else the scale sweep moves it across a second time.
    LevelTraffic sum = phase("row_sum", MN, {{MN * s, "read"}}, "row pass: sum sweep");
    LevelTraffic scale = phase("row_scale", MN, {{2 * MN * s, "update"}}, "row pass: scale sweep");
    boundaries(sum, [&](int b) -> std::vector<Traffic> {
      if (N * s <= z[b] / 2) return {{2 * MN * s, "update"}};
      return {{MN * s, "read"}};
    });
    boundaries(scale, [&](int b) -> std::vector<Traffic> {
      if (N * s <= z[b] / 2) return {};
      return {{2 * MN * s, "update"}};
    });
    out.push_back(sum), out.push_back(scale);
  }
  if (col) {
    if (c.variant == "typical") {
      LevelTraffic sum = phase("col_sum", MN * vb / s, {{MN * vb, "read"}}, "typical column walks (stride N), scalar");
      LevelTraffic scale = phase("col_scale", MN * vb / s, {{2 * MN * vb, "update"}}, "typical column walks (stride N), scalar");
      auto f = [&](int b) { return 64 * M <= z[b] / 2 ? 1.0 : 64 / s; };
      boundaries(sum, [&](int b) -> std::vector<Traffic> { return {{f(b) * MN * s, "read"}}; });
      boundaries(scale, [&](int b) -> std::vector<Traffic> { return {{f(b) * 2 * MN * s, "update"}}; });
      out.push_back(sum), out.push_back(scale);
    } else {
      const double per = c.variant == "microkernel" ? double(kMicrokernelShapes[c.isa].mr) : 1.0;
      const bool one_panel = c.variant == "blocked" && p.nc >= p.N;
      const bool vec_l1 = c.variant == "blocked" ? double(std::min(p.nc, p.N)) * s <= z[0] / 2 : vec_in_l1;
      const std::string rd = per == 1 ? std::string("read") : streams("read", int(per));
      const std::string up = per == 1 ? std::string("update") : streams("update", int(per));
      // c2r / blocked: per element A and work[j] loaded, work[j] stored (triad), then A
      // updated and temp[j] loaded (triad); microkernel: the vector once per mr rows.
      const std::string what = c.variant + (one_panel ? " column pass (one panel, nc >= N: c2r's walk): " : " column pass: ");
      LevelTraffic sum = phase("col_sum", MN, per == 1 ? std::vector<Traffic>{{3 * MN * s, "triad"}}
                                                      : std::vector<Traffic>{{MN * s, "read"}, {2 * MN * s / per, "update"}},
                               what + "sum sweep");
      LevelTraffic scale = phase("col_scale", MN, per == 1 ? std::vector<Traffic>{{3 * MN * s, "triad"}}
                                                          : std::vector<Traffic>{{2 * MN * s, "update"}, {MN * s / per, "read"}},
                                 what + "scale sweep");
      boundaries(sum, [&](int b) -> std::vector<Traffic> {
        std::vector<Traffic> t = {{MN * s, rd}};
        if (b == 0 && !vec_l1) t.push_back({2 * MN * s / per, "update"});  // work from L2
        return t;
      });
      boundaries(scale, [&](int b) -> std::vector<Traffic> {
        std::vector<Traffic> t = {{2 * MN * s, up}};
        if (b == 0 && !vec_l1) t.push_back({MN * s / per, "read"});  // temp from L2
        return t;
      });
      out.push_back(sum), out.push_back(scale);
    }
  }
  return out;
}

Model traffic_model(const Case& c) {
  const Params p = params_of(c);
  const double s = double(dtype_size(c.dtype));
  const double MN = double(p.M) * double(p.N);
  const std::string pow_note =
      p.fi != 1 ? "; fi < 1 adds one pow per row and column (M + N calls, not counted as flops)" : "";
  Model m;
  m.working_set = MN * s + double(p.M + 2 * p.N) * s;
  if (c.variant == "mapuot") {
    // Per element: x = a * cf, s += x, a = x * rf, next += a: 4 ops, no FMA pairing.
    m.flops = 4 * MN;
    m.traffic = {{double(p.M + p.N) * s, "read"}, {2 * MN * s, streams("update", kFusedRows)}};
    m.compute_ceiling = c.dtype == DType::f64 ? "add_f64" : "add_f32";
    m.note = "mapuot: one fused pass per iteration, A read and written once (1 update, 4 rows "
             "streamed at once; the row's second sweep hits L2) + r/c reads (MAP-UOT Sec. 4.1)" +
             pow_note;
    m.phases = sinkhorn_phases(c, p);
    return m;
  }
  if (c.variant == "fused_uv") {
    // Per element: (K v)_i and (K^T u)_j, one FMA each.
    m.flops = 4 * MN;
    m.traffic = {{MN * s, streams("read", kFusedRows)}, {double(2 * p.M + 3 * p.N) * s, "read"}};
    m.compute_ceiling = c.dtype == DType::f64 ? "fma_f64" : "fma_f32";
    m.note = "fused_uv: K only read, once per iteration, 4 rows streamed at once (the row "
             "group's second sweep hits L2) + r, u, c, v vectors" + pow_note;
    m.phases = sinkhorn_phases(c, p);
    return m;
  }
  // Per element a pass does one add (its sum) and one multiply (its scaling): 2·M·N flops, no
  // FMA, so the ceiling is the add ceiling. Minimal DRAM traffic per pass, in the bandwidth
  // kernels' convention (update = read + write, counted 2x):
  //   row pass:    the row is summed and scaled while it sits in L1/L2 -> one update of A
  //   column pass: a read pass (the sums) and an update pass (the scaling)
  // plus one read of the target vector r or c. The scratch work[N] is cache-resident.
  const bool row = p.part != Part::col, col = p.part != Part::row;
  m.flops = 2 * MN * (int(row) + int(col));
  const double vectors = (col ? double(p.N) * s : 0) + (row ? double(p.M) * s : 0);
  if (c.variant == "microkernel") {
    m.traffic = {{vectors, "read"}};
    const int mr = kMicrokernelShapes[c.isa].mr;
    if (col) m.traffic.insert(m.traffic.end(), {{MN * s, streams("read", mr)}, {2 * MN * s, streams("update", mr)}});
    if (row) m.traffic.push_back({2 * MN * s, "update"});
  } else {
    m.traffic = {{(col ? MN * s : 0) + vectors, "read"}, {2 * MN * s * (int(row) + int(col)), "update"}};
  }
  m.compute_ceiling = c.dtype == DType::f64 ? "add_f64" : "add_f32";
  m.note = "row pass: 1 update of A; column pass: 1 read + 1 update of A (COFFEE Alg. 2); "
           "+ r/c reads" + pow_note;
  if (c.variant == "microkernel" && col)
    m.note += "; the column pass streams mr = " + std::to_string(kMicrokernelShapes[c.isa].mr) + " rows at once";
  if (c.variant == "typical" && col)
    m.note += ". typical walks columns with stride lda: each element is its own cache line, so "
              "once a column walk's M x 64 B exceed the cache a line is fetched once per column "
              "it holds, up to 64/sizeof = " + std::to_string(64 / int(s)) +
              "x this minimal traffic (COFFEE's point; see the efficiency)";
  m.phases = sinkhorn_phases(c, p);
  return m;
}

// The in-core time's units: short rows and columns (1 x N, N x 1, 1023 x 517) pay per row,
// per column and per call (loop set-up, reductions, vector remainders) beside the per-element
// work, which is why a calibration fits all four (docs/model.md).
Model model(const Case& c) {
  Model m = traffic_model(c);
  const Params p = params_of(c);
  m.core_work = {{"element", double(p.M) * double(p.N)}, {"row", double(p.M)}, {"col", double(p.N)}, {"call", 1}};
  return m;
}

// Calibration shapes (Family::calibration_cases): the case's variant, ISA, dtype, params and
// threads at four cache-resident shapes whose elements, rows, columns and calls are linearly
// independent: 1 x 1024 and 1024 x 1 (per column, per row), 64 x 64 and 128 x 256 (256 KiB of
// f64, within every L2 we run on: enough elements that their cost is not lost in the per-row
// ones, as it is between 32 x 32 and 64 x 64). None is a profile's shape.
std::vector<Case> calibration_cases(const Case& c) {
  std::vector<Case> out;
  for (auto [M, N] : {std::pair<int64_t, int64_t>{1, 1024}, {1024, 1}, {64, 64}, {128, 256}}) {
    Case k = c;
    k.dims = {M, N};
    out.push_back(k);
  }
  return out;
}

// Overlap probe (Family::overlap_probes), for the cases whose matrix lies beyond the L2s of its
// threads (sysfs): the same pass on 3/4 of the rows, the row length and stride kept (a column
// walk crosses the same pages and sets), in the case's level: beyond the L2s still, and for a
// matrix of at least twice the L3, 1.5x the L3 (DRAM). How much of the stream from beyond the
// calibration's L2 a pass hides behind its in-core work is a property of the pass and its row
// length (the row pass hides much, a fused one little; typical's column walk pays page walks on
// top: a share above 1, docs/model.md). A 1024 x 1024 probe (tried) did not carry to 517-column
// rows nor to DRAM; the model uses a probe only for cases in its own level or deeper.
std::vector<Case> overlap_probes(const Case& c) {
  if (c.dims.size() != 2 || c.dims[0] < 4) return {};
  const HostCacheSizes& hc = host_cache_sizes();
  const double s = double(dtype_size(c.dtype)), bytes = double(c.dims[0]) * double(c.dims[1]) * s;
  const bool dram = bytes >= 2 * double(hc.l3);
  // 3/4 of an in-L3 matrix must still exceed the L2s: a matrix of at least 2x their sum.
  if (!dram && !(bytes >= 2 * double(hc.l2) * std::max(1, c.threads) && bytes <= double(hc.l3))) return {};
  Case k = c;
  k.dims[0] = c.dims[0] * 3 / 4;
  return {k};
}

size_t memory_bytes(const Case& c) {
  if (c.dims.size() != 2) return 0;
  const size_t s = dtype_size(c.dtype), M = size_t(c.dims[0]), N = size_t(c.dims[1]);
  const size_t T = size_t(std::max(1, c.threads)), stride = size_t(team_stride<double>(int64_t(N)));
  // A and its pristine copy A0 (fused_uv: K and the plan built for verification), r, c,
  // work, u, the private column sums; the reference's u, v and column-sum scratch.
  return 2 * M * N * s + (2 * M + 2 * N) * s + T * stride * s + (M + 2 * N) * sizeof(long double);
}

// ---- Instance --------------------------------------------------------------------------
// The data every instance holds: A0 (pristine; fused_uv's K), A (the matrix the passes
// scale; fused_uv's plan for verification), r, c, work, u, the private column sums.
template <class T>
struct SkData {
  Params p;
  AlignedBuffer<T> A, A0, r, c, work, u, partial;
  explicit SkData(const Params& p_)
      : p(p_), A(size_t(p.M * p.N)), A0(size_t(p.M * p.N)), r(size_t(p.M)), c(size_t(p.N)),
        work(size_t(p.N)), u(size_t(p.M)),
        partial(size_t(std::max(1, p.threads)) * size_t(team_stride<T>(p.N))) {
    // The problem (problem_entry, problem_targets); generated in any order, so a later
    // threaded first touch would produce the same matrix.
    for (int64_t k = 0; k < p.M * p.N; ++k) A0[size_t(k)] = T(problem_entry(uint64_t(k)));
    std::memcpy(A.data(), A0.data(), A0.size() * sizeof(T));  // first touch of A
    problem_targets(r.data(), p.M, c.data(), p.N);
    std::fill_n(work.data(), p.N, T(0));
    std::fill_n(partial.data(), partial.size(), T(0));
  }
  void restore() { std::memcpy(A.data(), A0.data(), A0.size() * sizeof(T)); }

  // A against the reference after `lengths` passes, `extra` more roundings per pass.
  Verification compare(const SkReference<T>& ref, const std::vector<int64_t>& lengths, int extra) const {
    return verify_against(A.data(), p.N, ref, lengths, extra, std::to_string(lengths.size()) + " passes");
  }
  // pow adds a rounding per factor; the extra terms cover it (as the kernel tests do).
  int pow_extra() const { return p.fi != 1 ? 2 : 0; }
};

// typical / c2r / blocked / microkernel: separate row and column passes, on row slices
// when threads > 1.
template <class T>
class SkInstance final : public Instance {
 public:
  SkInstance(const Params& p, SkKernels<T> k) : d_(p), k_(k) {
    args_ = SkArgs<T>{d_.A.data(), p.M, p.N, p.N, d_.r.data(), d_.c.data(), T(p.fi), d_.work.data(),
                      p.mc, p.nc};
    team_ = SkTeam<T>{p.threads, d_.partial.data(), team_stride<T>(p.N)};
  }

  // Repeated runs need no reset: every pass normalizes (with fi = 1 a row pass makes row i
  // sum to r[i], a column pass column j to c[j]; with fi < 1 it moves the sums a fraction
  // of the way), so the values stay bounded and converge to the fixed point instead of
  // drifting; the work per run does not depend on the values (no early exits).
  void run() override {
    if (d_.p.part != Part::col) parallel_row_rescale(k_, args_, team_);
    if (d_.p.part != Part::row) parallel_col_rescale(k_, args_, team_);
  }

  // From A0: run() twice and compare with the long-double reference doing the same passes.
  // Twice, because the first run sees far-from-1 factors (a wrong factor or a missed edge
  // shows as O(1) errors) and the second checks that a run starts from a clean state (e.g.
  // stale column sums in work would show). For part=iter that is row, col, row, col.
  Verification verify() override {
    d_.restore();
    SkReference<T> ref(d_.A0.data(), d_.p.M, d_.p.N, d_.p.N, d_.r.data(), d_.c.data(), d_.p.fi);
    std::vector<int64_t> lengths;
    for (int rep = 0; rep < 2; ++rep) {
      run();
      if (d_.p.part != Part::col) ref.row_pass(), lengths.push_back(d_.p.N);
      if (d_.p.part != Part::row) ref.col_pass(), lengths.push_back(d_.p.M);
    }
    // Row slices sum columns in T partial sums plus a T-term reduction: T more terms.
    const Verification v = d_.compare(ref, lengths, d_.pow_extra() + (d_.p.threads > 1 ? d_.p.threads : 0));
    d_.restore();
    return v;
  }

 private:
  SkData<T> d_;
  SkKernels<T> k_;
  SkArgs<T> args_;
  SkTeam<T> team_;
};

// mapuot / fused_uv: one fused pass per run().
template <class T>
class FusedInstance final : public Instance {
 public:
  using Kind = typename FusedSolver<T>::Kind;
  FusedInstance(const Params& p, Kind kind, FusedKernels<T> k)
      : d_(p), kind_(kind),
        solver_(kind, k,
                {kind == Kind::uv ? d_.A0.data() : d_.A.data(), p.M, p.N, p.N, d_.r.data(),
                 d_.c.data(), T(p.fi), d_.work.data(), d_.u.data(), d_.partial.data()},
                p.threads) {
    solver_.start();
  }

  // Bounded repeated runs for the same reason as SkInstance (it is the same iteration).
  void run() override { solver_.run(); }

  // mapuot: 2 runs + finish == row, col, row, col of the matrix-form reference.
  // fused_uv: 2 runs, then the implied plan diag(u) K diag(v) against POT's scaling form.
  Verification verify() override {
    d_.restore();
    const bool uv = kind_ == Kind::uv;
    SkReference<T> ref(d_.A0.data(), d_.p.M, d_.p.N, d_.p.N, d_.r.data(), d_.c.data(), d_.p.fi,
                       uv ? Form::scaling : Form::matrix);
    solver_.start();
    solver_.run();
    solver_.run();
    solver_.finish();
    ref.iterate(), ref.iterate();
    if (uv) {
      for (int64_t i = 0; i < d_.p.M; ++i)
        for (int64_t j = 0; j < d_.p.N; ++j)
          d_.A[size_t(i * d_.p.N + j)] = d_.u[size_t(i)] * d_.A0[size_t(i * d_.p.N + j)] * d_.work[size_t(j)];
    }
    // Fused products round once more per element and per plan entry (+2), row slices add
    // a T-term reduction.
    const Verification v = d_.compare(ref, {d_.p.N, d_.p.M, d_.p.N, d_.p.M},
                                      2 + d_.pow_extra() + (d_.p.threads > 1 ? d_.p.threads : 0));
    d_.restore();
    solver_.start();
    return v;
  }

 private:
  SkData<T> d_;
  Kind kind_;
  FusedSolver<T> solver_;
};

template <class T>
std::unique_ptr<Instance> make_typed(const Case& c) {
  if (is_fused(c.variant)) {
    using Kind = typename FusedSolver<T>::Kind;
    const Params p = params_of(c);
    return std::make_unique<FusedInstance<T>>(p, c.variant == "mapuot" ? Kind::mapuot : Kind::uv,
                                              fused_kernels<T>(c.isa, p.pf));
  }
  return make_instance<T>(c, kernels_for<T>(c.variant, c.isa));
}

std::unique_ptr<Instance> make(const Case& c) {
  return with_element_type(c.dtype, [&]<class T>() { return make_typed<T>(c); });
}

// ---- Profiles --------------------------------------------------------------------------
const char* const kVariants[] = {"typical", "c2r", "blocked", "microkernel"};
const char* const kAll[] = {"typical", "c2r", "blocked", "microkernel", "mapuot", "fused_uv"};
const char* const kParts[] = {"iter", "row", "col"};

// blocked names its mc/nc (the paper's blocking); microkernel uses the per-ISA
// defaults unless a case overrides them. fi is named only when it is not 1; the fused
// variants take no part, and name pf only in default-ISA cases where the calibration chose
// l1 (knobs). Parameter order: mc, nc, fi, pf, part; threads last.
struct CaseSpec {
  std::string part = "iter";
  int64_t mc = kBlockedDefault.mc, nc = kBlockedDefault.nc;
  std::string fi = "";  // "" = balanced
  int threads = 1;
  bool default_isa = false;  // ISA variants: only their default ISA here (preferred_isa; keeps quick short)
};
Case make_case(const std::string& variant, DType dt, int64_t M, int64_t N, const CaseSpec& cs = {}) {
  Case c{"sinkhorn", variant, Isa::none, dt, {M, N}, {}, cs.threads};
  if (variant == "blocked") {
    c.params.emplace_back("mc", std::to_string(cs.mc));
    c.params.emplace_back("nc", std::to_string(cs.nc));
  }
  if (!cs.fi.empty()) c.params.emplace_back("fi", cs.fi);
  if (!is_fused(variant)) c.params.emplace_back("part", cs.part);
  if (cs.default_isa && (variant == "microkernel" || is_fused(variant))) c.isa = preferred_isa("sinkhorn", variant, dt);
  if (cs.default_isa && is_fused(variant))
    if (const std::string pf = preferred_value("sinkhorn", variant, dt, "pf", c.isa); !pf.empty() && pf != kFusedPrefetchNames[0])
      c.params.emplace_back("pf", pf);
  return c;
}

// The fused kernels' prefetch target (pf:) is measured per machine: the winner differs between
// CPUs that no cache parameter tells apart (docs/families/sinkhorn.md#prefetch). The scalar
// kernels issue no prefetch: nothing to choose there.
std::vector<Knob> knobs(const Case& c) {
  if (!is_fused(c.variant) || c.isa == Isa::scalar) return {};
  return {{"pf", {std::begin(kFusedPrefetchNames), std::end(kFusedPrefetchNames)}}};
}

// The ISA calibration: at 1 thread, where a kernel's own speed shows (at all cores the shared
// DRAM bandwidth hides it), at the quick profile's 4096^2, which lies in DRAM.
std::vector<Case> isa_cases() {
  std::vector<Case> out;
  for (DType dt : {DType::f64, DType::f32})
    for (const char* v : {"microkernel", "mapuot", "fused_uv"}) out.push_back(make_case(v, dt, 4096, 4096));
  return out;
}

std::vector<Case> cases(std::string_view profile) {
  std::vector<Case> out;
  if (profile == "smoke") {
    // Every variant on every ISA once, at an odd M != N (edges of every vector width, mr and
    // of blocked's nc = 32 panels); each pass alone, f32, 2 threads and fi < 1 once. Seconds.
    for (const char* v : kAll) out.push_back(make_case(v, DType::f64, 131, 77, {.nc = 32}));
    for (const char* part : {"row", "col"}) out.push_back(make_case("c2r", DType::f64, 131, 77, {.part = part}));
    for (const char* v : {"microkernel", "fused_uv"})
      out.push_back(make_case(v, DType::f32, 131, 77, {.default_isa = true}));
    for (const char* v : {"microkernel", "mapuot"})
      out.push_back(make_case(v, DType::f64, 131, 77, {.threads = 2, .default_isa = true}));
    out.push_back(make_case("c2r", DType::f64, 131, 77, {.fi = "0.7", .threads = 2}));
  } else if (profile == "quick") {
    for (DType dt : {DType::f64, DType::f32}) {
      for (const char* v : kVariants)
        for (const char* part : kParts) out.push_back(make_case(v, dt, 4096, 4096, {.part = part}));
      for (const char* v : {"mapuot", "fused_uv"})
        out.push_back(make_case(v, dt, 4096, 4096, {.default_isa = dt == DType::f32}));
    }
    // Two threads on row slices, and the unbalanced exponent, for the main variants.
    for (const char* v : {"c2r", "blocked", "microkernel", "mapuot", "fused_uv"})
      out.push_back(make_case(v, DType::f64, 4096, 4096, {.threads = 2, .default_isa = true}));
    for (const char* v : {"c2r", "microkernel", "mapuot", "fused_uv"})
      out.push_back(make_case(v, DType::f64, 4096, 4096, {.fi = "0.5", .default_isa = true}));
    // Odd shapes: edges of every vector width, mr, mc and nc; a single row; a single column;
    // slices of unequal length.
    for (auto [M, N] : {std::pair<int64_t, int64_t>{1023, 517}, {1, 4097}, {4097, 1}})
      for (const char* v : kAll) out.push_back(make_case(v, DType::f64, M, N));
    for (const char* v : {"c2r", "microkernel", "mapuot", "fused_uv"})
      out.push_back(make_case(v, DType::f64, 1023, 517, {.fi = "0.7", .threads = 2}));
  } else if (profile == "paper") {
    // COFFEE's 16000^2 doubles plus a size sweep (COFFEE Fig. 12, MAP-UOT Fig. 9); blocked
    // with the paper's mc = 8, nc = 1000; the fused variants per iteration.
    for (int64_t n : {1024, 2048, 4096, 8192, 16000}) {
      for (const char* v : kVariants)
        for (const char* part : kParts) out.push_back(make_case(v, DType::f64, n, n, {.part = part, .nc = 1000}));
      for (const char* v : {"mapuot", "fused_uv"}) out.push_back(make_case(v, DType::f64, n, n));
    }
    // Thread scaling (MAP-UOT Fig. 10) and UOT (MAP-UOT's fi) at 4096^2 and 16000^2.
    for (int64_t n : {4096, 16000})
      for (const char* v : kAll) {
        out.push_back(make_case(v, DType::f64, n, n, {.nc = 1000, .threads = 2}));
        out.push_back(make_case(v, DType::f64, n, n, {.nc = 1000, .fi = "0.5"}));
      }
  }
  return out;
}

}  // namespace

template <class T>
std::unique_ptr<Instance> sinkhorn::make_instance(const Case& c, const SkKernels<T>& k) {
  require_dtype<T>(c);
  return std::make_unique<SkInstance<T>>(params_of(c), k);
}
template std::unique_ptr<Instance> sinkhorn::make_instance<float>(const Case&, const SkKernels<float>&);
template std::unique_ptr<Instance> sinkhorn::make_instance<double>(const Case&, const SkKernels<double>&);

const Family& sinkhorn_family() {
  static const Family f = make_family(
      "sinkhorn", "Sinkhorn-Knopp / unbalanced-OT scaling, one pass or iteration (COFFEE, TPDS 2023; MAP-UOT)",
      {accepts_if_parses(params_of), model, make, cases, memory_bytes, {}, isa_cases, calibration_cases, overlap_probes, knobs},
      {{"typical", "Algorithm 1 as written: the column pass walks down columns (stride lda)"},
       {"c2r", "COFFEE-C2R: column sums accumulated row by row, row-major scaling (Alg. 2)"},
       {"blocked", "C2R + mc x nc blocking, factors temp[nc] reused down each panel (Alg. 3)"},
       {"microkernel", "COFFEE-CPU: blocked + mr x nr SIMD micro-kernel, SIMD row pass", all_isas()},
       {"mapuot", "MAP-UOT Alg. 1: column scale + row sum, row scale + next column sums, one pass", all_isas()},
       {"fused_uv", "scaling vectors u, v with K read-only: (K v)_i, u_i, K^T u in one pass", all_isas()}});
  return f;
}

}  // namespace rooflab

// The "gemm" family table: variants and their parameters, the model, the problem instance
// (generation, verification) and the profiles.
//
// Names: gemm/<variant>[/<isa>]/<dtype>/MxNxK[/<params>]/threads:T
//   every variant: ld:+p  pads each leading dimension by p elements (default 0: lda = K,
//                         ldb = ldc = N), for unaligned rows
//   blocked:       mc:, kc:, nc:  (default: default_blocked_plan from this CPU's detected
//                                  L1 / L2 / L3 sizes), blocking:sizes|analytic (the rule of the
//                                  defaults; analytic: analytic_blocked_plan, also ways and line)
//   sfc_ca:        k_layers:, kbf: (in every generated name), bm:, bn:, bk: (default 96, 96, 128),
//                  or knobs:nn / knobs:analytic (k_layers, kbf, bk chosen by that model when the
//                  case is made, knobs.hpp; not with k_layers / kbf / bk)
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <string>
#include <type_traits>

#include "harness/buffer.hpp"
#include "harness/error.hpp"
#include "harness/isa_choice.hpp"
#include "harness/host_caches.hpp"
#include "kernels/gemm/detail.hpp"
#include "kernels/gemm/gemm.hpp"
#include "kernels/gemm/knobs.hpp"
#include "roofline/machine.hpp"

namespace rooflab {
namespace {
using namespace gemm;

enum class Kind { loops, blocked, sfc_ca, sfc_xsmm, baseline };
bool is_sfc(Kind k) { return k == Kind::sfc_ca || k == Kind::sfc_xsmm; }
bool has_isa(Kind k) { return k == Kind::blocked || k == Kind::sfc_ca; }  // our own micro-kernel

struct Spec {
  std::string name;
  std::string description;
  Kind kind;
  LoopOrder order = LoopOrder::ijk;
  const detail::Baseline* lib = nullptr;
};

const std::vector<Spec>& specs() {
  static const std::vector<Spec> s = [] {
    std::vector<Spec> v;
    const std::pair<const char*, LoopOrder> orders[] = {{"ijk", LoopOrder::ijk}, {"ikj", LoopOrder::ikj},
                                                        {"jik", LoopOrder::jik}, {"jki", LoopOrder::jki},
                                                        {"kij", LoopOrder::kij}, {"kji", LoopOrder::kji}};
    for (const auto& [n, o] : orders)
      v.push_back({n, std::string("plain triple loop, order ") + n + ", OpenMP over the outer i/j loop",
                   Kind::loops, o});
    v.push_back({"blocked", "BLIS/Goto: NC/KC/MC blocking, packed A and B, MR x NR register micro-kernel",
                 Kind::blocked});
    v.push_back({"sfc_ca", "SFC-CA: C tiles along a generalized Hilbert curve, k_layers copies of C, "
                           "BRGEMM over kbf K-blocks per tile", Kind::sfc_ca});
#ifdef ROOFLAB_HAVE_LIBXSMM
    v.push_back({"sfc_ca_libxsmm", "SFC-CA as sfc_ca with LIBXSMM's JIT BRGEMM (reducebatch_strd) as the tile kernel",
                 Kind::sfc_xsmm});
#endif
    const detail::Baseline* libs[] = {
#ifdef ROOFLAB_HAVE_OPENBLAS
        &detail::openblas,
#endif
#if defined(ROOFLAB_HAVE_BLIS)
        &detail::blis,
#endif
#ifdef ROOFLAB_HAVE_DNNL
        &detail::onednn,
#endif
        nullptr};
    for (const detail::Baseline* b : libs)
      if (b) v.push_back({b->name, std::string("library baseline: ") + b->name, Kind::baseline, {}, b});
    return v;
  }();
  return s;
}

const Spec* spec_of(const std::string& name) {
  for (const Spec& s : specs())
    if (s.name == name) return &s;
  return nullptr;
}

// Plain loops above this M*N*K are refused: the slow orders (jki / kji stream columns) run at
// ~0.3-0.5 GFLOP/s on this machine, so 2^30 multiply-adds already take ~5 s.
constexpr int64_t kLoopsMaxMnk = int64_t(1) << 30;
// Full double reference up to this M*N*K (~0.1 s); above, Freivalds + sampled entries.
constexpr int64_t kFullReferenceMaxMnk = int64_t(1) << 27;
// sfc_ca defaults: kSfcDefault (gemm.hpp).
constexpr int64_t kSfcBm = kSfcDefault.bm, kSfcBn = kSfcDefault.bn, kSfcBk = kSfcDefault.bk,
                  kSfcKbf = kSfcDefault.kbf;

struct Params {
  const Spec* spec = nullptr;
  Dims d;
  BlockedPlan bp;
  SfcPlan sp;
  std::string knobs_note;  // how knobs:nn / knobs:analytic chose (e.g. an NN entry of another ISA)
  std::string blocking_note;  // blocked: which rule gave the defaults
  Isa isa = Isa::none;
  int mr = 0, nr = 0;  // blocked, sfc_ca: the micro-kernel's register block at this isa and dtype
};

Params params_of(const Case& c) {
  Params p;
  const std::string name = c.name();
  p.spec = spec_of(c.variant);
  if (!p.spec) throw Error(name + ": unknown gemm variant '" + c.variant + "'");
  if (c.dims.size() != 3) throw Error(name + ": gemm takes three dimensions, MxNxK");
  const int64_t pad = parse_ld_pad(c);
  p.d = {c.dims[0], c.dims[1], c.dims[2], c.dims[2] + pad, c.dims[1] + pad, c.dims[1] + pad};
  check_dims(p.d);
  if (c.dtype == DType::f32 && 4 * p.d.k + 8 >= (int64_t(1) << 24))
    throw Error(name + ": K too large for exact f32 verification (integer sums must stay below 2^24)");

  const Kind kind = p.spec->kind;
  std::string known = "ld";
  if (kind == Kind::blocked) known += ", mc, kc, nc, blocking";
  if (is_sfc(kind)) known += ", k_layers, kbf, bm, bn, bk";
  if (kind == Kind::sfc_ca) known += ", knobs";
  for (const auto& [k, v] : c.params) {
    const bool ok = k == "ld" || (kind == Kind::blocked && (k == "mc" || k == "kc" || k == "nc" || k == "blocking")) ||
                    (is_sfc(kind) && (k == "k_layers" || k == "kbf" || k == "bm" || k == "bn" || k == "bk")) ||
                    (kind == Kind::sfc_ca && k == "knobs");
    if (!ok)
      throw Error(name + ": unknown parameter '" + k + "' for gemm/" + c.variant + " (known: " + known + ")");
  }
  const bool needs_isa = kind == Kind::blocked || kind == Kind::sfc_ca;
  if (needs_isa && c.isa == Isa::none) throw Error(name + ": gemm/" + c.variant + " needs an ISA");
  if (!needs_isa && c.isa != Isa::none) throw Error(name + ": gemm/" + c.variant + " is not ISA-specific");
  p.isa = c.isa;
  if (kind == Kind::loops && p.d.m * p.d.n * p.d.k > kLoopsMaxMnk)
    throw Error(name + ": plain loops refuse M*N*K > 2^30 (would take more than ~5 s per run)");
  if (kind == Kind::baseline && c.dtype == DType::f64 && !p.spec->lib->f64)
    throw Error(name + ": " + c.variant + " has no f64 GEMM");

  if (has_isa(kind)) {
    p.mr = c.dtype == DType::f64 ? ukernel<double>(p.isa).mr : ukernel<float>(p.isa).mr;
    p.nr = c.dtype == DType::f64 ? ukernel<double>(p.isa).nr : ukernel<float>(p.isa).nr;
  }
  if (kind == Kind::blocked) {
    const int64_t s = int64_t(dtype_size(c.dtype));
    // The blocking follows this machine's caches (sysfs); mc:/kc:/nc: override it.
    const HostCacheSizes& hc = host_cache_sizes();
    const std::string* rule = c.param("blocking");
    if (rule && *rule != "sizes" && *rule != "analytic")
      throw Error(name + ": blocking:" + *rule + " is not a rule (sizes or analytic)");
    if (rule && *rule == "analytic") {
      auto geom = [](int level) {
        const auto hc = host_cache(level);
        return hc ? CacheGeometry{.size = hc->size, .ways = hc->assoc, .line = hc->line} : CacheGeometry{};
      };
      const BlockedRule r = analytic_blocked_plan(s, p.mr, p.nr, geom(1), geom(2), geom(3), std::max(1, c.threads));
      // Falling back, the sizes rule takes the sizes with host_cache_sizes()'s assumed ones.
      p.bp = r.ok ? r.plan : default_blocked_plan(s, p.mr, p.nr, hc.l1, hc.l2, hc.l3);
      p.blocking_note = r.ok ? r.note : "blocking:analytic fell back to the " + r.note;
    } else {
      p.bp = default_blocked_plan(s, p.mr, p.nr, hc.l1, hc.l2, hc.l3);
      p.blocking_note = "sizes rule (caches " + hc.source + ")";
    }
    p.bp.mc = c.param_int("mc", p.bp.mc);
    p.bp.kc = c.param_int("kc", p.bp.kc);
    p.bp.nc = c.param_int("nc", p.bp.nc);
    // Bounded so that run_blocks' products cannot overflow; the buffers follow the blocks run on
    // the product (at most its own size), so a plan from a large L3 needs no cap of its own.
    constexpr int64_t kMax = int64_t(1) << 28;
    if (p.bp.mc < 1 || p.bp.kc < 1 || p.bp.nc < 1 || p.bp.mc > kMax || p.bp.kc > kMax || p.bp.nc > kMax)
      throw Error(name + ": mc, kc, nc must be in 1..2^28");
  }
  if (is_sfc(kind)) {
    p.sp.bm = c.param_int("bm", kSfcBm);
    p.sp.bn = c.param_int("bn", kSfcBn);
    p.sp.bk = c.param_int("bk", kSfcBk);
    p.sp.k_layers = c.param_int("k_layers", 1);
    const int64_t kb = p.sp.bk >= 1 ? (p.d.k + p.sp.bk - 1) / p.sp.bk : 1;
    p.sp.kbf = c.param_int("kbf", std::clamp<int64_t>(kb / std::max<int64_t>(1, p.sp.k_layers), 1, kSfcKbf));
    if (const std::string* method = c.param("knobs")) {
      if (c.param("k_layers") || c.param("kbf") || c.param("bk") || c.param("bm") || c.param("bn"))
        throw Error(name + ": knobs:" + *method + " chooses k_layers, kbf and bk; drop those (and bm, bn)");
      try {
        const knobs::Knob k =
            knobs::resolve_method(*method, {p.d.m, p.d.n, p.d.k, c.dtype, c.threads, c.isa}, &p.knobs_note);
        p.sp.bk = k.bk, p.sp.k_layers = k.k_layers, p.sp.kbf = k.kbf;
      } catch (const Error& e) {
        throw Error(name + ": " + e.what());
      }
    }
    try {
      check_sfc_plan(p.sp, p.d);
    } catch (const Error& e) {
      throw Error(name + ": " + e.what());
    }
  }
  return p;
}

std::string library_note(const Spec& s, int threads) {
  return std::string(s.lib->info()) + "; " + std::to_string(threads) + " threads";
}

// ---- Model -------------------------------------------------------------------------------
}  // namespace
Model gemm::min_traffic_model(DType dtype, int64_t m_, int64_t n_, int64_t k_) {
  const double s = double(dtype_size(dtype)), M = double(m_), N = double(n_), K = double(k_);
  Model m;
  m.flops = 2 * M * N * K;
  m.compute_ceiling = dtype == DType::f64 ? "fma_f64" : "fma_f32";
  m.traffic = {{s * (M * K + K * N), "read"}, {2 * s * M * N, "update"}};
  m.working_set = s * (M * K + K * N + M * N);
  m.note = "minimum traffic: A, B read once, C read+written once";
  return m;
}
namespace {

// Per-level traffic of blocked (BLIS's loops on C^T, blocked.cpp) for the ECM (Model::phases;
// bytes per run), T threads taking the B blocks in turn, micro-kernel MR x NR (NRV vectors of W
// lanes). In L1 an access costs a slot of the pricing table's width v (64 / 32 / 16 bytes for
// avx512 / avx2 / scalar, SSE2) whatever it moves. Two phases (packing runs before the
// micro-kernel loops that read it):
//   pack:      A transposed element by element once, one load + one store slot each (2 v M K,
//              copy); B's rows copied at SSE2 width once per A panel (2 s K N ceil(M/mc) v / 16,
//              copy); beyond L1 the sources' reads and the destinations' writes (copy)
//   compute, L1 (core): per k step of a call NR s / v B loads + MR A broadcasts (GCC vectorizes
//              the scalar micro-kernel's B row at SSE2), M N K (s / MR + v / NR) bytes (read);
//              the C tile once per call (2 s M N ceil(K/kc), update)
//   L1<-L2:    the B block per A micro-panel (s K N ceil(M/mc) ceil(mc/MR), read); the A
//              micro-panel once per B block but the first, which packs it and reads it from L1
//              (s M K (ceil(N/nc) - 1), read; per call, s M K ceil(N/nc) ceil(nc/NR), when
//              the micro-panel and a B sliver exceed L1); C per call (update)
//   L2<-L3:    C; the A micro-panels once per B block but the first from the shared A panel
//              (unless the panel and a B block fit L2); when the B block exceeds L2 its sweeps
//              and packed writes
//   L3<-DRAM:  C, and the packing sources (A once, B ceil(M/mc) times); the A panel stays in L3
// Cache sizes are this host's (the plan is derived from them too); MC, KC, NC are the blocks
// blocked() runs on these dimensions (run_blocks: K 512 on a 48 KiB L1 runs one block of 512
// where the avx2 f64 plan says KC 768).
std::vector<LevelTraffic> blocked_phases(const Case& c, const Params& p) {
  const double s = double(dtype_size(c.dtype)), M = double(p.d.m), N = double(p.d.n), K = double(p.d.k);
  const double mr = p.mr, nr = p.nr, T = std::max(1, c.threads);
  const double v = p.isa == Isa::avx512 ? 64 : p.isa == Isa::avx2 ? 32 : 16;
  auto cdiv = [](double a, double b) { return std::ceil(a / b); };
  const BlockedRun run = run_blocks(p.bp, p.d, p.mr, p.nr, int(T));
  const double mc = double(run.mc), kc = double(run.kc), nc = double(run.nc);
  const HostCacheSizes& hc = host_cache_sizes();
  const double k_calls = double(run.k_blocks), m_panels = double(run.m_panels), n_blocks = double(run.n_blocks);
  const double c_bytes = 2 * s * M * N * k_calls;
  const double a_pack = s * M * K, b_pack = s * K * N * m_panels;
  // The A micro-panel stays in L1 between the jr loop's calls only with room for the B sliver
  // (an LRU cache swept by one line more than it holds misses every line); the B block,
  // swept once per A micro-panel, stays in L2 beside a micro-panel; the A panel, read once
  // per B block, only beside a B block.
  const bool a_in_l1 = kc * (nr + mr) * s <= double(hc.l1);
  const bool b_in_l2 = (std::min(nc, N) + mr) * kc * s <= double(hc.l2);
  const bool a_in_l2 = (std::min(mc, M) + std::min(nc, N)) * kc * s <= double(hc.l2);
  const double b_sweeps = s * K * N * m_panels * cdiv(std::min(mc, M), mr);
  // The first B block of an iteration packs each A micro-panel right before it reads it.
  const double a_reads = a_pack * (a_in_l1 ? n_blocks - 1 : n_blocks * cdiv(std::min(nc, N), nr));
  LevelTraffic pack, lt;
  pack.name = "pack";
  pack.l1 = {{2 * v * M * K, "copy"}, {2 * s * K * N * m_panels * v / 16, "copy"}};
  pack.l2 = {{2 * a_pack, "copy"}, {2 * b_pack, "copy"}};
  pack.l3 = {{a_in_l2 ? a_pack : 2 * a_pack, a_in_l2 ? "read" : "copy"}, {b_in_l2 ? b_pack : 2 * b_pack, b_in_l2 ? "read" : "copy"}};
  pack.mem = {{a_pack + b_pack, "read"}};
  pack.note = "packing: sources read from where the matrices live, B block written to L2 (L3 when it exceeds L2), A panel to L3";
  lt.name = "compute";
  lt.flops = 2 * M * N * K;
  lt.l1 = {{M * N * K * (s / mr + v / nr), "read"}, {2 * s * M * N * k_calls, "update"}};
  lt.l2 = {{b_sweeps, "read"}, {a_reads, "read"}, {c_bytes, "update"}};
  lt.l3 = {{c_bytes, "update"}};
  if (!a_in_l2 && n_blocks > 1) lt.l3.push_back({a_pack * (n_blocks - 1), "read"});
  if (!b_in_l2) lt.l3.push_back({b_sweeps, "read"});
  lt.mem = {{c_bytes, "update"}};
  lt.note = std::string("BLIS loops on C^T per level") + (a_in_l1 ? "; A micro-panel in L1" : "; A micro-panel + B sliver exceed L1") +
            (b_in_l2 ? "; B block in L2" : "; B block exceeds L2 (streams from L3)") +
            (a_in_l2 ? "; A panel in L2" : "") + "; caches " + hc.source;
  return {pack, lt};
}

// The flops sfc_ca's own BRGEMM executes (its in-core unit, Model::core_work): each call runs
// whole bk K-blocks (the last one zero-padded) and whole MR x NR register blocks at a tile's
// edges, so 1000 x 777 x 513 does 1.27x its flops on avx512 f64 (K 640, N 792) while the
// 384 x 384 x 256 calibration does exactly its own: a cost per flop fit there priced that case
// 1.24-1.36x too fast (docs/model.md).
double sfc_brgemm_flops(const Case& c, const Params& p) {
  const simd::Shape sh = kUkernelShapes[p.isa];
  const int64_t W = p.isa == Isa::avx512 ? 64 / int64_t(dtype_size(c.dtype)) : p.isa == Isa::avx2 ? 32 / int64_t(dtype_size(c.dtype)) : 1;
  const auto up = [](int64_t n, int64_t r) { return (n + r - 1) / r * r; };
  const auto padded = [&](int64_t n, int64_t tile, int64_t reg) {  // tiles of `tile`, each rounded up to `reg`
    return (n / tile) * up(tile, reg) + up(n % tile, reg);
  };
  return 2.0 * double(padded(p.d.m, p.sp.bm, sh.mr)) * double(padded(p.d.n, p.sp.bn, sh.nrv * W)) *
         double(up(p.d.k, p.sp.bk));
}

Model model(const Case& c) {
  const Params p = params_of(c);
  Model m = gemm::min_traffic_model(c.dtype, p.d.m, p.d.n, p.d.k);
  switch (p.spec->kind) {
    case Kind::loops: m.note += "; the plain loops re-read far more (lower bound only)"; break;
    case Kind::blocked:
      m.note += "; blocked mc:" + std::to_string(p.bp.mc) + " kc:" + std::to_string(p.bp.kc) + " nc:" +
                std::to_string(p.bp.nc) + " (packing timed; B packed ceil(M/mc) times); defaults: " +
                p.blocking_note;
      m.phases = blocked_phases(c, p);
      break;
    case Kind::sfc_ca:
    case Kind::sfc_xsmm:
      m.note += "; " + c.variant + " k_layers:" + std::to_string(p.sp.k_layers) + " kbf:" + std::to_string(p.sp.kbf) +
                " bm:" + std::to_string(p.sp.bm) + " bn:" + std::to_string(p.sp.bn) + " bk:" +
                std::to_string(p.sp.bk) + " (packing timed; k_layers-1 extra copies of C zeroed and reduced: +" +
                std::to_string(3 * (p.sp.k_layers - 1)) + " M*N*s not in the model)";
      if (!p.knobs_note.empty()) m.note += "; " + p.knobs_note;
      if (p.spec->kind == Kind::sfc_ca) m.core_work = {{"brgemm_flop", sfc_brgemm_flops(c, p)}};
      break;
    case Kind::baseline: m.note += "; " + library_note(*p.spec, c.threads); break;
  }
  return m;
}

// sfc_ca's own models for model.json: "tight", the paper's tight roofline of the shape (the
// least predicted time over the default knob grid, this case's micro-kernel ISA), and
// "brgemm", the per-BRGEMM model at this case's own knobs (not for bm / bn / knobs: cases:
// the model prices the family's tiles at explicit knobs).
nlohmann::json predictions(const Case& c, const roofline::Machine& machine) {
  const Params p = params_of(c);
  if (p.spec->kind != Kind::sfc_ca) return nlohmann::json::object();
  const knobs::Shape s{p.d.m, p.d.n, p.d.k, c.dtype, c.threads, c.isa};
  const knobs::MachineParams mp = knobs::machine_params(machine, s);
  const knobs::Grid grid;
  const double flops = model(c).flops;
  nlohmann::json tight = knobs::to_json(knobs::tight_bound(s, grid, mp), flops);
  tight["slow_level"] = mp.slow_level;
  tight["c_level"] = mp.c_level;
  tight["compute_gflops"] = mp.flops * s.threads * 1e-9;
  tight["compute_isa"] = mp.compute_isa;
  if (!mp.compute_note.empty()) tight["notes"] = {mp.compute_note};
  tight["grid"] = knobs::to_string(grid);
  const knobs::Knob a = knobs::analytic_choice(s, grid, mp).knob;
  tight["analytic_choice"] = {{"k_layers", a.k_layers}, {"kbf", a.kbf}, {"bk", a.bk}};
  nlohmann::json out = {{"tight", tight}};
  if (!c.param("knobs") && !c.param("bm") && !c.param("bn")) {
    try {
      out["brgemm"] = knobs::to_json(knobs::predict(s, {p.sp.k_layers, p.sp.kbf, p.sp.bk}, mp), flops);
    } catch (const Error&) {
      // a knob the model cannot price (bk off the tile grid): no brgemm entry
    }
  }
  return out;
}

size_t memory_bytes(const Case& c) {
  const Params p = params_of(c);
  const Dims& d = p.d;
  const size_t s = dtype_size(c.dtype);
  size_t b = s * size_t(d.m * d.lda + d.k * d.ldb + 2 * d.m * d.ldc);  // A, B, C, C0
  if (p.spec->kind == Kind::blocked) b += s * size_t(blocked_workspace(p.bp, d, p.mr, p.nr, std::max(1, c.threads)));
  if (is_sfc(p.spec->kind))  // sfc_ca pads tiles to its register block; LIBXSMM's back end does not
    b += s * size_t(sfc_workspace(p.sp, d, std::max(1, p.mr), std::max(1, p.nr)));
  if (d.m * d.n * d.k <= kFullReferenceMaxMnk) b += sizeof(double) * size_t(d.m * d.n);
  return b;
}

// ---- Instance ----------------------------------------------------------------------------
// Inputs: small integers (A, B in [-2, 2], C0 in [-8, 8]) from a counter-based hash, so every
// product and partial sum is an integer of magnitude < 4K + 8 < 2^24: exact in f32 and f64
// whatever the summation order, blocking or FMA use. Verification is therefore exact
// (tolerance 0), for the full reference and for Freivalds' check alike.
uint64_t mix(uint64_t x) {
  x ^= x >> 30, x *= 0xBF58476D1CE4E5B9ull, x ^= x >> 27, x *= 0x94D049BB133111EBull, x ^= x >> 31;
  return x;
}
template <class T>
T value(uint64_t stream, uint64_t idx, int range) {
  return T(int64_t(mix(stream * 0x9E3779B97F4A7C15ull + idx) % uint64_t(2 * range + 1)) - range);
}
constexpr double kPadSentinel = 12345;  // C's padding columns must keep it

template <class T>
class GemmInstance final : public Instance {
 public:
  GemmInstance(const Params& p, detail::Compute<T> compute)
      : d_(p.d), compute_(std::move(compute)), A_(size_t(d_.m * d_.lda)), B_(size_t(d_.k * d_.ldb)),
        C_(size_t(d_.m * d_.ldc)), C0_(size_t(d_.m * d_.ldc)) {
    const int64_t M = d_.m, N = d_.n, K = d_.k;
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t k = 0; k < d_.lda; ++k) A_[size_t(i * d_.lda + k)] = k < K ? value<T>(1, uint64_t(i * K + k), 2) : T(NAN);
#pragma omp parallel for schedule(static)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < d_.ldb; ++j) B_[size_t(k * d_.ldb + j)] = j < N ? value<T>(2, uint64_t(k * N + j), 2) : T(NAN);
#pragma omp parallel for schedule(static)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < d_.ldc; ++j)
        C0_[size_t(i * d_.ldc + j)] = j < N ? value<T>(3, uint64_t(i * N + j), 8) : T(kPadSentinel);
    reset();
  }

  void run() override { compute_(d_, A_.data(), B_.data(), C_.data()); }

  void reset() override {
    const size_t n = C_.size();
    const T* src = C0_.data();
    T* dst = C_.data();
#pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; ++i) dst[i] = src[i];
  }

  Verification verify() override {
    reset();
    run();
    Verification v = check();
    reset();
    return v;
  }

 private:
  double a(int64_t i, int64_t k) const { return double(A_[size_t(i * d_.lda + k)]); }
  double b(int64_t k, int64_t j) const { return double(B_[size_t(k * d_.ldb + j)]); }
  // The product part of C: C - C0 (exact: integers).
  double prod(int64_t i, int64_t j) const {
    return double(C_[size_t(i * d_.ldc + j)]) - double(C0_[size_t(i * d_.ldc + j)]);
  }

  Verification check() const {
    Verification v;
    v.tol = 0;
    std::ostringstream os;
    os.precision(17);
    const int64_t M = d_.m, N = d_.n, K = d_.k;
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = N; j < d_.ldc; ++j)
        if (double(C_[size_t(i * d_.ldc + j)]) != kPadSentinel) {
          v.max_err = INFINITY;
          os << "C padding entry (" << i << ", " << j << ") changed to " << C_[size_t(i * d_.ldc + j)];
          v.detail = os.str();
          return v;
        }
    int64_t wi = -1, wj = -1;
    double wgot = 0, wexp = 0;
    auto note = [&](int64_t i, int64_t j, double expected) {
      const double got = prod(i, j), e = std::isnan(got) ? INFINITY : std::fabs(got - expected);
      if (e > v.max_err || (wi < 0 && e > 0)) v.max_err = e, wi = i, wj = j, wgot = got, wexp = expected;
    };
    std::string how;
    if (M * N * K <= kFullReferenceMaxMnk) {
      std::vector<double> ref(size_t(M * N), 0.0);
#pragma omp parallel for schedule(static)
      for (int64_t i = 0; i < M; ++i)
        for (int64_t k = 0; k < K; ++k) {
          const double aik = a(i, k);
          for (int64_t j = 0; j < N; ++j) ref[size_t(i * N + j)] += aik * b(k, j);
        }
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) note(i, j, ref[size_t(i * N + j)]);
      how = "all entries vs the double reference (exact integer data)";
    } else {
      // Freivalds: (C - C0) x == A (B x) for random integer x; everything is an integer below
      // 2^45, exact in long double (64-bit mantissa), so any wrong entry shows with
      // probability >= 1 - 1/257 per vector unless it is wrong in a way x cannot see.
      for (uint64_t trial = 0; trial < 2; ++trial) {
        std::vector<long double> x(static_cast<size_t>(N)), bx(static_cast<size_t>(K)), lhs(static_cast<size_t>(M)), rhs(static_cast<size_t>(M));
        for (int64_t j = 0; j < N; ++j) x[size_t(j)] = value<long double>(10 + trial, uint64_t(j), 128);
#pragma omp parallel for schedule(static)
        for (int64_t k = 0; k < K; ++k) {
          long double s = 0;
          for (int64_t j = 0; j < N; ++j) s += b(k, j) * x[size_t(j)];
          bx[size_t(k)] = s;
        }
#pragma omp parallel for schedule(static)
        for (int64_t i = 0; i < M; ++i) {
          long double l = 0, r = 0;
          for (int64_t j = 0; j < N; ++j) l += prod(i, j) * x[size_t(j)];
          for (int64_t k = 0; k < K; ++k) r += a(i, k) * bx[size_t(k)];
          lhs[size_t(i)] = l, rhs[size_t(i)] = r;
        }
        for (int64_t i = 0; i < M; ++i)
          if (lhs[size_t(i)] != rhs[size_t(i)] || std::isnan(double(lhs[size_t(i)]))) {
            v.max_err = std::isnan(double(lhs[size_t(i)])) ? INFINITY : double(fabsl(lhs[size_t(i)] - rhs[size_t(i)]));
            os << "Freivalds check " << trial << " fails in row " << i << ": (C - C0) x = " << double(lhs[size_t(i)])
               << ", A (B x) = " << double(rhs[size_t(i)]);
            v.detail = os.str();
            return v;
          }
      }
      // Sampled entries: the four corners, the last row / column (edge tiles) and 256 random.
      std::vector<std::pair<int64_t, int64_t>> picks = {{0, 0}, {0, N - 1}, {M - 1, 0}, {M - 1, N - 1}};
      for (int64_t t = 0; t < 64; ++t) picks.emplace_back(M - 1, t * N / 64), picks.emplace_back(t * M / 64, N - 1);
      for (uint64_t t = 0; t < 256; ++t)
        picks.emplace_back(int64_t(mix(100 + t) % uint64_t(M)), int64_t(mix(1000 + t) % uint64_t(N)));
      for (const auto& [i, j] : picks) {
        double s = 0;
        for (int64_t k = 0; k < K; ++k) s += a(i, k) * b(k, j);
        note(i, j, s);
      }
      how = "2 Freivalds vectors (exact, long double) + " + std::to_string(picks.size()) + " sampled entries";
    }
    v.ok = v.max_err <= v.tol;
    if (wi < 0) os << "exact: " << how;
    else
      os << "worst |error| " << v.max_err << " at (" << wi << ", " << wj << "): C - C0 = " << wgot
         << ", expected " << wexp << "; " << how;
    v.detail = os.str();
    return v;
  }

  Dims d_;
  detail::Compute<T> compute_;
  AlignedBuffer<T> A_, B_, C_, C0_;
};

// The compute function of a case (work buffers owned by the closure, allocated here, not in run()).
template <class T>
detail::Compute<T> compute_of(const Case& c, const Params& p, const Ukernel<T>* uk_override) {
  switch (p.spec->kind) {
    case Kind::loops: {
      const LoopOrder o = p.spec->order;
      return [o](const Dims& d, const T* A, const T* B, T* C) { loops(o, d, A, B, C); };
    }
    case Kind::blocked: {
      const Ukernel<T> uk = uk_override ? *uk_override : ukernel<T>(p.isa);
      const BlockedPlan bp = p.bp;
      const int threads = std::max({1, c.threads, omp_get_max_threads()});
      auto work = std::make_shared<AlignedBuffer<T>>(size_t(blocked_workspace(bp, p.d, uk.mr, uk.nr, threads)));
      return [bp, uk, work, threads, pd = p.d](const Dims& d, const T* A, const T* B, T* C) {
        if (omp_get_max_threads() > threads)  // one B block per thread was allocated
          throw Error("gemm/blocked: run with " + std::to_string(omp_get_max_threads()) +
                      " threads, workspace sized for " + std::to_string(threads));
        if (d.m != pd.m || d.n != pd.n || d.k != pd.k)  // the blocks, hence the workspace, follow the dims
          throw Error("gemm/blocked: workspace sized for " + std::to_string(pd.m) + "x" + std::to_string(pd.n) + "x" +
                      std::to_string(pd.k) + ", run on " + std::to_string(d.m) + "x" + std::to_string(d.n) + "x" +
                      std::to_string(d.k));
        blocked(bp, uk, d, A, B, C, work->data());
      };
    }
    case Kind::sfc_ca: {
      const Ukernel<T> uk = uk_override ? *uk_override : ukernel<T>(p.isa);
      const SfcPlan sp = p.sp;
      auto work = std::make_shared<AlignedBuffer<T>>(size_t(sfc_workspace(sp, p.d, uk.mr, uk.nr)));
      auto order = std::make_shared<const std::vector<std::pair<int32_t, int32_t>>>(sfc_order(sp, p.d));
      return [sp, uk, work, order](const Dims& d, const T* A, const T* B, T* C) {
        sfc_ca(sp, uk, d, *order, A, B, C, work->data());
      };
    }
    case Kind::sfc_xsmm:
#ifdef ROOFLAB_HAVE_LIBXSMM
      if constexpr (std::is_same_v<T, double>) return detail::sfc_libxsmm_f64(p.sp, p.d);
      else return detail::sfc_libxsmm_f32(p.sp, p.d);
#else
      break;
#endif
    case Kind::baseline:
      if constexpr (std::is_same_v<T, double>) return p.spec->lib->make_f64(p.d, c.threads);
      else return p.spec->lib->make_f32(p.d, c.threads);
  }
  throw Error("gemm: unreachable variant kind");
}

template <class T>
std::unique_ptr<Instance> make_typed(const Case& c, const Ukernel<T>* uk) {
  const Params p = params_of(c);
  return std::make_unique<GemmInstance<T>>(p, compute_of<T>(c, p, uk));
}

std::unique_ptr<Instance> make(const Case& c) {
  return with_element_type(c.dtype, [&]<class T>() { return make_typed<T>(c, nullptr); });
}

// ---- Profiles ----------------------------------------------------------------------------
std::vector<DType> dtypes_of(const Spec& s) {
  return s.kind == Kind::baseline && !s.lib->f64 ? std::vector<DType>{DType::f32}
                                                 : std::vector<DType>{DType::f64, DType::f32};
}

// The ISA of this machine's default run of an own kernel (preferred_isa), none for the others.
Isa default_isa(const Spec& s, DType dt) { return has_isa(s.kind) ? preferred_isa("gemm", s.name, dt) : Isa::none; }

Case make_case(const Spec& s, DType dt, int64_t m, int64_t n, int64_t k, int threads, Isa isa = Isa::none,
               int64_t k_layers = 1) {
  Case c{"gemm", s.name, isa, dt, {m, n, k}, {}, threads};
  if (is_sfc(s.kind)) {
    const int64_t kb = (k + kSfcBk - 1) / kSfcBk;
    c.params.emplace_back("k_layers", std::to_string(k_layers));
    c.params.emplace_back("kbf", std::to_string(std::clamp<int64_t>(kb / k_layers, 1, kSfcKbf)));
  }
  return c;
}

// The ISA calibration: blocked and sfc_ca on all cores (the package's clock under a wide ISA
// shows there) at 1024^3, large enough for every cache level's blocking to take part.
std::vector<Case> isa_cases() {
  std::vector<Case> out;
  const int t = std::max(1, omp_get_num_procs());
  for (const Spec& s : specs())
    if (has_isa(s.kind))
      for (DType dt : {DType::f64, DType::f32}) out.push_back(make_case(s, dt, 1024, 1024, 1024, t));
  return out;
}

// Calibration shape (Family::calibration_cases): the case's variant, ISA, dtype, params and
// threads at M = N = 384 (4 x 4 sfc_ca tiles, a multiple of every MR / NR) and the K its
// k_layers and kbf ask for (256 by default): 2.8 MiB of f64, cache-resident (L2 + L3), large
// enough that the per-call costs (threads, packing) weigh as little as at the profiles' sizes.
// The loop orders instead keep the case's row strides (K for A, N for B and C): their inner loops
// walk columns, and at 512 (4 KiB rows) a column's lines share a few L1 and L2 sets and miss to
// L3, which 384 (3 KiB rows: the columns fit L2) does not reproduce (3.6-3.7x per flop). They
// halve or quarter M, which leaves every stride as it is: ijk / jik (inner loop down a column of
// B) lose only rows of A and C (M / 4); jki / kji walk columns of A and C down M, whose halves
// (256 lines at 4 KiB, two columns) still overflow the L2 sets they share (M / 2; N / 2, tried,
// halves C's stride and ran 2x faster a flop than the case). ikj / kij walk rows: 384.
std::vector<Case> calibration_cases(const Case& c) {
  if (const Spec* s = spec_of(c.variant); s && s->kind == Kind::loops && c.dims.size() == 3) {
    Case k = c;
    if (c.variant == "ijk" || c.variant == "jik") k.dims[0] = std::max<int64_t>(1, c.dims[0] / 4);
    if (c.variant == "jki" || c.variant == "kji") k.dims[0] = std::max<int64_t>(1, c.dims[0] / 2);
    if (k.dims != c.dims) return {k};
  }
  Case k = c;
  const int64_t layers = c.param_int("k_layers", 1), kbf = c.param_int("kbf", 2);
  k.dims = {384, 384, kSfcBk * std::max<int64_t>(kbf, 1) * std::max<int64_t>(layers, 1)};
  return {k};
}

// Overlap probe (Family::overlap_probes): the calibration shape at M = N = 768 (7.5 MiB of f64,
// 3.8 of f32: beyond the L2s, within the L3): where the calibration sat in L2 (f32 on two cores'
// L2), how much of the L2 <- L3 traffic the kernel hides. Not for the loop orders (seconds a run).
std::vector<Case> overlap_probes(const Case& c) {
  const Spec* s = spec_of(c.variant);
  if (!s || s->kind == Kind::loops) return {};
  std::vector<Case> out = calibration_cases(c);
  for (Case& k : out) k.dims[0] = k.dims[1] = 768;
  return out;
}

std::vector<Case> cases(std::string_view profile) {
  std::vector<Case> out;
  auto fast = [](const Spec& s) { return s.kind != Kind::loops; };
  if (profile == "smoke") {
    // Every variant (libraries included) once at prime M != N != K, so that no ISA's MR / NR
    // divides them (edges everywhere): the loop orders at 2 threads, ours on every ISA at 2
    // threads; blocked at 1 thread and sfc_ca with k_layers 2 (K of 3 blocks) at the default ISA.
    for (const Spec& s : specs()) {
      if (!fast(s)) {
        out.push_back(make_case(s, DType::f64, 67, 45, 39, 2));
        continue;
      }
      for (DType dt : dtypes_of(s)) out.push_back(make_case(s, dt, 131, 97, 67, 2));
      if (s.kind == Kind::blocked) out.push_back(make_case(s, DType::f64, 131, 97, 67, 1, default_isa(s, DType::f64)));
      if (s.kind == Kind::sfc_ca)
        out.push_back(make_case(s, DType::f64, 97, 83, 3 * kSfcBk - 5, 2, default_isa(s, DType::f64), 2));
    }
  } else if (profile == "quick") {
    // ~1 minute on 2 cores: the loop orders at 512^3 (f64, 2 threads); everything else at
    // 512^3 and the odd 1000x777x513 (every ISA, 1 and 2 threads for ours), 2048^3 at 2
    // threads at the default ISA; sfc_ca with k_layers 2 once.
    for (const Spec& s : specs()) {
      if (!fast(s)) {
        out.push_back(make_case(s, DType::f64, 512, 512, 512, 2));
        continue;
      }
      for (DType dt : dtypes_of(s)) {
        for (int t : {1, 2}) {
          if (!has_isa(s.kind) && t == 1) continue;  // libraries: 2 threads only
          out.push_back(make_case(s, dt, 512, 512, 512, t));
          out.push_back(make_case(s, dt, 1000, 777, 513, t));
        }
        out.push_back(make_case(s, dt, 2048, 2048, 2048, 2, default_isa(s, dt)));
      }
      if (s.kind == Kind::sfc_ca) out.push_back(make_case(s, DType::f64, 2048, 2048, 2048, 2, default_isa(s, DType::f64), 2));
    }
  } else if (profile == "paper") {
    // The 125-shape grid {256..4096}^3 for blocked, sfc_ca and the libraries, all cores.
    const int t = std::max(1, omp_get_num_procs());
    const int64_t sizes[] = {256, 512, 1024, 2048, 4096};
    for (const Spec& s : specs()) {
      if (!fast(s)) continue;
      for (DType dt : dtypes_of(s))
        for (int64_t m : sizes)
          for (int64_t n : sizes)
            for (int64_t k : sizes)
              out.push_back(make_case(s, dt, m, n, k, t, default_isa(s, dt)));
    }
  }
  return out;
}

std::vector<VariantRow> rows() {
  std::vector<VariantRow> out;
  for (const Spec& s : specs()) {
    std::string description = s.kind == Kind::baseline ? s.description + " (" + s.lib->info() + ")" : s.description;
#ifdef ROOFLAB_HAVE_LIBXSMM
    if (s.kind == Kind::sfc_xsmm) description += " (" + detail::libxsmm_info() + ")";
#endif
    std::function<nlohmann::json()> code_path;
    if (s.kind == Kind::baseline) code_path = [lib = s.lib] { return lib->facts().to_json(); };
#ifdef ROOFLAB_HAVE_LIBXSMM
    if (s.kind == Kind::sfc_xsmm) code_path = [] { return detail::libxsmm_facts().to_json(); };
#endif
    out.push_back({s.name, description, has_isa(s.kind) ? all_isas() : std::vector<Isa>{}, dtypes_of(s),
                   s.kind == Kind::baseline ? s.lib->name : "", code_path});
  }
  return out;
}
}  // namespace

int64_t gemm::parse_ld_pad(const Case& c) {
  const std::string* v = c.param("ld");
  if (!v) return 0;
  const std::string s = !v->empty() && (*v)[0] == '+' ? v->substr(1) : *v;
  size_t pos = 0;
  int64_t p = -1;
  try {
    p = std::stoll(s, &pos);
  } catch (const std::exception&) {
    pos = 0;
  }
  if (s.empty() || pos != s.size() || p < 0 || p > 4096)
    throw Error(c.name() + ": ld must be +p with 0 <= p <= 4096 (padding of each leading dimension), got '" +
                *v + "'");
  return p;
}

template <class T>
std::unique_ptr<Instance> gemm::make_instance(const Case& c, const Ukernel<T>& uk) {
  require_dtype<T>(c);
  return make_typed<T>(c, &uk);
}
template std::unique_ptr<Instance> gemm::make_instance<float>(const Case&, const Ukernel<float>&);
template std::unique_ptr<Instance> gemm::make_instance<double>(const Case&, const Ukernel<double>&);

const Family& gemm_family() {
  static const Family f = make_family(
      "gemm", "C += A·B: loop orders, BLIS-style blocked, SFC-CA (Hilbert-curve tiles, k_layers, BRGEMM), library baselines",
      {accepts_if_parses(params_of), model, make, cases, memory_bytes, predictions, isa_cases, calibration_cases, overlap_probes},
      rows());
  return f;
}

}  // namespace rooflab

// The "floyd_warshall" family table: variants, their parameters and models, the problem
// instance (generation, verification), the profiles.
#include <omp.h>

#include <algorithm>
#include <bit>
#include <memory>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <string>
#include <type_traits>

#include "harness/buffer.hpp"
#include "harness/cache_sets.hpp"
#include "harness/error.hpp"
#include "harness/host_caches.hpp"
#include "harness/isa_choice.hpp"
#include "kernels/floyd_warshall/config.hpp"
#include "kernels/floyd_warshall/floyd_warshall.hpp"

namespace rooflab::fw {
L1Spill l1_spill(const Plan& plan, int64_t np, int64_t ld, int64_t s, int64_t l1_bytes, int ways, int line) {
  const CacheGeometry g = vipt_geometry(l1_bytes, ways, line);
  L1Spill out;
  out.ways = g.ways, out.sets = g.sets;
  const int64_t bs = plan.bs, nt = std::max<int64_t>(1, np / bs);
  const bool bdl = plan.layout == Layout::bdl;
  const int64_t stride = (bdl ? bs : ld) * s;  // bytes between a tile's rows
  auto tile = [&](int64_t ti, int64_t tj) {     // byte offset of tile (ti, tj)'s first element
    return bdl ? (ti * nt + tj) * bs * bs * s : (ti * bs * ld + tj * bs) * s;
  };
  // The first tiles of each index (the offsets mod 4 KiB repeat), each k step a sample apart.
  const int64_t m = std::min<int64_t>(nt, 4), kstep = std::max<int64_t>(1, bs / 8);
  double c_spill = 0, c_all = 0, a_spill = 0, a_all = 0;
  for (int64_t ib = 0; ib < m; ++ib)
    for (int64_t jb = 0; jb < m; ++jb)
      for (int64_t kb = 0; kb < m; ++kb) {
        const std::vector<int> c = lines_per_set(g, tile(ib, jb), bs, bs * s, stride);
        for (int64_t k = 0; k < bs; k += kstep) {
          std::vector<int> all = c;
          std::vector<int> a(c.size(), 0);
          // B's row k lies in C when B is C's tile (kb == ib), A's column in C when kb == jb.
          if (kb != ib) add_lines(all, lines_per_set(g, tile(kb, jb) + k * stride, 1, bs * s, stride));
          if (kb != jb) {
            a = lines_per_set(g, tile(ib, kb) + k * s, bs, s, stride);
            add_lines(all, a);
          }
          for (size_t i = 0; i < all.size(); ++i) {
            out.max_lines = std::max(out.max_lines, all[i]);
            c_all += c[i], a_all += a[i];
            if (all[i] > g.ways) c_spill += c[i], a_spill += a[i];
          }
        }
      }
  out.c = c_all > 0 ? c_spill / c_all : 0;
  out.a = a_all > 0 ? a_spill / a_all : 0;
  return out;
}
}  // namespace rooflab::fw

namespace rooflab {
namespace {
using namespace fw;

// ---- Variants and their parameters -------------------------------------------------------
// Every variant is a plan over a kernel table; the variant fixes what it is about and lets
// the rest be chosen by parameters, so the paper's ablations are parameter combinations:
//   Rec-OPT    regblock/<isa>/.../sched:rec/layout:bdl
//   NonRec-OPT regblock/<isa>/.../sched:blocked/layout:bdl
//   Rec-NoBDL  regblock/<isa>/.../sched:rec/layout:std
//   Rec-NoRBK  bdl/<isa>/.../sched:rec
struct Spec {
  const char* name;
  const char* description;
  bool simd;                 // kernels: simd_kernels(isa) (else portable, no ISA in the name)
  Schedule sched;            // the default schedule
  bool sched_param;          // sched:flat|blocked|rec may be given
  bool flat_allowed;
  Layout layout;             // the default layout
  bool layout_param;         // layout:std|bdl may be given
  bool regblock;
};
const Spec kSpecs[] = {
    {"naive", "the three loops (k, i, j), rows of each k in parallel", false, Schedule::flat,
     false, true, Layout::standard, false, false},
    {"blocked", "FW-Blocking: pivot tile, pivot row/column tiles, the rest (OpenMP for), bs x bs tiles",
     false, Schedule::blocked, false, false, Layout::standard, true, false},
    {"recursive", "FW-REC: 8 recursive calls in dependency order down to a tile, parallel phases",
     false, Schedule::recursive, false, false, Layout::standard, true, false},
    {"simd", "explicit SIMD base kernel (min of a + b, masked edges); sched:flat|blocked|rec",
     true, Schedule::blocked, true, true, Layout::standard, true, false},
    {"bdl", "block data layout (contiguous tiles, conversion timed) + SIMD kernel; sched:blocked|rec",
     true, Schedule::recursive, true, false, Layout::bdl, false, false},
    {"regblock", "SIMD kernel register-blocked (k innermost) but on the pivot tile; sched, layout",
     true, Schedule::recursive, true, false, Layout::bdl, true, true},
};

const Spec* spec_of(const std::string& variant) {
  for (const Spec& s : kSpecs)
    if (variant == s.name) return &s;
  return nullptr;
}

// Above this N verification compares sampled rows and columns with Dijkstra: the full
// O(N^3) double reference would take longer than the benchmark.
constexpr int64_t kFullReferenceMax = 2048;

struct Params {
  int64_t n = 0;
  int64_t ld = 0;  // row stride in elements (N x N x LD: a calibration shape's; else the padded N)
  Plan plan;
  Graph graph = Graph::sparse;
  const Spec* spec = nullptr;
};

const char* sched_name(Schedule s) {
  return s == Schedule::flat ? "flat" : s == Schedule::blocked ? "blocked" : "rec";
}

Params params_of(const Case& c) {
  const std::string name = c.name();
  Params p;
  p.spec = spec_of(c.variant);
  if (!p.spec) throw Error(name + ": unknown floyd_warshall variant '" + c.variant + "'");
  const Spec& s = *p.spec;
  if ((c.dims.size() != 2 && c.dims.size() != 3) || c.dims[0] != c.dims[1])
    throw Error(name + ": floyd_warshall takes a square matrix, NxN (or NxNxLD with row stride LD)");
  p.n = c.dims[0];
  if (p.n <= 0) throw Error(name + ": N must be >= 1, got " + std::to_string(p.n));

  std::string known = "graph";
  if (s.sched_param) known += ", sched";
  if (s.layout_param) known += ", layout";
  const bool tiled_variant = s.sched != Schedule::flat || s.sched_param;
  if (tiled_variant) known += ", bs, task";
  for (const auto& [k, v] : c.params) {
    const bool ok = k == "graph" || (k == "sched" && s.sched_param) ||
                    (k == "layout" && s.layout_param) || ((k == "bs" || k == "task") && tiled_variant);
    if (!ok)
      throw Error(name + ": unknown parameter '" + k + "' for floyd_warshall/" + c.variant +
                  " (known: " + known + ")");
  }

  p.graph = parse_graph(c.param_str("graph", "sparse"));
  p.plan.schedule = s.sched;
  if (const std::string* v = c.param("sched")) {
    if (*v == "blocked") p.plan.schedule = Schedule::blocked;
    else if (*v == "rec") p.plan.schedule = Schedule::recursive;
    else if (*v == "flat" && s.flat_allowed) p.plan.schedule = Schedule::flat;
    else
      throw Error(name + ": sched must be " + (s.flat_allowed ? "flat, " : "") +
                  "blocked or rec, got '" + *v + "'");
  }
  p.plan.layout = s.layout;
  if (const std::string* v = c.param("layout")) {
    if (*v == "std") p.plan.layout = Layout::standard;
    else if (*v == "bdl") p.plan.layout = Layout::bdl;
    else throw Error(name + ": layout must be std or bdl, got '" + *v + "'");
  }
  p.plan.regblock = s.regblock;
  if (p.plan.schedule == Schedule::flat && p.plan.layout == Layout::bdl)
    throw Error(name + ": layout:bdl needs tiles (sched:blocked or sched:rec)");

  // Default tile: the paper's 64, or the largest power of two <= N for small N.
  const int64_t def_bs = std::min<int64_t>(kDefaultBs, int64_t(std::bit_floor(uint64_t(p.n))));
  p.plan.bs = c.param_int("bs", def_bs);
  if (p.plan.bs < 1 || !std::has_single_bit(uint64_t(p.plan.bs)))
    throw Error(name + ": block size bs must be a power of two, got " + std::to_string(p.plan.bs));
  if (p.plan.bs > p.n)
    throw Error(name + ": block size bs:" + std::to_string(p.plan.bs) + " is larger than N = " +
                std::to_string(p.n));
  p.plan.task_min = c.param_int("task", kDefaultTaskMin);
  if (p.plan.task_min < 1) throw Error(name + ": task (minimum rows of a task) must be >= 1");
  const int64_t np = padded_size(p.n, p.plan);
  p.ld = c.dims.size() == 3 ? c.dims[2] : np;
  if (p.ld < np)
    throw Error(name + ": row stride LD = " + std::to_string(p.ld) + " is below the padded N = " + std::to_string(np));
  return p;
}

bool tiled(const Plan& plan) { return plan.schedule != Schedule::flat; }

// The plain kernel's L1 accesses (bytes; see traffic_model) for `share` of u updates, called on
// `rows` rows of `row` elements: its passes and row groups as simd_kernels.hpp / config.hpp
// make them.
std::vector<Traffic> plain_l1(double u, double s, double vb, int64_t rows, int64_t row, Isa isa, double share) {
  // Row by row (the scalar traits, vectorized by GCC; one row a call): 2 loads + 1 store per
  // update, A once per row.
  if (isa == Isa::scalar || rows == 1) return {{3 * u * s * share, "triad"}, {vb * u / double(row) * share, "read"}};
  // Passes over a row: of 8 vectors, then one of 4, then single vectors, then a masked tail.
  const int64_t lanes = int64_t(vb / s), n8 = row / (8 * lanes), r8 = row - n8 * 8 * lanes;
  const int64_t n4 = r8 / (4 * lanes), r4 = r8 - n4 * 4 * lanes;
  const double passes = double(n8 + n4 + r4 / lanes + (r4 % lanes ? 1 : 0));
  const Traffic a = {vb * u * passes / double(row) * share, "read"};
  const int64_t group = std::min(rows, plain_group_rows(row, int64_t(s)));
  if (group <= 1) return {{3 * u * s * share, "triad"}, a};  // row k loaded beside each row of C
  return {{2 * u * s * share, "update"}, {u * s / double(group) * share, "read"}, a};
}

// ---- Model -------------------------------------------------------------------------------
// 2 flops per update (add + min), 2 N^3 for the logical N (the padding's work is overhead,
// not counted). Compute ceiling: the add+min micro-benchmark. Traffic from the level the
// matrix lives in, in the bandwidth kernels' convention (update = read + write, counted 2x):
//   flat:  each k streams the whole matrix once (update), row k comes from cache: N updates
//   tiled: each of the nt^3 tile ops reads and writes its C tile (2 np^3 s / bs in all);
//          per pivot step the pivot row and column panels are read once (2 np^2 s), and
//          A and B tiles are reused from cache across the step
//   bdl:   plus the two conversions, each a copy of the matrix
//
// Per-level traffic for the ECM (Model::phases; bytes per run, same convention). Updates U
// (N^3 flat, np^3 tiled). In L1 an access costs a slot of the pricing table's width vb (64 /
// 32 bytes for avx512 / avx2, 16 for scalar: SSE2) whatever it moves; the plain kernel is
// vectorized (GCC vectorizes the scalar traits' and the portable row loop at SSE2), the scalar
// regblock is not (its accesses cost vb / s times their bytes):
//   L1 (core): plain kernel (simd_kernels.hpp) 1 load + 1 store of C per update (2 s U,
//              update), row k of B once per group of rows (s U / group, read) and one
//              broadcast of A per row, k and pass of up to 8 vectors (vb U passes / row, read);
//              scalar, or called a row at a time (the flat schedule): row by row, 2 loads + 1
//              store per update (3 s U, triad), A once per row and k;
//              regblock (MR x NRV vectors, k
//              innermost) NRV + MR vector loads per k per block (s U (NRV + MR) / (MR NRV),
//              read) + C once per tile op (2 s U / bs, update), on every tile op but the
//              pivot tile (1 of each pivot step's nt^2, which runs plain)
//   L1<-L2:    flat: the matrix per k (2 s N^3, update); tiled: per tile op C once (2 bs^2 s,
//              update) when C's tile, A's live lines and B's row fit in L1 and in its sets (else
//              the plain kernel streams C, or the share of C in over-subscribed sets, at every
//              k, and A's lines there: fw::l1_spill) and the A and B tiles once (2 bs^2 s, read)
//   L2<-L3, L3<-DRAM (cache Z: L2 per thread, L3 shared): flat as above; sched:blocked C once
//              per pivot step (2 s np^3 / bs, update) and the pivot panels once per step and
//              thread when one fits in Z / 2 (2 s np^2 T, read; else A, B per tile op);
//              sched:rec the recursion's reuse: C, A, B once per sub-problem of edge m, the
//              largest bs 2^i with 3 m^2 s <= Z (2 s np^3 / m update + 2 s np^3 / m read)
//   bdl: a phase of its own before and after (the two conversions, 2 copies of np^2 s) at
//        every level
//   in-core flops: 2 per executed update (tiled: the padded np^3); the scalar regblock kernel
//        is not vectorized, its flops count 16 / s each
// Cache sizes are this host's (harness/host_caches), as the bench that records the model runs
// here.
Model traffic_model(const Case& c) {
  const Params p = params_of(c);
  const double s = double(dtype_size(c.dtype)), n = double(p.n);
  const double np = double(padded_size(p.n, p.plan)), bs = double(p.plan.bs);
  Model m;
  m.flops = 2 * n * n * n;
  m.compute_ceiling = c.dtype == DType::f64 ? "addmin_f64" : "addmin_f32";
  m.working_set = np * np * s;
  const double vb = c.isa == Isa::avx512 ? 64 : c.isa == Isa::avx2 ? 32 : 16;
  const HostCacheSizes& hc = host_cache_sizes();
  const double threads = std::max(1, c.threads);
  if (!tiled(p.plan)) {
    m.traffic = {{2 * n * n * n * s, "update"}};
    m.note = "flat: the matrix is read and written once per k (N passes); row k stays in cache";
    const double u = n * n * n;
    const std::vector<Traffic> stream = {{2 * u * s, "update"}};
    m.phases = {LevelTraffic{plain_l1(u, s, vb, 1, p.n, c.isa, 1), stream, stream, stream,
                             "flat: plain kernel a row at a time, per update 2 loads + 1 store; the matrix per k beyond L1",
                             m.flops, "relax"}};
    return m;
  }
  m.traffic = {{2 * np * np * np * s / bs, "update"}, {2 * np * np * s, "read"}};
  m.note = "tiled (bs = " + std::to_string(p.plan.bs) +
           "): each tile op reads+writes its C tile, A/B tiles reused within a pivot step, pivot "
           "row+column panels read once per step";
  if (p.plan.schedule == Schedule::recursive)
    m.note += "; an upper bound for the recursion, whose reuse above the tile level (C blocks "
              "kept across both k halves) is not modeled";
  if (p.plan.regblock)
    m.note += "; register blocking cuts C's L1 traffic (once per tile op instead of bs times), "
              "not this";
  if (p.plan.layout == Layout::bdl) {
    m.traffic.push_back({2 * 2 * np * np * s, "copy"});
    m.working_set *= 2;
    m.note += "; bdl: + the conversion to and from block data layout (2 copies)";
  }
  {
    const double u = np * np * np, nt = np / bs;
    LevelTraffic lt;
    lt.name = "relax";
    lt.flops = 2 * u;  // the padded matrix's updates are executed too
    const double plain_share = p.plan.regblock ? 1 / (nt * nt) : 1.0;
    lt.l1 = plain_l1(u, s, vb, p.plan.bs, p.plan.bs, c.isa, plain_share);
    if (p.plan.regblock) {
      // The scalar traits' register block stays scalar (config.hpp): 1 of the SSE2 ceiling's
      // 16 / s lanes; the plain share is vectorized.
      if (c.isa == Isa::scalar) lt.flops *= plain_share + (1 - plain_share) * 16 / s;
      const simd::Shape rb = kRegblockShapes[c.isa];
      const double slot = c.isa == Isa::scalar ? vb / s : 1;  // unvectorized: a slot per element
      lt.l1.push_back({slot * s * u * (rb.nrv + rb.mr) / double(rb.mr * rb.nrv) * (1 - plain_share), "read"});
      lt.l1.push_back({slot * 2 * s * u / bs * (1 - plain_share), "update"});
    }
    // C from L2 at every k (else once per tile op): all of it when C, A's lines and B's row exceed
    // the L1 (update: a sweep of the whole tile, each dirty line evicted a tile later, as the
    // update ceiling's sweep does); else the share of C in sets that the tile's lines
    // over-subscribe (fw::l1_spill: rows a power-of-two stride apart fall into a few sets). A line
    // there is evicted within `ways` fills of its set, a few rows after its store, and its
    // write-back costs the L1 <- L2 path what a fill costs: both directions at the read ceiling
    // (measured on Zen 3 / 4 / 5: docs/model.md#cross-cpu). A's lines in those sets are counted
    // for the occupancy, not priced: C's stream alone matched the three CPUs' timings.
    const double l1_live = bs * bs * s + bs * 64 + bs * s;  // C tile, A's cache lines, B's row
    const bool c_too_big = !p.plan.regblock && l1_live > double(hc.l1);
    const CacheGeometry g1 = l1_geometry();
    const L1Spill sp = p.plan.regblock || c_too_big
                           ? L1Spill{}
                           : l1_spill(p.plan, int64_t(np), p.ld, int64_t(s), hc.l1, g1.ways, g1.line);
    const double c_sets = sp.c, c_once = c_too_big ? 0 : 1 - c_sets;
    lt.l2 = {{2 * u * s * (c_too_big ? 1.0 : c_once / bs), "update"}, {2 * u * s * c_sets + 2 * u * s / bs, "read"}};
    if (c_too_big) lt.note = "C tile not kept in L1 (" + std::to_string(hc.l1) + " B)";
    else if (c_sets > 0) {
      char b[300];
      std::snprintf(b, sizeof b,
                    "L1 set conflicts: up to %d lines of C, A and B in a set of %d ways (%d sets): %.0f%% of C's lines "
                    "from L2 at every k, fill and write-back at the read ceiling (A's lines there: %.0f%%, not priced)",
                    sp.max_lines, sp.ways, sp.sets, 100 * c_sets, 100 * sp.a);
      lt.note = b + std::string(g1.source.empty() ? "" : " (" + g1.source + ")");
    }
    auto beyond = [&](double z) -> std::vector<Traffic> {
      if (p.plan.schedule == Schedule::recursive) {
        double e = bs;
        while (2 * e <= np && 3 * (2 * e) * (2 * e) * s <= z) e *= 2;
        return {{2 * u * s / e, "update"}, {2 * u * s / e, "read"}};
      }
      const bool panel_fits = np * bs * s <= z / 2;
      return {{2 * u * s / bs, "update"}, {panel_fits ? 2 * np * np * s * threads : 2 * u * s / bs, "read"}};
    };
    lt.l3 = beyond(double(hc.l2));
    lt.mem = beyond(double(hc.l3));
    if (p.plan.layout == Layout::standard && std::fmod(double(p.ld) * s, 4096.0) == 0)
      lt.note = (lt.note.empty() ? "" : lt.note + "; ") +
                std::string("row stride a multiple of 4 KiB: loads alias earlier stores (4K aliasing not modeled)");
    lt.note = std::string(p.plan.regblock ? "regblock kernel (plain on the pivot tiles)" : "plain kernel") +
              (p.plan.schedule == Schedule::recursive ? ", recursion's reuse beyond L1" : ", pivot-step reuse beyond L1") +
              (lt.note.empty() ? "" : "; " + lt.note) + "; caches " + hc.source;
    m.phases = {lt};
    if (p.plan.layout == Layout::bdl) {
      const std::vector<Traffic> copies = {{2 * 2 * np * np * s, "copy"}};
      m.phases.push_back({copies, copies, copies, copies, "to and from block data layout", 0, "convert"});
    }
  }
  if (np != n) m.note += "; N padded to " + std::to_string(int64_t(np)) + " (+inf vertices)";
  if (double(p.ld) != np) m.note += "; row stride " + std::to_string(p.ld) + " elements";
  return m;
}

// The in-core time's units (calibration.hpp), counted on the schedule's critical path (the
// updates of the thread that does most, per parallel phase: critical_tile_ops; flat: each k's
// rows split statically), so that a small calibration shape, whose threads idle more, prices
// the large case's balanced phases right: the updates by the plain kernel and (regblock) by the
// register-blocked one, whose share grows with the tiles (1 - 1 / nt^2), flat's rows
// (a calibration shape's are shorter: its loop overhead per row weighs more), the k-steps (N
// for flat, each a parallel pass and barrier; np / bs pivot steps for tiled) and the call.
Model model(const Case& c) {
  Model m = traffic_model(c);
  const Params p = params_of(c);
  const double np = double(padded_size(p.n, p.plan)), threads = std::max(1, c.threads);
  if (!tiled(p.plan)) {
    const double rows = np * std::ceil(np / threads);  // per k, a thread's rows (static split)
    m.core_work = {{"update", rows * np}, {"row", rows}, {"step", np}, {"call", 1}};
  } else {
    const double bs = double(p.plan.bs), nt = np / bs;
    const CriticalOps ops = critical_tile_ops(p.plan, int64_t(nt), int(threads));
    m.core_work = {{"update", ops.plain * bs * bs * bs}, {"step", nt}, {"call", 1}};
    if (p.plan.regblock) m.core_work.push_back({"update_regblock", (ops.all - ops.plain) * bs * bs * bs});
  }
  // The row stride decides the L1 sets a tile's rows map to and which loads alias a store 4 KiB
  // before them (N = 1024 f32: every row); the calibration shapes keep the case's stride.
  if (tiled(p.plan)) m.calibration_group = "row stride " + std::to_string(p.ld * int64_t(dtype_size(c.dtype))) + " B";
  return m;
}

// Calibration shapes (Family::calibration_cases): the case's variant, ISA, dtype, params and
// threads at N = 128, 256, 384, 512 (f32: 64 KiB-1 MiB, f64: 128 KiB-2 MiB, BDL twice that: L2
// or L3, the level recorded per fit) with the case's own row stride (N x N x LD, LD = its padded
// N): the same cache-set mapping and 4K aliasing as the case, in cache. Four sizes separate the
// units (512: the recursion's default task of 256 rows runs in parallel only from there).
// Shapes above the case's padded N or below its bs are left out. Flat keeps whole rows
// (N x N): its rows are the matrix's, and a shorter row at a longer stride would leave part of
// each cache's sets unused, which the case's full rows do not (N = 512 at 4 KiB: half of L2).
std::vector<Case> calibration_cases(const Case& c) {
  const Params p = params_of(c);
  std::vector<Case> out;
  for (int64_t n : {128, 256, 384, 512}) {
    if (n > p.ld || (tiled(p.plan) && n < p.plan.bs)) continue;
    Case k = c;
    k.dims = tiled(p.plan) ? std::vector<int64_t>{n, n, p.ld} : std::vector<int64_t>{n, n};
    out.push_back(k);
  }
  return out;
}

// Overlap probe (Family::overlap_probes) for flat, whose N passes stream the matrix from the
// level it lives in: N = 896 (3.1 MiB of f32: beyond two cores' L2 here), how much of that
// stream the row loop hides. The tiled schedules' transfers beyond their calibration are a few
// percent of their time: no probe.
std::vector<Case> overlap_probes(const Case& c) {
  const Params p = params_of(c);
  if (tiled(p.plan) || p.n <= 896) return {};
  Case k = c;
  k.dims = {896, 896};
  return {k};
}

size_t memory_bytes(const Case& c) {
  const Params p = params_of(c);
  const size_t s = dtype_size(c.dtype), np = size_t(padded_size(p.n, p.plan)), n = size_t(p.n);
  size_t b = np * size_t(p.ld) * s;                           // D (rows of LD)
  if (p.plan.layout == Layout::bdl) b += np * np * s;         // BDL scratch
  if (p.n <= kFullReferenceMax) b += n * n * sizeof(double);  // the double reference
  return b;
}

// ---- Instance ----------------------------------------------------------------------------
template <class T>
class FwInstance final : public Instance {
 public:
  FwInstance(const Params& p, Kernels<T> k)
      : p_(p), k_(k), np_(padded_size(p.n, p.plan)), ld_(p.ld), D_(size_t(np_ * ld_)),
        work_(p.plan.layout == Layout::bdl ? size_t(np_ * np_) : 0) {
    fill();
    check_input(D_.data(), p_.n, ld_);
  }

  void run() override { solve(p_.plan, k_, D_.data(), np_, ld_, work_.data()); }

  // Back to the input graph before each repetition. Not needed for correctness (FW is
  // idempotent on its own result, and no kernel's work depends on the values), but it makes
  // the timed runs solve the benchmark's graph.
  void reset() override { fill(); }

  Verification verify() override {
    fill();
    run();
    Verification v = check();
    if (v.ok && p_.n <= kFullReferenceMax) {  // a second run on the result changes nothing
      run();
      Verification again = check();
      if (!again.ok) again.detail = "second run(): " + again.detail;
      v = again.ok ? v : again;
    }
    fill();
    return v;
  }

 private:
  void fill() {
    generate(p_.graph, p_.n, D_.data(), ld_);
    // Padding: vertices without edges (inf everywhere, the diagonal too: never relaxed); the
    // columns from np to LD are never read.
    const T inf = std::numeric_limits<T>::infinity();
    for (int64_t i = 0; i < np_; ++i)
      for (int64_t j = i < p_.n ? p_.n : 0; j < ld_; ++j) D_[size_t(i * ld_ + j)] = inf;
  }

  T at(int64_t i, int64_t j) const { return D_[size_t(i * ld_ + j)]; }

  // |got - expected|, 0 for equal infinities, inf for NaN or a finite/inf mismatch.
  static double err(double got, double expected) {
    if (got == expected) return 0;
    const double e = std::fabs(got - expected);
    return std::isnan(e) ? std::numeric_limits<double>::infinity() : e;
  }

  Verification check() const {
    Verification v;
    v.tol = 0;  // integer weights: every order of exact adds and mins gives the same distances
    std::ostringstream os;
    os.precision(10);
    const int64_t n = p_.n;
    if (const int64_t c = negative_cycle_vertex(D_.data(), n, ld_); c >= 0) {
      v.max_err = std::numeric_limits<double>::infinity();
      os << "negative cycle: D[" << c << "][" << c << "] = " << at(c, c)
         << " < 0 after FW (vertex " << c << " lies on a cycle of negative weight); "
            "shortest paths are undefined";
      v.detail = os.str();
      return v;
    }
    int64_t wi = -1, wj = -1;
    double wexp = 0;
    auto note = [&](int64_t i, int64_t j, double expected) {
      const double e = err(double(at(i, j)), expected);
      if (e > v.max_err || (wi < 0 && e > 0)) v.max_err = e, wi = i, wj = j, wexp = expected;
    };
    std::string how;
    if (n <= kFullReferenceMax) {
      const auto ref = reference(p_.graph, n);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < n; ++j) note(i, j, (*ref)[size_t(i * n + j)]);
      how = "all " + std::to_string(n) + "x" + std::to_string(n) + " distances vs the double reference";
    } else {
      // 8 rows and 8 columns: the first, the last (edge tiles) and 6 spread between.
      const int64_t picks[] = {0, n / 7, 2 * n / 7 + 3, 3 * n / 7 + 5, 4 * n / 7 + 1, 5 * n / 7 + 7,
                               6 * n / 7 + 2, n - 1};
      for (int64_t s : picks) {
        const auto row = dijkstra_row(p_.graph, n, s), col = dijkstra_col(p_.graph, n, s);
        for (int64_t j = 0; j < n; ++j) note(s, j, row[size_t(j)]), note(j, s, col[size_t(j)]);
      }
      how = "8 rows and 8 columns vs Dijkstra in double (N > " + std::to_string(kFullReferenceMax) +
            ": no full reference)";
    }
    // The padding vertices must stay without edges.
    const T inf = std::numeric_limits<T>::infinity();
    for (int64_t i = 0; i < np_; ++i)
      for (int64_t j = i < n ? n : 0; j < np_; ++j)
        if (at(i, j) != inf) {
          v.max_err = std::numeric_limits<double>::infinity();
          os << "padding entry (" << i << ", " << j << ") became " << at(i, j) << " (must stay inf)";
          v.detail = os.str();
          return v;
        }
    v.ok = v.max_err <= v.tol;
    if (wi < 0) os << "exact: " << how;
    else
      os << "worst |error| " << v.max_err << " at (" << wi << ", " << wj << "): got " << at(wi, wj)
         << ", expected " << wexp << "; " << how;
    v.detail = os.str();
    return v;
  }

  Params p_;
  Kernels<T> k_;
  int64_t np_, ld_;
  AlignedBuffer<T> D_, work_;
};

template <class T>
std::unique_ptr<Instance> make_typed(const Case& c) {
  const Params p = params_of(c);
  if (p.spec->simd) {
    if (c.isa == Isa::none) throw Error(c.name() + ": floyd_warshall/" + c.variant + " needs an ISA");
    return std::make_unique<FwInstance<T>>(p, simd_kernels<T>(c.isa));
  }
  if (c.isa != Isa::none)
    throw Error(c.name() + ": floyd_warshall/" + c.variant + " is not ISA-specific");
  return std::make_unique<FwInstance<T>>(p, portable_kernels<T>());
}

std::unique_ptr<Instance> make(const Case& c) {
  return with_element_type(c.dtype, [&]<class T>() { return make_typed<T>(c); });
}

// ---- Profiles ----------------------------------------------------------------------------
// Parameters in a fixed order: sched, layout, bs, task (only those the variant takes and the
// plan uses).
Case make_case(const std::string& variant, DType dt, int64_t n, int threads, const char* sched = nullptr,
               const char* layout = nullptr) {
  const Spec& s = *spec_of(variant);
  Case c{"floyd_warshall", variant, Isa::none, dt, {n, n}, {}, threads};
  const char* sc = sched ? sched : sched_name(s.sched);
  if (s.sched_param) c.params.emplace_back("sched", sc);
  if (s.layout_param) c.params.emplace_back("layout", layout ? layout : s.layout == Layout::bdl ? "bdl" : "std");
  if (std::string(sc) != "flat") c.params.emplace_back("bs", std::to_string(kDefaultBs));
  if (std::string(sc) == "rec") c.params.emplace_back("task", std::to_string(kDefaultTaskMin));
  return c;
}

// The building blocks (naive optional), the optimized variant (Rec-OPT) and its no-register-
// blocking twin (Rec-NoRBK, the regblock speed-up), and optionally the other two ablations.
void add_set(std::vector<Case>& out, DType dt, int64_t n, int threads, bool with_naive, bool ablations) {
  if (with_naive) out.push_back(make_case("naive", dt, n, threads));
  out.push_back(make_case("blocked", dt, n, threads));
  out.push_back(make_case("recursive", dt, n, threads));
  out.push_back(make_case("simd", dt, n, threads, "blocked", "std"));
  out.push_back(make_case("bdl", dt, n, threads, "rec"));                       // Rec-NoRBK
  out.push_back(make_case("regblock", dt, n, threads, "rec", "bdl"));           // Rec-OPT
  if (!ablations) return;
  out.push_back(make_case("regblock", dt, n, threads, "blocked", "bdl"));       // NonRec-OPT
  out.push_back(make_case("regblock", dt, n, threads, "rec", "std"));           // Rec-NoBDL
}

// The ISA calibration: each SIMD variant as the profiles run it, on all cores (the package's
// clock under a wide ISA shows there), at N = 512: the tiles' in-core speed, which decides the
// larger sizes too, without the scalar path's minutes at N = 4096.
std::vector<Case> isa_cases() {
  std::vector<Case> out;
  const int t = std::max(1, omp_get_num_procs());
  for (DType dt : {DType::f32, DType::f64}) {
    out.push_back(make_case("simd", dt, 512, t, "blocked", "std"));
    out.push_back(make_case("bdl", dt, 512, t, "rec"));
    out.push_back(make_case("regblock", dt, 512, t, "rec", "bdl"));
  }
  return out;
}

std::vector<Case> cases(std::string_view profile) {
  std::vector<Case> out;
  if (profile == "smoke") {
    // Every variant once at an odd N (padding: 97 -> 128 for the 64-tiles), 2 threads, each
    // ISA; the other two ablations and Rec-OPT in f64 on 1 thread at the default ISA. Seconds.
    add_set(out, DType::f32, 97, 2, true, false);
    out.push_back(make_case("regblock", DType::f32, 97, 2, "blocked", "bdl"));  // NonRec-OPT
    out.push_back(make_case("regblock", DType::f32, 97, 2, "rec", "std"));      // Rec-NoBDL
    out.push_back(make_case("regblock", DType::f64, 97, 1, "rec", "bdl"));
    for (size_t i = out.size() - 3; i < out.size(); ++i) out[i].isa = preferred_isa("floyd_warshall", out[i].variant, out[i].dtype);
  } else if (profile == "quick") {
    // About a minute on 2 cores: N = 1024 with everything at 1 and 2 threads, an odd N
    // (padding: 777 -> 832) at 2 threads, f64 for the two SIMD tiled variants.
    for (int t : {1, 2}) add_set(out, DType::f32, 1024, t, true, true);
    add_set(out, DType::f32, 777, 2, true, false);
    out.push_back(make_case("bdl", DType::f64, 777, 1, "rec"));
    out.push_back(make_case("regblock", DType::f64, 777, 1, "rec", "bdl"));
  } else if (profile == "paper") {
    // GFLOP/s vs N at 1 and 2 threads (naive only up to 2048: 8192 would take ~10 minutes a
    // run), the four ablations at every size, f64 for Rec-OPT. From N = 4096 on, SIMD variants
    // run only at their default ISA on this CPU (preferred_isa) (the scalar path would take ~20 minutes per run
    // at 8192 and shows nothing the smaller sizes do not).
    for (int64_t n : {1024, 2048, 4096, 8192})
      for (int t : {1, 2}) add_set(out, DType::f32, n, t, n <= 2048, true);
    for (int64_t n : {1024, 4096})
      for (int t : {1, 2}) out.push_back(make_case("regblock", DType::f64, n, t, "rec", "bdl"));
    for (Case& c : out)
      if (c.dims[0] >= 4096 && spec_of(c.variant)->simd) c.isa = preferred_isa("floyd_warshall", c.variant, c.dtype);
  }
  return out;
}

std::vector<VariantRow> rows() {
  std::vector<VariantRow> out;
  for (const Spec& s : kSpecs) out.push_back({s.name, s.description, s.simd ? all_isas() : std::vector<Isa>{}});
  return out;
}
}  // namespace

template <class T>
std::unique_ptr<Instance> fw::make_instance(const Case& c, const Kernels<T>& k) {
  require_dtype<T>(c);
  return std::make_unique<FwInstance<T>>(params_of(c), k);
}
template std::unique_ptr<Instance> fw::make_instance<float>(const Case&, const Kernels<float>&);
template std::unique_ptr<Instance> fw::make_instance<double>(const Case&, const Kernels<double>&);

const Family& floyd_warshall_family() {
  static const Family f = make_family(
      "floyd_warshall", "Floyd-Warshall all-pairs shortest paths, cache-oblivious + SIMD + BDL + register blocking (Endo)",
      {accepts_if_parses(params_of), model, make, cases, memory_bytes, {}, isa_cases, calibration_cases, overlap_probes}, rows());
  return f;
}

}  // namespace rooflab

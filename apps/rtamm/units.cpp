// The unit-cost micro-benchmark (the paper's "MicroBenchmark"): times the executor's own
// phases (detail::Omp) on one block shape at a time, with the source matrix resident in L2,
// in L3 or in DRAM:
//   OP_load(Mcg, Kcg)   pack A blocks          OP_load(Kcg, Ncg)  pack B blocks
//   OP_load(Mcg, Ncg)   copy C blocks in       OP_store(Mcg, Ncg) copy C blocks out
//   (ns per element; a pass visits every block-sized tile of a source region of L2/2, L3/2 or
//   4 x L3 bytes, so after the warm-up pass the tiles come from that level)
//   OP_kernel           the kernel phase on packed blocks (ns per flop), at Kcg and at Kcg/4:
//                       per micro-kernel call = call_ns + k_ns * kc
//   rho                 the kernel phase with the next A and B blocks packed in between the
//                       tiles (ahead:ab) vs the two separately: the fraction of the shorter hidden
//   sync_ns             one empty phase (the barrier)
// Every number is the best of 9 samples of >= 1 ms (calibrated repetitions) after a warm-up,
// taken round robin over all quantities of all block shapes (sync_ns: 200 samples of >= 20 us),
// by the measurement driver (harness/measure.hpp).
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <cmath>
#include <limits>
#include <vector>

#include "harness/diagnostics.hpp"
#include "harness/buffer.hpp"
#include "apps/commands.hpp"
#include "apps/rtamm/units.hpp"
#include "harness/error.hpp"
#include "harness/measure.hpp"
#include "harness/progress.hpp"
#include "kernels/rtamm/exec.hpp"

namespace rooflab::rtamm {
namespace {
using clk = std::chrono::steady_clock;
using detail::Omp;
using detail::Xfer;

// One measured quantity: a pass (phases that every thread of the team runs) and its samples.
struct Meas {
  std::function<void()> pass;
  measure::Result res;
  double value() const { return res.best(); }  // best quiet sample, else best of all
};

// `runs` passes in a team of `threads`, timed from barrier to barrier (the team is opened once
// per sample, not per pass); a warm-up call runs one pass per thread, untimed.
measure::Batch team_batch(Meas& m, int threads) {
  return [&m, threads](int64_t runs, bool warmup) {
    double dt = 0;
    clk::time_point t0;
#pragma omp parallel num_threads(threads)
    {
      if (warmup) {
        m.pass();  // caches, page faults
      } else {
#pragma omp barrier
#pragma omp single
        t0 = clk::now();
        for (int64_t r = 0; r < runs; ++r) m.pass();
#pragma omp barrier
#pragma omp single
        dt = std::chrono::duration<double>(clk::now() - t0).count();
      }
    }
    return dt;
  };
}

// The driver, round robin: sample r of every quantity before sample r + 1 of any, so that a burst
// of load on a shared machine disturbs all block shapes alike; the best sample of each is kept.
// Only quiet samples count (nothing else runnable just before and after: see
// diag::procs_running); a quantity without any keeps its best noisy sample. Before each round
// the machine gets up to wait_s to become quiet, all rounds together at most what is left of the
// command's diag::quiet_budget() (then measured under load; `rtamm units` records the budget).
// Each quantity: one warm-up pass and calibrated repetitions (a sample lasts >= min_s) first.
void measure_all(std::vector<Meas*>& ms, int threads, int rounds, double min_s, double wait_s,
                 Progress* prog = nullptr) {
  std::vector<measure::Batch> batches;
  for (Meas* m : ms) batches.push_back(team_batch(*m, threads));
  measure::Policy p;
  p.repetitions = rounds;
  p.min_time_s = min_s;
  p.warmup = 1;
  p.quiet.threads = threads;
  p.quiet.wait_s = wait_s;
  if (prog)
    p.on_round = [prog](int r) {
      if (r > 0) prog->start(size_t(r), "round " + std::to_string(r + 1));
    };
  const std::vector<measure::Result> rs = measure::measure_round_robin(batches, p);
  for (size_t i = 0; i < ms.size(); ++i) ms[i]->res = rs[i];
}

// The quantities of one block shape and how they become its unit costs.
template <class T>
struct BlockBench {
  Block blk;
  Plan plan;
  gemm::Ukernel<T> uk;
  AlignedBuffer<T> work;
  T* region;
  Step full;
  gemm::Dims dk;
  gemm::Dims d[kLevels];
  std::vector<Step> tiles[kLevels][3];  // A, B, C tiles of each level's source region
  std::vector<int64_t> pos;             // per thread: the next tile of the ahead measurement
  int64_t kcs = 0;
  Meas kfull, ksmall, load[kLevels][4], both[kLevels];

  BlockBench(const Block& b, const Caches& caches, const gemm::Ukernel<T>& u, int threads, T* reg, int64_t ld)
      : blk(b), plan{Order::mnk, b, Ahead::abc}, uk(u), work(size_t(workspace(plan, u.mr, u.nr))), region(reg),
        pos(size_t(threads), 0) {
    std::fill(work.data(), work.data() + work.size(), T(1));
    full.mc = b.mcg, full.nc = b.ncg, full.kc = b.kcg;
    dk = {b.mcg, b.ncg, b.kcg, ld, ld, ld};
    kcs = std::max<int64_t>(8, b.kcg / 4 / 8 * 8);
    kfull.pass = [this] { kernel(full.kc); };
    ksmall.pass = [this] { kernel(kcs); };
    const double lvl_bytes[kLevels] = {double(caches.l2) / 2, double(caches.l3) / 2, 4.0 * double(caches.l3)};
    for (int l = 0; l < kLevels; ++l) {
      const int64_t cols = ld - 8;
      const int64_t rows = std::max({int64_t(lvl_bytes[l] / double(sizeof(T) * ld)), b.mcg, b.kcg});
      d[l] = {rows, cols, cols, ld, ld, ld};
      // Every block-sized tile of the region (row-major tile order): A tiles Mcg x Kcg at
      // (m0, k0), B tiles Kcg x Ncg at (k0, n0), C tiles Mcg x Ncg at (m0, n0).
      for (int what = 0; what < 3; ++what) {
        const int64_t r = what == 1 ? b.kcg : b.mcg, c = what == 0 ? b.kcg : b.ncg;
        for (int64_t i = 0; i + r <= rows; i += r)
          for (int64_t j = 0; j + c <= cols; j += c) {
            Step s = full;
            if (what == 0) s.m0 = i, s.k0 = j;
            else if (what == 1) s.k0 = i, s.n0 = j;
            else s.m0 = i, s.n0 = j;
            tiles[l][what].push_back(s);
          }
        if (tiles[l][what].empty()) throw Error("rtamm units: block larger than the source region");
      }
      for (int op = 0; op < 4; ++op) load[l][op].pass = [this, l, op] { transfers(l, op); };
      both[l].pass = [this, l] { ahead(l); };
    }
  }
  // The buffers laid out for the whole block (the tiles below are whole blocks, whatever dd).
  Omp<T> exec(const gemm::Dims& dd) { return Omp<T>(blk, uk, dd, region, region, region, work.data()); }
  void kernel(int64_t kc) {
    Step s = full;
    s.kc = kc;
    exec(dk).kernel(s, 0, 0, 0, Xfer{});
  }
  // op 0: pack A, 1: pack B, 2: load C, 3: store C, over every tile of the level's region.
  void transfers(int l, int op) {
    const Omp<T> x = exec(d[l]);
    for (const Step& s : tiles[l][op == 3 ? 2 : op]) {
      Xfer t;
      if (op == 0) t.a = true, t.sa = s;
      if (op == 1) t.b = true, t.sb = s;
      if (op == 2) t.cl = true, t.scl = s;
      if (op == 3) t.cs = true, t.scs = s;
      x.phase(t);
    }
  }
  // The kernel phase with the next A and B blocks packed between its tiles (cycling the tiles).
  void ahead(int l) {
    const Omp<T> x = exec(d[l]);
    int64_t& q = pos[size_t(omp_get_thread_num())];
    Xfer nx;
    nx.a = nx.b = true, nx.abuf = nx.bbuf = 1;
    nx.sa = tiles[l][0][size_t(q % int64_t(tiles[l][0].size()))];
    nx.sb = tiles[l][1][size_t(q % int64_t(tiles[l][1].size()))];
    ++q;
    x.kernel(full, 0, 0, 0, nx);
  }
  void add_to(std::vector<Meas*>& v) {
    v.push_back(&kfull);
    v.push_back(&ksmall);
    for (int l = 0; l < kLevels; ++l) {
      for (int op = 0; op < 4; ++op) v.push_back(&load[l][op]);
      v.push_back(&both[l]);
    }
  }
  BlockUnits units() const {
    BlockUnits bu;
    bu.b = blk;
    const double tiles_per_block = double(detail::ceil_div(blk.mcg, uk.mr) * detail::ceil_div(blk.ncg, uk.nr));
    const double t_full = kfull.value(), t_small = ksmall.value();
    bu.op_kernel = t_full * 1e9 / (2.0 * double(blk.mcg * blk.ncg * blk.kcg));
    bu.k_ns = kcs < blk.kcg ? std::max(0.0, (t_full - t_small) * 1e9 / tiles_per_block / double(blk.kcg - kcs))
                            : t_full * 1e9 / tiles_per_block / double(blk.kcg);
    bu.call_ns = std::max(0.0, t_full * 1e9 / tiles_per_block - bu.k_ns * double(blk.kcg));
    const double elems[4] = {double(blk.mcg * blk.kcg), double(blk.kcg * blk.ncg), double(blk.mcg * blk.ncg),
                             double(blk.mcg * blk.ncg)};
    for (int l = 0; l < kLevels; ++l) {
      double* dst[4] = {bu.load_a, bu.load_b, bu.load_c, bu.store_c};
      for (int op = 0; op < 4; ++op)
        dst[op][l] = load[l][op].value() * 1e9 / (elems[op] * double(tiles[l][op == 3 ? 2 : op].size()));
      const double t_l = (bu.load_a[l] * elems[0] + bu.load_b[l] * elems[1]) * 1e-9;
      bu.rho[l] = std::clamp((t_full + t_l - both[l].value()) / std::min(t_full, t_l), 0.0, 1.0);
    }
    return bu;
  }
};

template <class T>
Units measure_typed(const std::vector<Block>& pool, const Caches& caches, int threads) {
  const Isa isa = kernel_isa(sizeof(T) == 8 ? DType::f64 : DType::f32);
  const gemm::Ukernel<T> uk = gemm::ukernel<T>(isa);
  Units u;
  u.dtype = sizeof(T) == 8 ? "f64" : "f32";
  u.threads = threads;
  u.isa = std::string(to_string(isa));
  u.mr = uk.mr, u.nr = uk.nr;
  u.caches = caches;
  int64_t maxdim = 0;
  for (const Block& b : pool) maxdim = std::max({maxdim, b.mcg, b.ncg, b.kcg});
  const int64_t ld = std::max<int64_t>(2048, 2 * maxdim) + 8;
  const size_t n = size_t(std::max<double>(4.0 * double(caches.l3), double(ld) * double(2 * maxdim) * sizeof(T)) / sizeof(T)) + size_t(ld);
  require_memory(n * sizeof(T), "rtamm units source region");
  AlignedBuffer<T> region(n);
#pragma omp parallel for schedule(static) num_threads(threads)
  for (size_t i = 0; i < n; ++i) region[i] = T(int(i % 5) - 2);
  std::vector<std::unique_ptr<BlockBench<T>>> benches;
  std::vector<Meas*> all;
  for (const Block& b : pool) {
    benches.push_back(std::make_unique<BlockBench<T>>(b, caches, uk, threads, region.data(), ld));
    benches.back()->add_to(all);
  }
  // sync: one empty phase; many short samples.
  const Plan plan{Order::mnk, pool.front(), Ahead::none};
  const gemm::Dims d1{1, 1, 1, 1, 1, 1};
  Meas sync;
  sync.pass = [&] { Omp<T>(plan, uk, d1, region.data(), region.data(), region.data(), nullptr).phase(Xfer{}); };
  std::vector<Meas*> s1 = {&sync};
  measure_all(s1, threads, 200, 2e-5, 0.02);
  u.sync_ns = sync.value() * 1e9;
  // region: one empty parallel region (every plan run opens one), best of 50 samples of 100.
  measure::Policy rp;
  rp.repetitions = 50;
  rp.runs_per_sample = 100;
  rp.warmup = 0;
  rp.quiet.mark = false;  // the fastest sample counts, whatever the load
  u.region_ns = measure::measure(
                    [&] {
#pragma omp parallel num_threads(threads)
                      {
                      }
                    },
                    rp)
                    .stats()
                    .min *
                1e9;
  const int rounds = 9;
  Progress prog("rtamm units", size_t(rounds));
  std::fprintf(stderr, "rtamm units: %zu quantities of %zu block shapes, %d rounds round robin\n", all.size(),
               pool.size(), rounds);
  measure_all(all, threads, rounds, 1e-3, 2.0, &prog);
  size_t quiet = 0;
  for (const Meas* m : all) quiet += m->res.quiet_count() > 0;
  u.quiet_fraction = double(quiet) / double(all.size());
  prog.done();
  for (const auto& b : benches) u.blocks.push_back(b->units());
  return u;
}
}  // namespace

Units measure_units(const std::vector<Block>& pool, const Caches& caches, DType dt, int threads) {
  if (pool.empty()) throw Error("rtamm units: the blocking pool is empty");
  if (threads < 1) throw Error("rtamm units: threads must be >= 1");
  return dt == DType::f64 ? measure_typed<double>(pool, caches, threads) : measure_typed<float>(pool, caches, threads);
}

}  // namespace rooflab::rtamm

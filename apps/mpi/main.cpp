// rooflab_mpi: distributed Sinkhorn-Knopp over MPI ranks, one allreduce design per run.
//   mpirun -np P rooflab_mpi --design mpich|ring|salar|coffee --size MxN [options]
//   mpirun -np P rooflab_mpi --pingpong [--machine machine.json] [--out DIR]
// Built against SimGrid SMPI (ROOFLAB_SMPI, target rooflab_smpi) the same program runs under
// smpirun on a simulated platform: times are simulated, and --compute injected replaces the
// matrix work by its calibrated duration (apps/smpi, docs/families/sinkhorn_mpi.md).
// --out DIR gets one file named after its schema: sinkhorn_mpi.json (a run), mpi_pingpong.json
// (--pingpong) or mpi_timeslice.json (--timeslice).
// Every rank parses the same command line and checks it the same way, so bad input is
// reported once (rank 0) and every rank returns non-zero after MPI_Finalize (no MPI_Abort,
// no rank left waiting in a collective).
#include <mpi.h>
#include <sched.h>
#ifdef ROOFLAB_SMPI
#include <simgrid/host.h>
#include <simgrid/version.h>
#endif
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>


#include <algorithm>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "harness/args.hpp"
#include "harness/buffer.hpp"
#include "harness/error.hpp"
#include "harness/host_caches.hpp"
#include "harness/json_io.hpp"
#include "harness/measure.hpp"
#include "kernels/sinkhorn/mpi/allreduce.hpp"
#include "kernels/sinkhorn/sinkhorn.hpp"

namespace rooflab::sinkhorn_mpi {
namespace {
using sinkhorn::SkArgs;
using sinkhorn::SkKernels;

struct Options {
  bool pingpong = false;
  bool timeslice = false;
  Design design = Design::mpich;
  bool design_given = false;
  int64_t M = 0, N = 0;
  DType dtype = DType::f64;
  std::string variant = "microkernel";
  Isa isa = Isa::none;  // none: best supported (microkernel only)
  int ranks_per_node = 0;  // 0: shared-memory nodes as MPI reports them
  int chunks = 1;
  bool chunks_given = false;
  int iters = 10;
  double fi = 1;
  bool verify = false;
  bool fault = false;  // tests: corrupt rank 0's local column sums, verification must fail
  bool comm_only = false;  // time the design's allreduce alone (what the model predicts)
  bool overlap = true;     // coffee: modify chunk i-1 while chunk i is all-reduced
  bool balanced = true;    // coffee: balanced reduce-scatter (false: MPI_Reduce to the leader)
  bool injected = false;   // rooflab_smpi: inject the kernels' calibrated time, no matrix
  bool blocking_leaders = false;  // salar, coffee: MPI_Allreduce among leaders (not MPI_Iallreduce)
  double inject_row_s = 0, inject_col_s = 0;  // --inject-s: given instead of calibrated
  WaitMode wait = WaitMode::spin;
  std::string out, model, machine;
};

args::Spec spec() {
  using args::PathKind;
  return args::Spec("rooflab_mpi", "distributed Sinkhorn-Knopp over MPI ranks, one allreduce design per run "
                                    "(mpirun -np P rooflab_mpi ...)")
      .choice("--design", {"mpich", "ring", "salar", "coffee"}, "the allreduce design (required for a run)")
      .string("--size", "MxN", "the matrix (required for a run)")
      .choice("--dtype", {"f64", "f32"}, "element type", "f64")
      .string("--variant", "V", "the single-node kernel: microkernel, blocked, c2r or typical", "microkernel")
      .choice("--isa", {"scalar", "avx2", "avx512"}, "microkernel ISA (default: the best supported)")
      .integer("--ranks-per-node", "R", "emulated nodes of R ranks (default: as MPI reports shared memory)", 1, INT_MAX)
      .integer("--chunks", "C", "column chunks all-reduced in turn (salar, coffee)", 1, INT_MAX, 1)
      .integer("--iters", "K", "iterations timed", 1, 1000000, 10)
      .real("--fi", "x", "unbalanced exponent fi (1: balanced)", 0, 1, 1, true)
      .flag("--verify", "gather the matrix on rank 0 and compare with the single-node reference")
      .flag("--fault", "(tests) corrupt rank 0's column sums: verification must fail")
      .flag("--no-overlap", "coffee: modify a chunk after its allreduce instead of overlapped")
      .choice("--node-reduce", {"balanced", "mpi"}, "coffee: the node reduce (balanced reduce-scatter or MPI_Reduce)",
              "balanced")
      .flag("--comm-only", "time the design's allreduce alone (what the model predicts)")
      .choice("--compute", {"real", "injected"},
              "rooflab_smpi only: run the kernels (real; their host time is scaled to the simulated host) or "
              "inject the time rank 0 measured on its slab (injected: no matrix, for sizes beyond memory)",
              "real")
      .choice("--leaders", {"iallreduce", "allreduce"},
              "salar, coffee: the leaders' allreduce per chunk, non-blocking (overlapped) or blocking "
              "(under SimGrid SMPI: MPICH's algorithms; SMPI's MPI_Iallreduce sends every vector to every rank)",
              "iallreduce")
      .string("--inject-s", "ROW,COL",
              "--compute injected: this machine's seconds per row of the row phase and of the column modify "
              "(default: rank 0 measures them on its slab)")
      .choice("--wait", {"spin", "yield"}, "how a rank waits for messages (yield: MPI_Test + sched_yield)", "spin")
      .path("--model", PathKind::input_file, "FILE", "a --pingpong file or machine.json with its \"mpi\" section")
      .hint("; run `mpiexec -n 2 rooflab_mpi --pingpong --out DIR` first (DIR/mpi_pingpong.json)")
      .path("--out", PathKind::output_dir, "DIR",
            "write the result into DIR (rank 0, atomically): sinkhorn_mpi.json, or mpi_pingpong.json / "
            "mpi_timeslice.json for the calibrations")
      .flag("--pingpong", "calibrate the communication model (P >= 2)")
      .flag("--timeslice", "calibrate core sharing (P > CPUs)")
      .path("--machine", PathKind::any, "FILE", "--pingpong / --timeslice: also store the result beside this machine.json");
}

// Every rank parses the same argv with the same P, so every rank reaches the same verdict.
// Throws args::UsageError for a malformed line, Error for a combination that cannot run.
Options parse(const args::Values& v, int P) {
  Options o;
  o.pingpong = v.flag("--pingpong");
  o.timeslice = v.flag("--timeslice");
  o.design_given = v.has("--design");
  if (o.design_given) o.design = parse_design(v.str("--design"));
  if (v.has("--size")) {
    const std::string s = v.str("--size");
    const size_t x = s.find('x');
    if (x == std::string::npos) throw args::UsageError("--size must be MxN, got '" + s + "'");
    o.M = args::parse_integer("--size M", s.substr(0, x), 1, INT_MAX);
    o.N = args::parse_integer("--size N", s.substr(x + 1), 1, INT_MAX);
  }
  o.dtype = *parse_dtype(v.str("--dtype"));
  o.variant = v.str("--variant");
  if (v.has("--isa")) o.isa = *parse_isa(v.str("--isa"));
  if (v.has("--ranks-per-node")) o.ranks_per_node = int(v.integer("--ranks-per-node"));
  o.chunks = int(v.integer("--chunks"));
  o.chunks_given = v.has("--chunks");
  o.iters = int(v.integer("--iters"));
  o.fi = v.real("--fi");
  o.verify = v.flag("--verify");
  o.fault = v.flag("--fault");
  o.comm_only = v.flag("--comm-only");
  o.overlap = !v.flag("--no-overlap");
  o.balanced = v.str("--node-reduce") == "balanced";
  o.injected = v.str("--compute") == "injected";
  o.blocking_leaders = v.str("--leaders") == "allreduce";
  if (v.has("--inject-s")) {
    const std::string t = v.str("--inject-s");
    const size_t c = t.find(',');
    char* end = nullptr;
    if (c != std::string::npos) {
      o.inject_row_s = std::strtod(t.c_str(), &end);
      if (end != t.c_str() + c) o.inject_row_s = -1;
      o.inject_col_s = std::strtod(t.c_str() + c + 1, &end);
      if (*end != 0) o.inject_col_s = -1;
    }
    if (c == std::string::npos || !(o.inject_row_s > 0 && o.inject_col_s > 0) || !std::isfinite(o.inject_row_s) ||
        !std::isfinite(o.inject_col_s))
      throw args::UsageError("--inject-s must be two positive seconds ROW,COL, got '" + t + "'");
    if (!o.injected) throw Error("--inject-s applies to --compute injected");
  }
  o.wait = parse_wait_mode(v.str("--wait"));
  o.machine = v.str("--machine");
  o.out = v.str("--out");
  o.model = v.str("--model");
  if (o.pingpong && o.timeslice) throw Error("--pingpong and --timeslice are separate runs");
  if (o.pingpong) {
    if (P < 2) throw Error("--pingpong needs at least 2 ranks (got " + std::to_string(P) + ")");
    return o;
  }
  if (o.timeslice) return o;  // needs P > CPUs: checked in timeslice(), where the CPUs are known
  if (!o.machine.empty())
    throw Error("--machine applies to --pingpong and --timeslice (runs read the model with --model)");
  if (!o.design_given) throw args::UsageError("--design is required");
  if (o.M == 0) throw args::UsageError("--size MxN is required");
  if (P > o.M)
    throw Error("more ranks (" + std::to_string(P) + ") than rows (M = " + std::to_string(o.M) +
                "): every rank needs at least one row");
  if (o.ranks_per_node > 0 && P % o.ranks_per_node != 0)
    throw Error("--ranks-per-node " + std::to_string(o.ranks_per_node) + " does not divide the " +
                std::to_string(P) + " ranks");
  if (o.chunks > o.N)
    throw Error("--chunks " + std::to_string(o.chunks) + " is larger than N = " + std::to_string(o.N) +
                ": every chunk needs at least one column");
  if (o.chunks_given && o.chunks != 1 && (o.design == Design::mpich || o.design == Design::ring))
    throw Error(std::string("--chunks applies to salar and coffee, not ") + to_string(o.design));
  if (o.blocking_leaders && o.design != Design::salar && o.design != Design::coffee)
    throw Error(std::string("--leaders applies to salar and coffee, not ") + to_string(o.design));
  if ((!o.overlap || !o.balanced) && o.design != Design::coffee)
    throw Error(std::string("--no-overlap and --node-reduce apply to coffee, not ") + to_string(o.design));
  if (o.variant == "microkernel" && o.isa == Isa::none) o.isa = best_isa();
  if (o.variant != "microkernel" && o.isa != Isa::none)
    throw Error("--isa applies to --variant microkernel only");
  if (o.isa != Isa::none && !isa_supported(o.isa))
    throw Error("this CPU cannot run ISA " + std::string(rooflab::to_string(o.isa)));
#ifndef ROOFLAB_SMPI
  if (o.injected) throw Error("--compute injected applies to rooflab_smpi (the SimGrid SMPI build)");
#endif
  if (o.injected && o.verify) throw Error("--verify needs the matrix: not with --compute injected");
  if (o.verify && o.M * o.N > INT_MAX)
    throw Error("--verify gathers the matrix on rank 0: M*N must be below 2^31");
  return o;
}

// ---- Data ------------------------------------------------------------------------------
// Element (i, j) is the single-node family's problem_entry of its global index, so each rank
// builds its own rows and rank 0 can rebuild the whole matrix for the reference; the targets
// are the family's too (kernels/sinkhorn/sinkhorn.hpp).
template <class T>
void fill_rows(T* A, int64_t i0, int64_t i1, int64_t N) {
  for (int64_t i = i0; i < i1; ++i)
    for (int64_t j = 0; j < N; ++j) A[(i - i0) * N + j] = T(sinkhorn::problem_entry(uint64_t(i * N + j)));
}
template <class T>
void fill_targets(std::vector<T>& r, std::vector<T>& c) {
  sinkhorn::problem_targets(r.data(), int64_t(r.size()), c.data(), int64_t(c.size()));
}

// The driver's statistics (harness/measure.hpp). The timing loops below stay MPI's own: every
// rank times with MPI_Wtime after a barrier, and the figures are gathered across ranks.
using measure::quantile;
double median(const std::vector<double>& v) { return quantile(v, 0.5); }
// Spread of repeated timings: interquartile range over the median (0 for a single sample).
double rel_iqr(const std::vector<double>& v) {
  const double m = median(v);
  return m > 0 ? (quantile(v, 0.75) - quantile(v, 0.25)) / m : 0;
}

// True on every rank when some host runs more ranks than it has CPUs this process may use:
// the ranks then share cores and timings measure the scheduler as much as the design.
bool oversubscribed(int* cpus_out) {
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  int on_host = 1;
  MPI_Comm_size(host, &on_host);
  MPI_Comm_free(&host);
  cpu_set_t set;
  CPU_ZERO(&set);
  int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
#ifdef ROOFLAB_SMPI
  cpus = sg_host_core_count(sg_host_self());  // the simulated host's cores, not this machine's
#endif
  // hydra binds nothing by default, so the affinity mask is the host's usable CPUs.
  int mine = on_host > cpus, any = 0;
  MPI_Allreduce(&mine, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Allreduce(MPI_IN_PLACE, &cpus, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (cpus_out) *cpus_out = cpus;
  return any != 0;
}

// Wall and this thread's CPU time and context switches, so a rank's time can be split into
// running and waiting for a core (time slicing) and its waits into polling and yielding.
struct Stamp {
  double wall = 0, cpu = 0;
  double vcsw = 0, ivcsw = 0;  // voluntary (yield, sleep) and involuntary (preempted) switches
};
Stamp stamp() {
  Stamp s;
  s.wall = MPI_Wtime();
#ifdef ROOFLAB_SMPI
  s.cpu = s.wall;  // simulated ranks share one host thread: no CPU clock or switches of their own
  return s;
#endif
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  s.cpu = double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  rusage ru{};
  getrusage(RUSAGE_THREAD, &ru);
  s.vcsw = double(ru.ru_nvcsw), s.ivcsw = double(ru.ru_nivcsw);
  return s;
}
Stamp operator-(const Stamp& a, const Stamp& b) { return {a.wall - b.wall, a.cpu - b.cpu, a.vcsw - b.vcsw, a.ivcsw - b.ivcsw}; }
Stamp& operator+=(Stamp& a, const Stamp& b) {
  a.wall += b.wall, a.cpu += b.cpu, a.vcsw += b.vcsw, a.ivcsw += b.ivcsw;
  return a;
}

// rooflab_smpi: `seconds` of this machine's time spent on the simulated host, scaled by
// smpi/host-speed against the host's speed exactly as SMPI scales the compute it measures.
void inject(double seconds) {
#ifdef ROOFLAB_SMPI
  smpi_bench_end();
  smpi_execute(seconds);
  smpi_bench_begin();
#else
  (void)seconds;  // unreachable: parse() refuses --compute injected without SMPI
#endif
}

// ---- The distributed solver ------------------------------------------------------------
template <class T>
class Solver {
 public:
  Solver(const Options& o, const Topology& topo) : o_(o), topo_(topo) {
    const int P = topo.size, k = topo.rank;
    i0_ = o.M * k / P;
    i1_ = o.M * (k + 1) / P;
    const int64_t rows = i1_ - i0_, N = o.N;
    // --compute injected: only rank 0 holds its slab (to calibrate); the others hold no matrix.
    const int64_t held = o.injected && (k != 0 || o.inject_row_s > 0) ? 0 : rows;
    require_memory(size_t(2 * held * N + 3 * N) * sizeof(T), "this rank's row slice");
    A_ = AlignedBuffer<T>(size_t(held * N));
    A0_ = AlignedBuffer<T>(size_t(held * N));
    sums_ = AlignedBuffer<T>(size_t(N));
    work_ = AlignedBuffer<T>(size_t(N));
    tmp_ = AlignedBuffer<T>(size_t(N + 2));  // ring: N/P + 1; coffee: one chunk
    if (held > 0 || !o.injected) {  // the targets are the kernels' input: none to inject
      r_.resize(size_t(o.M));
      c_.resize(size_t(N));
      fill_targets(r_, c_);
    }
    fill_rows(A0_.data(), i0_, i0_ + held, N);
    restore();
    k_ = sinkhorn::kernels_for<T>(o.variant, o.isa);
    const auto blk = o.variant == "microkernel" ? sinkhorn::microkernel_default_blocking(o.isa)
                                                : sinkhorn::kBlockedDefault;
    args_ = SkArgs<T>{A_.data(), rows, N, N, r_.empty() ? nullptr : r_.data() + i0_, c_.data(), T(o.fi), sums_.data(), blk.mc, blk.nc};
  }

  void restore() { std::memcpy(A_.data(), A0_.data(), A0_.size() * sizeof(T)); }

  // One iteration; returns the communication part of it (see column_phase).
  Stamp iterate() {
    if (o_.injected) {
      inject(double(rows()) * row_s_);
      std::fill_n(sums_.data(), o_.N, T(1));
      return column_phase(true);
    }
    k_.row_rescale(args_);
    std::fill_n(sums_.data(), o_.N, T(0));
    k_.col_sums(args_);  // args_.work == sums_
    if (o_.fault && topo_.rank == 0) sums_[size_t(o_.N - 1)] *= T(2);
    return column_phase(true);
  }

  // The design's allreduce of the current local sums alone, started together on all ranks
  // (barrier), so load imbalance is not counted: the quantity the model predicts.
  Stamp allreduce_only() {
    std::fill_n(sums_.data(), o_.N, T(1));  // coffee's reduce-scatter clobbers the sums
    barrier(MPI_COMM_WORLD);
    return column_phase(false);
  }

  // --compute injected: rank 0 times its own slab's two phases for real (host seconds; median
  // of 3 after a warm-up), and every rank injects them per row from then on. Returns
  // {row phase, column modify} seconds per row. The caches are swept before each repetition:
  // on a cluster every core of a node streams its own slab, so a slab is not found in a
  // shared cache as it would be when one rank loops alone.
  std::pair<double, double> calibrate() {
    if (o_.inject_row_s > 0) {  // --inject-s: given, nothing to measure
      row_s_ = o_.inject_row_s, col_s_ = o_.inject_col_s;
      return {row_s_, col_s_};
    }
    double per_row[2] = {0, 0};
    if (topo_.rank == 0) {
      std::vector<double> a, b;
      std::vector<char> sweep(size_t(2 * std::max<int64_t>(host_cache_sizes().l3, 8 << 20)));
      for (int k = 0; k < 4; ++k) {
        std::memset(sweep.data(), k, sweep.size());
        const auto t0 = std::chrono::steady_clock::now();
        k_.row_rescale(args_);
        std::fill_n(sums_.data(), o_.N, T(0));
        k_.col_sums(args_);
        std::memcpy(work_.data(), sums_.data(), size_t(o_.N) * sizeof(T));  // stands in for the allreduce
        const auto t1 = std::chrono::steady_clock::now();
        modify(0, o_.N, nullptr);
        const auto t2 = std::chrono::steady_clock::now();
        if (k > 0) a.push_back(std::chrono::duration<double>(t1 - t0).count()),
                   b.push_back(std::chrono::duration<double>(t2 - t1).count());
      }
      restore();
      per_row[0] = median(a) / double(rows()), per_row[1] = median(b) / double(rows());
    }
    MPI_Bcast(per_row, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    row_s_ = per_row[0], col_s_ = per_row[1];
    return {row_s_, col_s_};
  }

  // The last column phase's communication split (allreduce.hpp: intra / inter node).
  const CommSplit& split() const { return split_; }
  const T* A() const { return A_.data(); }
  int64_t rows() const { return i1_ - i0_; }
  const std::vector<T>& r() const { return r_; }
  const std::vector<T>& c() const { return c_; }

 private:
  // Factors and scaling of columns [j0, j0 + len) of this rank's rows, from work_.
  void modify(int64_t j0, int64_t len, const std::function<void()>* poke) {
    if (o_.injected && calibrated()) {
      // The same row blocks and polls as below, each block's share of the calibrated time.
      const double share = double(len) / double(o_.N) * col_s_;
      const int64_t block = std::max<int64_t>(1, (int64_t(1) << 18) / int64_t(sizeof(T)) / std::max<int64_t>(len, 1));
      for (int64_t i = 0; i < rows(); i += block) {
        inject(double(std::min(block, rows() - i)) * share);
        if (poke) (*poke)();
      }
      return;
    }
    sinkhorn::col_factors(work_.data() + j0, c_.data() + j0, len, T(o_.fi));
    SkArgs<T> a = args_;
    a.A += j0;
    a.N = len;
    a.c += j0;
    a.work = work_.data() + j0;
    if (!poke) return k_.col_scale(a);
    // Row blocks of ~256 KiB, so MPI gets polled often enough to keep the next chunk's
    // allreduce moving while this chunk is modified.
    const int64_t block = std::max<int64_t>(1, (int64_t(1) << 18) / int64_t(sizeof(T)) / std::max<int64_t>(len, 1));
    const int64_t M = a.M;
    for (int64_t i = 0; i < M; i += block) {
      a.A = args_.A + i * args_.lda + j0;
      a.M = std::min(block, M - i);
      k_.col_scale(a);
      (*poke)();
    }
  }

  // Allreduce of sums_ into work_, then the column modify. Communication: the allreduce
  // call for mpich/ring/salar; for coffee, whose modify is interleaved with the allreduce,
  // the phase minus the time spent modifying (the exposed comm).
  Stamp column_phase(bool modify_cols) {
    const int64_t N = o_.N;
    reset_comm_split();
    const Stamp t0 = stamp();
    switch (o_.design) {
      case Design::mpich:
        allreduce_sum(sums_.data(), work_.data(), int(N), mpi_type<T>(), MPI_COMM_WORLD);
        break;
      case Design::ring:
        std::memcpy(work_.data(), sums_.data(), size_t(N) * sizeof(T));
        ring_allreduce(work_.data(), N, MPI_COMM_WORLD, tmp_.data());
        break;
      case Design::salar:
        salar_allreduce(sums_.data(), work_.data(), N, o_.chunks, topo_);
        break;
      case Design::coffee: {
        if (!o_.overlap) {  // the chunks are all-reduced first, the columns modified after
          coffee_allreduce(sums_.data(), work_.data(), N, o_.chunks, topo_, tmp_.data(),
                           [](int64_t, int64_t, const std::function<void()>&) {}, o_.balanced);
          break;
        }
        Stamp busy;
        coffee_allreduce(sums_.data(), work_.data(), N, o_.chunks, topo_, tmp_.data(),
                         [&](int64_t j0, int64_t len, const std::function<void()>& poke) {
                           const Stamp m0 = stamp();
                           if (modify_cols) modify(j0, len, &poke);
                           busy += stamp() - m0;
                         }, o_.balanced);
        split_ = comm_split();
        return stamp() - t0 - busy;
      }
    }
    const Stamp comm = stamp() - t0;
    split_ = comm_split();
    if (modify_cols) modify(0, N, nullptr);
    return comm;
  }

  bool calibrated() const { return row_s_ > 0 || col_s_ > 0; }

  const Options& o_;
  const Topology& topo_;
  int64_t i0_ = 0, i1_ = 0;
  double row_s_ = 0, col_s_ = 0;  // --compute injected: host seconds per row of each phase
  AlignedBuffer<T> A_, A0_, sums_, work_, tmp_;
  std::vector<T> r_, c_;
  SkKernels<T> k_;
  SkArgs<T> args_;
  CommSplit split_;
};

// Gathers the matrix on rank 0 after two iterations from the initial data and compares it
// with the long-double reference (the family's check: two iterations, so a stale sum or a
// wrong factor in the second shows too). Returns the verdict on rank 0 (null elsewhere).
template <class T>
json verify(Solver<T>& s, const Options& o, const Topology& topo) {
  s.restore();
  s.iterate();
  s.iterate();
  const int P = topo.size;
  std::vector<int> counts(static_cast<size_t>(P)), displs(static_cast<size_t>(P));
  for (int k = 0; k < P; ++k) {
    displs[size_t(k)] = int(o.M * k / P * o.N);
    counts[size_t(k)] = int(o.M * (k + 1) / P * o.N) - displs[size_t(k)];
  }
  std::vector<T> all(topo.rank == 0 ? size_t(o.M * o.N) : 0);
  MPI_Gatherv(s.A(), int(s.rows() * o.N), mpi_type<T>(), all.data(), counts.data(), displs.data(),
              mpi_type<T>(), 0, MPI_COMM_WORLD);
  json v;
  if (topo.rank == 0) {
    std::vector<T> A0(size_t(o.M * o.N));
    fill_rows(A0.data(), 0, o.M, o.N);
    sinkhorn::SkReference<T> ref(A0.data(), o.M, o.N, o.N, s.r().data(), s.c().data(), o.fi);
    ref.iterate();
    ref.iterate();
    const auto w = sinkhorn::compare_with_reference(all.data(), o.N, ref);
    // Column sums add M terms in a different order (per-rank partial sums, then the design's
    // reduction tree); the first-order bound is order-independent, P extra terms per pass
    // are a margin as in the threaded family; pow adds a rounding per factor.
    const int64_t extra = P + (o.fi != 1 ? 2 : 0);
    const double tol = sinkhorn::sk_error_bound({o.N + extra, o.M + extra, o.N + extra, o.M + extra},
                                                double(std::numeric_limits<T>::epsilon()));
    const bool ok = w.max_err <= tol;
    std::ostringstream os;
    os.precision(17);
    os << "worst relative error " << w.max_err << " at (" << w.i << ", " << w.j << "): got " << w.got
       << ", expected " << w.expected << "; tol " << tol;
    v = {{"ok", bool(ok)}, {"max_err", w.max_err}, {"tol", tol}, {"detail", os.str()}};
  }
  s.restore();
  return v;
}

// Columns of the per-rank medians gathered in run(), one array per quantity, indexed by rank.
json per_rank_json(const std::vector<double>& per, int stats) {
  static const char* const keys[] = {"time_s", "comm_s", "noise_rel_iqr", "compute_s", "cpu_s", "comm_cpu_s",
                                     "compute_cpu_s", "voluntary_switches_per_iter",
                                     "involuntary_switches_per_iter", "comm_intra_node_s", "comm_inter_node_s"};
  json j = json::object();
  const size_t P = per.size() / size_t(stats);
  for (size_t q = 0; q < size_t(stats); ++q) {
    json col = json::array();
    for (size_t r = 0; r < P; ++r) col.push_back(per[r * size_t(stats) + q]);
    j[keys[q]] = col;
  }
  return j;
}

std::string case_name(const Options& o, const Topology& topo, int rpn) {
  std::ostringstream n;
  n << "sinkhorn_mpi/" << to_string(o.design) << '/' << rooflab::to_string(o.dtype) << '/' << o.M << 'x'
    << o.N << "/ranks:" << topo.size << "/rpn:" << rpn << "/chunks:" << o.chunks;
  if (o.variant != "microkernel") n << "/kernel:" << o.variant;
  if (o.fi != 1) n << "/fi:" << o.fi;
  if (!o.balanced) n << "/reduce:mpi";
  if (!o.overlap) n << "/overlap:off";
  if (o.comm_only) n << "/part:comm";
  if (o.wait == WaitMode::yield) n << "/wait:yield";
  if (o.blocking_leaders) n << "/leaders:allreduce";
  n << "/threads:1";
  return n.str();
}

// Rank 0 creates --out DIR before measuring: a directory it cannot make (the parse-time check
// cannot tell every case, e.g. under /proc as root) is refused before the work, not after.
void prepare_out(const Options& o) {
  if (o.out.empty()) return;
  try {
    ensure_writable_dir(o.out);
  } catch (const Error& e) {
    throw Error(std::string("--out: ") + e.what());
  }
}

// Rank 0's result: DIR/<file> with --out, the calibrations also beside --machine as
// machine.<section>.json, and the JSON on stdout.
void emit(const Options& o, const char* file, const json& j, const char* section = nullptr) {
  if (!o.out.empty()) {
    ensure_writable_dir(o.out);
    write_json_atomic(std::filesystem::path(o.out) / file, j);
  }
  if (section && !o.machine.empty()) write_machine_section(o.machine, section, j);
  std::cout << j.dump(2) << '\n';
}

// The alpha-beta(-gamma) model from a --pingpong file, or from machine.json's "mpi" section
// (--pingpong --machine writes the same object beside it as machine.mpi.json).
std::optional<CommModel> read_model(const std::string& path) {
  if (path.empty()) return std::nullopt;
  json j = read_json_file(path);
  if (j.value("schema", "") == "rooflab.machine/1") {
    j = read_machine_json(path);
    if (!j.contains("mpi"))
      throw Error(path + " has no \"mpi\" section: run `mpiexec -n 2 rooflab_mpi --pingpong --machine " + path + "`");
    j = j.at("mpi");
  }
  require_schema(j, "rooflab.mpi_pingpong", 1, path);
  CommModel m{j.at("alpha_s").get<double>(), j.at("beta_bytes_per_s").get<double>(), j.value("gamma_s_per_byte", 0.0)};
  if (!(m.alpha >= 0 && m.beta > 0 && m.gamma >= 0))
    throw Error(path + ": the model needs alpha >= 0, beta > 0 and gamma >= 0 (a ping-pong whose time did not grow "
                "with the message size gives none: re-run `rooflab_mpi --pingpong` with ranks 0 and 1 on a CPU each)");
  return m;
}

template <class T>
int run(const Options& o, const Topology& topo) {
  // Setup errors (memory, model file) are agreed on collectively: a rank that failed must
  // not leave the others in a collective.
  std::unique_ptr<Solver<T>> s;
  std::optional<CommModel> model;
  std::string err;
  try {
    s = std::make_unique<Solver<T>>(o, topo);
    if (topo.rank == 0) {
      model = read_model(o.model);
      prepare_out(o);
    }
  } catch (const std::exception& e) {
    err = e.what();
  }
  int bad = !err.empty(), any_bad = 0;
  MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (any_bad) {
    if (bad) std::cerr << "rooflab_mpi: error (rank " << topo.rank << "): " << err << '\n';
    return 2;
  }
  const int rpn = o.ranks_per_node > 0 ? o.ranks_per_node : topo.max_node_size;
  [[maybe_unused]] const auto injected_row_s = o.injected ? s->calibrate() : std::pair<double, double>{0, 0};
  int cpus = 1;
  const bool over = oversubscribed(&cpus);

  json verification = nullptr;
  bool verified = true;
  if (o.verify) {
    verification = verify(*s, o, topo);
    int ok = topo.rank == 0 ? int(verification.at("ok").get<bool>()) : 0;
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    verified = ok;
  }

  // Timing: one untimed iteration, then `iters` iterations each started together (barrier).
  // Per iteration: wall and CPU time of the whole and of its communication part.
  const size_t K = size_t(o.iters);
  std::vector<double> t(K), c(K), tc(K), cc(K), comp(K), comp_cpu(K), intra(K), inter(K);
  Stamp switches;
  s->iterate();
  for (size_t k = 0; k < K; ++k) {
    barrier(MPI_COMM_WORLD);
    const Stamp t0 = stamp();
    const Stamp comm = o.comm_only ? s->allreduce_only() : s->iterate();
    const Stamp all = o.comm_only ? comm : stamp() - t0;
    t[k] = all.wall, c[k] = comm.wall, tc[k] = all.cpu, cc[k] = comm.cpu;
    comp[k] = all.wall - comm.wall, comp_cpu[k] = all.cpu - comm.cpu;
    intra[k] = s->split().intra, inter[k] = s->split().inter;
    switches.vcsw += all.vcsw, switches.ivcsw += all.ivcsw;
  }
  // Per rank medians (rank 0 gathers them all); the run's figures are the max over ranks.
  constexpr int kStats = 11;
  const double mine[kStats] = {median(t),   median(c),  rel_iqr(t),           median(comp),
                               median(tc),  median(cc), median(comp_cpu),     switches.vcsw / double(K),
                               switches.ivcsw / double(K), median(intra), median(inter)};
  std::vector<double> per(topo.rank == 0 ? size_t(topo.size) * kStats : 0);
  MPI_Gather(mine, kStats, MPI_DOUBLE, per.data(), kStats, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  double worst[kStats] = {};
  for (size_t r = 0; r < size_t(topo.rank == 0 ? topo.size : 0); ++r)
    for (size_t q = 0; q < size_t(kStats); ++q) worst[q] = std::max(worst[q], per[r * kStats + q]);

  if (topo.rank == 0) {
    json j = {{"schema", "rooflab.sinkhorn_mpi/1"},
              {"created", utc_timestamp()},
              {"name", case_name(o, topo, rpn)},
              {"design", to_string(o.design)},
              {"dtype", rooflab::to_string(o.dtype)},
              {"dims", {o.M, o.N}},
              {"kernel", o.variant},
              {"isa", o.isa == Isa::none ? json(nullptr) : json(std::string(rooflab::to_string(o.isa)))},
              {"fi", o.fi},
              {"ranks", topo.size},
              {"ranks_per_node", rpn},
              {"nodes", topo.nodes},
              {"nodes_emulated", o.ranks_per_node > 0},
              {"chunks", o.chunks},
              {"overlap", o.design == Design::coffee && o.overlap},
              {"node_reduce", o.design == Design::coffee ? (o.balanced ? "balanced" : "mpi")
                              : o.design == Design::salar ? "mpi" : "none"},
              {"leaders_allreduce", o.design != Design::salar && o.design != Design::coffee ? json(nullptr)
                                    : json(o.blocking_leaders ? "MPI_Allreduce" : "MPI_Iallreduce")},
              {"threads", 1},
              {"cpus", cpus},
              {"oversubscribed", over},
              {"iterations", o.iters},
              {"comm_only", o.comm_only},
              {"wait", to_string(o.wait)},
              {"allreduce_rounds", allreduce_rounds(o.design, topo.size, rpn, o.N, int(sizeof(T)), o.chunks, o.balanced)},
              {"time_per_iter_s", worst[0]},
              {"comm_time_per_iter_s", worst[1]},
              {"compute_time_per_iter_s", worst[3]},
              {"comm_intra_node_time_per_iter_s", worst[9]},
              {"comm_inter_node_time_per_iter_s", worst[10]},
              {"noise_rel_iqr", worst[2]},
              {"per_rank", per_rank_json(per, kStats)},
              {"timing", o.comm_only
                  ? "--comm-only: the design's allreduce alone after a barrier (no matrix work); per rank: "
                    "median over repetitions; reported: max over ranks"
                  : "per rank: median over iterations; reported: max over ranks. comm: the allreduce, "
                    "including waiting for slower ranks (coffee: phase wall time minus the overlapped "
                    "column modify); comm_intra_node / comm_inter_node: the part of it spent in calls on "
                    "the node communicator / on communicators spanning nodes (mpich, ring: the world)"},
              {"verification", verification}};
#ifdef ROOFLAB_SMPI
    j["simulated"] = {{"simulator", "SimGrid SMPI " + std::to_string(SIMGRID_VERSION_MAJOR) + "." +
                                        std::to_string(SIMGRID_VERSION_MINOR)},
                      {"host", sg_host_get_name(sg_host_self())},
                      {"host_speed_flops", sg_host_get_speed(sg_host_self())},
                      {"compute", o.injected ? "injected" : "real"},
                      {"injected_s_per_row",
                       o.injected ? json{{"row_phase", injected_row_s.first},
                                         {"column_modify", injected_row_s.second},
                                         {"source", o.inject_row_s > 0 ? "--inject-s" : "rank 0 calibrated its slab"}}
                                  : json(nullptr)}};
#endif
    if (model) {
      const double pred = predict_allreduce_s(o.design, *model, topo.size, rpn, o.N, int(sizeof(T)), o.chunks,
                                              o.balanced);
      j["predicted_comm_s"] = pred;
      j["measured_over_predicted_comm"] = pred > 0 ? json(worst[1] / pred) : json(nullptr);
      j["model"] = {{"alpha_s", model->alpha}, {"beta_bytes_per_s", model->beta},
                    {"gamma_s_per_byte", model->gamma}, {"source", o.model},
                    {"assumes", model_assumption(o.design, o.balanced)}};
    } else {
      j["predicted_comm_s"] = nullptr;
    }
    emit(o, "sinkhorn_mpi.json", j);
    if (!verified) std::cerr << "rooflab_mpi: verification failed: " << verification.at("detail").get<std::string>() << '\n';
  }
  return verified ? 0 : 3;
}

// ---- Calibration of the communication model (--pingpong) --------------------------------
// Fits t(b) = alpha + b / beta minimising the relative residuals (weights 1/t^2), so 8-byte
// and 2 MiB messages count alike; returns {alpha, beta}.
std::pair<double, double> fit_relative(const std::vector<std::pair<double, double>>& pts) {
  double s00 = 0, s01 = 0, s11 = 0, r0 = 0, r1 = 0;
  for (auto [x, y] : pts) {
    const double w = 1 / (y * y);
    s00 += w, s01 += w * x, s11 += w * x * x, r0 += w * y, r1 += w * x * y;
  }
  const double det = s00 * s11 - s01 * s01;
  const double a = (r0 * s11 - r1 * s01) / det, b = (s00 * r1 - s01 * r0) / det;
  return {std::max(a, 0.0), 1 / b};
}

// Relative error of each point against the model, and {rms, max} of them.
std::pair<double, double> rel_errors(json& points) {
  double ss = 0, mx = 0;
  for (auto& p : points) {
    const double e = (p.at("predicted_s").get<double>() - p.at("seconds").get<double>()) / p.at("seconds").get<double>();
    p["rel_err"] = e;
    ss += e * e, mx = std::max(mx, std::abs(e));
  }
  return {std::sqrt(ss / double(points.size())), mx};
}

// Seconds per byte of `a += b` on vectors of `bytes` (in cache: the reduction step of an
// allreduce adds a received message into a buffer that was just touched).
double measure_gamma(size_t bytes) {
  std::vector<double> a(bytes / sizeof(double), 1.0), b(a.size(), 1e-9);
  std::vector<double> ts;
  for (int k = 0; k < 55; ++k) {
    const double t0 = MPI_Wtime();
    for (size_t j = 0; j < a.size(); ++j) a[j] += b[j];
    if (k >= 5) ts.push_back(MPI_Wtime() - t0);
  }
  volatile double sink = a[a.size() / 2];  // keep the loop
  (void)sink;
  return median(ts) / double(bytes);
}

// The calibrations' checks before measuring: `err` (found the same on every rank) or a
// --machine file rank 0 cannot use. All ranks agree on the verdict, so none is left in a
// collective; true: stop (rank 0 has said why).
bool calibration_refused(const Options& o, const Topology& topo, std::string err) {
  if (err.empty() && topo.rank == 0) {
    try {
      prepare_out(o);
    } catch (const std::exception& e) {
      err = e.what();
    }
  }
  if (err.empty() && !o.machine.empty() && topo.rank == 0) {
    try {
      require_schema(read_json_file(o.machine), "rooflab.machine", 1, o.machine);
    } catch (const std::exception& e) {
      err = std::string(e.what()) + " (create it with `rooflab characterize --out DIR`)";
    }
  }
  int bad = !err.empty();
  MPI_Bcast(&bad, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (bad && topo.rank == 0) std::cerr << "rooflab_mpi: error: " << err << '\n';
  return bad != 0;
}

// Ping-pong between ranks 0 and 1 (the others wait at the barrier): half the median round
// trip per size. Then gamma on rank 0, and MPI_Allreduce over all P ranks per size (each rank's
// median, max over ranks) against the model's MPICH prediction. With --machine, the result
// becomes machine.json's "mpi" section.
int pingpong(const Options& o, const Topology& topo) {
  int cpus = 1;
  const bool over = oversubscribed(&cpus);
  // Ranks taking turns on a CPU time the scheduler's slices (~4 ms at every message size).
  if (calibration_refused(o, topo, over ? "--pingpong with more ranks on this host than its " + std::to_string(cpus) +
                                              " CPU(s) (the affinity mask): ranks 0 and 1 would take turns on a "
                                              "CPU and time the scheduler, not the messages; run at most " +
                                              std::to_string(cpus) + " rank(s) per host"
                                        : ""))
    return 2;
  std::vector<char> buf(size_t(1) << 21);
  json points = json::array();
  std::vector<std::pair<double, double>> fit, large;
  for (size_t bytes = 8; bytes <= buf.size(); bytes *= 4) {
    const int reps = bytes <= (1 << 16) ? 200 : 30;
    std::vector<double> rt;
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < reps + 5; ++k) {
      const double t0 = MPI_Wtime();
      if (topo.rank == 0) {
        MPI_Send(buf.data(), int(bytes), MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buf.data(), int(bytes), MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else if (topo.rank == 1) {
        MPI_Recv(buf.data(), int(bytes), MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buf.data(), int(bytes), MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
      if (k >= 5) rt.push_back((MPI_Wtime() - t0) / 2);
    }
    const double tm = median(rt);
    fit.emplace_back(double(bytes), tm);
    if (bytes >= (1 << 16)) large.emplace_back(double(bytes), tm);
    points.push_back({{"bytes", bytes}, {"seconds", tm}, {"noise_rel_iqr", rel_iqr(rt)}});
  }
  // The measurements live on rank 0 (rank 1 timed the same round trips); everyone uses its fit.
  auto [alpha, beta] = fit_relative(fit);
  double ab[2] = {alpha, beta};
  MPI_Bcast(ab, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  // Times that do not grow with the message size give no bandwidth (beta <= 0): said, not written.
  if (!(std::isfinite(ab[0]) && std::isfinite(ab[1]) && ab[1] > 0)) {
    if (topo.rank == 0) {
      char b[256];
      std::snprintf(b, sizeof b, "half round trip %.3g s at %.0f B, %.3g s at %.0f B: no alpha-beta fit (beta %.3g B/s)",
                    fit.front().second, fit.front().first, fit.back().second, fit.back().first, ab[1]);
      std::cerr << "rooflab_mpi: error: --pingpong: the time does not grow with the message size (" << b << ")"
                << '\n';
    }
    return 1;
  }
  MPI_Barrier(MPI_COMM_WORLD);
  double gamma = topo.rank == 0 ? measure_gamma(size_t(1) << 16) : 0;
  MPI_Bcast(&gamma, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  const CommModel model{ab[0], ab[1], gamma};

  json ar = json::array();
  std::vector<double> src(size_t(1) << 18, 1.0), dst(src.size());
  for (size_t n = 1; n <= src.size(); n *= 8) {
    const int reps = n <= 4096 ? 100 : 20;
    std::vector<double> ts;
    for (int k = 0; k < reps + 3; ++k) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double t0 = MPI_Wtime();
      MPI_Allreduce(src.data(), dst.data(), int(n), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
      if (k >= 3) ts.push_back(MPI_Wtime() - t0);
    }
    double mine = median(ts), worst = 0;
    MPI_Reduce(&mine, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    const double bytes = double(n * sizeof(double));
    ar.push_back({{"bytes", bytes}, {"seconds", worst},
                  {"algorithm", mpich_allreduce_algorithm(topo.size, bytes, int(sizeof(double)))},
                  {"predicted_s", predict_mpich_allreduce_s(model, topo.size, bytes, int(sizeof(double)))}});
  }

  char h0[MPI_MAX_PROCESSOR_NAME] = {}, h1[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(h0, &len);
  if (topo.rank == 1) MPI_Send(h0, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, 9, MPI_COMM_WORLD);
  if (topo.rank == 0) {
    MPI_Recv(h1, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 1, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    char lib[MPI_MAX_LIBRARY_VERSION_STRING] = {};
    MPI_Get_library_version(lib, &len);
    std::string library(lib);
    library = library.substr(0, library.find('\n'));
    for (auto& p : points) p["predicted_s"] = model.msg(p.at("bytes").get<double>());
    const auto [rms, mx] = rel_errors(points);
    const auto [ar_rms, ar_mx] = rel_errors(ar);
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (auto [x, y] : large) sx += x, sy += y, sxx += x * x, sxy += x * y;
    const double nl = double(large.size()), slope = (nl * sxy - sx * sy) / (nl * sxx - sx * sx);
    json j = {{"schema", "rooflab.mpi_pingpong/1"},
              {"created", utc_timestamp()},
              {"mpi_library", library},
              {"ranks", topo.size},
              {"pingpong_ranks", {0, 1}},
              {"hosts", {h0, h1}},
              {"same_host", std::string(h0) == h1},
              {"cpus", cpus},
              {"oversubscribed", over},
              {"alpha_s", model.alpha},
              {"beta_bytes_per_s", model.beta},
              {"gamma_s_per_byte", model.gamma},
              {"fit", {{"rms_rel_err", rms}, {"max_rel_err", mx},
                       {"sizes_bytes", {fit.front().first, fit.back().first}},
                       {"alpha_8_bytes_s", fit.front().second},
                       {"beta_64KiB_up_bytes_per_s", 1 / slope}}},
              {"points", points},
              {"allreduce", {{"ranks", topo.size}, {"dtype", "f64"}, {"rms_rel_err", ar_rms},
                             {"max_rel_err", ar_mx}, {"points", ar}}},
              {"method", "ping-pong: ranks 0 and 1, blocking MPI_Send/MPI_Recv, half the median round trip "
                         "over 200 (<= 64 KiB) or 30 repetitions; alpha, beta: least squares on t = alpha + "
                         "bytes / beta minimising relative residuals over 8 B .. 2 MiB; gamma: median time of "
                         "a += b on 64 KiB of doubles on rank 0 per byte; allreduce: MPI_Allreduce of doubles "
                         "over all ranks after a barrier, each rank's median, max over ranks, against the "
                         "model's MPICH prediction"}};
    emit(o, "mpi_pingpong.json", j, "mpi");
  }
  return 0;
}

// ---- Calibration of core sharing (--timeslice) -------------------------------------------
// With more ranks than CPUs, every rank busy-polls for a while (as MPICH's waits do) and
// records the gaps in its own clock, i.e. how long it waited for its core while other ranks
// ran: the scheduler's time slice as this machine applies it. Then every rank polls MPI and
// yields in a loop: one turn is one hand-over round among the ranks sharing a core (the cost
// of a round of --wait yield).
int timeslice(const Options& o, const Topology& topo) {
  int cpus = 1;
  const bool over = oversubscribed(&cpus);
  if (calibration_refused(o, topo, over ? "" : "--timeslice needs more ranks than CPUs (" + std::to_string(topo.size) +
                                                   " ranks, " + std::to_string(cpus) + " CPUs): it measures ranks "
                                                   "sharing cores"))
    return 2;
  constexpr double kSpin = 0.6, kYield = 0.2, kGap = 50e-6;  // seconds; a gap: clock jumped > 50 us
  std::vector<double> gaps, yields;
  MPI_Barrier(MPI_COMM_WORLD);
  const double t_end = MPI_Wtime() + kSpin;
  for (double last = MPI_Wtime(), t = last; t < t_end; last = t) {
    t = MPI_Wtime();
    if (t - last > kGap) gaps.push_back(t - last);
  }
  // A waiting rank under --wait yield: MPI_Test of a pending request, then sched_yield (the
  // request is a receive from itself that is never sent, cancelled afterwards).
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Request never;
  int dummy = 0, flag = 0;
  MPI_Irecv(&dummy, 1, MPI_INT, topo.rank, 999, MPI_COMM_WORLD, &never);
  const double y_end = MPI_Wtime() + kYield;
  for (double t = MPI_Wtime(); t < y_end;) {
    MPI_Test(&never, &flag, MPI_STATUS_IGNORE);
    sched_yield();
    const double u = MPI_Wtime();
    yields.push_back(u - t);
    t = u;
  }
  MPI_Cancel(&never);
  MPI_Wait(&never, MPI_STATUS_IGNORE);
  // Per rank: median gap (0: never descheduled), descheduled fraction, median yield round.
  double sum_gaps = 0;
  for (double g : gaps) sum_gaps += g;
  const double mine[3] = {gaps.empty() ? 0 : median(gaps), sum_gaps / kSpin, median(yields)};
  std::vector<double> all(topo.rank == 0 ? size_t(3 * topo.size) : 0);
  MPI_Gather(mine, 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  if (topo.rank != 0) return 0;
  std::vector<double> g, f, y;
  for (int r = 0; r < topo.size; ++r) {
    if (all[size_t(3 * r)] > 0) g.push_back(all[size_t(3 * r)]);
    f.push_back(all[size_t(3 * r + 1)]);
    y.push_back(all[size_t(3 * r + 2)]);
  }
  json j = {{"schema", "rooflab.mpi_timeslice/1"},
            {"created", utc_timestamp()},
            {"ranks", topo.size},
            {"cpus", cpus},
            {"ranks_per_cpu", double(topo.size) / cpus},
            {"spin_gap_s", g.empty() ? json(nullptr) : json(median(g))},
            {"spin_gap_s_per_rank", std::vector<double>(g)},
            {"descheduled_fraction", median(f)},
            {"yield_round_s", median(y)},
            {"method", "every rank busy-polls MPI_Wtime for 0.6 s and records jumps > 50 us (time waiting for "
                       "its core while another rank ran); spin_gap_s: median over ranks of each rank's median "
                       "jump; descheduled_fraction: median over ranks of the jumps' sum / 0.6 s; then MPI_Test of a "
                       "pending receive + sched_yield() in a loop for 0.2 s (what --wait yield does), yield_round_s: "
                       "median over ranks of the median loop time"}};
  emit(o, "mpi_timeslice.json", j, "mpi_timeslice");
  return 0;
}

int main_mpi(int argc, char** argv) {
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  Options o;
  const args::Spec sp = spec();
  try {
    const args::Values v = sp.parse(std::vector<std::string>(argv + 1, argv + argc));
    if (v.help()) {
      if (rank == 0) std::cout << sp.help();
      return 0;
    }
    o = parse(v, P);  // same argv and P everywhere: every rank reaches the same verdict
  } catch (const args::UsageError& e) {
    if (rank == 0) std::cerr << "rooflab_mpi: " << e.what() << "\n(see rooflab_mpi --help)\n";
    return 2;
  } catch (const Error& e) {
    if (rank == 0) std::cerr << "rooflab_mpi: error: " << e.what() << '\n';
    return 2;
  }
  set_wait_mode(o.wait);
  set_blocking_leaders(o.blocking_leaders);
  Topology topo(o.ranks_per_node);
  if (o.pingpong) return pingpong(o, topo);
  if (o.timeslice) return timeslice(o, topo);
  return o.dtype == DType::f64 ? run<double>(o, topo) : run<float>(o, topo);
}

// Whether the ranks span several hosts (shared-memory domains as MPI reports them: the
// emulated hosts of scripts/hosts.sh, or real ones). The same verdict on every rank.
bool spans_hosts() {
  MPI_Comm host;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
  int on_host = 1, P = 1;
  MPI_Comm_size(host, &on_host);
  MPI_Comm_free(&host);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  return on_host < P;
}
}  // namespace
}  // namespace rooflab::sinkhorn_mpi

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rc = 1;
  try {
    rc = rooflab::sinkhorn_mpi::main_mpi(argc, argv);
  } catch (const std::exception& e) {
    // Only reachable for failures after the collective checks (e.g. writing --out on rank 0):
    // the other ranks have finished their collectives by then.
    std::cerr << "rooflab_mpi: error: " << e.what() << '\n';
    rc = 2;
  }
  // Across hosts, no MPI_Finalize: MPICH 4.0's ch4:ucx finalize disconnects every UCX
  // endpoint before its PMI barrier, and with UCX 1.13's TCP transport a disconnect (seen: a
  // rank's endpoint to itself) can wait on a peer that already sits in that barrier
  // (openucx/ucx#8738); with more than 2 ranks over TCP between emulated hosts, 40-90% of the
  // runs hung there after writing their results. After a barrier nothing is in flight, and
  // hydra takes a clean exit without it (exit status as usual).
  if (rooflab::sinkhorn_mpi::spans_hosts()) {
    MPI_Barrier(MPI_COMM_WORLD);
    std::cout.flush();
    std::fflush(nullptr);
    _exit(rc);
  }
  MPI_Finalize();
  return rc;
}

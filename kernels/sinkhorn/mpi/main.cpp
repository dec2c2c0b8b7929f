// rooflab_mpi: distributed Sinkhorn-Knopp over MPI ranks, one allreduce design per run.
//   mpirun -np P rooflab_mpi --design mpich|ring|salar|coffee --size MxN [options]
//   mpirun -np 2 rooflab_mpi --pingpong [--out FILE.json]
// Every rank parses the same command line and checks it the same way, so bad input is
// reported once (rank 0) and every rank returns non-zero after MPI_Finalize (no MPI_Abort,
// no rank left waiting in a collective).
#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "harness/buffer.hpp"
#include "harness/error.hpp"
#include "harness/json_io.hpp"
#include "kernels/sinkhorn/mpi/allreduce.hpp"
#include "kernels/sinkhorn/sinkhorn.hpp"

namespace rooflab::sinkhorn_mpi {
namespace {
using sinkhorn::SkArgs;
using sinkhorn::SkKernels;

constexpr const char* kUsage =
    "usage: mpirun -np P rooflab_mpi --design mpich|ring|salar|coffee --size MxN\n"
    "         [--dtype f64|f32] [--variant microkernel|blocked|c2r|typical] [--isa scalar|avx2|avx512]\n"
    "         [--ranks-per-node R] [--chunks C] [--iters K] [--fi x] [--verify]\n"
    "         [--comm-only] [--model PINGPONG.json] [--out FILE.json]\n"
    "       mpirun -np 2 rooflab_mpi --pingpong [--out FILE.json]\n";

struct Options {
  bool pingpong = false;
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
  std::string out, model;
};

int64_t parse_int(const std::string& opt, const std::string& v, int64_t lo, int64_t hi) {
  size_t pos = 0;
  long long x = 0;
  try {
    x = std::stoll(v, &pos);
  } catch (...) {
    pos = 0;
  }
  if (pos == 0 || pos != v.size() || x < lo || x > hi)
    throw Error(opt + " takes an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got '" + v + "'");
  return x;
}

Options parse(int argc, char** argv, int P) {
  Options o;
  std::vector<std::string> a(argv + 1, argv + argc);
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string& k = a[i];
    auto val = [&]() -> const std::string& {
      if (i + 1 >= a.size()) throw Error(k + " needs a value");
      return a[++i];
    };
    if (k == "--pingpong") o.pingpong = true;
    else if (k == "--design") o.design = parse_design(val()), o.design_given = true;
    else if (k == "--size") {
      const std::string& s = val();
      const size_t x = s.find('x');
      if (x == std::string::npos) throw Error("--size takes MxN, got '" + s + "'");
      o.M = parse_int("--size M", s.substr(0, x), 1, INT_MAX);
      o.N = parse_int("--size N", s.substr(x + 1), 1, INT_MAX);
    } else if (k == "--dtype") {
      const auto d = parse_dtype(val());
      if (!d) throw Error("--dtype takes f64 or f32, got '" + a[i] + "'");
      o.dtype = *d;
    } else if (k == "--variant") o.variant = val();
    else if (k == "--isa") {
      const auto s = parse_isa(val());
      if (!s || *s == Isa::none) throw Error("--isa takes scalar, avx2 or avx512, got '" + a[i] + "'");
      o.isa = *s;
    } else if (k == "--ranks-per-node") o.ranks_per_node = int(parse_int(k, val(), 1, INT_MAX));
    else if (k == "--chunks") o.chunks = int(parse_int(k, val(), 1, INT_MAX)), o.chunks_given = true;
    else if (k == "--iters") o.iters = int(parse_int(k, val(), 1, 1000000));
    else if (k == "--fi") {
      const std::string& v = val();
      size_t pos = 0;
      try { o.fi = std::stod(v, &pos); } catch (...) { pos = 0; }
      if (pos == 0 || pos != v.size() || !(o.fi > 0 && o.fi <= 1))
        throw Error("--fi takes a number in (0, 1], got '" + v + "'");
    } else if (k == "--verify") o.verify = true;
    else if (k == "--fault") o.fault = true;
    else if (k == "--comm-only") o.comm_only = true;
    else if (k == "--out") o.out = val();
    else if (k == "--model") o.model = val();
    else if (k == "-h" || k == "--help") throw Error(kUsage);
    else throw Error("unknown option '" + k + "'\n" + kUsage);
  }
  if (o.pingpong) {
    if (P < 2) throw Error("--pingpong needs at least 2 ranks (got " + std::to_string(P) + ")");
    return o;
  }
  if (!o.design_given) throw Error(std::string("--design is required\n") + kUsage);
  if (o.M == 0) throw Error(std::string("--size MxN is required\n") + kUsage);
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
  if (o.variant == "microkernel" && o.isa == Isa::none) o.isa = best_isa();
  if (o.variant != "microkernel" && o.isa != Isa::none)
    throw Error("--isa applies to --variant microkernel only");
  if (o.isa != Isa::none && !isa_supported(o.isa))
    throw Error("this CPU cannot run ISA " + std::string(rooflab::to_string(o.isa)));
  if (o.verify && o.M * o.N > INT_MAX)
    throw Error("--verify gathers the matrix on rank 0: M*N must be below 2^31");
  return o;
}

// ---- Data ------------------------------------------------------------------------------
// Element (i, j) is a hash of its global index, so each rank builds its own rows and rank 0
// can rebuild the whole matrix for the reference. Entries in [0.1, 1.1), targets in
// [0.5, 1.5) with sum(c) == sum(r), as the single-node family's data.
uint64_t mix(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}
double unit(uint64_t stream, uint64_t k) { return double(mix(mix(stream) ^ k) >> 11) * 0x1.0p-53; }

template <class T>
void fill_rows(T* A, int64_t i0, int64_t i1, int64_t N) {
  for (int64_t i = i0; i < i1; ++i)
    for (int64_t j = 0; j < N; ++j) A[(i - i0) * N + j] = T(0.1 + unit(1, uint64_t(i * N + j)));
}
template <class T>
void fill_targets(std::vector<T>& r, std::vector<T>& c) {
  long double sr = 0, sc = 0;
  for (size_t i = 0; i < r.size(); ++i) sr += r[i] = T(0.5 + unit(2, i));
  for (size_t j = 0; j < c.size(); ++j) sc += c[j] = T(0.5 + unit(3, j));
  for (auto& x : c) x = T(x * (sr / sc));
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
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
    require_memory(size_t(2 * rows * N + 3 * N) * sizeof(T), "this rank's row slice");
    A_ = AlignedBuffer<T>(size_t(rows * N));
    A0_ = AlignedBuffer<T>(size_t(rows * N));
    sums_ = AlignedBuffer<T>(size_t(N));
    work_ = AlignedBuffer<T>(size_t(N));
    tmp_ = AlignedBuffer<T>(size_t(N + 2));  // ring: N/P + 1; coffee: one chunk
    r_.resize(size_t(o.M));
    c_.resize(size_t(N));
    fill_targets(r_, c_);
    fill_rows(A0_.data(), i0_, i1_, N);
    restore();
    k_ = sinkhorn::kernels_for<T>(o.variant, o.isa);
    const auto blk = o.variant == "microkernel" ? sinkhorn::microkernel_default_blocking(o.isa)
                                                : sinkhorn::Blocking{8, 1024};
    args_ = SkArgs<T>{A_.data(), rows, N, N, r_.data() + i0_, c_.data(), T(o.fi), sums_.data(), blk.mc, blk.nc};
  }

  void restore() { std::memcpy(A_.data(), A0_.data(), A0_.size() * sizeof(T)); }

  // One iteration; returns the communication seconds in it (see comm_time below).
  double iterate() {
    k_.row_rescale(args_);
    std::fill_n(sums_.data(), o_.N, T(0));
    k_.col_sums(args_);  // args_.work == sums_
    if (o_.fault && topo_.rank == 0) sums_[size_t(o_.N - 1)] *= T(2);
    return column_phase(true);
  }

  // The design's allreduce of the current local sums alone, started together on all ranks
  // (barrier), so load imbalance is not counted: the quantity the model predicts.
  double allreduce_only() {
    std::fill_n(sums_.data(), o_.N, T(1));  // coffee's reduce-scatter clobbers the sums
    MPI_Barrier(MPI_COMM_WORLD);
    return column_phase(false);
  }

  const T* A() const { return A_.data(); }
  int64_t rows() const { return i1_ - i0_; }
  const std::vector<T>& r() const { return r_; }
  const std::vector<T>& c() const { return c_; }

 private:
  // Factors and scaling of columns [j0, j0 + len) of this rank's rows, from work_.
  void modify(int64_t j0, int64_t len, const std::function<void()>* poke) {
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

  // Allreduce of sums_ into work_, then the column modify. Communication time: the
  // allreduce call for mpich/ring/salar; for coffee, whose modify is interleaved with the
  // allreduce, the phase's wall time minus the time spent modifying (the exposed comm).
  double column_phase(bool modify_cols) {
    const int64_t N = o_.N;
    const double t0 = MPI_Wtime();
    switch (o_.design) {
      case Design::mpich:
        MPI_Allreduce(sums_.data(), work_.data(), int(N), mpi_type<T>(), MPI_SUM, MPI_COMM_WORLD);
        break;
      case Design::ring:
        std::memcpy(work_.data(), sums_.data(), size_t(N) * sizeof(T));
        ring_allreduce(work_.data(), N, MPI_COMM_WORLD, tmp_.data());
        break;
      case Design::salar:
        salar_allreduce(sums_.data(), work_.data(), N, o_.chunks, topo_);
        break;
      case Design::coffee: {
        double busy = 0;
        coffee_allreduce(sums_.data(), work_.data(), N, o_.chunks, topo_, tmp_.data(),
                         [&](int64_t j0, int64_t len, const std::function<void()>& poke) {
                           const double m0 = MPI_Wtime();
                           if (modify_cols) modify(j0, len, &poke);
                           busy += MPI_Wtime() - m0;
                         });
        return MPI_Wtime() - t0 - busy;
      }
    }
    const double comm = MPI_Wtime() - t0;
    if (modify_cols) modify(0, N, nullptr);
    return comm;
  }

  const Options& o_;
  const Topology& topo_;
  int64_t i0_ = 0, i1_ = 0;
  AlignedBuffer<T> A_, A0_, sums_, work_, tmp_;
  std::vector<T> r_, c_;
  SkKernels<T> k_;
  SkArgs<T> args_;
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

std::string case_name(const Options& o, const Topology& topo, int rpn) {
  std::ostringstream n;
  n << "sinkhorn_mpi/" << to_string(o.design) << '/' << rooflab::to_string(o.dtype) << '/' << o.M << 'x'
    << o.N << "/ranks:" << topo.size << "/rpn:" << rpn << "/chunks:" << o.chunks;
  if (o.variant != "microkernel") n << "/kernel:" << o.variant;
  if (o.fi != 1) n << "/fi:" << o.fi;
  if (o.comm_only) n << "/part:comm";
  n << "/threads:1";
  return n.str();
}

std::optional<CommModel> read_model(const std::string& path) {
  if (path.empty()) return std::nullopt;
  const json j = read_json_file(path);
  require_schema(j, "rooflab.mpi_pingpong", 1, path);
  return CommModel{j.at("alpha_s").get<double>(), j.at("beta_bytes_per_s").get<double>()};
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
    if (topo.rank == 0) model = read_model(o.model);
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

  json verification = nullptr;
  bool verified = true;
  if (o.verify) {
    verification = verify(*s, o, topo);
    int ok = topo.rank == 0 ? int(verification.at("ok").get<bool>()) : 0;
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    verified = ok;
  }

  // Timing: one untimed iteration, then `iters` iterations each started together (barrier).
  std::vector<double> t(size_t(o.iters)), c(size_t(o.iters));
  s->iterate();
  for (int k = 0; k < o.iters; ++k) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = MPI_Wtime();
    c[size_t(k)] = o.comm_only ? s->allreduce_only() : s->iterate();
    t[size_t(k)] = o.comm_only ? c[size_t(k)] : MPI_Wtime() - t0;
  }
  const double mine[2] = {median(t), median(c)};
  double worst[2] = {0, 0};
  MPI_Reduce(mine, worst, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

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
              {"threads", 1},
              {"iterations", o.iters},
              {"comm_only", o.comm_only},
              {"time_per_iter_s", worst[0]},
              {"comm_time_per_iter_s", worst[1]},
              {"timing", o.comm_only
                  ? "--comm-only: the design's allreduce alone after a barrier (no matrix work); per rank: "
                    "median over repetitions; reported: max over ranks"
                  : "per rank: median over iterations; reported: max over ranks. comm: the allreduce, "
                    "including waiting for slower ranks (coffee: phase wall time minus the overlapped "
                    "column modify)"},
              {"verification", verification}};
    if (model) {
      j["predicted_comm_s"] = predict_allreduce_s(o.design, *model, topo.size, rpn, o.N, int(sizeof(T)), o.chunks);
      j["model"] = {{"alpha_s", model->alpha}, {"beta_bytes_per_s", model->beta}, {"source", o.model}};
    } else {
      j["predicted_comm_s"] = nullptr;
    }
    if (!o.out.empty()) write_json_atomic(o.out, j);
    std::cout << j.dump(2) << '\n';
    if (!verified) std::cerr << "rooflab_mpi: verification failed: " << verification.at("detail").get<std::string>() << '\n';
  }
  return verified ? 0 : 3;
}

// Ping-pong between ranks 0 and 1 (others wait at the barrier): half the median round trip
// per size; alpha = the 8-byte time, beta = least-squares slope over sizes >= 64 KiB.
int pingpong(const Options& o, const Topology& topo) {
  std::vector<char> buf(size_t(1) << 22);
  json points = json::array();
  std::vector<std::pair<double, double>> fit;
  double alpha = 0;
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
    if (bytes == 8) alpha = tm;
    if (bytes >= (1 << 16)) fit.emplace_back(double(bytes), tm);
    points.push_back({{"bytes", bytes}, {"seconds", tm}});
  }
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (auto [x, y] : fit) sx += x, sy += y, sxx += x * x, sxy += x * y;
  const double n = double(fit.size());
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  if (topo.rank == 0) {
    json j = {{"schema", "rooflab.mpi_pingpong/1"},
              {"created", utc_timestamp()},
              {"ranks", topo.size},
              {"points", points},
              {"alpha_s", alpha},
              {"beta_bytes_per_s", 1 / slope},
              {"method", "ranks 0 and 1, blocking MPI_Send/MPI_Recv, half the median round trip; alpha = "
                         "8-byte time, beta = 1 / least-squares slope over 64 KiB..4 MiB"}};
    if (!o.out.empty()) write_json_atomic(o.out, j);
    std::cout << j.dump(2) << '\n';
  }
  return 0;
}

int main_mpi(int argc, char** argv) {
  int rank = 0, P = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &P);
  Options o;
  try {
    o = parse(argc, argv, P);  // same argv and P everywhere: every rank reaches the same verdict
  } catch (const Error& e) {
    if (rank == 0) std::cerr << "rooflab_mpi: error: " << e.what() << '\n';
    return 2;
  }
  Topology topo(o.ranks_per_node);
  if (o.pingpong) return pingpong(o, topo);
  return o.dtype == DType::f64 ? run<double>(o, topo) : run<float>(o, topo);
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
  MPI_Finalize();
  return rc;
}

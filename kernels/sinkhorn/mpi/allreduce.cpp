// The allreduce designs of allreduce.hpp and their communication model.
#include "kernels/sinkhorn/mpi/allreduce.hpp"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "harness/error.hpp"

namespace rooflab::sinkhorn_mpi {
namespace {
// MPI counts are int; every message here is a slice of one N-vector, which the driver
// bounds by INT_MAX elements.
int count(int64_t n) { return static_cast<int>(n); }

// Point-to-point tags on the node communicator (collectives have their own context).
constexpr int kTagFold = 1, kTagHalve = 2, kTagPart = 3;

int ceil_log2(int p) {
  int k = 0;
  while ((1 << k) < p) ++k;
  return k;
}

WaitMode g_wait = WaitMode::spin;
bool g_blocking_leaders = false;
bool yielding() { return g_wait == WaitMode::yield; }

// The comm split (allreduce.hpp): the node communicator of the Topology in use, and whether
// the world spans nodes.
MPI_Comm g_node = MPI_COMM_NULL;
bool g_world_spans = false;
CommSplit g_split;
// Runs f, adding its wall time to the intra or inter share by communicator.
template <class F>
void timed(MPI_Comm comm, F&& f) {
  const double t0 = MPI_Wtime();
  f();
  const double dt = MPI_Wtime() - t0;
  const bool intra = comm == g_node || (comm == MPI_COMM_WORLD && !g_world_spans);
  (intra ? g_split.intra : g_split.inter) += dt;
}
// wait_all of requests posted on comm, timed.
void wait_on(MPI_Comm comm, int n, MPI_Request* reqs) { timed(comm, [&] { wait_all(n, reqs); }); }
void wait1(MPI_Comm comm, MPI_Request* r) { wait_on(comm, 1, r); }

// The leaders' allreduce of a chunk (salar, coffee): started non-blocking, or with
// set_blocking_leaders complete on return (*r = MPI_REQUEST_NULL) through MPI_Allreduce.
void leaders_allreduce(void* buf, int n, MPI_Datatype t, MPI_Comm leaders, MPI_Request* r) {
  if (!g_blocking_leaders) return void(MPI_Iallreduce(MPI_IN_PLACE, buf, n, t, MPI_SUM, leaders, r));
  allreduce_sum(MPI_IN_PLACE, buf, n, t, leaders);  // timed into the comm split itself
  *r = MPI_REQUEST_NULL;
}

// Blocking point-to-point and collectives under the wait mode: the blocking call itself for
// spin, its non-blocking form + wait_all for yield.
// (Timed into the comm split.)
void sendrecv(const void* sb, int sc, MPI_Datatype t, int dst, int stag, void* rb, int rc, int src, int rtag,
              MPI_Comm comm) {
  if (!yielding())
    return timed(comm, [&] { MPI_Sendrecv(sb, sc, t, dst, stag, rb, rc, t, src, rtag, comm, MPI_STATUS_IGNORE); });
#if MPI_VERSION >= 4
  MPI_Request r;
  MPI_Isendrecv(sb, sc, t, dst, stag, rb, rc, t, src, rtag, comm, &r);
  wait1(comm, &r);
#else  // MPI 3 (SimGrid SMPI): the same exchange as a receive and a send
  MPI_Request r[2];
  MPI_Irecv(rb, rc, t, src, rtag, comm, &r[0]);
  MPI_Isend(sb, sc, t, dst, stag, comm, &r[1]);
  wait_on(comm, 2, r);
#endif
}
void send(const void* b, int n, MPI_Datatype t, int dst, int tag, MPI_Comm comm) {
  if (!yielding()) return timed(comm, [&] { MPI_Send(b, n, t, dst, tag, comm); });
  MPI_Request r;
  MPI_Isend(b, n, t, dst, tag, comm, &r);
  wait1(comm, &r);
}
void recv(void* b, int n, MPI_Datatype t, int src, int tag, MPI_Comm comm) {
  if (!yielding()) return timed(comm, [&] { MPI_Recv(b, n, t, src, tag, comm, MPI_STATUS_IGNORE); });
  MPI_Request r;
  MPI_Irecv(b, n, t, src, tag, comm, &r);
  wait1(comm, &r);
}
void bcast(void* b, int n, MPI_Datatype t, int root, MPI_Comm comm) {
  if (!yielding()) return timed(comm, [&] { MPI_Bcast(b, n, t, root, comm); });
  MPI_Request r;
  MPI_Ibcast(b, n, t, root, comm, &r);
  wait1(comm, &r);
}
void reduce_sum(const void* in, void* out, int n, MPI_Datatype t, int root, MPI_Comm comm) {
  if (!yielding()) return timed(comm, [&] { MPI_Reduce(in, out, n, t, MPI_SUM, root, comm); });
  MPI_Request r;
  MPI_Ireduce(in, out, n, t, MPI_SUM, root, comm, &r);
  wait1(comm, &r);
}
}  // namespace

void reset_comm_split() { g_split = {}; }
CommSplit comm_split() { return g_split; }

WaitMode parse_wait_mode(const std::string& s) {
  if (s == "spin") return WaitMode::spin;
  if (s == "yield") return WaitMode::yield;
  throw Error("--wait takes spin or yield, got '" + s + "'");
}
const char* to_string(WaitMode w) { return w == WaitMode::yield ? "yield" : "spin"; }
void set_wait_mode(WaitMode w) { g_wait = w; }
void set_blocking_leaders(bool b) { g_blocking_leaders = b; }
bool blocking_leaders() { return g_blocking_leaders; }
WaitMode wait_mode() { return g_wait; }

void wait_all(int n, MPI_Request* reqs) {
  if (!yielding()) return void(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE));
  for (int done = 0;;) {
    MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
    if (done) return;
    sched_yield();
  }
}

void barrier(MPI_Comm comm) {
  if (!yielding()) return void(MPI_Barrier(comm));
  MPI_Request r;
  MPI_Ibarrier(comm, &r);
  wait_all(1, &r);
}

void allreduce_sum(const void* in, void* out, int n, MPI_Datatype t, MPI_Comm comm) {
  if (!yielding()) return timed(comm, [&] { MPI_Allreduce(in, out, n, t, MPI_SUM, comm); });
  MPI_Request r;
  MPI_Iallreduce(in, out, n, t, MPI_SUM, comm, &r);
  wait1(comm, &r);
}

// ---- Topology --------------------------------------------------------------------------
Topology::Topology(int ranks_per_node) {
  MPI_Comm_rank(world, &rank);
  MPI_Comm_size(world, &size);
  if (ranks_per_node > 0)
    MPI_Comm_split(world, rank / ranks_per_node, rank, &node);
  else
    MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
  MPI_Comm_rank(node, &node_rank);
  MPI_Comm_size(node, &node_size);
  MPI_Comm_split(world, node_rank == 0 ? 0 : MPI_UNDEFINED, rank, &leaders);
  int is_leader = node_rank == 0;
  MPI_Allreduce(&is_leader, &nodes, 1, MPI_INT, MPI_SUM, world);
  MPI_Allreduce(&node_size, &max_node_size, 1, MPI_INT, MPI_MAX, world);
  g_node = node, g_world_spans = nodes > 1;
}

Topology::~Topology() {
  if (g_node == node) g_node = MPI_COMM_NULL;
  if (leaders != MPI_COMM_NULL) MPI_Comm_free(&leaders);
  if (node != MPI_COMM_NULL) MPI_Comm_free(&node);
}

Design parse_design(const std::string& s) {
  if (s == "mpich") return Design::mpich;
  if (s == "ring") return Design::ring;
  if (s == "salar") return Design::salar;
  if (s == "coffee") return Design::coffee;
  throw Error("unknown design '" + s + "' (known: mpich, ring, salar, coffee)");
}

const char* to_string(Design d) {
  switch (d) {
    case Design::mpich: return "mpich";
    case Design::ring: return "ring";
    case Design::salar: return "salar";
    case Design::coffee: return "coffee";
  }
  return "?";
}

// ---- Ring ------------------------------------------------------------------------------
// Segment k = part k of P. Reduce-scatter: in step s every rank sends its running sum of
// segment (rank - s) to the right and adds the left neighbour's segment (rank - s - 1); after
// P-1 steps rank holds the full sum of segment (rank + 1). Allgather: the completed segments
// travel once more around the ring, received straight into place.
template <class T>
void ring_allreduce(T* buf, int64_t n, MPI_Comm comm, T* tmp) {
  int rank = 0, P = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &P);
  if (P == 1) return;
  const int right = (rank + 1) % P, left = (rank + P - 1) % P;
  auto seg = [&](int k) { k = ((k % P) + P) % P; return std::pair{part_begin(n, P, k), part_begin(n, P, k + 1)}; };
  const MPI_Datatype t = mpi_type<T>();
  for (int s = 0; s < P - 1; ++s) {
    const auto [sb, se] = seg(rank - s);
    const auto [rb, re] = seg(rank - s - 1);
    sendrecv(buf + sb, count(se - sb), t, right, 0, tmp, count(re - rb), left, 0, comm);
    for (int64_t j = rb; j < re; ++j) buf[j] += tmp[j - rb];
  }
  for (int s = 0; s < P - 1; ++s) {
    const auto [sb, se] = seg(rank + 1 - s);
    const auto [rb, re] = seg(rank - s);
    sendrecv(buf + sb, count(se - sb), t, right, 1, buf + rb, count(re - rb), left, 1, comm);
  }
}

// ---- SALaR -----------------------------------------------------------------------------
// All chunks' intra-node reduces are posted at once; the leader starts chunk c's inter-node
// allreduce as soon as its reduce lands and broadcasts chunk c-1 once that allreduce is
// done, so reduce(c+1), allreduce(c) and bcast(c-1) overlap. Collectives on one
// communicator are posted in the same order on every rank (all reduces, then bcasts 0..C-1).
template <class T>
void salar_allreduce(const T* local, T* out, int64_t n, int chunks, const Topology& topo) {
  const MPI_Datatype t = mpi_type<T>();
  const int C = chunks;
  auto j0 = [&](int c) { return part_begin(n, C, c); };
  auto len = [&](int c) { return count(j0(c + 1) - j0(c)); };
  std::vector<MPI_Request> red(size_t(C), MPI_REQUEST_NULL), all(size_t(C), MPI_REQUEST_NULL),
      bc(size_t(C), MPI_REQUEST_NULL);
  for (int c = 0; c < C; ++c)
    MPI_Ireduce(local + j0(c), out + j0(c), len(c), t, MPI_SUM, 0, topo.node, &red[size_t(c)]);
  if (topo.leader()) {
    for (int c = 0; c < C; ++c) {
      wait1(topo.node, &red[size_t(c)]);
      leaders_allreduce(out + j0(c), len(c), t, topo.leaders, &all[size_t(c)]);
      if (c > 0) {
        wait1(topo.leaders, &all[size_t(c - 1)]);
        MPI_Ibcast(out + j0(c - 1), len(c - 1), t, 0, topo.node, &bc[size_t(c - 1)]);
      }
    }
    wait1(topo.leaders, &all[size_t(C - 1)]);
    MPI_Ibcast(out + j0(C - 1), len(C - 1), t, 0, topo.node, &bc[size_t(C - 1)]);
  } else {
    for (int c = 0; c < C; ++c) MPI_Ibcast(out + j0(c), len(c), t, 0, topo.node, &bc[size_t(c)]);
  }
  wait_on(topo.node, C, red.data());
  wait_on(topo.node, C, bc.data());
}

// ---- COFFEE ----------------------------------------------------------------------------
// Recursive halving over contiguous part ranges (distance q/2 first), so every round is one
// message per rank. Fig. 6 pairs distance 1 first with interleaved parts; the rounds, the
// bytes per rank and the balance are the same, and contiguous ranges need no packing.
template <class T>
int node_reduce_scatter(T* buf, int64_t n, MPI_Comm comm, T* tmp) {
  int r = 0, p = 1;
  MPI_Comm_rank(comm, &r);
  MPI_Comm_size(comm, &p);
  int q = 1;
  while (2 * q <= p) q *= 2;
  const MPI_Datatype t = mpi_type<T>();
  if (r >= q) {  // fold into r - q, then hold no part
    send(buf, count(n), t, r - q, kTagFold, comm);
    return q;
  }
  if (r + q < p) {
    recv(tmp, count(n), t, r + q, kTagFold, comm);
    for (int64_t j = 0; j < n; ++j) buf[j] += tmp[j];
  }
  int lo = 0, hi = q;  // parts this rank still accumulates
  for (int d = q / 2; d >= 1; d /= 2) {
    const int mid = lo + (hi - lo) / 2;
    const bool upper = (r & d) != 0;
    const int keep_lo = upper ? mid : lo, keep_hi = upper ? hi : mid;
    const int send_lo = upper ? lo : mid, send_hi = upper ? mid : hi;
    const int64_t kb = part_begin(n, q, keep_lo), ke = part_begin(n, q, keep_hi);
    const int64_t sb = part_begin(n, q, send_lo), se = part_begin(n, q, send_hi);
    sendrecv(buf + sb, count(se - sb), t, r ^ d, kTagHalve, tmp, count(ke - kb), r ^ d, kTagHalve, comm);
    for (int64_t j = kb; j < ke; ++j) buf[j] += tmp[j - kb];
    lo = keep_lo, hi = keep_hi;
  }
  return q;
}

// Per chunk c: reduce-scatter within the node; part owners send their part to the leader
// (non-blocking); the leader starts the inter-node MPI_Iallreduce of the chunk. Then chunk
// c-1 is broadcast and handed to on_chunk while chunk c's allreduce is still in flight:
// the leader pokes MPI through `poke` while the rows are modified, so the inter-node
// transfer, the next intra-node reduce and the matrix modify overlap (Sec. V-C).
template <class T>
void coffee_allreduce(T* local, T* out, int64_t n, int chunks, const Topology& topo, T* tmp,
                      const ChunkFn& on_chunk, bool balanced) {
  const MPI_Datatype t = mpi_type<T>();
  const int C = chunks;
  auto j0 = [&](int c) { return part_begin(n, C, c); };
  auto len = [&](int c) { return j0(c + 1) - j0(c); };
  std::vector<MPI_Request> all(size_t(C), MPI_REQUEST_NULL), sends(size_t(C), MPI_REQUEST_NULL);
  std::vector<MPI_Request> recvs;
  MPI_Request pending[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  const std::function<void()> poke = [&] {
    int flag = 0;
    MPI_Testall(2, pending, &flag, MPI_STATUSES_IGNORE);
  };
  for (int c = 0; c <= C; ++c) {
    if (c < C) {
      T* chunk = local + j0(c);
      const int64_t L = len(c);
      const int r = topo.node_rank;
      if (!balanced) {  // the leader receives and adds every rank's chunk (binomial tree)
        reduce_sum(chunk, topo.leader() ? out + j0(c) : nullptr, count(L), t, 0, topo.node);
        if (topo.leader())
          leaders_allreduce(out + j0(c), count(L), t, topo.leaders, &all[size_t(c)]);
      } else if (const int q = node_reduce_scatter(chunk, L, topo.node, tmp); topo.leader()) {
        recvs.clear();
        for (int k = 1; k < q; ++k) {
          const int64_t b = part_begin(L, q, k), e = part_begin(L, q, k + 1);
          if (e == b) continue;
          recvs.emplace_back();
          MPI_Irecv(out + j0(c) + b, count(e - b), t, k, kTagPart, topo.node, &recvs.back());
        }
        std::memcpy(out + j0(c), chunk, size_t(part_begin(L, q, 1)) * sizeof(T));
        wait_on(topo.node, int(recvs.size()), recvs.data());
        leaders_allreduce(out + j0(c), count(L), t, topo.leaders, &all[size_t(c)]);
      } else if (r < q) {
        const int64_t b = part_begin(L, q, r), e = part_begin(L, q, r + 1);
        if (e > b) MPI_Isend(chunk + b, count(e - b), t, 0, kTagPart, topo.node, &sends[size_t(c)]);
      }
    }
    if (c > 0) {
      const int prev = c - 1;
      if (topo.leader()) wait1(topo.leaders, &all[size_t(prev)]);
      bcast(out + j0(prev), count(len(prev)), t, 0, topo.node);
      pending[0] = c < C ? all[size_t(c)] : MPI_REQUEST_NULL;
      pending[1] = c < C ? sends[size_t(c)] : MPI_REQUEST_NULL;
      on_chunk(j0(prev), len(prev), poke);
      // MPI_Testall frees completed requests through `pending`: keep the owners in step.
      if (c < C) all[size_t(c)] = pending[0], sends[size_t(c)] = pending[1];
    }
  }
  wait_on(topo.node, C, sends.data());
}

// ---- Model -----------------------------------------------------------------------------
// MPICH 4's MPI_Allreduce (MPIR_Allreduce_intra_auto; all ranks of a run share one machine, so
// the SMP-aware variant for multi-node communicators never applies): recursive doubling when
// the vector is <= 2048 bytes (MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE) or has fewer elements than
// pof2 (the largest power of two <= P), else Rabenseifner (reduce-scatter by recursive
// halving + allgather by recursive doubling). When P is not a power of two, P - pof2 ranks
// first hand their whole vector to a partner and get the result back: two more messages.
// MPI_Reduce (salar's and coffee-without-balance's intra-node step) follows the same rule
// with a gather in place of the allgather; MPI_Bcast within a node of < 8 ranks is binomial.
namespace {
int pof2_below(int p) {
  int q = 1;
  while (2 * q <= p) q *= 2;
  return q;
}
bool short_vector(int P, double bytes, int elem) {
  return bytes <= 2048 || bytes / elem < pof2_below(P);
}
// Fold of the P - pof2 extra ranks into partners (a whole vector in, added) and the result out.
double fold_s(const CommModel& m, int P, double bytes, bool back) {
  if (P == pof2_below(P)) return 0;
  return m.msg(bytes) + m.gamma * bytes + (back ? m.msg(bytes) : 0);
}
double halving_s(const CommModel& m, int q, double bytes, bool add) {  // (q-1)/q of the vector in log2 q steps
  const double frac = double(q - 1) / q;
  return ceil_log2(q) * m.alpha + frac * bytes / m.beta + (add ? frac * bytes * m.gamma : 0);
}
double mpich_reduce_s(const CommModel& m, int P, double bytes, int elem) {
  if (P <= 1) return 0;
  const int q = pof2_below(P);
  if (short_vector(P, bytes, elem)) return ceil_log2(P) * (m.msg(bytes) + m.gamma * bytes);
  return fold_s(m, P, bytes, false) + halving_s(m, q, bytes, true) + halving_s(m, q, bytes, false);
}
double bcast_s(const CommModel& m, int R, double bytes) {
  if (R <= 1) return 0;
  if (R < 8) return ceil_log2(R) * m.msg(bytes);
  // MPICH: scatter (binomial) + ring allgather for larger communicators.
  return halving_s(m, pof2_below(R), bytes, false) + (R - 1) * m.alpha + double(R - 1) / R * bytes / m.beta;
}
// Chunked pipeline of three stages: the first chunk pays all stages, the others the slowest.
double pipeline_s(int C, double a, double b, double c) { return a + b + c + (C - 1) * std::max({a, b, c}); }
}  // namespace

const char* mpich_allreduce_algorithm(int P, double bytes, int elem) {
  if (P <= 1) return "none (one rank)";
  return short_vector(P, bytes, elem) ? "recursive doubling" : "Rabenseifner";
}

double predict_mpich_allreduce_s(const CommModel& m, int P, double bytes, int elem) {
  if (P <= 1) return 0;
  const int q = pof2_below(P);
  const double fold = fold_s(m, P, bytes, true);
  if (short_vector(P, bytes, elem)) return fold + ceil_log2(q) * (m.msg(bytes) + m.gamma * bytes);
  return fold + 2 * halving_s(m, q, bytes, false) + double(q - 1) / q * bytes * m.gamma;
}

const char* model_assumption(Design d, bool balanced) {
  switch (d) {
    case Design::mpich:
      return "MPICH MPI_Allreduce: recursive doubling for <= 2048 bytes (or fewer elements than the largest "
             "power of two <= P), else Rabenseifner; +2 whole-vector messages when P is not a power of two";
    case Design::ring:
      return "ring: 2 (P-1) messages of N/P elements, (P-1) additions of N/P elements";
    case Design::salar:
      return "salar: per chunk, MPICH MPI_Reduce in the node (binomial, or Rabenseifner reduce for long "
             "chunks) -> MPICH allreduce among the P/R leaders -> binomial bcast in the node; the C chunks "
             "pipelined (first chunk pays all three stages, the others the slowest)";
    case Design::coffee:
      return balanced
          ? "coffee: per chunk, balanced reduce-scatter in the node (fold when R is not a power of two, then "
            "log2 q halving rounds of m/2 .. m/q), q-1 parts of m/q to the leader, MPICH allreduce among the "
            "leaders, binomial bcast; chunks pipelined. Compute overlap not counted (comm only)"
          : "coffee without the balanced reduce: as salar's stages (MPICH MPI_Reduce to the leader), chunks "
            "pipelined. Compute overlap not counted (comm only)";
  }
  return "";
}

double predict_allreduce_s(Design d, const CommModel& m, int P, int R, int64_t n, int elem, int chunks,
                           bool balanced) {
  const double bytes = double(n) * elem;
  R = std::clamp(R, 1, std::max(1, P));
  const int L = P / R;
  const double mb = bytes / chunks;
  switch (d) {
    case Design::mpich: return predict_mpich_allreduce_s(m, P, bytes, elem);
    case Design::ring:
      return P <= 1 ? 0 : 2.0 * (P - 1) * m.msg(bytes / P) + (P - 1) * m.gamma * bytes / P;
    case Design::salar:
      return pipeline_s(chunks, mpich_reduce_s(m, R, mb, elem), predict_mpich_allreduce_s(m, L, mb, elem),
                        bcast_s(m, R, mb));
    case Design::coffee: {
      if (!balanced)
        return pipeline_s(chunks, mpich_reduce_s(m, R, mb, elem), predict_mpich_allreduce_s(m, L, mb, elem),
                          bcast_s(m, R, mb));
      const int q = pof2_below(R);
      double rs = fold_s(m, R, mb, false) + halving_s(m, q, mb, true);
      if (q > 1) rs += m.alpha + double(q - 1) / q * mb / m.beta;  // parts to the leader, posted together
      return pipeline_s(chunks, rs, predict_mpich_allreduce_s(m, L, mb, elem), bcast_s(m, R, mb));
    }
  }
  return 0;
}

namespace {
int mpich_allreduce_rounds(int P, double bytes, int elem) {
  if (P <= 1) return 0;
  const int q = pof2_below(P), fold = P == q ? 0 : 2;
  return fold + (short_vector(P, bytes, elem) ? 1 : 2) * ceil_log2(q);
}
int mpich_reduce_rounds(int R, double bytes, int elem) {
  if (R <= 1) return 0;
  if (short_vector(R, bytes, elem)) return ceil_log2(R);
  const int q = pof2_below(R);
  return (R == q ? 0 : 1) + 2 * ceil_log2(q);
}
int bcast_rounds(int R) { return R <= 1 ? 0 : R < 8 ? ceil_log2(R) : ceil_log2(pof2_below(R)) + R - 1; }
int pipeline_rounds(int C, int a, int b, int c) { return a + b + c + (C - 1) * std::max({a, b, c}); }
}  // namespace

int allreduce_rounds(Design d, int P, int R, int64_t n, int elem, int chunks, bool balanced) {
  const double bytes = double(n) * elem;
  R = std::clamp(R, 1, std::max(1, P));
  const int L = P / R;
  const double mb = bytes / chunks;
  switch (d) {
    case Design::mpich: return mpich_allreduce_rounds(P, bytes, elem);
    case Design::ring: return P <= 1 ? 0 : 2 * (P - 1);
    case Design::salar:
      return pipeline_rounds(chunks, mpich_reduce_rounds(R, mb, elem), mpich_allreduce_rounds(L, mb, elem),
                             bcast_rounds(R));
    case Design::coffee: {
      const int q = pof2_below(R);
      const int node = balanced ? (R == q ? 0 : 1) + ceil_log2(q) + (q > 1 ? 1 : 0) : mpich_reduce_rounds(R, mb, elem);
      return pipeline_rounds(chunks, node, mpich_allreduce_rounds(L, mb, elem), bcast_rounds(R));
    }
  }
  return 0;
}

template void ring_allreduce<double>(double*, int64_t, MPI_Comm, double*);
template void ring_allreduce<float>(float*, int64_t, MPI_Comm, float*);
template void salar_allreduce<double>(const double*, double*, int64_t, int, const Topology&);
template void salar_allreduce<float>(const float*, float*, int64_t, int, const Topology&);
template int node_reduce_scatter<double>(double*, int64_t, MPI_Comm, double*);
template int node_reduce_scatter<float>(float*, int64_t, MPI_Comm, float*);
template void coffee_allreduce<double>(double*, double*, int64_t, int, const Topology&, double*, const ChunkFn&, bool);
template void coffee_allreduce<float>(float*, float*, int64_t, int, const Topology&, float*, const ChunkFn&, bool);

}  // namespace rooflab::sinkhorn_mpi

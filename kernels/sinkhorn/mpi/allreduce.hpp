#pragma once
// Column-sum allreduce designs for distributed Sinkhorn (COFFEE, IEEE TPDS 2023, Sec. III, V).
//
// Rows are split across ranks; after each rank's local column sums the N sums are summed
// over all ranks. The designs differ only in how that sum travels:
//   mpich  MPI_Allreduce (MPICH's own algorithm choice)
//   ring   reduce-scatter + allgather around a ring, MPI_Sendrecv (the "MPICH-Ring" baseline)
//   salar  two-level (SALaR): intra-node reduce -> leaders' allreduce -> intra-node bcast,
//          pipelined over C chunks with non-blocking collectives
//   coffee COFFEE-MPI: balanced intra-node reduce-scatter (each worker keeps one part), parts
//          to the leader, leaders' MPI_Iallreduce, bcast; the caller's column modify of chunk
//          i-1 runs while chunk i's allreduce is in flight.
// Everything is built from standard MPI calls; nothing sleeps. Waiting is MPI's own (MPICH's
// ch4 busy-polls) unless WaitMode::yield is chosen (see below).
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace rooflab::sinkhorn_mpi {

template <class T> MPI_Datatype mpi_type();
template <> inline MPI_Datatype mpi_type<double>() { return MPI_DOUBLE; }
template <> inline MPI_Datatype mpi_type<float>() { return MPI_FLOAT; }

// Half-open [begin, end) of part k when n items are split into `parts` nearly equal parts
// (the first n % parts parts are not favoured: boundaries are n*k/parts).
inline int64_t part_begin(int64_t n, int64_t parts, int64_t k) { return n * k / parts; }

// World, node and leader communicators. ranks_per_node = 0: nodes are the shared-memory
// domains MPI reports (MPI_COMM_TYPE_SHARED); R > 0: ranks [kR, (k+1)R) form emulated node k,
// so the hierarchy is exercised on one machine. leaders is MPI_COMM_NULL off node rank 0.
class Topology {
 public:
  explicit Topology(int ranks_per_node);
  ~Topology();
  Topology(const Topology&) = delete;
  Topology& operator=(const Topology&) = delete;

  MPI_Comm world = MPI_COMM_WORLD, node = MPI_COMM_NULL, leaders = MPI_COMM_NULL;
  int rank = 0, size = 1;
  int node_rank = 0, node_size = 1;
  int nodes = 1;             // number of leaders
  int max_node_size = 1;     // ranks per node as reported (the largest node)
  bool leader() const { return node_rank == 0; }
};

// How a rank waits for communication. spin: MPI's blocking calls, which in MPICH (ch4:ucx, as
// Debian builds it; MPIR_CVAR_POLLS_BEFORE_YIELD is ch3-only) poll without ever giving up the
// core. yield: every call of the designs (and the driver's barriers and MPI_Allreduce) is
// posted non-blocking and completed by MPI_Test + sched_yield(), so a waiting rank hands its
// core to a runnable rank. The two differ only when ranks share cores (oversubscription).
enum class WaitMode { spin, yield };
WaitMode parse_wait_mode(const std::string& s);  // throws rooflab::Error for an unknown name
const char* to_string(WaitMode);
void set_wait_mode(WaitMode);  // process-wide; every rank must choose the same
WaitMode wait_mode();
// salar and coffee all-reduce each chunk among the node leaders with MPI_Iallreduce, so the
// next chunk's node reduce (and coffee's column modify) overlaps it. Blocking: MPI_Allreduce
// instead (no inter-node overlap). For SimGrid SMPI, whose MPI_Iallreduce sends every vector
// to every rank (no algorithm selection), while its MPI_Allreduce follows MPICH's choice.
void set_blocking_leaders(bool);  // process-wide; every rank must choose the same
bool blocking_leaders();
// Completes n requests under the wait mode (MPI_Waitall for spin).
void wait_all(int n, MPI_Request* reqs);
// The blocking calls the designs and the driver use, under the wait mode.
void barrier(MPI_Comm comm);
void allreduce_sum(const void* in, void* out, int count, MPI_Datatype t, MPI_Comm comm);

// Where a rank's communication time goes: wall seconds spent in the designs' calls on the node
// communicator (intra) and on communicators that span nodes (inter: the leaders, and the
// world when there is more than one node, so every call of mpich and ring), summed since
// reset_comm_split(). The rest of the allreduce (adding received parts, posting non-blocking
// calls) is neither. A non-blocking collective progresses inside whatever call the rank is
// blocked in, so the split says where each rank waited, not where each byte travelled.
struct CommSplit {
  double intra = 0, inter = 0;
};
void reset_comm_split();
CommSplit comm_split();

enum class Design { mpich, ring, salar, coffee };
Design parse_design(const std::string& s);  // throws rooflab::Error for an unknown name
const char* to_string(Design);

// Sum-allreduce of buf[0, n) over comm with the ring algorithm (any size, any n, uneven
// segments, empty segments when n < size). tmp holds >= n / size + 1 elements.
template <class T>
void ring_allreduce(T* buf, int64_t n, MPI_Comm comm, T* tmp);

// SALaR: out[0, n) = sum over all ranks of local[0, n), chunked over `chunks`.
template <class T>
void salar_allreduce(const T* local, T* out, int64_t n, int chunks, const Topology& topo);

// Balanced intra-node reduce-scatter (COFFEE Fig. 6) of buf[0, n) on comm, in
// ceil(log2 p) rounds: with q = the largest power of two <= p, ranks >= q first fold their
// data into rank - q, then q ranks halve recursively. Afterwards node rank k < q holds the
// node sum of part k (part_begin(n, q, k) .. part_begin(n, q, k+1)) in buf; ranks >= q hold
// no part. tmp holds >= n elements. Returns q.
template <class T>
int node_reduce_scatter(T* buf, int64_t n, MPI_Comm comm, T* tmp);

// COFFEE-MPI. local[0, n) (clobbered: it is the reduce-scatter's accumulator) is summed into
// out[0, n) over all ranks, in `chunks` column chunks. on_chunk(j0, len, poke) is called once
// per chunk, in order, as soon as out[j0, j0+len) holds the global sums; it should call
// poke() now and then (e.g. between row blocks) so MPI progresses the next chunk's
// allreduce while the chunk is being modified. tmp holds >= ceil(n / chunks) + 1 elements.
// balanced = false replaces the balanced reduce-scatter by MPI_Reduce to the node leader
// (MPICH's binomial tree: the leader adds every part), the "without reduce optimization"
// bar of COFFEE Fig. 16.
using ChunkFn = std::function<void(int64_t j0, int64_t len, const std::function<void()>& poke)>;
template <class T>
void coffee_allreduce(T* local, T* out, int64_t n, int chunks, const Topology& topo, T* tmp,
                      const ChunkFn& on_chunk, bool balanced = true);

// ---- Communication model ---------------------------------------------------------------
// Time of a message of b bytes: alpha + b / beta (alpha seconds, beta bytes/s), one link for
// intra- and inter-node alike (all emulated nodes share one machine); adding b bytes of
// partial sums costs gamma * b (gamma s/byte). The model assumes one core per rank: on a
// machine with fewer cores than ranks it predicts the unshared cost, not the scheduler's.
struct CommModel {
  double alpha = 0, beta = 0, gamma = 0;
  double msg(double bytes) const { return alpha + bytes / beta; }
};
// Predicted allreduce time of n elements of `elem` bytes by design d over P ranks in nodes of
// R ranks with `chunks` chunks; balanced: coffee's reduce-scatter (false: binomial reduce).
double predict_allreduce_s(Design d, const CommModel& m, int P, int R, int64_t n, int elem, int chunks,
                           bool balanced = true);
// MPICH's MPI_Allreduce of `bytes` over P ranks as the model assumes it (see allreduce.cpp),
// and the algorithm it picks ("recursive doubling" or "Rabenseifner").
double predict_mpich_allreduce_s(const CommModel& m, int P, double bytes, int elem);
const char* mpich_allreduce_algorithm(int P, double bytes, int elem);
// Message rounds on the critical path of the same algorithms (a round: every rank involved
// sends and receives once; chunks pipelined like the time). When ranks share cores and MPI
// busy-polls, a round costs scheduler time slices instead of alpha + bytes/beta.
int allreduce_rounds(Design d, int P, int R, int64_t n, int elem, int chunks, bool balanced = true);
// One line per design saying what the prediction counts (written into the output JSON).
const char* model_assumption(Design d, bool balanced = true);

}  // namespace rooflab::sinkhorn_mpi

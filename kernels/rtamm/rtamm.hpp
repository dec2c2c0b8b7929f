#pragma once
// RTAMM on a CPU: the run-time adaptive GEMM of "RTAMM: runtime adaptive matrix multiplication
// on SW26010" (../shared/papers/rtamm-sw26010.txt), built from the GEMM family's register
// micro-kernel and packing routines (kernels/gemm/gemm.hpp, used read-only).
//
// A plan = a loop order over CG-level blocks (Mcg, Ncg, Kcg) + a packing-ahead mode. The
// SW26010 "LDM" becomes a set of packed block buffers shared by the cooperating threads:
//   load A block  = pack_a of Mcg x Kcg (MR slivers)      OP_load(Mcg, Kcg)
//   load B block  = pack_b of Kcg x Ncg (NR slivers)      OP_load(Kcg, Ncg)
//   load C block  = copy Mcg x Ncg into a local buffer    OP_load(Mcg, Ncg)
//   store C block = copy the local block back             OP_store(Mcg, Ncg)
//   kernel        = the MR x NR micro-kernel over all tiles of the block, OP_kernel
// In every phase each thread runs its share of each task group (slivers, rows, tiles), then a barrier:
// all threads work on one block at a time, as the 64 CPEs of one CG do in the paper.
// Packing ahead (the paper's double buffering): ahead:ab (M2B2) packs the next step's A and B
// blocks into the second buffers, interleaved with the current kernel's tiles; ahead:abc (M3B2)
// also loads the next C block ahead. The out-of-order core overlaps the two only partly, so the
// cost formulas use a measured overlap ratio rho: overlapped = LDST + CMPT - rho * min(LDST,
// CMPT) (rho = 1 is the paper's max{LDST, CMPT}).
//
// Cost formulas (2)-(10), generalized: a matrix whose block does not depend on loop D (A: N,
// B: M, C: K) is loaded once per block when D is the innermost loop with more than one block,
// otherwise count(D) times per block (the paper's n_gb MK, m_gb KN, k_gb MN). Orders that swap
// the two outer loops (mnk = nmk, mkn = kmn, nkm = knm) have equal counts whenever the
// innermost loop has more than one block (the paper's assumption).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/json_io.hpp"
#include "harness/registry.hpp"
#include "kernels/gemm/gemm.hpp"

namespace rooflab {

// The registry table of the "rtamm" family.
const Family& rtamm_family();

namespace rtamm {

// The ISA of the micro-kernel RTAMM runs (its plans, pool, units and cases alike): gemm/blocked's
// default ISA on this machine (preferred_isa: measured by `rooflab isa-calibrate`, else the widest).
Isa kernel_isa(DType dt);

enum class Order { mnk, nmk, mkn, kmn, nkm, knm };
std::string_view to_string(Order);
std::optional<Order> parse_order(std::string_view);
// The representative of the order's cost class: mnk (= nmk), mkn (= kmn), nkm (= knm).
Order canonical(Order);
const std::vector<Order>& all_orders();
const std::vector<Order>& canonical_orders();  // mnk, mkn, nkm

enum class Ahead { none, ab, abc };  // abc: ab + C loaded ahead (M2B2 / M3B2 analogues)
std::string_view to_string(Ahead);
std::optional<Ahead> parse_ahead(std::string_view);

struct Block {
  int64_t mcg = 0, ncg = 0, kcg = 0;
  bool operator==(const Block&) const = default;
};
struct Plan {
  Order order = Order::mnk;
  Block b;
  Ahead ahead = Ahead::none;
};
// "mnk/84x512x256/ab"
std::string plan_id(const Plan&);

// ---- Blocking-factor pool (the paper's Table 2 / inequalities (12) on this machine) -------
struct Caches {
  int64_t l1 = 0, l2 = 0, l3 = 0;  // bytes, per core (L3: shared)
  std::string source;              // where the numbers come from
};
// caches.measured of a rooflab.machine/1 document (file `path` for messages). Throws Error
// naming `rooflab characterize` when absent.
Caches caches_from_machine(const json& machine, const std::filesystem::path& path);
// The caches the OS lists for this machine (as the gemm family's blocking) when no
// machine.json is given.
Caches default_caches();

struct PoolRules {
  int64_t elem = 8;  // element size (bytes)
  int mr = 0, nr = 0;
  Caches caches;
};
// Constraints every triple satisfies (the CPU analogue of the LDM inequalities (12)):
//   Mcg % MR == 0, Ncg % NR == 0, Kcg % 8 == 0, all >= 1
//   (c1) Kcg * NR * s <= L1 / 2            the B sliver stays in L1 across a tile column
//   (c2) Mcg * Kcg * s <= L2 / 2           the A block stays in L2 across the tiles
//   (c3) 2 (Mcg Kcg + Kcg Ncg + Mcg Ncg) s <= L3 / 2   all double buffers (ahead:abc) in L3
// Returns "" when `b` satisfies them, else the first violated constraint with its numbers.
std::string pool_violation(const Block& b, const PoolRules& r);
// The pool: a grid of candidate (Mcg, Ncg, Kcg), Kcg in {64, 128, 192, 256, ...} up to (c1),
// Mcg the largest multiple of MR within (c2) and its half, Ncg in {NR-rounded 128, 256, 512, 1024,
// largest within (c3)}; thinned to at most `max_size` triples spread over the aspect ratios.
// Throws Error when no triple satisfies the constraints (caches too small to block).
std::vector<Block> derive_pool(const PoolRules& r, size_t max_size = 6);
// Throws Error for an empty pool, a duplicate, or a triple violating a constraint (naming it).
void check_pool(const std::vector<Block>& pool, const PoolRules& r);
// Plans of a pool: orders x pool x {none, ab, abc}; canonical orders only unless `all`.
std::vector<Plan> plans_of(const std::vector<Block>& pool, bool all_orders_too = false);
// The static plan (the paper's baseline): MNK, ahead:ab, the pool's largest-Kcg, then
// largest-Mcg, then largest-Ncg triple (the BLIS-like "optimal blocking for big squares").
Plan static_plan(const std::vector<Block>& pool);

// ---- Step sequence and data-movement counts -------------------------------------------------
struct Step {
  int64_t mi = 0, ni = 0, ki = 0;   // block indices
  int64_t m0 = 0, n0 = 0, k0 = 0;   // first row / column / k of the block
  int64_t mc = 0, nc = 0, kc = 0;   // block extents (edge blocks are smaller)
};
// The steps of a plan in loop order.
class Steps {
 public:
  Steps(const Plan& p, const gemm::Dims& d);
  int64_t count() const { return cnt_[0] * cnt_[1] * cnt_[2]; }
  Step at(int64_t s) const;  // s in [0, count())
  int64_t mgb() const { return mgb_; }
  int64_t ngb() const { return ngb_; }
  int64_t kgb() const { return kgb_; }

 private:
  Plan p_;
  gemm::Dims d_;
  int64_t mgb_, ngb_, kgb_;
  int dim_[3];      // loop position -> 0 (m), 1 (n), 2 (k), outermost first
  int64_t cnt_[3];  // blocks per loop position
};

struct Movement {
  double a = 0, b = 0, c_load = 0, c_store = 0;  // elements moved
  int64_t steps = 0;
  int64_t kernel_calls = 0;   // micro-kernel calls
  double kernel_k = 0;        // sum over calls of kc (each call: 2 MR NR kc flops)
  int64_t phases = 0;         // OpenMP phases (barriers) the executor runs
};
// Closed form (what the cost formulas use; O(1)).
Movement movement(const Plan& p, const gemm::Dims& d, int mr, int nr);
// Blocks per dimension (m_gb, n_gb, k_gb) and register tiles per row / column of blocks, shared
// by the plans of one triple (the engine computes them once per triple).
struct BlockCounts {
  int64_t cnt[3] = {};
  int64_t tm = 0, tn = 0;
};
BlockCounts block_counts(const Block& b, const gemm::Dims& d, int mr, int nr);
Movement movement(const Plan& p, const gemm::Dims& d, const BlockCounts& bc);
// By walking the executor's step sequence (tests check both agree).
Movement movement_by_steps(const Plan& p, const gemm::Dims& d, int mr, int nr);

// ---- Executor -------------------------------------------------------------------------------
// The block buffers' extents on d: each blocking factor, but no more than d's dimension
// (M rounded up to MR, N to NR): a block beyond the problem is never filled.
Block run_block(const Plan& p, const gemm::Dims& d, int mr, int nr);
// Elements of scratch a plan needs on d: two A, two B and two C buffers of run_block's extents
// (the executor lays them out so). Without d: on any problem (the plan's whole blocks).
int64_t workspace(const Plan& p, const gemm::Dims& d, int mr, int nr);
int64_t workspace(const Plan& p, int mr, int nr);
// Throws Error for blocking factors < 1 or not multiples of MR / NR.
void check_plan(const Plan& p, int mr, int nr);
// C += A·B with the plan; uses omp_get_max_threads() threads; never allocates.
template <class T>
void run_plan(const Plan& p, const gemm::Ukernel<T>& uk, const gemm::Dims& d, const T* A, const T* B, T* C,
              T* work);

// ---- Unit costs (machine.json "rtamm" section) ----------------------------------------------
enum Level { kL2 = 0, kL3 = 1, kDram = 2, kLevels = 3 };
std::string_view level_name(int level);
struct BlockUnits {
  Block b;
  double load_a[kLevels] = {}, load_b[kLevels] = {}, load_c[kLevels] = {}, store_c[kLevels] = {};  // ns/element
  double op_kernel = 0;       // ns per flop at full blocks (the paper's OP_kernel)
  double call_ns = 0;         // kernel fit: per micro-kernel call ...
  double k_ns = 0;            // ... + per unit of kc
  double rho[kLevels] = {};   // measured overlap of packing ahead with the kernel, 0..1
};
// Optional correction of the formula's terms, fitted (non-negative least squares on relative
// error) to plan times measured on a TRAINING set of shapes disjoint from the evaluation's
// (`rooflab rtamm calibrate`). cost = sum of scale x term - overlap x min(LDST, CMPT); without a
// calibration every scale is 1 and overlap = the measured rho (the plain formulas).
struct Calibration {
  bool present = false;
  double load_a = 1, load_b = 1, load_c = 1, load_c_ahead = 1, store_c = 1, sync = 1, overlap = 0;
  std::vector<double> kernel;  // per Units::blocks entry (same order)
  json provenance = json::object();
};
// The calibration's features, in fit order: load_a, load_b, load_c (loaded in a transfer
// phase), load_c_ahead (ahead:abc), store_c, sync, -min(LDST, CMPT) (ahead plans, else 0), then
// the kernel term of each Units::blocks entry (0 except the plan's own triple).
constexpr int kCalibFixed = 7;
struct Units {
  std::string dtype = "f64";
  int threads = 1;
  std::string isa;
  int mr = 0, nr = 0;
  Caches caches;
  double sync_ns = 0;  // one empty OpenMP phase (for + barrier)
  double region_ns = 0;  // one empty parallel region (fork / join): once per plan run
  double quiet_fraction = 1;  // share of the quantities measured with at least one quiet sample
  std::vector<BlockUnits> blocks;
  Calibration calib;
  const BlockUnits* find(const Block& b) const;
};
// A units entry; "calibration" only when present (an entry of the older layout carried the one
// fitted on it: units_from_json still reads it).
json to_json(const Units& u);
Units units_from_json(const json& j);  // throws Error on a malformed entry
// The calibration object (null when absent) of a "rtamm_calibration" entry; from_json throws
// Error unless it has every scale and one kernel scale per block.
json calibration_to_json(const Calibration& k);
Calibration calibration_from_json(const json& c, size_t blocks);
// The units for (dtype, threads) from machine.json's "rtamm" section, with the calibration for
// them from the "rtamm_calibration" section (machine.rtamm_calibration.json) unless
// `calibrated` is false. Throws Error naming `rooflab rtamm units --machine FILE --threads T`
// when the section or that entry is missing, and naming the calibration file when it is
// malformed. A calibration fitted on other units than the present ones (stale_sections of
// read_machine_json) is not applied: one warning on stderr names both files and says to re-run
// `rooflab rtamm calibrate`. With `runs_here` (plans are timed or chosen in this process) it also
// throws Error when machine.json was characterized on another CPU (foreign_cpu), or the units were
// measured with another micro-kernel than kernel_isa(dtype): what it returns is this CPU's.
Units load_units(const std::filesystem::path& machine_json, const std::string& dtype, int threads,
                 bool calibrated = true, bool runs_here = true);

// ---- Cost formulas and the adaptive engine -----------------------------------------------------
struct Cost {
  double load_a = 0, load_b = 0, load_c = 0, store_c = 0, kernel = 0, sync = 0;  // ns
  double ldst_olp = 0, cmpt_olp = 0;   // the overlapped parts (ahead plans)
  double total = 0;
  int level = kL2;
};
// Which level the matrices are loaded from: by the working set s (M lda + K ldb + M ldc).
int source_level(const gemm::Dims& d, int64_t elem, const Caches& c);
// Throws Error when the units lack the plan's triple (naming `rooflab rtamm units`).
Cost cost(const Plan& p, const gemm::Dims& d, const Units& u);
// The uncalibrated terms of the plan's formula as the calibration's feature vector (kCalibFixed
// + u.blocks.size() entries, see Calibration).
std::vector<double> calib_features(const Plan& p, const gemm::Dims& d, const Units& u);
// Non-negative least squares min |X c - y| (rows of X), c >= 0, by cyclic coordinate descent on
// the normal equations (few columns); columns that are all zero get 0.
std::vector<double> nnls(const std::vector<std::vector<double>>& X, const std::vector<double>& y);
// Fits the calibration to measured[s][i] = the time (ns) of plans[i] on shapes[s]: minimizes the
// relative error sum ((pred - a_s t) / (a_s t))^2 with a free speed factor a_s per shape (median
// 1: the VM's speed drifts between shapes, only the ranking within one matters). Throws Error
// without data.
Calibration fit_calibration(const Units& u, const std::vector<Plan>& plans, const std::vector<gemm::Dims>& shapes,
                            const std::vector<std::vector<double>>& measured);

// The adaptive engine: plans with their units resolved once, choose() evaluates every plan's
// formula and returns the index of the least.
class Engine {
 public:
  Engine(std::vector<Plan> plans, Units units);  // throws when units miss a triple
  size_t choose(const gemm::Dims& d) const;
  const std::vector<Plan>& plans() const { return plans_; }
  const Units& units() const { return units_; }
  double predict(size_t i, const gemm::Dims& d) const;

 private:
  std::vector<Plan> plans_;
  Units units_;
  std::vector<const BlockUnits*> bu_;
  std::vector<Block> blocks_;     // the distinct triples
  std::vector<size_t> block_of_;  // plan -> its triple in blocks_
};

}  // namespace rtamm
}  // namespace rooflab

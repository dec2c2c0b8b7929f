#pragma once
// sfc_ca's knobs (k_layers, kbf, and optionally bk) chosen three ways, as in the SFC-CA paper
// (../shared/papers/sfc-ca-gemm.txt, Section III-C):
//   autotune   every knob of a small grid verified and timed; the fastest, cached per shape
//              (M, N, K, dtype, threads, isa) in a rooflab.gemm_knobs/1 JSON file;
//   analytic   the per-BRGEMM roofline of Section III-B over the driver's real schedule (which
//              A / B blocks come from slow memory for each thread's range of the curve, the
//              C tiles' first touch, k_layers copies zeroed and reduced, the packing) with
//              the machine model's ceilings (machine.json); the knob of least predicted time;
//   nn         the best knob of the nearest autotuned shape (log2 M, N, K distance) of a set
//              stored as data (results/gemm/knobs_nn.json, made by `rooflab gemm-knobs build-nn`).
// `rooflab gemm-knobs` (apps/gemm_knobs.cpp) tunes, builds the NN set and evaluates the two models
// against the autotuned best over random shapes (docs/json.md#gemm-knobs).
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/isa.hpp"
#include "harness/registry.hpp"
#include "kernels/gemm/gemm.hpp"

namespace rooflab::roofline {
struct Machine;
}

namespace rooflab::gemm::knobs {

struct Knob {
  int64_t k_layers = 1, kbf = 1, bk = kSfcDefault.bk;
  bool operator==(const Knob&) const = default;
};
std::string to_string(const Knob& k);  // "k_layers:2/kbf:4/bk:128"

struct Shape {
  int64_t m = 0, n = 0, k = 0;
  DType dtype = DType::f64;
  int threads = 1;
  Isa isa = Isa::avx2;
  bool operator==(const Shape&) const = default;
};
std::string to_string(const Shape& s);  // "1000x777x513 f64 avx2 threads:2"
// "MxNxK" -> dims; throws Error naming the text.
Shape parse_shape(const std::string& mxnxk, DType dt, int threads, Isa isa);

// The knob grid: every combination of the lists (those valid for a shape are its candidates).
struct Grid {
  std::vector<int64_t> k_layers{1, 2, 4};
  std::vector<int64_t> kbf{1, 2, 4, 8};
  std::vector<int64_t> bk{kSfcDefault.bk};
};
// "k_layers:1,2,4/kbf:1,2,4,8[/bk:64,128]" (keys in any order, missing keys keep the default).
// Throws Error for an unknown key, a value that is not an integer in [1, 4096], an empty or
// duplicated list.
Grid parse_grid(const std::string& spec);
std::string to_string(const Grid& g);
// The grid's knobs that check_sfc_plan accepts for the shape, in grid order (bk, k_layers,
// kbf). Throws Error when none is valid.
std::vector<Knob> candidates(const Grid& g, const Shape& s);
// The sfc_ca benchmark case of a shape with these knobs (bm, bn at the family defaults).
Case sfc_case(const Shape& s, const Knob& k);

// ---- Autotuning and the cache ----------------------------------------------------------------
struct Timing {
  Knob knob;
  double seconds = 0;  // fastest (quiet) repetition of one C += A·B
  int quiet_reps = 0;  // repetitions with nothing else runnable on the machine (0: noisy)
};
struct Tuned {
  Shape shape;
  std::vector<Timing> timings;
  const Timing& best() const;                          // throws Error when empty
  const Timing* find(const Knob& k) const;             // nullptr if not timed
  const Timing* best_among(const std::vector<Knob>& ks) const;  // fastest timed one of ks, or nullptr
};

struct TuneOptions {
  int reps = 3;                                         // timed repetitions per knob (min taken)
  double wait_quiet_s = 3.0;                            // time_knob's wait for a quiet machine
  std::function<void(const std::string&)> progress;     // one line per knob timed, if set
};
// Verifies the sfc_ca case of the knob (exactly, the family's check; this run is also the
// warm-up) and times it at s.threads threads: the fastest of `reps` quiet runs (nothing else
// runnable on the machine just before and after, /proc/stat; up to 3 x reps tries, waiting at
// most wait_s in all for quiet). Throws Error when the case is invalid or fails verification.
Timing time_knob(const Shape& s, const Knob& k, int reps, double wait_s = 3.0);
// Verifies and times (time_knob) every candidate of the grid not already in `known` (its
// timings are kept).
Tuned autotune(const Shape& s, const Grid& g, const TuneOptions& o, const Tuned* known = nullptr);

// The contents of a rooflab.gemm_knobs/1 file: autotuned shapes ("entries"); the file may
// carry more top-level keys (an evaluation, how an NN set was produced), kept in `extra`.
struct KnobFile {
  std::vector<Tuned> entries;
  nlohmann::json extra = nlohmann::json::object();
  // Missing file: empty (a new cache) when allow_missing, else Error. Wrong schema or a
  // malformed entry: Error naming the file.
  static KnobFile load(const std::filesystem::path& p, bool allow_missing);
  void save(const std::filesystem::path& p) const;  // atomic
  const Tuned* find(const Shape& s) const;
  void put(const Tuned& t);                          // replaces the entry of the same shape
};
nlohmann::json to_json(const Tuned& t);
Tuned tuned_from_json(const nlohmann::json& j);    // throws Error on a malformed entry

// ---- The analytic model ------------------------------------------------------------------------
// The ceilings the model uses, per thread, from machine.json.
struct MachineParams {
  double flops = 0;        // FLOP/s of one thread at the FMA ceiling (dtype's)
  double l1 = 0, l2 = 0;   // per-core capacities, bytes
  double l3 = 0;           // shared
  double bw_l2 = 0;        // per-thread L2 read bandwidth, B/s (C tiles' read-modify-write)
  double bw_slow = 0;      // per-thread read bandwidth of the level the packed A and B live in
  double bw_c = 0;         // all-thread update bandwidth of the level C lives in (first touch)
  double bw_copy = 0;      // all-thread copy bandwidth (packing, zeroing, reduction)
  std::string slow_level, c_level;
  std::string compute_isa, compute_note;  // Machine::find_compute's table and fallback note
};
// Throws Error naming machine.json when a ceiling is missing.
MachineParams machine_params(const roofline::Machine& m, const Shape& s);

struct Prediction {
  Knob knob;
  double seconds = 0;                   // pack + critical path + reduction
  double pack = 0, critical = 0, reduce = 0;
  double compute = 0;                   // critical thread: compute-bound part
  double slow_bytes = 0;                // critical thread: A / B bytes from slow memory
  int64_t brgemm[4] = {0, 0, 0, 0};     // critical thread: BRGEMMs of types i..iv (A&B, A, B, none slow)
};
// Simulates the driver's schedule for the knob (layer-major, contiguous ranges of the
// generalized Hilbert curve per thread) and prices each BRGEMM by the roofline.
Prediction predict(const Shape& s, const Knob& k, const MachineParams& mp);
// The paper's capacity rule: one BRGEMM's A and B panels, (bm + bn) x kbf*bk elements, take at
// most kL2Fraction of the per-core L2.
inline constexpr double kL2Fraction = 0.75;
bool panels_fit_l2(const Shape& s, const Knob& k, const MachineParams& mp);
// The candidate of least predicted time among those whose panels fit L2 (all when none fits;
// ties: the earlier candidate). Throws like candidates().
Prediction analytic_choice(const Shape& s, const Grid& g, const MachineParams& mp);
// The SFC-CA paper's tight roofline (Fig. 6 / 9): the least predicted time over the whole grid
// (analytic_choice's L2 panel rule is the paper's selection rule, not part of the bound).
// Throws like candidates().
Prediction tight_bound(const Shape& s, const Grid& g, const MachineParams& mp);
// {knob, time_s, gflops (flops / time_s), pack_s, critical_s, critical_compute_s, reduce_s,
// critical_slow_bytes, brgemm_types}: model.json's predictions.tight / .brgemm (docs/json.md).
nlohmann::json to_json(const Prediction& p, double flops);

// ---- Nearest neighbour -------------------------------------------------------------------------
struct NnChoice {
  Knob knob;
  const Tuned* neighbour = nullptr;
  double distance = 0;  // in log2 (M, N, K) space
  std::string note;     // "" when the neighbour has the query's ISA and threads, else what differs
};
// The nearest entry of the same dtype / threads / isa; its fastest knob among the query's
// candidates (the neighbour's own best when valid). A set autotuned on another CPU may have no
// entry of the query's ISA (the committed one is AVX2 at 2 threads; an AVX-512 CPU asks for
// avx512, a 4-core one for threads:4): then the nearest thread count (log2), then the ISA
// closest in width (the wider on a tie), and `note` says so. The knobs shape the schedule and
// the batch over the fixed 96 x 96 tiles, not the register tile, so that is the nearest
// evidence there is, but not autotuned for this machine. Throws Error when the set has no
// entry of this dtype with a valid knob.
NnChoice nn_choice(const std::vector<Tuned>& set, const Shape& s, const Grid& g);

// Resolves `knobs:<method>` of an sfc_ca case name: "nn" (results/gemm/knobs_nn.json in the
// source tree, or $ROOFLAB_GEMM_KNOBS_NN) or "analytic" ($ROOFLAB_MACHINE, else
// results/latest/machine.json). Throws Error for another method or a missing file. When nn
// takes another ISA's entry, `note` (if given) gets NnChoice::note and a warning goes to
// stderr (once per set and dtype / ISA / threads), so the substitution is never silent.
Knob resolve_method(const std::string& method, const Shape& s, std::string* note = nullptr);

}  // namespace rooflab::gemm::knobs

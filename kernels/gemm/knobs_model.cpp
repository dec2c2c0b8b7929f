// The analytic knob model: the SFC-CA paper's per-BRGEMM roofline (Section III-B) evaluated on
// the driver's actual schedule, with the machine model's ceilings.
//
// For a knob (k_layers L, kbf, bk) and T threads the driver's work items are L x tiles, taken
// layer-major and along the generalized Hilbert curve within a layer, and cut by `omp for
// schedule(static)` into T contiguous ranges (GCC: the first W % T threads get one more).
// For each thread's range we walk its BRGEMMs in order and keep the packed A blocks (i, kb)
// and B blocks (kb, j) it touched in an LRU "fast memory" of the per-core L2 capacity (less
// the C tile being updated): the paper's four BRGEMM types (A and B from slow memory / only
// A / only B / neither) fall out of the curve order instead of being assumed. Each BRGEMM
// costs
//   max(padded flops / FMA ceiling, slow bytes / slow-memory read bandwidth [+ the C tile's
//       first read and write from the level C lives in, on its first BRGEMM],
//       L2 -> L1 bytes / L2 bandwidth)
//   + the C tile's read-modify-write from L2 around the batch (C leaves the registers once
//     per BRGEMM: the price of a small kbf)
// where padded flops count the MR x NR register blocks the micro-kernel really computes
// (edge tiles, K padded to bk), and the L2 -> L1 bytes are the A panel re-streamed once per
// NR-column sliver plus the B panel, re-streamed once per MR-row sliver when a B sliver and
// an A sliver of the batch do not fit L1 together (a large kbf). The time is packing (A and
// B read and written once at the copy bandwidth) + the slowest thread + for L > 1 zeroing
// the L - 1 copies and reducing them into C (copy bandwidth of the level the copies live in).
//
// As the paper does (its roofline assumes an unbounded per-core fast memory), the choice then
// keeps only knobs whose BRGEMM panels (A: bm x kbf*bk, B: kbf*bk x bn) fit within a fraction
// of the per-core L2 (panels_fit_l2; all knobs when none does) and takes the least predicted
// time among them.
#include <omp.h>

#include <algorithm>
#include <list>
#include <optional>
#include <unordered_map>

#include "harness/error.hpp"
#include "kernels/gemm/knobs.hpp"
#include "roofline/machine.hpp"

namespace rooflab::gemm::knobs {
namespace {
int64_t cdiv(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t round_up(int64_t x, int64_t m) { return cdiv(x, m) * m; }

// Least-recently-used set of equal-sized blocks.
class Lru {
 public:
  explicit Lru(size_t capacity) : cap_(capacity) {}
  // True when `id` was resident; makes it the most recent either way.
  bool touch(int64_t id) {
    auto it = where_.find(id);
    if (it != where_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return true;
    }
    if (cap_ == 0) return false;
    if (where_.size() == cap_) {
      where_.erase(order_.back());
      order_.pop_back();
    }
    order_.push_front(id);
    where_[id] = order_.begin();
    return false;
  }

 private:
  size_t cap_;
  std::list<int64_t> order_;
  std::unordered_map<int64_t, std::list<int64_t>::iterator> where_;
};

std::pair<int, int> mr_nr(const Shape& s) {
  if (s.dtype == DType::f64) {
    const auto u = ukernel<double>(s.isa);
    return {u.mr, u.nr};
  }
  const auto u = ukernel<float>(s.isa);
  return {u.mr, u.nr};
}
}  // namespace

MachineParams machine_params(const roofline::Machine& m, const Shape& s) {
  MachineParams p;
  const int T = s.threads;
  const double esz = double(dtype_size(s.dtype));
  // The FMA ceiling of the micro-kernel's own ISA (compute.by_isa; older files: the widest).
  const auto fma = m.find_compute(s.dtype == DType::f64 ? "fma_f64" : "fma_f32", T, s.isa);
  p.flops = fma.gflops * 1e9 / T;
  p.compute_isa = fma.isa;
  p.compute_note = fma.note;
  for (const auto& c : m.caches) (c.name == "L1" ? p.l1 : c.name == "L2" ? p.l2 : p.l3) = c.bytes;
  if (p.l1 <= 0 || p.l2 <= 0)
    throw Error(m.path.string() + ": no L1 / L2 capacity in caches; re-run `rooflab characterize`");
  p.bw_l2 = m.bandwidth("L2", "read", T) * 1e9 / T;
  // The packed A and B (padding ignored here) and C decide their levels (L3 shared, L1 / L2
  // private: Machine::level_for).
  const double ab = esz * double(s.m * s.k + s.k * s.n), c = esz * double(s.m * s.n);
  p.slow_level = m.level_for(ab, T);
  p.bw_slow = m.bandwidth(p.slow_level, "read", T) * 1e9 / T;
  p.c_level = m.level_for(c, T);
  // C's first touch is a read-modify-write: "update" where measured (older files: "copy").
  try {
    p.bw_c = m.bandwidth(p.c_level, "update", T) * 1e9;
  } catch (const Error&) {
    p.bw_c = m.bandwidth(p.c_level, "copy", T) * 1e9;
  }
  p.bw_copy = m.bandwidth(m.level_for(ab + c, T), "copy", T) * 1e9;
  return p;
}

Prediction predict(const Shape& s, const Knob& k, const MachineParams& mp) {
  if (!(mp.flops > 0 && mp.bw_l2 > 0 && mp.bw_slow > 0 && mp.bw_c > 0 && mp.bw_copy > 0 && mp.l1 > 0 && mp.l2 > 0))
    throw Error("gemm knob model: machine parameters must be positive");
  const Dims d{s.m, s.n, s.k, s.k, s.n, s.n};
  SfcPlan plan = kSfcDefault;
  plan.bk = k.bk, plan.k_layers = k.k_layers, plan.kbf = k.kbf;
  check_sfc_plan(plan, d);
  const auto [MR, NR] = mr_nr(s);
  const double esz = double(dtype_size(s.dtype));
  const int64_t bm = plan.bm, bn = plan.bn, bk = plan.bk, L = plan.k_layers;
  const int64_t mt = cdiv(s.m, bm), nt = cdiv(s.n, bn), KB = cdiv(s.k, bk), ntiles = mt * nt, W = L * ntiles;
  const int64_t bmp = round_up(bm, MR), bnp = round_up(bn, NR);
  const double a_bytes = esz * double(bmp * bk), b_bytes = esz * double(bnp * bk);
  const auto order = gilbert(nt, mt);  // (tile column, tile row), as sfc_order()

  // Fast memory per core: L2 less the C tile under update; blocks of A and B alike (equal
  // here: bm == bn), so capacity counts the larger.
  const double fast = std::max(0.0, mp.l2 - esz * double(bmp * bnp));
  const Lru proto(size_t(fast / std::max(a_bytes, b_bytes)));

  Prediction out;
  out.knob = k;
  const int T = s.threads;
  for (int t = 0; t < T; ++t) {
    const int64_t q = W / T, r = W % T;
    const int64_t begin = t * q + std::min<int64_t>(t, r), end = begin + q + (t < r ? 1 : 0);
    Lru lru = proto;
    double time = 0, compute = 0, slow = 0;
    int64_t types[4] = {0, 0, 0, 0};
    for (int64_t w = begin; w < end; ++w) {
      const int64_t l = w / ntiles;
      const auto [tj, ti] = order[size_t(w % ntiles)];
      const int64_t kb0 = KB * l / L, kb1 = KB * (l + 1) / L;
      const int64_t m = std::min(bm, s.m - ti * bm), n = std::min(bn, s.n - tj * bn);
      const double mpad = double(round_up(m, MR)), npad = double(round_up(n, NR));
      for (int64_t kb = kb0; kb < kb1; kb += k.kbf) {
        const int64_t nb = std::min(k.kbf, kb1 - kb);
        int64_t a_miss = 0, b_miss = 0;
        for (int64_t x = kb; x < kb + nb; ++x) {
          a_miss += lru.touch(2 * (int64_t(ti) * KB + x)) ? 0 : 1;
          b_miss += lru.touch(2 * (int64_t(tj) * KB + x) + 1) ? 0 : 1;
        }
        const double flops = 2 * mpad * npad * double(nb * bk);
        const double slow_bytes = double(a_miss) * a_bytes + double(b_miss) * b_bytes;
        double t_mem = slow_bytes / mp.bw_slow;
        if (kb == kb0) t_mem += 2 * esz * double(m * n) / (mp.bw_c / T);  // C tile's first touch
        const double kc = double(nb * bk);
        const bool b_in_l1 = esz * kc * double(MR + NR) <= mp.l1;
        const double l2_bytes = esz * kc * (mpad * (npad / NR) + npad * (b_in_l1 ? 1.0 : mpad / MR));
        const double t_comp = flops / mp.flops;
        time += std::max({t_comp, t_mem, l2_bytes / mp.bw_l2}) + 2 * esz * mpad * npad / mp.bw_l2;
        compute += t_comp;
        slow += slow_bytes;
        ++types[a_miss && b_miss ? 0 : a_miss ? 1 : b_miss ? 2 : 3];
      }
    }
    if (t == 0 || time > out.critical) {
      out.critical = time, out.compute = compute, out.slow_bytes = slow;
      std::copy(types, types + 4, out.brgemm);
    }
  }
  const double mn = double(s.m * s.n);
  out.pack = esz * (double(s.m * s.k + s.k * s.n) + double(KB * bk) * double(mt * bmp + nt * bnp)) / mp.bw_copy;
  out.reduce = L > 1 ? esz * mn * (2.0 * double(L - 1) + 2.0) / mp.bw_copy : 0.0;
  out.seconds = out.pack + out.critical + out.reduce;
  return out;
}

bool panels_fit_l2(const Shape& s, const Knob& k, const MachineParams& mp) {
  const auto [MR, NR] = mr_nr(s);
  const double panels = double(dtype_size(s.dtype)) * double(k.kbf * k.bk) *
                        double(round_up(kSfcDefault.bm, MR) + round_up(kSfcDefault.bn, NR));
  return panels <= kL2Fraction * mp.l2;
}

Prediction analytic_choice(const Shape& s, const Grid& g, const MachineParams& mp) {
  Prediction best;
  bool first = true, fit = false;
  const std::vector<Knob> cands = candidates(g, s);
  for (const Knob& k : cands) fit = fit || panels_fit_l2(s, k, mp);
  for (const Knob& k : cands) {
    if (fit && !panels_fit_l2(s, k, mp)) continue;
    Prediction p = predict(s, k, mp);
    if (first || p.seconds < best.seconds) best = p, first = false;
  }
  return best;
}

Prediction tight_bound(const Shape& s, const Grid& g, const MachineParams& mp) {
  std::optional<Prediction> best;
  for (const Knob& k : candidates(g, s)) {
    Prediction p = predict(s, k, mp);
    if (!best || p.seconds < best->seconds) best = p;
  }
  return *best;  // candidates() throws rather than return none
}

nlohmann::json to_json(const Prediction& p, double flops) {
  return {{"knob", {{"k_layers", p.knob.k_layers}, {"kbf", p.knob.kbf}, {"bk", p.knob.bk}}},
          {"time_s", p.seconds},
          {"gflops", flops / p.seconds * 1e-9},
          {"pack_s", p.pack},
          {"critical_s", p.critical},
          {"critical_compute_s", p.compute},
          {"reduce_s", p.reduce},
          {"critical_slow_bytes", p.slow_bytes},
          {"brgemm_types", {{"A_and_B_slow", p.brgemm[0]}, {"A_slow", p.brgemm[1]}, {"B_slow", p.brgemm[2]},
                            {"none_slow", p.brgemm[3]}}}};
}

}  // namespace rooflab::gemm::knobs

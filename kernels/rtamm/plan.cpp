// Plans: loop orders, the step sequence, data-movement counts (closed form and by walking the
// executor), the blocking-factor pool and the executor entry point.
#include <algorithm>
#include <cmath>
#include <map>

#include "harness/error.hpp"
#include "harness/isa_choice.hpp"
#include "harness/host_caches.hpp"
#include "kernels/rtamm/exec.hpp"
#include "roofline/machine.hpp"

namespace rooflab::rtamm {

Isa kernel_isa(DType dt) { return preferred_isa("gemm", "blocked", dt); }
using detail::ceil_div;
using detail::round_up;

namespace {
struct OrderRow {
  Order o;
  const char* name;
  int dims[3];  // outermost first; 0 = m, 1 = n, 2 = k
};
constexpr OrderRow kOrders[] = {{Order::mnk, "mnk", {0, 1, 2}}, {Order::nmk, "nmk", {1, 0, 2}},
                                {Order::mkn, "mkn", {0, 2, 1}}, {Order::kmn, "kmn", {2, 0, 1}},
                                {Order::nkm, "nkm", {1, 2, 0}}, {Order::knm, "knm", {2, 1, 0}}};
const OrderRow& row(Order o) { return kOrders[int(o)]; }
}  // namespace

std::string_view to_string(Order o) { return row(o).name; }
std::optional<Order> parse_order(std::string_view s) {
  for (const auto& r : kOrders)
    if (s == r.name) return r.o;
  return std::nullopt;
}
Order canonical(Order o) {
  switch (o) {
    case Order::nmk: return Order::mnk;
    case Order::kmn: return Order::mkn;
    case Order::knm: return Order::nkm;
    default: return o;
  }
}
const std::vector<Order>& all_orders() {
  static const std::vector<Order> v = {Order::mnk, Order::nmk, Order::mkn, Order::kmn, Order::nkm, Order::knm};
  return v;
}
const std::vector<Order>& canonical_orders() {
  static const std::vector<Order> v = {Order::mnk, Order::mkn, Order::nkm};
  return v;
}
std::string_view to_string(Ahead a) { return a == Ahead::none ? "none" : a == Ahead::ab ? "ab" : "abc"; }
std::optional<Ahead> parse_ahead(std::string_view s) {
  for (Ahead a : {Ahead::none, Ahead::ab, Ahead::abc})
    if (s == to_string(a)) return a;
  return std::nullopt;
}
std::string plan_id(const Plan& p) {
  return std::string(to_string(p.order)) + "/" + std::to_string(p.b.mcg) + "x" + std::to_string(p.b.ncg) + "x" +
         std::to_string(p.b.kcg) + "/" + std::string(to_string(p.ahead));
}

// ---- Steps ------------------------------------------------------------------------------------
Steps::Steps(const Plan& p, const gemm::Dims& d)
    : p_(p), d_(d), mgb_(ceil_div(d.m, p.b.mcg)), ngb_(ceil_div(d.n, p.b.ncg)), kgb_(ceil_div(d.k, p.b.kcg)) {
  const int64_t per_dim[3] = {mgb_, ngb_, kgb_};
  for (int i = 0; i < 3; ++i) dim_[i] = row(p.order).dims[i], cnt_[i] = per_dim[dim_[i]];
}

Step Steps::at(int64_t s) const {
  int64_t idx[3];
  idx[dim_[2]] = s % cnt_[2];
  idx[dim_[1]] = (s / cnt_[2]) % cnt_[1];
  idx[dim_[0]] = s / (cnt_[2] * cnt_[1]);
  Step st;
  st.mi = idx[0], st.ni = idx[1], st.ki = idx[2];
  st.m0 = st.mi * p_.b.mcg, st.n0 = st.ni * p_.b.ncg, st.k0 = st.ki * p_.b.kcg;
  st.mc = std::min(p_.b.mcg, d_.m - st.m0), st.nc = std::min(p_.b.ncg, d_.n - st.n0);
  st.kc = std::min(p_.b.kcg, d_.k - st.k0);
  return st;
}

// ---- Data movement ------------------------------------------------------------------------------
BlockCounts block_counts(const Block& b, const gemm::Dims& d, int mr, int nr) {
  BlockCounts c;
  c.cnt[0] = ceil_div(d.m, b.mcg), c.cnt[1] = ceil_div(d.n, b.ncg), c.cnt[2] = ceil_div(d.k, b.kcg);
  // Tiles per block row / column: full blocks hold mcg / MR tiles, the edge block ceil(rest / MR).
  c.tm = (d.m / b.mcg) * ceil_div(b.mcg, mr) + ceil_div(d.m % b.mcg, mr);
  c.tn = (d.n / b.ncg) * ceil_div(b.ncg, nr) + ceil_div(d.n % b.ncg, nr);
  return c;
}

Movement movement(const Plan& p, const gemm::Dims& d, const BlockCounts& bc) {
  const int64_t* cnt = bc.cnt;
  const int* dims = row(p.order).dims;
  // The innermost loop with more than one block (-1: a single step).
  const int inner = cnt[dims[2]] > 1 ? dims[2] : cnt[dims[1]] > 1 ? dims[1] : cnt[dims[0]] > 1 ? dims[0] : -1;
  // A matrix without loop D is loaded once per block when D is that loop, else count(D) times.
  auto factor = [&](int missing) { return inner == missing || inner < 0 ? int64_t(1) : cnt[missing]; };
  const double M = double(d.m), N = double(d.n), K = double(d.k);
  Movement mv;
  mv.a = double(factor(1)) * M * K;
  mv.b = double(factor(0)) * K * N;
  mv.c_load = mv.c_store = double(factor(2)) * M * N;
  mv.steps = cnt[0] * cnt[1] * cnt[2];
  mv.kernel_calls = bc.tm * bc.tn * cnt[2];
  mv.kernel_k = double(bc.tm) * double(bc.tn) * K;
  const int64_t c_blocks = factor(2) * cnt[0] * cnt[1];
  // none: a transfer phase before every kernel phase; ahead: only where the C block changes;
  // + the final store.
  mv.phases = (p.ahead == Ahead::none ? mv.steps : c_blocks) + mv.steps + 1;
  return mv;
}

Movement movement(const Plan& p, const gemm::Dims& d, int mr, int nr) {
  return movement(p, d, block_counts(p.b, d, mr, nr));
}

namespace {
using detail::Xfer;
struct Counter {
  int mr, nr;
  Movement mv;
  void count(const Xfer& x) {
    if (x.a) mv.a += double(x.sa.mc * x.sa.kc);
    if (x.b) mv.b += double(x.sb.kc * x.sb.nc);
    if (x.cl) mv.c_load += double(x.scl.mc * x.scl.nc);
    if (x.cs) mv.c_store += double(x.scs.mc * x.scs.nc);
  }
  void phase(const Xfer& x) { count(x), ++mv.phases; }
  void kernel(const Step& s, int, int, int, const Xfer& nx) {
    const int64_t calls = ceil_div(s.mc, mr) * ceil_div(s.nc, nr);
    mv.kernel_calls += calls, mv.kernel_k += double(calls * s.kc), ++mv.steps, ++mv.phases;
    count(nx);
  }
};
}  // namespace

Movement movement_by_steps(const Plan& p, const gemm::Dims& d, int mr, int nr) {
  Counter c{mr, nr, {}};
  detail::drive(p, d, c);
  return c.mv;
}

// ---- Executor ---------------------------------------------------------------------------------
Block run_block(const Plan& p, const gemm::Dims& d, int mr, int nr) {
  return {std::min(p.b.mcg, round_up(std::max<int64_t>(d.m, 1), mr)), std::min(p.b.ncg, round_up(std::max<int64_t>(d.n, 1), nr)),
          std::min(p.b.kcg, std::max<int64_t>(d.k, 1))};
}

namespace {
int64_t buffers(const Block& b, int mr, int nr) {
  return 2 * (round_up(b.mcg, mr) * b.kcg + b.kcg * round_up(b.ncg, nr) + b.mcg * b.ncg);
}
}  // namespace

int64_t workspace(const Plan& p, const gemm::Dims& d, int mr, int nr) { return buffers(run_block(p, d, mr, nr), mr, nr); }
int64_t workspace(const Plan& p, int mr, int nr) { return buffers(p.b, mr, nr); }

void check_plan(const Plan& p, int mr, int nr) {
  if (p.b.mcg < 1 || p.b.ncg < 1 || p.b.kcg < 1 || p.b.mcg % mr != 0 || p.b.ncg % nr != 0)
    throw Error("rtamm plan " + plan_id(p) + ": Mcg, Ncg, Kcg must be >= 1, Mcg a multiple of MR = " +
                std::to_string(mr) + " and Ncg of NR = " + std::to_string(nr));
  constexpr int64_t kMax = int64_t(1) << 26;  // each factor first: the products cannot overflow
  if (p.b.mcg > kMax || p.b.ncg > kMax || p.b.kcg > kMax || p.b.mcg * p.b.kcg > kMax || p.b.kcg * p.b.ncg > kMax ||
      p.b.mcg * p.b.ncg > kMax)
    throw Error("rtamm plan " + plan_id(p) + ": a block above 2^26 elements");
}

template <class T>
void run_plan(const Plan& p, const gemm::Ukernel<T>& uk, const gemm::Dims& d, const T* A, const T* B, T* C,
              T* work) {
  gemm::check_dims(d);
  check_plan(p, uk.mr, uk.nr);
#pragma omp parallel
  {
    detail::Omp<T> x(p, uk, d, A, B, C, work);
    detail::drive(p, d, x);
  }
}
template void run_plan<float>(const Plan&, const gemm::Ukernel<float>&, const gemm::Dims&, const float*,
                              const float*, float*, float*);
template void run_plan<double>(const Plan&, const gemm::Ukernel<double>&, const gemm::Dims&, const double*,
                               const double*, double*, double*);

// ---- Blocking-factor pool ------------------------------------------------------------------------
Caches default_caches() {
  const HostCacheSizes& h = host_cache_sizes();
  return {h.l1, h.l2, h.l3, "this machine's caches, " + h.source};
}

Caches caches_from_machine(const json& m, const std::filesystem::path& path) {
  // The model's rule (roofline::cache_levels): per level measured, else reported.
  int64_t v[3] = {0, 0, 0};
  std::string from_reported;
  for (const auto& l : roofline::cache_levels(m)) {
    const int i = l.name[1] - '1';
    v[i] = int64_t(l.bytes);
    if (l.source == "reported") from_reported += std::string(from_reported.empty() ? "" : ", ") + l.name;
  }
  if (!v[0] || !v[1] || !v[2])
    throw Error(path.string() + " has no caches.measured (or caches.reported) L1 / L2 / L3 (run `rooflab characterize` to measure them)");
  Caches k;
  k.l1 = v[0], k.l2 = v[1], k.l3 = v[2];
  k.source = path.string() + " caches.measured" +
             (from_reported.empty() ? std::string() : " (" + from_reported + ": caches.reported, not detected)");
  return k;
}

std::string pool_violation(const Block& b, const PoolRules& r) {
  const int64_t s = r.elem;
  auto num = [](int64_t v) { return std::to_string(v); };
  if (b.mcg < 1 || b.ncg < 1 || b.kcg < 1) return "Mcg, Ncg, Kcg must be >= 1";
  if (b.mcg % r.mr) return "Mcg = " + num(b.mcg) + " is not a multiple of MR = " + num(r.mr);
  if (b.ncg % r.nr) return "Ncg = " + num(b.ncg) + " is not a multiple of NR = " + num(r.nr);
  if (b.kcg % 8) return "Kcg = " + num(b.kcg) + " is not a multiple of 8";
  if (b.kcg * r.nr * s > r.caches.l1 / 2)
    return "(c1) Kcg*NR*s = " + num(b.kcg * r.nr * s) + " B exceeds L1/2 = " + num(r.caches.l1 / 2) + " B";
  if (b.mcg * b.kcg * s > r.caches.l2 / 2)
    return "(c2) Mcg*Kcg*s = " + num(b.mcg * b.kcg * s) + " B exceeds L2/2 = " + num(r.caches.l2 / 2) + " B";
  const int64_t f = 2 * (b.mcg * b.kcg + b.kcg * b.ncg + b.mcg * b.ncg) * s;
  if (f > r.caches.l3 / 2)
    return "(c3) 2(MK+KN+MN)*s = " + num(f) + " B exceeds L3/2 = " + num(r.caches.l3 / 2) + " B";
  return "";
}

std::vector<Block> derive_pool(const PoolRules& r, size_t max_size) {
  const int64_t s = r.elem;
  std::vector<Block> cand;
  const int64_t kmax = (r.caches.l1 / 2) / (r.nr * s) / 8 * 8;
  std::vector<int64_t> ks;
  for (int64_t k = 64; k <= kmax; k += 64) ks.push_back(k);
  if (kmax >= 8 && (ks.empty() || ks.back() != kmax)) ks.push_back(kmax);
  for (int64_t k : ks) {
    const int64_t mmax = (r.caches.l2 / 2) / (k * s) / r.mr * r.mr;
    for (int64_t m : {mmax, mmax / 2 / r.mr * r.mr}) {
      if (m < r.mr) continue;
      // (c3) bounds Ncg: 2 (mk + kn + mn) s <= L3 / 2
      const int64_t nmax = ((r.caches.l3 / 2) / (2 * s) - m * k) / (k + m) / r.nr * r.nr;
      for (int64_t n : {int64_t(128), int64_t(256), int64_t(512), int64_t(1024), nmax}) {
        n = std::min(round_up(n, r.nr), nmax);
        const Block b{m, n, k};
        if (n >= r.nr && pool_violation(b, r).empty() && std::find(cand.begin(), cand.end(), b) == cand.end())
          cand.push_back(b);
      }
    }
  }
  if (cand.empty())
    throw Error("blocking pool is empty: no (Mcg, Ncg, Kcg) satisfies the cache constraints with L1 = " +
                std::to_string(r.caches.l1) + " B, L2 = " + std::to_string(r.caches.l2) + " B, L3 = " +
                std::to_string(r.caches.l3) + " B (" + r.caches.source +
                "); check the caches measured by `rooflab characterize`");
  // Thin: start from the static triple (largest Kcg, Mcg, then Ncg up to 1024) and add the
  // candidate farthest in log space from those chosen, so the pool spans the aspect ratios.
  std::vector<Block> pool = {static_plan(cand).b};
  auto dist = [](const Block& a, const Block& b) {
    const double x = std::log2(double(a.mcg) / double(b.mcg)), y = std::log2(double(a.ncg) / double(b.ncg)),
                 z = std::log2(double(a.kcg) / double(b.kcg));
    return x * x + y * y + z * z;
  };
  while (pool.size() < std::min(max_size, cand.size())) {
    const Block* best = nullptr;
    double bd = -1;
    for (const Block& c : cand) {
      double dmin = 1e300;
      for (const Block& q : pool) dmin = std::min(dmin, dist(c, q));
      if (dmin > bd) bd = dmin, best = &c;
    }
    pool.push_back(*best);
  }
  return pool;
}

void check_pool(const std::vector<Block>& pool, const PoolRules& r) {
  if (pool.empty())
    throw Error("blocking pool is empty (derive it from machine.json's caches with `rooflab rtamm units`)");
  for (size_t i = 0; i < pool.size(); ++i) {
    const Block& b = pool[i];
    const std::string v = pool_violation(b, r);
    const std::string id = std::to_string(b.mcg) + "x" + std::to_string(b.ncg) + "x" + std::to_string(b.kcg);
    if (!v.empty()) throw Error("blocking pool entry " + id + " is inconsistent with the caches (" + r.caches.source + "): " + v);
    for (size_t j = 0; j < i; ++j)
      if (pool[j] == b) throw Error("blocking pool lists " + id + " twice");
  }
}

std::vector<Plan> plans_of(const std::vector<Block>& pool, bool all) {
  std::vector<Plan> v;
  for (Order o : all ? all_orders() : canonical_orders())
    for (const Block& b : pool)
      for (Ahead a : {Ahead::none, Ahead::ab, Ahead::abc}) v.push_back({o, b, a});
  return v;
}

Plan static_plan(const std::vector<Block>& pool) {
  if (pool.empty()) throw Error("blocking pool is empty: no static plan");
  // Largest Kcg, then Mcg; Ncg the largest not above 1024 (a BLIS-like NC) if any.
  auto key = [](const Block& b) { return std::tuple(b.kcg, b.mcg, b.ncg <= 1024, b.ncg); };
  const Block best = *std::max_element(pool.begin(), pool.end(), [&](const Block& a, const Block& b) { return key(a) < key(b); });
  return {Order::mnk, best, Ahead::ab};
}

}  // namespace rooflab::rtamm

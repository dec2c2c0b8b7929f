// The "rtamm" family table: the executable plans, the static plan and the adaptive engine.
//
// Names: rtamm/<variant>/<dtype>/MxNxK[/<params>]/threads:T
//   mnk nmk mkn kmn nkm knm  a plan: mcg:, ncg:, kcg: (default: the static triple of the pool
//                            derived from the gemm family's default caches), ahead:none|ab|abc
//                            (default ab)
//   static                   MNK, ahead:ab, the pool's static triple (the paper's baseline)
//   adaptive                 the cost formulas pick the plan inside each run (the decision is
//                            timed); unit costs from $ROOFLAB_MACHINE's "rtamm" section
//   every variant: ld:+p     pads each leading dimension by p elements (unaligned rows)
// The micro-kernel is the gemm family's for the CPU's best ISA (not in the name).
#include <omp.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>

#include "harness/error.hpp"
#include "kernels/rtamm/problem.hpp"
#include "kernels/rtamm/rtamm.hpp"

namespace rooflab {
namespace {
using namespace rtamm;

constexpr int64_t kFullReferenceMaxMnk = int64_t(1) << 27;

int mr_of(DType dt) { return dt == DType::f64 ? gemm::ukernel<double>(kernel_isa(dt)).mr : gemm::ukernel<float>(kernel_isa(dt)).mr; }
int nr_of(DType dt) { return dt == DType::f64 ? gemm::ukernel<double>(kernel_isa(dt)).nr : gemm::ukernel<float>(kernel_isa(dt)).nr; }

std::vector<Block> default_pool(DType dt) {
  return derive_pool({int64_t(dtype_size(dt)), mr_of(dt), nr_of(dt), default_caches()});
}

struct Params {
  gemm::Dims d;
  bool adaptive = false;
  Plan plan;
};

Params params_of(const Case& c) {
  const std::string name = c.name();
  Params p;
  const auto order = parse_order(c.variant);
  if (!order && c.variant != "static" && c.variant != "adaptive")
    throw Error(name + ": unknown rtamm variant '" + c.variant + "'");
  if (c.dims.size() != 3) throw Error(name + ": rtamm takes three dimensions, MxNxK");
  const int64_t pad = gemm::parse_ld_pad(c);
  p.d = {c.dims[0], c.dims[1], c.dims[2], c.dims[2] + pad, c.dims[1] + pad, c.dims[1] + pad};
  gemm::check_dims(p.d);
  if (c.isa != Isa::none) throw Error(name + ": rtamm variants are not ISA-specific (best ISA used)");
  if (c.dtype == DType::f32 && 4 * p.d.k + 8 >= (int64_t(1) << 24))
    throw Error(name + ": K too large for exact f32 verification (integer sums must stay below 2^24)");
  for (const auto& [k, v] : c.params) {
    const bool plan_key = k == "mcg" || k == "ncg" || k == "kcg" || k == "ahead";
    if (k != "ld" && !(order && plan_key))
      throw Error(name + ": unknown parameter '" + k + "' for rtamm/" + c.variant +
                  (order ? " (known: ld, mcg, ncg, kcg, ahead)" : " (known: ld)"));
  }
  p.adaptive = c.variant == "adaptive";
  p.plan = static_plan(default_pool(c.dtype));
  if (order) {
    p.plan.order = *order;
    p.plan.b.mcg = c.param_int("mcg", p.plan.b.mcg);
    p.plan.b.ncg = c.param_int("ncg", p.plan.b.ncg);
    p.plan.b.kcg = c.param_int("kcg", p.plan.b.kcg);
    const std::string a = c.param_str("ahead", "ab");
    const auto ah = parse_ahead(a);
    if (!ah) throw Error(name + ": ahead must be none, ab or abc, got '" + a + "'");
    p.plan.ahead = *ah;
    try {
      check_plan(p.plan, mr_of(c.dtype), nr_of(c.dtype));
    } catch (const Error& e) {
      throw Error(name + ": " + e.what());
    }
  }
  return p;
}

// The adaptive engine of $ROOFLAB_MACHINE (loaded per case; throws naming the command).
Engine engine_for(const Case& c) {
  const char* m = std::getenv("ROOFLAB_MACHINE");
  if (!m || !*m)
    throw Error(c.name() + ": rtamm/adaptive needs unit costs: set ROOFLAB_MACHINE to a machine.json measured by "
                           "`rooflab rtamm units --machine FILE`");
  Units u = load_units(m, std::string(to_string(c.dtype)), c.threads);
  std::vector<Block> pool;
  for (const auto& b : u.blocks) pool.push_back(b.b);
  check_pool(pool, {int64_t(dtype_size(c.dtype)), u.mr, u.nr, u.caches});
  return Engine(plans_of(pool), std::move(u));
}

Model model(const Case& c) {
  const Params p = params_of(c);
  Model m = gemm::min_traffic_model(c.dtype, p.d.m, p.d.n, p.d.k);
  if (p.adaptive) {
    m.note = "adaptive: minimum traffic (A, B read once, C updated once); the chosen plan moves more";
  } else {
    const double s = double(dtype_size(c.dtype));
    const Movement mv = movement(p.plan, p.d, mr_of(c.dtype), nr_of(c.dtype));
    m.traffic = {{s * (mv.a + mv.b), "read"}, {s * (mv.c_load + mv.c_store), "update"}};
    m.note = "plan " + plan_id(p.plan) + ": A, B, C blocks loaded / stored as the cost formulas count";
  }
  return m;
}

// Elements of scratch a case allocates: its plan's, or the largest of the adaptive engine's plans
// (it runs whichever it chooses).
int64_t scratch(const Params& p, const Engine* e, int mr, int nr) {
  if (!e) return workspace(p.plan, p.d, mr, nr);
  int64_t w = 0;
  for (const Plan& q : e->plans()) w = std::max(w, workspace(q, p.d, mr, nr));
  return w;
}

size_t memory_bytes(const Case& c) {
  const Params p = params_of(c);
  const size_t s = dtype_size(c.dtype);
  size_t b = s * size_t(p.d.m * p.d.lda + p.d.k * p.d.ldb + 2 * p.d.m * p.d.ldc);
  std::optional<Engine> e;
  if (p.adaptive) try {
      e.emplace(engine_for(c));
    } catch (const Error&) {  // no unit costs: make() fails with the reason, before any allocation
    }
  b += s * size_t(scratch(p, e ? &*e : nullptr, mr_of(c.dtype), nr_of(c.dtype)));
  if (p.d.m * p.d.n * p.d.k <= kFullReferenceMaxMnk) b += sizeof(double) * size_t(p.d.m * p.d.n);
  return b;
}

template <class T>
class RtammInstance final : public Instance {
 public:
  RtammInstance(const Case& c, const Params& p) : prob_(p.d), uk_(gemm::ukernel<T>(kernel_isa(c.dtype))) {
    if (p.adaptive) engine_ = std::make_shared<Engine>(engine_for(c));
    else plan_ = p.plan;
    work_ = AlignedBuffer<T>(size_t(scratch(p, engine_.get(), uk_.mr, uk_.nr)));
  }
  void run() override {
    const Plan& p = engine_ ? engine_->plans()[engine_->choose(prob_.d)] : plan_;
    run_plan(p, uk_, prob_.d, prob_.A.data(), prob_.B.data(), prob_.C.data(), work_.data());
  }
  void reset() override { prob_.reset(); }
  Verification verify() override {
    prob_.reset();
    run();
    const gemm::Dims& d = prob_.d;
    Verification v = prob_.check(d.m * d.n * d.k <= kFullReferenceMaxMnk, 2);
    prob_.reset();
    return v;
  }

 private:
  detail::Problem<T> prob_;
  gemm::Ukernel<T> uk_;
  Plan plan_;
  std::shared_ptr<Engine> engine_;
  AlignedBuffer<T> work_;
};

std::unique_ptr<Instance> make(const Case& c) {
  const Params p = params_of(c);
  return with_element_type(c.dtype, [&]<class T>() -> std::unique_ptr<Instance> {
    return std::make_unique<RtammInstance<T>>(c, p);
  });
}

Case make_case(const std::string& variant, DType dt, int64_t m, int64_t n, int64_t k, int threads,
               std::vector<std::pair<std::string, std::string>> params = {}) {
  return Case{"rtamm", variant, Isa::none, dt, {m, n, k}, std::move(params), threads};
}

// Calibration shape (Family::calibration_cases): the case's order, params and threads at
// 384 x 384 x 256 (2.8 MiB of f64, cache-resident), as gemm's.
std::vector<Case> calibration_cases(const Case& c) {
  Case k = c;
  k.dims = {384, 384, 256};
  return {k};
}

std::vector<Case> cases(std::string_view profile) {
  std::vector<Case> out;
  if (profile == "smoke") {
    // Every order once, the ahead modes in turn, at an odd, unaligned shape; the static plan;
    // 2 threads. Seconds. (adaptive needs unit costs: `rooflab rtamm evaluate --profile smoke`.)
    const char* const ahead[] = {"none", "ab", "abc"};
    size_t i = 0;
    for (Order o : all_orders())
      out.push_back(make_case(std::string(to_string(o)), DType::f64, 131, 97, 67, 2, {{"ahead", ahead[i++ % 3]}, {"ld", "+1"}}));
    out.push_back(make_case("static", DType::f64, 131, 97, 67, 2));
  } else if (profile == "quick") {
    // Every order (equivalent pairs included) x ahead mode at an odd, unaligned shape, and the
    // static plan at 512^3; 2 threads. adaptive needs unit costs: `rooflab rtamm evaluate`.
    for (Order o : all_orders())
      for (const char* a : {"none", "ab", "abc"})
        out.push_back(make_case(std::string(to_string(o)), DType::f64, 1000, 777, 513, 2, {{"ahead", a}, {"ld", "+1"}}));
    out.push_back(make_case("static", DType::f64, 512, 512, 512, 2));
  } else if (profile == "paper") {
    for (Order o : canonical_orders())
      out.push_back(make_case(std::string(to_string(o)), DType::f64, 2048, 2048, 2048, 2));
    out.push_back(make_case("static", DType::f64, 2048, 2048, 2048, 2));
  }
  return out;
}

std::vector<VariantRow> rows() {
  std::vector<VariantRow> out;
  const auto runs = [](const Case& c) { return kernel_isa(c.dtype); };
  for (Order o : all_orders()) {
    const std::string n(to_string(o));
    out.push_back({.name = n,
                   .description = "plan: blocks in loop order " + n + " (cost class " +
                                  std::string(to_string(canonical(o))) + "), mcg/ncg/kcg, ahead none|ab|abc",
                   .runs_isa = runs});
  }
  out.push_back({.name = "static",
                 .description = "the static baseline: mnk, ahead ab, the pool's static triple",
                 .runs_isa = runs});
  out.push_back({.name = "adaptive",
                 .description = "cost-formula choice of the plan at run time (units from $ROOFLAB_MACHINE)",
                 .runs_isa = runs});
  return out;
}
}  // namespace

const Family& rtamm_family() {
  static const Family f = make_family(
      "rtamm", "RTAMM: GEMM plans (loop order x blocking pool x packing ahead) chosen at run time by cost formulas "
               "with measured unit costs",
      {accepts_if_parses(params_of), model, make, cases, memory_bytes, {}, {}, calibration_cases}, rows());
  return f;
}

}  // namespace rooflab

// The peak family: characterize's compute loops (microbench/kernels.hpp: fma, add, mul, addmin
// over independent register accumulators, per ISA and dtype) registered as benchmarks, so that
// a run can time the ceiling among its other cases. Interleaved with them (Google Benchmark's
// random interleaving), a peak row meets the host states the kernels met: a kernel's share of
// the peak measured in the same run does not depend on how fast the host was when
// `characterize` ran. The model prices a row against machine.json's ceiling of the same loop,
// so attained / predicted is the host's speed during the run relative to characterize's.
#include <omp.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "harness/error.hpp"
#include "harness/registry.hpp"
#include "microbench/kernels.hpp"

namespace rooflab {
namespace {

// Iterations per thread and run: at most 2^24, so that every f32 accumulator counts exactly
// (acc + 1 per iteration) and verification is exact.
constexpr int64_t kMaxIters = int64_t(1) << 24;

struct Params {
  std::string ceiling;  // machine.json's name of the loop's ceiling: "<op>_<dtype>"
  microbench::ComputeKernel kernel{};
  int64_t iters = 0;
};

Params params_of(const Case& c) {
  if (c.dims.size() != 1)
    throw Error("peak takes one size, the iterations per thread (e.g. peak/fma/avx2/f64/1048576), got " + c.dims_string());
  if (!c.params.empty()) throw Error("peak takes no parameters, got " + c.params.front().first + ":");
  const int64_t iters = c.dims[0];
  if (iters < 1 || iters > kMaxIters)
    throw Error("peak: " + std::to_string(iters) + " iterations; 1 to 2^24 (16777216), where f32 still counts exactly");
  const std::string key = c.variant + "_" + std::string(to_string(c.dtype));
  // Unsupported ISAs are refused by check_case before any kernel is asked for.
  if (!isa_supported(c.isa)) return {key, {}, iters};
  for (const microbench::ComputeKernel& k : microbench::compute_kernels(microbench::kernels_for(c.isa)))
    if (key == k.name) return {key, k, iters};
  throw Error("peak: no compute loop " + key);
}

// x, y per loop: every accumulator ends at an exact, known value (microbench/kernels.hpp).
struct Operands {
  double x, y;
};
Operands operands(const std::string& op) {
  if (op == "mul") return {1.0, 0.0};   // acc = acc * 1: stays 1
  if (op == "addmin") return {double(kMaxIters) + 1, 1.0};  // acc = min(acc + 1, bound): counts
  return {1.0, 1.0};                     // fma: acc * 1 + 1, add: acc + 1: counts
}
double expected(const std::string& op, const Params& p) {
  return (op == "mul" ? 1.0 : double(p.iters)) * p.kernel.lanes;
}

class PeakInstance final : public Instance {
 public:
  PeakInstance(const Case& c, Params p) : op_(c.variant), p_(p), threads_(c.threads), sums_(size_t(c.threads), 0) {}
  void run() override {
    const Operands o = operands(op_);
#pragma omp parallel num_threads(threads_)
    sums_[size_t(omp_get_thread_num())] = p_.kernel.fn(uint64_t(p_.iters), o.x, o.y);
  }
  Verification verify() override {
    Verification v;
    run();
    const double want = expected(op_, p_);
    v.ok = true;
    for (size_t t = 0; t < sums_.size(); ++t)
      if (sums_[t] != want) {
        v.ok = false;
        v.max_err = want != 0 ? std::abs(sums_[t] - want) / want : std::abs(sums_[t]);
        v.detail = "thread " + std::to_string(t) + " summed " + std::to_string(sums_[t]) + ", expected " + std::to_string(want);
        break;
      }
    if (v.ok) v.detail = "every thread's accumulators exact";
    return v;
  }

 private:
  std::string op_;
  Params p_;
  int threads_;
  std::vector<double> sums_;
};

Model model(const Case& c) {
  const Params p = params_of(c);
  Model m;
  m.flops = double(p.iters) * p.kernel.lanes * p.kernel.flops_per_lane * c.threads;
  m.compute_ceiling = p.ceiling;
  m.note = "registers only: characterize's loop of the same name, its ceiling by definition";
  return m;
}

std::unique_ptr<Instance> make(const Case& c) { return std::make_unique<PeakInstance>(c, params_of(c)); }

Case make_case(const char* op, DType dt, int64_t iters, int threads) {
  return Case{"peak", op, Isa::none, dt, {iters}, {}, threads};
}

std::vector<Case> cases(std::string_view profile) {
  // Only the smoke profile (every loop once, each ISA): a figure's or table's run adds the
  // loops it wants to compare with (scripts/peer_table.sh); the model's accuracy over a profile
  // would only gain rows that match it by definition.
  std::vector<Case> out;
  if (profile != "smoke") return out;
  for (const char* op : {"fma", "add", "mul", "addmin"})
    for (DType dt : {DType::f64, DType::f32}) out.push_back(make_case(op, dt, 4097, 2));
  return out;
}

std::vector<VariantRow> rows() {
  return {{"fma", "acc = acc * x + y over independent vector accumulators (2 flops per lane)", all_isas()},
          {"add", "acc = acc + y (1 flop per lane)", all_isas()},
          {"mul", "acc = acc * x (1 flop per lane)", all_isas()},
          {"addmin", "acc = min(acc + y, x), the Floyd-Warshall relaxation (2 flops per lane)", all_isas()}};
}
}  // namespace

const Family& peak_family() {
  static const Family f = make_family(
      "peak", "the compute ceilings' loops (characterize) as benchmarks, to time a peak among a run's cases",
      {accepts_if_parses(params_of), model, make, cases, [](const Case& c) { return size_t(c.threads) * 64; }}, rows());
  return f;
}

}  // namespace rooflab

#include "harness/counters/measure.hpp"

#include <omp.h>

#include <cstdio>

#include "harness/error.hpp"
#include "harness/measure.hpp"

namespace rooflab::counters {

std::string verification_message(const Verification& v) {
  char buf[96];
  std::snprintf(buf, sizeof buf, " (max error %.3g, tolerance %.3g)", v.max_err, v.tol);
  return "verification failed: " + (v.detail.empty() ? std::string("result differs from the reference") : v.detail) + buf;
}

Measurement measure_case(const Case& c, Backend* backend, int runs) {
  validate_case(c);
  const Variant& variant = variant_of(c);
  if (!variant.make) throw Error(c.name() + ": variant has no factory");
  std::unique_ptr<Instance> inst = variant.make(c);
  omp_set_num_threads(c.threads);
  return measure_instance(*inst, c.name(), backend, runs);
}

Measurement measure_instance(Instance& inst, const std::string& region, Backend* backend, int runs) {
  if (runs < 1) throw Error("--runs must be at least 1");
  Measurement m;
  m.verification = inst.verify();
  if (!m.verification.ok) {  // nothing is counted for a wrong kernel
    m.message = verification_message(m.verification);
    return m;
  }
  m.verified = true;
  // As the benchmark driver does: reset once per repetition, then back-to-back runs. One
  // uncounted warm-up run first, so the counted ones see the steady-state cache contents of
  // the timed benchmark rather than what verification left behind. It goes through the same
  // back-end and region calls as a counted run (its events are dropped, its callgrind dump has
  // another tag): first calls there (lazy symbol binding, getenv) touch enough memory to evict
  // part of a small working set, and must not do so between the warm-up and the counted runs.
  // The warm-up runs the same batch as the counted runs (the driver's warm-up call), down to
  // string and map handling. (Small cases still vary by a few dozen simulated misses between runs: the
  // harness code between runs evicts a slightly different few lines each time.)
  inst.reset();
  const std::string warmup_tag = region + "#warmup";
  std::map<std::string, double> warmup_events;
  measure::Policy p;
  p.repetitions = runs;
  p.runs_per_sample = 1;
  p.warmup = 1;
  p.quiet.mark = false;  // counted, not timed: no load checks between the runs either
  const measure::Batch counted = [&](int64_t, bool warmup) {
    const std::string& tag = warmup ? warmup_tag : region;
    std::map<std::string, double>& sink = warmup ? warmup_events : m.events;
    if (backend) backend->start();
    region_begin(tag);
    inst.run();
    region_end(tag);
    if (backend)
      for (const auto& [ev, v] : backend->stop()) sink[ev] += v;
    return 0.0;
  };
  measure::measure(counted, p);
  for (auto& [ev, v] : m.events) v /= runs;
  return m;
}
}  // namespace rooflab::counters


#pragma once
// The counted part of a case, shared by `rooflab run-case` (the valgrind child) and the
// in-process back ends of `rooflab counters`: validate, build, verify first, one warm-up
// run, then `runs` back-to-back counted runs, each inside region_begin/region_end.
#include <map>
#include <string>

#include "harness/counters/counters.hpp"
#include "harness/families.hpp"

namespace rooflab::counters {

struct Measurement {
  bool verified = false;
  Verification verification;
  std::string message;                  // why it failed, when !verified
  std::map<std::string, double> events; // per run (total / runs); empty without a back end
};

// `backend` may be null (the events then come from outside, e.g. valgrind). Throws
// rooflab::Error for an invalid case; a verification failure is returned, not thrown.
Measurement measure_case(const Case& c, Backend* backend, int runs);
// The part after construction: verify, warm up, count `runs` runs in region `region`.
Measurement measure_instance(Instance& inst, const std::string& region, Backend* backend, int runs);

std::string verification_message(const Verification& v);
}  // namespace rooflab::counters

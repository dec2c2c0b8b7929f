// `rooflab run-case NAME [--runs K] [--backend none|papi|likwid]` (hidden): the process the
// cachegrind back end runs under valgrind, also usable under likwid-perfctr by hand.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "harness/counters/counters.hpp"
#include "harness/counters/measure.hpp"
#include "apps/commands.hpp"
#include "harness/args.hpp"
#include "harness/error.hpp"

namespace rooflab::counters {

args::Spec run_case_spec() {
  return args::Spec("rooflab run-case", "verify one case, then count its runs (the process the cachegrind back end runs "
                                        "under valgrind; also usable under likwid-perfctr)")
      .positional("NAME", "the case (benchmark name grammar)")
      .integer("--runs", "K", "runs counted after the verification", 1, 1000000, 2)
      .choice("--backend", {"none", "papi", "likwid"}, "in-process counters (none: only run)", "none")
      .hint(" (cachegrind runs this command under valgrind: use `rooflab counters --backend cachegrind`)")
      .epilog("exit codes: 0 ok, 2 the back end is unavailable, 3 verification failed");
}

int run_case_run(const args::Values& v) {
  const std::string name = v.positional(0), backend_name = v.str("--backend");
  const int runs = int(v.integer("--runs"));
  const Case c = parse_case_name(name);

  std::unique_ptr<Backend> backend;
  if (backend_name != "none") {
    backend = make_backend(backend_name);
    const Availability a = backend->probe();
    if (!a.available) {
      std::fprintf(stderr, "rooflab run-case: %s unavailable: %s\n", backend_name.c_str(), a.reason.c_str());
      return 2;
    }
  }
  const Measurement m = measure_case(c, backend.get(), runs);
  if (!m.verified) {
    std::fprintf(stderr, "%s: %s\n", c.name().c_str(), m.message.c_str());
    return 3;
  }
  if (backend) {
    nlohmann::json out = {{"name", c.name()}, {"backend", backend_name}, {"runs", runs},
                          {"events", m.events}, {"config", backend->config()},
                          {"verification", {{"ok", true}, {"max_err", m.verification.max_err},
                                            {"tol", m.verification.tol}}}};
    std::cout << out.dump(2) << std::endl;
  }
  return 0;
}
}  // namespace rooflab::counters

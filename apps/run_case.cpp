// `rooflab run-case NAME [--runs K] [--backend none|papi|likwid]` (hidden): the process the
// cachegrind back end runs under valgrind, also usable under likwid-perfctr by hand.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "harness/counters/counters.hpp"
#include "harness/counters/measure.hpp"
#include "apps/commands.hpp"
#include "harness/error.hpp"

namespace rooflab::counters {

int run_case_main(const std::vector<std::string>& args) {
  const std::string usage = "usage: rooflab run-case NAME [--runs K] [--backend none|papi|likwid]";
  std::string name, backend_name = "none";
  int runs = 2;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&]() -> const std::string& {
      if (i + 1 >= args.size()) throw Error(a + " needs a value; " + usage);
      return args[++i];
    };
    if (a == "--runs") {
      runs = parse_positive_int(a, value());
    } else if (a == "--backend") {
      backend_name = value();
      if (backend_name != "none" && backend_name != "papi" && backend_name != "likwid")
        throw Error("--backend must be none, papi or likwid (cachegrind runs this command under "
                    "valgrind: use `rooflab counters --backend cachegrind`)");
    } else if (!a.empty() && a[0] == '-') {
      throw Error("unknown option " + a + "; " + usage);
    } else if (name.empty()) {
      name = a;
    } else {
      throw Error("one case name expected, got '" + name + "' and '" + a + "'; " + usage);
    }
  }
  if (name.empty()) throw Error("missing case name; " + usage);
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

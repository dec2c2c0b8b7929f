#pragma once
// Cache-miss counters behind one interface, chosen at run time.
//
// Two kinds of back end:
//  - in-process (`Backend`): PAPI presets and the likwid marker API read hardware counters
//    around the kernel runs of this process;
//  - "cachegrind": valgrind's cache simulator, run on a child process (this same binary,
//    hidden subcommand `rooflab run-case`) whose kernel region is delimited by
//    region_begin/region_end client requests. Deterministic, and the only one that works
//    in a VM without a PMU.
// Every back end first answers probe(): available, or the reason it is not. An unavailable
// back end contributes no numbers: never a silent zero that looks like a measurement.
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rooflab::counters {

struct Availability {
  bool available = false;
  std::string reason;  // empty when available
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  // Cheap to call repeatedly; the first call may initialize the library and calibrate.
  virtual Availability probe() = 0;
  // Describes the event set and scope for counters.json ("config"); call after probe().
  virtual std::map<std::string, std::string> config() const { return {}; }
  // Bracket one counted stretch of code; stop() returns the events counted since start().
  // Only valid after probe() reported available.
  virtual void start() = 0;
  virtual std::map<std::string, double> stop() = 0;
};

// "papi" or "likwid"; throws rooflab::Error for another name.
std::unique_ptr<Backend> make_backend(const std::string& name);
std::unique_ptr<Backend> make_papi_backend();
std::unique_ptr<Backend> make_likwid_backend();

// Region markers around the counted kernel runs. Under valgrind/callgrind they zero the
// cost counters at begin and dump them at end (a no-op natively); under likwid-perfctr -m
// they start/stop the likwid marker region `name`. Regions do not nest.
void region_begin(const std::string& name);
void region_end(const std::string& name);

}  // namespace rooflab::counters

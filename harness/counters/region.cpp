// Region markers around the counted kernel runs (see counters.hpp and cachegrind.hpp for
// why callgrind gets ZERO_STATS + DUMP_STATS_AT rather than collection toggles).
#ifdef ROOFLAB_HAVE_CALLGRIND_H
#include <valgrind/callgrind.h>
#else
#define CALLGRIND_ZERO_STATS
#define CALLGRIND_DUMP_STATS_AT(tag) (void)(tag)
#endif

#include "harness/counters/cachegrind.hpp"
#include "harness/counters/counters.hpp"
#include "harness/counters/likwid_session.hpp"
#include "harness/error.hpp"

namespace rooflab::counters {
namespace {
// Regions do not nest; the open region's name catches a missing region_end. Its dump tag is
// built at region_begin so that region_end calls nothing (no allocation, no first-call lazy
// symbol binding) before the dump: the counted stretch holds the kernel and no harness code.
std::string open_region, open_tag;
}

void region_begin(const std::string& name) {
  if (!open_region.empty())
    throw Error("region_begin(" + name + ") inside open region " + open_region);
  open_region = name;
  open_tag = region_dump_tag(name);
  detail::likwid_region_start(name);
  CALLGRIND_ZERO_STATS;  // last: client requests are a few no-op instructions outside valgrind
}

void region_end(const std::string& name) {
  CALLGRIND_DUMP_STATS_AT(open_tag.c_str());  // first, see above
  if (open_region != name) throw Error("region_end(" + name + ") without region_begin(" + name + ")");
  detail::likwid_region_stop(name);
  open_region.clear();
}
}  // namespace rooflab::counters

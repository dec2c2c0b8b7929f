#pragma once
// The likwid marker session shared by region_begin/region_end (which start and stop the
// marker region) and the likwid back end (which reads what the region counted).
#include <map>
#include <string>

namespace rooflab::counters::detail {
// likwid-perfctr -m exports LIKWID_MODE, LIKWID_FILEPATH and LIKWID_EVENTS to the program;
// without them likwid_markerInit() does nothing and the markers count nothing.
bool likwid_marker_env();
// Initializes the marker API on first call; false when not under likwid-perfctr -m or when
// likwid could not initialize (it says why on stderr).
bool likwid_initialized();
// No-ops unless built with likwid and likwid_marker_env(); the first call initializes the
// marker API (and registers its close at exit, which writes the file likwid-perfctr reads).
void likwid_region_start(const std::string& region);
void likwid_region_stop(const std::string& region);
// Events counted between the last start/stop pair, by likwid event name.
std::map<std::string, double> likwid_last_region();
}  // namespace rooflab::counters::detail

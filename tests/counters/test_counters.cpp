// Unit tests of the counter back ends: callgrind output parsing (a fixture from a real run),
// valgrind cache geometry rounding, machine.json -> simulated caches, availability reasons,
// the child-process runner and the verify-first measurement loop.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "harness/counters/cachegrind.hpp"
#include "harness/counters/counters.hpp"
#include "harness/counters/measure.hpp"
#include "harness/counters/subprocess.hpp"
#include "harness/error.hpp"
#include "harness/env.hpp"
#include "harness/host_caches.hpp"

namespace fs = std::filesystem;
using namespace rooflab;
using namespace rooflab::counters;
using nlohmann::json;

namespace {
const fs::path kFixtures = ROOFLAB_COUNTERS_FIXTURES;

// The fixture: `run-case sinkhorn/c2r/f64/64x48/part:col/threads:1 --runs 2` under
// valgrind --tool=callgrind --cache-sim=yes --D1=32768,8,64 --LL=33554432,16,64: the warm-up
// region's dump (.1), the two counted regions' dumps (.2, .3) and the dump at termination.
const std::string kRegion = "sinkhorn/c2r/f64/64x48/part:col/threads:1";
std::vector<fs::path> fixture_dumps() {
  return {kFixtures / "callgrind.out", kFixtures / "callgrind.out.1", kFixtures / "callgrind.out.2",
          kFixtures / "callgrind.out.3"};
}

bool valgrind_valid(const CacheGeometry& g) {
  if (g.line < 16 || !std::has_single_bit(unsigned(g.line)) || g.assoc < 1) return false;
  const int64_t way = int64_t(g.assoc) * g.line;
  return g.size % way == 0 && std::has_single_bit(uint64_t(g.size / way));
}

// What simulated_caches takes the associativity and line of cache `level` from (its contract,
// cachegrind.hpp): this machine's sysfs when it lists the level, else 8/64 (L1, L2), 16/64 (L3),
// so the expectations follow the CPU the test runs on (an 8-way 32 KiB Zen 3 L1, a 12-way
// 48 KiB Zen 5 / Intel L1, ...).
struct HostWays {
  int assoc = 0, line = 0;
  bool from_sysfs = false;
};
HostWays host_ways(int level) {
  if (const auto c = rooflab::host_cache(level); c && c->assoc > 0 && c->line > 0) return {c->assoc, c->line, true};
  return {level == 3 ? 16 : 8, 64, false};
}

fs::path scratch_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("rooflab-test-counters-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}
}  // namespace

TEST(CallgrindParse, FixtureRegionDump) {
  const CallgrindDump d = parse_callgrind_file(kFixtures / "callgrind.out.2");
  EXPECT_EQ(d.trigger, "Client Request: " + region_dump_tag(kRegion));
  for (const char* e : {"Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw"})
    ASSERT_TRUE(d.totals.count(e)) << e;
  // A c2r column pass over 64x48 doubles reads every element twice (sum, scale) and writes
  // it once.
  EXPECT_GE(d.totals.at("Dr"), 2.0 * 64 * 48);
  EXPECT_GE(d.totals.at("Dw"), 1.0 * 64 * 48);
  // 24 KiB of data stays in the 32 KiB L1 after the warm-up run: few misses, ~none in LL.
  EXPECT_LT(d.totals.at("D1mr") + d.totals.at("D1mw"), 0.05 * (d.totals.at("Dr") + d.totals.at("Dw")));
  EXPECT_LE(d.totals.at("DLmr") + d.totals.at("DLmw"), 4);
}

TEST(CallgrindParse, TerminationDumpIsNotTheRegion) {
  const CallgrindDump d = parse_callgrind_file(kFixtures / "callgrind.out");
  EXPECT_EQ(d.trigger, "Program termination");
  // The warm-up dump has its own tag: it is not summed (it missed on all of A).
  const CallgrindDump warm = parse_callgrind_file(kFixtures / "callgrind.out.1");
  EXPECT_EQ(warm.trigger, "Client Request: " + region_dump_tag(kRegion + "#warmup"));
  const RegionTotals t = sum_region_dumps(fixture_dumps(), kRegion);
  EXPECT_EQ(t.count, 2);
  const CallgrindDump d1 = parse_callgrind_file(kFixtures / "callgrind.out.2");
  const CallgrindDump d2 = parse_callgrind_file(kFixtures / "callgrind.out.3");
  EXPECT_DOUBLE_EQ(t.events.at("Dr"), d1.totals.at("Dr") + d2.totals.at("Dr"));
  // Back-to-back counted runs execute the same instructions and accesses; their misses differ
  // only by the few lines the harness code between runs evicts.
  for (const char* e : {"Ir", "Dr", "Dw"}) EXPECT_EQ(d1.totals.at(e), d2.totals.at(e)) << e;
  EXPECT_LT(std::abs(d1.totals.at("D1mr") - d2.totals.at("D1mr")), 0.01 * d1.totals.at("Dr"));
  EXPECT_GT(warm.totals.at("D1mr"), 4 * d1.totals.at("D1mr"));
  EXPECT_EQ(sum_region_dumps(fixture_dumps(), "some/other/case").count, 0);
}

TEST(CallgrindParse, TrailingZerosAndErrors) {
  const fs::path dir = scratch_dir("parse");
  {
    std::ofstream(dir / "short") << "version: 1\ndesc: Trigger: Client Request: x\n"
                                    "events: Ir Dr Dw D1mr\nfn=main\n3 10 4 2 1\ntotals: 10 4\n";
    std::ofstream(dir / "noevents") << "totals: 1 2 3\n";
    std::ofstream(dir / "summary") << "events: Dr Dw\nsummary: 7 8\n";
  }
  const CallgrindDump d = parse_callgrind_file(dir / "short");
  EXPECT_EQ(d.trigger, "Client Request: x");
  EXPECT_EQ(d.totals.at("Dr"), 4);
  EXPECT_EQ(d.totals.at("Dw"), 0);  // the format omits trailing zero costs
  EXPECT_EQ(d.totals.at("D1mr"), 0);
  EXPECT_EQ(parse_callgrind_file(dir / "summary").totals.at("Dw"), 8);
  EXPECT_THROW(parse_callgrind_file(dir / "noevents"), Error);
  EXPECT_THROW(parse_callgrind_file(dir / "missing"), Error);
  fs::remove_all(dir);
}

TEST(CallgrindParse, DerivedRates) {
  const auto d = cachegrind_derived({{"Dr", 600}, {"Dw", 400}, {"D1mr", 50}, {"D1mw", 50},
                                     {"DLmr", 10}, {"DLmw", 0}});
  EXPECT_DOUBLE_EQ(d.at("L1_miss_rate"), 0.1);
  EXPECT_DOUBLE_EQ(d.at("LL_miss_rate"), 0.01);
  // No accesses or no miss events: no rate at all rather than a fake 0.
  EXPECT_TRUE(cachegrind_derived({{"Dr", 0}, {"Dw", 0}, {"D1mr", 0}, {"D1mw", 0}}).empty());
  EXPECT_FALSE(cachegrind_derived({{"Dr", 5}, {"Dw", 5}}).count("L1_miss_rate"));
}

TEST(Geometry, ValidGeometriesAreKept) {
  for (CacheGeometry g : {CacheGeometry{32768, 8, 64}, CacheGeometry{524288, 8, 64},
                          CacheGeometry{33554432, 16, 64}, CacheGeometry{49152, 12, 64},
                          CacheGeometry{1310720, 10, 64}, CacheGeometry{16384, 4, 32}})
    EXPECT_EQ(valgrind_geometry(g.size, g.assoc, g.line), g) << g.arg();
}

TEST(Geometry, NonPowerOfTwoSetsAdjustAssociativity) {
  // 24 MiB 16-way has 24576 sets; 12-way gives 32768 at the same size.
  EXPECT_EQ(valgrind_geometry(24 << 20, 16, 64), (CacheGeometry{24 << 20, 12, 64}));
  // 20 MiB: the valid associativities at that size are 5, 10, 20, 40; 20 is nearest 16.
  EXPECT_EQ(valgrind_geometry(20 << 20, 16, 64), (CacheGeometry{20 << 20, 20, 64}));
  EXPECT_EQ(valgrind_geometry(3 << 20, 16, 64), (CacheGeometry{3 << 20, 12, 64}));
}

TEST(Geometry, OddSizesRoundToANearbyValidCache) {
  for (int64_t size : {int64_t(1000000), int64_t(30000000), int64_t(40000), int64_t(777)}) {
    const CacheGeometry g = valgrind_geometry(size, 8, 64);
    EXPECT_TRUE(valgrind_valid(g)) << size << " -> " << g.arg();
    EXPECT_LE(std::abs(double(g.size - size)) / double(size), 0.15) << size << " -> " << g.arg();
  }
  const CacheGeometry g = valgrind_geometry(32768, 8, 48);  // line rounded to a power of two
  EXPECT_TRUE(valgrind_valid(g)) << g.arg();
  EXPECT_EQ(g.line, 32);
  EXPECT_THROW(valgrind_geometry(64, 8, 64), Error);
}

TEST(SimulatedCaches, FromMachineJson) {
  const json machine = {
      {"schema", "rooflab.machine/1"},
      {"caches", {{"reported", {{"L1", 32768}, {"L2", 524288}, {"L3", 536870912}}},
                  {"measured", {{"L1", 32768}, {"L3", 25165824}}}}}};
  const SimulatedCaches s = simulated_caches(&machine, "m.json", "");
  ASSERT_TRUE(s.d1 && s.ll);
  EXPECT_EQ(s.ll_level, "L3");
  EXPECT_EQ(s.ll->size, 25165824);  // measured wins over the (VM-inflated) reported size
  EXPECT_TRUE(valgrind_valid(*s.ll));
  // The 32 KiB size with this machine's L1 associativity and line: kept when valgrind can
  // simulate it (8-way), else the associativity is rounded at the same size (a 12-way L1 gives
  // 42.7 sets) and the source says so.
  const HostWays w1 = host_ways(1);
  const CacheGeometry wanted{32768, w1.assoc, w1.line}, used = valgrind_geometry(32768, w1.assoc, w1.line);
  EXPECT_EQ(*s.d1, used) << s.d1_source;
  EXPECT_EQ(s.d1->size, 32768);  // a power-of-two associativity always fits 32 KiB exactly
  EXPECT_TRUE(valgrind_valid(*s.d1));
  EXPECT_NE(s.d1_source.find(w1.from_sysfs ? "associativity and line from sysfs" : "associativity and line assumed"),
            std::string::npos)
      << s.d1_source;
  if (used == wanted)
    EXPECT_EQ(s.d1_source.find("rounded"), std::string::npos) << s.d1_source;
  else
    EXPECT_NE(s.d1_source.find(wanted.arg() + " rounded to " + used.arg()), std::string::npos) << s.d1_source;

  // 40000 bytes = 625 lines of 64: no associativity up to 64 gives a power-of-two set count,
  // whatever this machine's sysfs says, so the size is rounded and the source says so.
  const json odd = {{"caches", {{"measured", {{"L1", 40000}, {"L2", 524288}}}}}};
  const SimulatedCaches o = simulated_caches(&odd, "odd.json", "");
  EXPECT_EQ(o.ll_level, "L2");  // no L3 anywhere: the LL is the L2
  ASSERT_TRUE(o.d1);
  EXPECT_TRUE(valgrind_valid(*o.d1));
  EXPECT_EQ(o.d1_requested, 40000);
  EXPECT_NE(o.d1_source.find("rounded to " + o.d1->arg()), std::string::npos) << o.d1_source;
  EXPECT_NE(s.d1_source.find("caches.measured.L1"), std::string::npos) << s.d1_source;
  EXPECT_EQ(s.ll_requested, 25165824);

  const SimulatedCaches l2 = simulated_caches(&machine, "m.json", "L2");
  ASSERT_TRUE(l2.ll);
  EXPECT_EQ(l2.ll->size, 524288);  // not measured: falls back to reported
  EXPECT_NE(l2.ll_source.find("caches.reported.L2"), std::string::npos) << l2.ll_source;

  const SimulatedCaches none = simulated_caches(nullptr, "", "");
  EXPECT_FALSE(none.d1 || none.ll);
  EXPECT_NE(none.d1_source.find("valgrind default"), std::string::npos);
  EXPECT_THROW(simulated_caches(&machine, "m.json", "L4"), Error);
}

TEST(Availability, UnavailableBackEndsSayWhy) {
  // Whether PAPI counts depends on the machine (not in a VM without a PMU); either way an
  // unavailable back end must carry a reason and an available one must have counted.
  auto papi = make_papi_backend();
  const Availability a = papi->probe();
  if (a.available) {
    EXPECT_TRUE(a.reason.empty());
    EXPECT_FALSE(papi->config().at("events").empty());
  } else {
    EXPECT_FALSE(a.reason.empty());
    EXPECT_NE(a.reason.find("PAPI"), std::string::npos) << a.reason;
  }
  EXPECT_EQ(papi->probe().available, a.available);  // probing twice is stable

  // Outside likwid-perfctr -m the marker API cannot count on any machine.
  for (const char* v : {"LIKWID_MODE", "LIKWID_FILEPATH", "LIKWID_EVENTS"}) ::unsetenv(v);
  const Availability l = make_likwid_backend()->probe();
  EXPECT_FALSE(l.available);
  EXPECT_NE(l.reason.find("likwid"), std::string::npos) << l.reason;
  EXPECT_THROW(make_backend("perf"), Error);
}

TEST(Availability, MissingValgrindIsAReason) {
  const Availability a = [] {
    const ScopedEnv valgrind("ROOFLAB_VALGRIND", "/nonexistent/valgrind");
    return CachegrindRunner(simulated_caches(nullptr, "", ""), 60).probe();
  }();
  EXPECT_FALSE(a.available);
  // (ASan/TSan builds are refused before valgrind is even looked for; a build without
  // valgrind's header cannot delimit the kernel region at all.)
#ifdef ROOFLAB_HAVE_CALLGRIND_H
  const char* expected = sanitizer_refuses_valgrind() ? "sanitizer" : "/nonexistent/valgrind";
#else
  const char* expected = "built without valgrind/callgrind.h";
#endif
  EXPECT_NE(a.reason.find(expected), std::string::npos) << a.reason;
}

TEST(Subprocess, ExitCodesSignalsTimeoutsAndEnv) {
  const fs::path dir = scratch_dir("child");
  const fs::path out = dir / "out", err = dir / "err";
  ChildResult r = run_child({"/bin/sh", "-c", "echo $ROOFLAB_T; echo oops >&2; exit 3"},
                            {{"ROOFLAB_T", "hello"}}, out, err, 30);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(tail_of_file(out, 5), "hello");
  EXPECT_EQ(tail_of_file(err, 5), "oops");

  r = run_child({"/bin/sh", "-c", "kill -SEGV $$"}, {}, out, err, 30);
  EXPECT_EQ(r.term_signal, 11);
  EXPECT_NE(r.describe().find("signal 11"), std::string::npos) << r.describe();

  r = run_child({"/bin/sh", "-c", "sleep 30"}, {}, out, err, 0.3);
  EXPECT_TRUE(r.timed_out);
  EXPECT_LT(r.seconds, 10);
  EXPECT_TRUE(run_child({"/bin/true"}, {}, out, err, 30).ok());
  fs::remove_all(dir);
}

TEST(Regions, MustPairAndNotNest) {
  region_begin("a");
  EXPECT_THROW(region_begin("b"), Error);
  EXPECT_THROW(region_end("b"), Error);
  region_end("a");
  EXPECT_THROW(region_end("a"), Error);
}

namespace {
// A fake instance recording what the measurement loop does to it.
struct FakeInstance : Instance {
  bool ok = true;
  int runs = 0, resets = 0, verifies = 0;
  void run() override { ++runs; }
  void reset() override { ++resets; }
  Verification verify() override {
    ++verifies;
    Verification v;
    v.ok = ok;
    v.max_err = ok ? 0 : 0.5;
    v.tol = 1e-12;
    v.detail = ok ? "" : "A[3][4] = 2 expected 1";
    return v;
  }
};
// A fake back end: each start/stop pair counts 10 "misses" plus the runs seen inside it.
struct FakeBackend : Backend {
  FakeInstance* inst = nullptr;
  int started_at = 0, pairs = 0;
  std::string name() const override { return "fake"; }
  Availability probe() override { return {true, ""}; }
  void start() override { started_at = inst->runs; }
  std::map<std::string, double> stop() override {
    ++pairs;
    return {{"misses", 10.0 + 100.0 * (inst->runs - started_at)}};
  }
};
}  // namespace

TEST(Measure, VerificationFailureCountsNothing) {
  FakeInstance inst;
  inst.ok = false;
  FakeBackend be;
  be.inst = &inst;
  const Measurement m = measure_instance(inst, "r", &be, 3);
  EXPECT_FALSE(m.verified);
  EXPECT_EQ(inst.runs, 0);
  EXPECT_EQ(be.pairs, 0);
  EXPECT_TRUE(m.events.empty());
  EXPECT_NE(m.message.find("verification failed"), std::string::npos);
  EXPECT_NE(m.message.find("A[3][4]"), std::string::npos) << m.message;
}

TEST(Measure, WarmUpThenEachRunCountedAndAveraged) {
  FakeInstance inst;
  FakeBackend be;
  be.inst = &inst;
  const Measurement m = measure_instance(inst, "r", &be, 3);
  ASSERT_TRUE(m.verified);
  EXPECT_EQ(inst.verifies, 1);
  EXPECT_EQ(inst.runs, 4);   // one warm-up + 3 counted
  EXPECT_EQ(be.pairs, 4);    // the warm-up goes through the back end too; its events are dropped
  EXPECT_DOUBLE_EQ(m.events.at("misses"), 110.0);  // per run: one run inside each pair
  EXPECT_THROW(measure_instance(inst, "r", &be, 0), Error);
}

TEST(Measure, RealSinkhornCaseVerifies) {
  const Measurement m = measure_case(parse_case_name(kRegion), nullptr, 1);
  EXPECT_TRUE(m.verified) << m.message;
  EXPECT_TRUE(m.events.empty());
  EXPECT_THROW(measure_case(parse_case_name("sinkhorn/nope/f64/8x8/threads:1"), nullptr, 1), Error);
}

TEST(CachegrindRunner, CommandUsesGeometryAndThisBinary) {
  SimulatedCaches s;
  s.d1 = CacheGeometry{32768, 8, 64};
  s.ll = CacheGeometry{524288, 8, 64};
  CachegrindRunner r(s, 60);
  const auto cmd = r.command(parse_case_name(kRegion), 2, "/tmp/x.out", "/tmp/x.log");
  auto has = [&](const std::string& a) { return std::find(cmd.begin(), cmd.end(), a) != cmd.end(); };
  EXPECT_TRUE(has("--tool=callgrind"));
  EXPECT_TRUE(has("--cache-sim=yes"));
  EXPECT_TRUE(has("--D1=32768,8,64"));
  EXPECT_TRUE(has("--LL=524288,8,64"));
  EXPECT_TRUE(has("--callgrind-out-file=/tmp/x.out"));
  EXPECT_TRUE(has("run-case"));
  EXPECT_TRUE(has(kRegion));
  EXPECT_EQ(cmd.back(), "2");
  const json cfg = r.config();
  EXPECT_EQ(cfg["D1"], "32768,8,64");
  EXPECT_NE(cfg["method"].get<std::string>().find("callgrind"), std::string::npos);
}

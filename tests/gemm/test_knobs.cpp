// sfc_ca knob selection (kernels/gemm/knobs.hpp): the grid and its bad input, the
// rooflab.gemm_knobs/1 file round trip, nearest-neighbour lookup, the analytic model on cases
// small enough to check by hand, `knobs:<method>` case parameters, and one tiny autotune.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "harness/error.hpp"
#include "harness/families.hpp"
#include "harness/json_io.hpp"
#include "kernels/gemm/knobs.hpp"
#include "roofline/machine.hpp"

namespace rooflab::gemm::knobs {
namespace {
namespace fs = std::filesystem;

fs::path temp_dir() {
  const fs::path d = fs::temp_directory_path() / ("rooflab_test_knobs_" + std::to_string(getpid()));
  fs::create_directories(d);
  return d;
}

Shape shape(int64_t m, int64_t n, int64_t k, int threads = 1) { return {m, n, k, DType::f64, threads, Isa::avx2}; }

template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

// ---- Grid ------------------------------------------------------------------------------------
TEST(KnobGrid, ParsesAndPrints) {
  const Grid g = parse_grid("kbf:1,4/k_layers:2");
  EXPECT_EQ(g.k_layers, (std::vector<int64_t>{2}));
  EXPECT_EQ(g.kbf, (std::vector<int64_t>{1, 4}));
  EXPECT_EQ(g.bk, (std::vector<int64_t>{128}));
  EXPECT_EQ(to_string(g), "k_layers:2/kbf:1,4/bk:128");
  EXPECT_EQ(to_string(parse_grid(to_string(Grid{}))), to_string(Grid{}));
}

TEST(KnobGrid, BadSpecsNameTheProblem) {
  EXPECT_NE(error_of([] { parse_grid("k_layer:1,2"); }).find("k_layer:1,2"), std::string::npos);
  EXPECT_NE(error_of([] { parse_grid("kbf:0"); }).find("[1, 4096]"), std::string::npos);
  EXPECT_NE(error_of([] { parse_grid("kbf:two"); }).find("'two'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_grid("kbf:"); }).find("''"), std::string::npos);
  EXPECT_NE(error_of([] { parse_grid("kbf:1,1"); }).find("twice"), std::string::npos);
  EXPECT_NE(error_of([] { parse_grid("kbf:1/kbf:2"); }).find("twice"), std::string::npos);
}

TEST(KnobGrid, CandidatesAreTheValidKnobs) {
  // K = 256: two K blocks of 128, so k_layers <= 2 and kbf <= 2 / k_layers.
  const auto c = candidates(Grid{}, shape(300, 200, 256));
  EXPECT_EQ(c, (std::vector<Knob>{{1, 1, 128}, {1, 2, 128}, {2, 1, 128}}));
  // No valid knob at all: an error naming the grid and the shape.
  const std::string e = error_of([] { candidates(parse_grid("k_layers:4/kbf:8"), shape(300, 200, 256)); });
  EXPECT_NE(e.find("k_layers:4/kbf:8"), std::string::npos);
  EXPECT_NE(e.find("300x200x256"), std::string::npos);
  EXPECT_NE(error_of([] { parse_shape("12x13", DType::f64, 1, Isa::avx2); }).find("MxNxK"), std::string::npos);
  EXPECT_NE(error_of([] { parse_shape("12x0x5", DType::f64, 1, Isa::avx2); }).find("N of"), std::string::npos);
}

// ---- The file --------------------------------------------------------------------------------
Tuned tuned(const Shape& s, std::vector<Timing> t) { return {s, std::move(t)}; }

TEST(KnobFile, RoundTripsEntriesAndExtraKeys) {
  const fs::path p = temp_dir() / "cache.json";
  KnobFile f;
  f.put(tuned(shape(300, 200, 256, 2), {{{1, 1, 128}, 2e-3}, {{2, 1, 128}, 1.5e-3}}));
  f.put(tuned({512, 512, 512, DType::f32, 2, Isa::scalar}, {{{1, 2, 128}, 1e-3}}));
  f.put(tuned(shape(300, 200, 256, 2), {{{1, 1, 128}, 3e-3}, {{2, 1, 128}, 1.0e-3}}));  // replaces
  f.extra = {{"kind", "test"}};
  f.save(p);
  const nlohmann::json j = read_json_file(p);
  EXPECT_EQ(j["schema"], "rooflab.gemm_knobs/1");
  EXPECT_EQ(j["entries"][0]["best"]["k_layers"], 2);
  const KnobFile g = KnobFile::load(p, false);
  ASSERT_EQ(g.entries.size(), 2u);
  EXPECT_EQ(g.extra["kind"], "test");
  const Tuned* t = g.find(shape(300, 200, 256, 2));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->timings.size(), 2u);
  EXPECT_DOUBLE_EQ(t->best().seconds, 1.0e-3);
  EXPECT_EQ(t->best().knob, (Knob{2, 1, 128}));
  EXPECT_NE(g.find({512, 512, 512, DType::f32, 2, Isa::scalar}), nullptr);
  EXPECT_EQ(g.find(shape(300, 200, 256, 1)), nullptr);  // threads are part of the key
  fs::remove_all(p.parent_path());
}

TEST(KnobFile, MissingAndMalformedFiles) {
  const fs::path d = temp_dir();
  EXPECT_TRUE(KnobFile::load(d / "none.json", true).entries.empty());
  EXPECT_NE(error_of([&] { KnobFile::load(d / "none.json", false); }).find("build-nn"), std::string::npos);
  write_json_atomic(d / "wrong.json", {{"schema", "rooflab.bench/1"}, {"entries", nlohmann::json::array()}});
  EXPECT_NE(error_of([&] { KnobFile::load(d / "wrong.json", false); }).find("wrong.json"), std::string::npos);
  write_json_atomic(d / "bad.json", {{"schema", "rooflab.gemm_knobs/1"},
                                     {"entries", {{{"m", 1}, {"n", 2}, {"k", 3}, {"dtype", "f64"}}}}});
  EXPECT_NE(error_of([&] { KnobFile::load(d / "bad.json", false); }).find("entries[0]"), std::string::npos);
  fs::remove_all(d);
}

// ---- Nearest neighbour -------------------------------------------------------------------------
TEST(KnobNn, NearestInLogSpaceWithTheSameKey) {
  std::vector<Tuned> set = {
      tuned(shape(256, 256, 256, 2), {{{1, 1, 128}, 1.0}, {{2, 1, 128}, 0.5}}),
      tuned(shape(2048, 2048, 2048, 2), {{{1, 2, 128}, 1.0}, {{1, 4, 128}, 2.0}}),
      tuned(shape(1024, 1024, 1024, 1), {{{1, 8, 128}, 1.0}}),  // other thread count: a fallback only
  };
  // 1100^3 is nearer 2048^3 than 256^3 in log2 space (0.9 vs 2.1 per axis).
  const NnChoice c = nn_choice(set, shape(1100, 1100, 1100, 2), Grid{});
  EXPECT_EQ(c.neighbour, &set[1]);
  EXPECT_EQ(c.knob, (Knob{1, 2, 128}));
  EXPECT_NEAR(c.distance, std::sqrt(3.0) * std::log2(2048.0 / 1100.0), 1e-12);
  EXPECT_EQ(nn_choice(set, shape(300, 280, 260, 2), Grid{}).knob, (Knob{2, 1, 128}));
  // The neighbour's best (k_layers 2) is invalid for K = 128 (one K block): its fastest valid one.
  EXPECT_EQ(nn_choice(set, shape(300, 280, 128, 2), Grid{}).knob, (Knob{1, 1, 128}));
  EXPECT_EQ(c.note, "");  // the query's own ISA and threads: nothing to say
  // threads:4 is nowhere: the nearest thread count in log2 (2, not 1), said in the note.
  const NnChoice t4 = nn_choice(set, shape(300, 300, 300, 4), Grid{});
  EXPECT_EQ(t4.neighbour, &set[0]);
  EXPECT_NE(t4.note.find("no threads:4 entry"), std::string::npos) << t4.note;
  EXPECT_NE(t4.note.find("build-nn --threads 4"), std::string::npos) << t4.note;
  // The query's thread count wins over a nearer shape at another one.
  EXPECT_EQ(nn_choice(set, shape(1024, 1024, 1024, 2), Grid{}).neighbour, &set[1]);
  // Another dtype is never used.
  Shape f32 = shape(300, 300, 300, 2);
  f32.dtype = DType::f32;
  EXPECT_NE(error_of([&] { nn_choice(set, f32, Grid{}); }).find("f32 (any ISA, any thread count)"), std::string::npos);
}

Shape with_isa(Shape s, Isa isa) {
  s.isa = isa;
  return s;
}

TEST(KnobNn, AnotherIsaOnlyWhenTheQuerysIsMissingAndSaidSo) {
  // A set autotuned on an AVX2-only CPU, queried for avx512 (an AVX-512 CPU's widest ISA): the
  // nearest avx2 entry, with a note naming both ISAs and the command that fills the gap.
  const std::vector<Tuned> avx2_only = {
      tuned(shape(256, 256, 256, 2), {{{2, 1, 128}, 0.5}, {{1, 1, 128}, 1.0}}),
      tuned(shape(2048, 2048, 2048, 2), {{{1, 2, 128}, 1.0}}),
  };
  const NnChoice c = nn_choice(avx2_only, with_isa(shape(300, 280, 260, 2), Isa::avx512), Grid{});
  EXPECT_EQ(c.neighbour, &avx2_only[0]);
  EXPECT_EQ(c.knob, (Knob{2, 1, 128}));
  EXPECT_NE(c.note.find("no avx512 entry"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("avx2 entry (256x256x256"), std::string::npos) << c.note;
  EXPECT_NE(c.note.find("build-nn --isa avx512"), std::string::npos) << c.note;
  // An entry of the query's ISA wins over a nearer one of another ISA.
  const std::vector<Tuned> both = {
      tuned(shape(300, 280, 260, 2), {{{1, 2, 128}, 1.0}}),
      tuned(with_isa(shape(2048, 2048, 2048, 2), Isa::avx512), {{{1, 1, 128}, 1.0}}),
  };
  const NnChoice own = nn_choice(both, with_isa(shape(300, 280, 260, 2), Isa::avx512), Grid{});
  EXPECT_EQ(own.neighbour, &both[1]);
  EXPECT_EQ(own.note, "");
  // Without the query's ISA: the nearest in width (avx2 for scalar), the wider on a tie
  // (avx512 for avx2 when scalar and avx512 are both there), whatever the shape distance.
  const std::vector<Tuned> wide = {
      tuned(with_isa(shape(300, 280, 260, 2), Isa::scalar), {{{1, 1, 128}, 1.0}}),
      tuned(with_isa(shape(2048, 2048, 2048, 2), Isa::avx512), {{{1, 2, 128}, 1.0}}),
  };
  EXPECT_EQ(nn_choice(wide, shape(300, 280, 260, 2), Grid{}).neighbour, &wide[1]);
  EXPECT_EQ(nn_choice(both, with_isa(shape(2048, 2048, 2048, 2), Isa::scalar), Grid{}).neighbour, &both[0]);
  // Another thread count and ISA: both named.
  const NnChoice both_off = nn_choice(avx2_only, with_isa(shape(300, 300, 300, 1), Isa::avx512), Grid{});
  EXPECT_NE(both_off.note.find("no avx512 threads:1 entry"), std::string::npos) << both_off.note;
  EXPECT_NE(both_off.note.find("build-nn --isa avx512 --threads 1"), std::string::npos) << both_off.note;
}

// ---- The analytic model ------------------------------------------------------------------------
// A machine where only compute costs time (every bandwidth "infinite"), 10 GFLOP/s per thread.
MachineParams compute_only() {
  MachineParams m;
  m.flops = 1e10;
  m.l1 = 32 << 10, m.l2 = 512 << 10, m.l3 = 16 << 20;
  m.bw_l2 = m.bw_slow = m.bw_c = m.bw_copy = 1e30;
  return m;
}

TEST(KnobModel, OneTileIsItsPaddedFlops) {
  // 90 x 90 x 100: one tile, padded by the AVX2 f64 micro-kernel (4 x 12) to 92 x 96 and K to
  // bk = 128: 2 * 92 * 96 * 128 flops at 1e10 FLOP/s.
  const Prediction p = predict(shape(90, 90, 100), {1, 1, 128}, compute_only());
  EXPECT_NEAR(p.seconds, 2.0 * 92 * 96 * 128 / 1e10, 1e-12);
  EXPECT_EQ(p.brgemm[0], 1);  // A and B both come from slow memory
}

TEST(KnobModel, CurveOrderGivesTheFourBrgemmTypes) {
  // 2 x 2 tiles, one K block, one thread: the Hilbert walk reads A and B for the first tile,
  // then one new panel for each of the next two, and the last tile reuses both (all fit L2).
  const Prediction p = predict(shape(192, 192, 128), {1, 1, 128}, compute_only());
  EXPECT_EQ(p.brgemm[0], 1);
  EXPECT_EQ(p.brgemm[1] + p.brgemm[2], 2);
  EXPECT_EQ(p.brgemm[1], 1);
  EXPECT_EQ(p.brgemm[3], 1);
  // An L2 smaller than one block: every BRGEMM reads both panels from slow memory.
  MachineParams tiny = compute_only();
  tiny.l2 = 80 << 10;
  EXPECT_EQ(predict(shape(192, 192, 128), {1, 1, 128}, tiny).brgemm[0], 4);
  // Slow bytes of that walk: 4 A blocks and 4 B blocks of 96 x 128 doubles.
  EXPECT_DOUBLE_EQ(predict(shape(192, 192, 128), {1, 1, 128}, tiny).slow_bytes, 8.0 * 96 * 128 * 8);
}

TEST(KnobModel, KLayersBalanceThreadsUnlessTheReductionCostsMore) {
  // Three 96 x 96 tiles on two threads: k_layers 1 leaves one thread with two tiles; k_layers
  // 2 gives each thread three half-K tiles (1.5 tiles): 25% less, if the copies are free.
  const Shape s = shape(288, 96, 1024, 2);
  const Grid g = parse_grid("k_layers:1,2/kbf:1");
  MachineParams m = compute_only();
  const double tile = 2.0 * 96 * 96 * 1024 / 1e10;
  EXPECT_NEAR(predict(s, {1, 1, 128}, m).seconds, 2 * tile, 1e-12);
  EXPECT_NEAR(predict(s, {2, 1, 128}, m).seconds, 1.5 * tile, 1e-12);
  EXPECT_EQ(analytic_choice(s, g, m).knob.k_layers, 2);
  // Zeroing + reducing a 288 x 96 copy at 0.5 GB/s: 4 * 288 * 96 * 8 B = 1.8 ms > 0.5 tile
  // (0.94 ms); the packing costs the same for both.
  m.bw_copy = 0.5e9;
  EXPECT_EQ(analytic_choice(s, g, m).knob.k_layers, 1);
}

TEST(KnobModel, KbfTradesCRoundTripsAgainstL1) {
  // One 96 x 96 tile, K = 1024 (8 blocks), one thread, compute 50 GFLOP/s, L2 at 50 GB/s:
  // each BRGEMM moves the C tile (2 x 96 x 96 x 8 B) through L2, so a larger kbf is better,
  // until a B sliver and an A sliver of the batch (kc x (4 + 12) doubles, AVX2 f64) overflow
  // the 32 KiB L1 (kbf > 2) and the B panel is re-streamed per 4-row sliver, L2-bound.
  const Shape s = shape(96, 96, 1024);
  MachineParams m = compute_only();
  m.flops = 5e10;
  m.bw_l2 = 5e10;
  // The paper's capacity rule first: with a 500 KiB L2 only kbf 1 keeps the panels (2 x 96 x
  // 128 doubles = 192 KiB) within 3/4 of it (375 KiB); kbf 2 (384 KiB) is just over.
  m.l2 = 500 << 10;
  EXPECT_TRUE(panels_fit_l2(s, {1, 1, 128}, m));
  EXPECT_FALSE(panels_fit_l2(s, {1, 2, 128}, m));
  EXPECT_EQ(analytic_choice(s, parse_grid("k_layers:1/kbf:1,2,4,8"), m).knob.kbf, 1);
  // When no knob fits, all count: the least predicted time of kbf 4 and 8.
  EXPECT_DOUBLE_EQ(analytic_choice(s, parse_grid("k_layers:1/kbf:4,8"), m).seconds,
                   std::min(predict(s, {1, 4, 128}, m).seconds, predict(s, {1, 8, 128}, m).seconds));
  m.l2 = 16 << 20;  // the roofline alone from here
  EXPECT_EQ(analytic_choice(s, parse_grid("k_layers:1/kbf:1,2,4,8"), m).knob.kbf, 2);
  m.l1 = 1 << 20;  // with a big L1 the batch can grow
  EXPECT_EQ(analytic_choice(s, parse_grid("k_layers:1/kbf:1,2,4,8"), m).knob.kbf, 8);
}

TEST(KnobModel, MissingMachineModelNamesCharacterize) {
  const std::string e = error_of([] { roofline::load_machine("/nonexistent/machine.json"); });
  EXPECT_NE(e.find("rooflab characterize"), std::string::npos);
  setenv("ROOFLAB_MACHINE", "/nonexistent/machine.json", 1);
  const std::string e2 = error_of([] { resolve_method("analytic", shape(512, 512, 512)); });
  unsetenv("ROOFLAB_MACHINE");
  EXPECT_NE(e2.find("rooflab characterize"), std::string::npos);
  EXPECT_NE(error_of([] { resolve_method("best", shape(512, 512, 512)); }).find("'best'"), std::string::npos);
}

TEST(KnobModel, MachineParamsFromMachineJson) {
  const fs::path p = fs::path(ROOFLAB_SOURCE_DIR) / "tests/fixtures/run_small/machine.json";
  if (!fs::exists(p)) GTEST_SKIP() << p << " missing";
  const roofline::Machine m = roofline::load_machine(p);
  const MachineParams mp = machine_params(m, shape(1024, 1024, 1024, 2));
  EXPECT_GT(mp.flops, 0);
  EXPECT_GT(mp.l2, mp.l1);
  EXPECT_GT(mp.bw_l2, 0);
  const Prediction a = analytic_choice(shape(1024, 1024, 1024, 2), Grid{}, mp);
  EXPECT_GT(a.seconds, 2.0 * 1024 * 1024 * 1024 / (2 * mp.flops));  // never faster than the FMA ceiling
}

// The FMA ceiling is the shape's ISA's; a machine.json without that table says which priced it.
TEST(KnobModel, MachineParamsNameTheComputeTable) {
  const fs::path p = fs::path(ROOFLAB_SOURCE_DIR) / "tests/fixtures/run_small/machine.json";
  if (!fs::exists(p)) GTEST_SKIP() << p << " missing";
  nlohmann::json j = read_json_file(p);
  const std::string widest = j["compute"]["isa"];
  j["compute"]["by_isa"] = {{"avx2", {{"ceilings", j["compute"]["ceilings"]}}}};
  const MachineParams mp = machine_params(roofline::machine_from_json(j), shape(1024, 1024, 1024, 2));
  EXPECT_EQ(mp.compute_isa, "avx2");
  EXPECT_TRUE(mp.compute_note.empty()) << mp.compute_note;
  ASSERT_EQ(widest, "avx2");
  Shape s512 = shape(1024, 1024, 1024, 2);
  s512.isa = Isa::avx512;  // a table this file lacks
  const MachineParams other = machine_params(roofline::machine_from_json(j), s512);
  EXPECT_EQ(other.compute_isa, "avx2");
  EXPECT_NE(other.compute_note.find("no avx512 compute ceilings"), std::string::npos) << other.compute_note;
}

// ---- knobs:<method> on sfc_ca cases and a tiny autotune ---------------------------------------------
TEST(KnobCases, NnMethodResolvesWhenTheCaseIsMade) {
  const fs::path d = temp_dir();
  KnobFile f;
  f.put(tuned(shape(200, 200, 1024, 1), {{{2, 4, 128}, 1.0}, {{1, 1, 128}, 2.0}}));
  f.save(d / "nn.json");
  setenv("ROOFLAB_GEMM_KNOBS_NN", (d / "nn.json").c_str(), 1);
  const Case c = parse_case_name("gemm/sfc_ca/avx2/f64/210x190x1000/knobs:nn/threads:1");
  EXPECT_EQ(variant_of(c).accepts(c), "");
  EXPECT_NE(variant_of(c).model(c).note.find("k_layers:2 kbf:4"), std::string::npos);
  const Case bad = parse_case_name("gemm/sfc_ca/avx2/f64/210x190x1000/knobs:nn/kbf:2/threads:1");
  EXPECT_NE(variant_of(bad).accepts(bad).find("drop those"), std::string::npos);
  const Case other = parse_case_name("gemm/sfc_ca/avx2/f64/210x190x1000/knobs:guess/threads:1");
  EXPECT_NE(variant_of(other).accepts(other).find("'guess'"), std::string::npos);
  // The same AVX2-only set on an AVX-512 case (names resolve on any CPU; only running needs
  // the ISA): the avx2 neighbour's knob, and the note says so.
  std::string note = "unset";
  EXPECT_EQ(resolve_method("nn", shape(210, 190, 1000, 1), &note), (Knob{2, 4, 128}));
  EXPECT_EQ(note, "");
  EXPECT_EQ(resolve_method("nn", with_isa(shape(210, 190, 1000, 1), Isa::avx512), &note), (Knob{2, 4, 128}));
  EXPECT_NE(note.find("no avx512 entry"), std::string::npos) << note;
  const Case wide = parse_case_name("gemm/sfc_ca/avx512/f64/210x190x1000/knobs:nn/threads:1");
  EXPECT_EQ(variant_of(wide).accepts(wide), "");
  EXPECT_NE(variant_of(wide).model(wide).note.find("k_layers:2 kbf:4"), std::string::npos);
  unsetenv("ROOFLAB_GEMM_KNOBS_NN");
  fs::remove_all(d);
}

TEST(KnobTune, TimesEveryCandidateOnce) {
  Shape s = shape(70, 50, 260, 1);
  s.isa = Isa::scalar;  // any CPU
  const Grid g = parse_grid("k_layers:1,2/kbf:1,2");  // K blocks 3: (1,1) (1,2) (2,1)
  TuneOptions o;
  o.reps = 1, o.wait_quiet_s = 0;  // no waiting for a quiet machine in a unit test
  Tuned t = autotune(s, g, o);
  ASSERT_EQ(t.timings.size(), 3u);
  for (const Timing& x : t.timings) EXPECT_GT(x.seconds, 0);
  // Known timings are kept, only missing knobs are timed.
  Tuned partial{s, {{{1, 1, 128}, 123.0}}};
  t = autotune(s, g, o, &partial);
  ASSERT_EQ(t.timings.size(), 3u);
  EXPECT_EQ(t.find({1, 1, 128})->seconds, 123.0);
  TuneOptions bad;
  bad.reps = 0;
  EXPECT_NE(error_of([&] { autotune(shape(96, 96, 512), g, bad); }).find("reps"), std::string::npos);
}

}  // namespace
}  // namespace rooflab::gemm::knobs

// sinkhorn_cuda: what can be checked without a device (tile validation, launch planning,
// the kernels' index arithmetic and the iteration recipes through the host emulation, the
// family table, the GPU roofline, the machine.json "gpu" section) and, when a device is
// present, the kernels themselves against the long-double reference.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <random>

#include "harness/buffer.hpp"
#include "apps/commands.hpp"
#include "harness/error.hpp"
#include "harness/families.hpp"
#include "harness/json_io.hpp"
#include "kernels/sinkhorn/cuda/sinkhorn_cuda.hpp"
#include "kernels/sinkhorn/sinkhorn.hpp"
#include "roofline/predict.hpp"
#include "tests/sinkhorn_cuda/emulate.hpp"
#include "tests/sinkhorn_cuda/problem.hpp"

namespace rooflab::sinkhorn_cuda {
namespace {
namespace fs = std::filesystem;
using json = nlohmann::json;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool have_device() { return unavailable_reason().empty(); }

// ---- Tiles and launch planning ------------------------------------------------------------
TEST(SinkhornCudaPlan, TileErrorsNameTheValueAndTheLimit) {
  EXPECT_NE(error_of([] { validate_tile(Tile2{2, 1024, 8}, 4); }).find("ty x tx = 2048 threads, more than the 1024"),
            std::string::npos);
  EXPECT_NE(error_of([] { validate_tile(Tile2{2, 32, 65}, 4); }).find("ny must be <= 64"), std::string::npos);
  EXPECT_NE(error_of([] { validate_tile(Tile2{0, 32, 8}, 4); }).find(">= 1"), std::string::npos);
  // 1024 rows of 64 weights in f64 do not fit in shared memory.
  const std::string smem = error_of([] { validate_tile(Tile2{1024, 1, 64}, 8); });
  EXPECT_NE(smem.find("shared memory"), std::string::npos) << smem;
  EXPECT_NE(smem.find("49152"), std::string::npos) << smem;
  EXPECT_NE(error_of([] { validate_tile(Tile4{48, 8}, 4); }).find("multiple of 32"), std::string::npos);
  EXPECT_NE(error_of([] { validate_tile(Tile4{2048, 8}, 4); }).find("in 32..1024"), std::string::npos);
  EXPECT_NE(error_of([] { validate_tile(Tile4{128, 0}, 4); }).find("rny must be in 1..64"), std::string::npos);
  // The paper's tiles and the extremes that fit are valid.
  for (size_t elem : {4, 8}) {
    EXPECT_NO_THROW(validate_tile(Tile2{}, elem));
    EXPECT_NO_THROW(validate_tile(Tile2{1, 1024, 64}, elem));
    EXPECT_NO_THROW(validate_tile(Tile4{}, elem));
    EXPECT_NO_THROW(validate_tile(Tile4{1024, 64}, elem));
  }
}

TEST(SinkhornCudaPlan, GeometryOfThePapersTiles) {
  // f32, 128-bit loads: a part-2 block covers 16 rows x 128 columns.
  const Geometry g2 = plan_part2(1023, 517, 517, 4, Tile2{}, true);
  EXPECT_EQ(g2.vec, 4);
  EXPECT_EQ(g2.block_x, 32);
  EXPECT_EQ(g2.block_y, 2);
  EXPECT_EQ(g2.col_tiles, 5);   // ceil(517 / 128)
  EXPECT_EQ(g2.row_tiles, 64);  // ceil(1023 / 16)
  EXPECT_EQ(g2.grid_y, 64);
  EXPECT_EQ(g2.smem_bytes, (2u * 32 * 4 + 2 * 8) * 4);
  // f64 part 4: a block covers 8 rows x 256 columns; 4 warps x 8 rows of partial sums.
  const Geometry g4 = plan_part4(1000, 1000, 1000, 8, Tile4{}, true);
  EXPECT_EQ(g4.vec, 2);
  EXPECT_EQ(g4.block_y, 1);
  EXPECT_EQ(g4.col_tiles, 4);
  EXPECT_EQ(g4.row_tiles, 125);
  EXPECT_EQ(g4.smem_bytes, 8u * 4 * 8);
  // Scalar fallback: one column per thread.
  EXPECT_EQ(plan_part4(10, 100, 100, 4, Tile4{}, false).col_tiles, 1);
  EXPECT_EQ(plan_part2(10, 129, 129, 4, Tile2{1, 32, 1}, false).col_tiles, 5);
  // More row tiles than the grid's y limit: the kernels stride over them.
  const Geometry tall = plan_part2(int64_t(1) << 21, 4, 4, 4, Tile2{1, 32, 1}, false);
  EXPECT_EQ(tall.row_tiles, int64_t(1) << 21);
  EXPECT_EQ(tall.grid_y, kMaxGridY);
  EXPECT_NE(error_of([] { plan_part2(0, 4, 4, 4, Tile2{}, true); }).find("sizes must be >= 1"), std::string::npos);
  EXPECT_NE(error_of([] { plan_part4(4, 8, 7, 4, Tile4{}, true); }).find("lda 7 < N 8"), std::string::npos);
}

TEST(SinkhornCudaPlan, VectorLoadsOnlyOnAlignedRows) {
  alignas(16) static float buf[64];
  EXPECT_TRUE(can_vectorize(buf, 8, sizeof(float)));
  EXPECT_FALSE(can_vectorize(buf + 1, 8, sizeof(float)));  // row 0 at 4 bytes past 16
  EXPECT_FALSE(can_vectorize(buf, 517, sizeof(float)));    // row 1 at 2068 bytes
  EXPECT_TRUE(can_vectorize(buf, 518, sizeof(double)));
  EXPECT_FALSE(can_vectorize(buf, 517, sizeof(double)));
}

// ---- The kernels' decomposition (emulated) --------------------------------------------------
// Every element is visited exactly once per pass and every sum entry receives one atomic
// add per tile that covers it, for edge tiles, the scalar path and a clamped grid.
struct Shape { int64_t M, N, lda; };
void expect_cover(Geometry g, bool part2, const std::string& what) {
  std::vector<float> A(size_t(g.M * g.lda), 1.0f), w(size_t(std::max(g.M, g.N)), 1.0f), sums(size_t(std::max(g.M, g.N)), 0.0f);
  std::vector<int> visits(A.size(), 0), adds(sums.size(), 0);
  emu::visits = &visits, emu::sum_adds = &adds;
  if (part2) emu::part2<float>(g, {A.data(), w.data(), sums.data(), true});
  else emu::part4<float>(g, {A.data(), w.data(), sums.data(), true});
  emu::visits = nullptr, emu::sum_adds = nullptr;
  for (int64_t i = 0; i < g.M; ++i)
    for (int64_t j = 0; j < g.lda; ++j)
      ASSERT_EQ(visits[size_t(i * g.lda + j)], j < g.N ? 1 : 0) << what << " element (" << i << ", " << j << ")";
  // Part 2: one add per column and row tile, sum = M; part 4: one per row and column tile, sum = N.
  const int64_t n = part2 ? g.N : g.M, per = part2 ? g.row_tiles : g.col_tiles;
  for (int64_t k = 0; k < n; ++k) {
    ASSERT_EQ(adds[size_t(k)], per) << what << " sum " << k;
    ASSERT_EQ(sums[size_t(k)], float(part2 ? g.M : g.N)) << what << " sum " << k;
  }
}

TEST(SinkhornCudaEmulated, EveryElementOncePerPass) {
  const Shape shapes[] = {{1023, 517, 517}, {1, 4097, 4097}, {4097, 1, 1}, {33, 130, 132}, {64, 64, 64}, {7, 9, 12}};
  const Tile2 t2s[] = {{}, {4, 64, 3}, {1, 1, 1}, {3, 7, 5}};
  const Tile4 t4s[] = {{}, {64, 5}, {32, 1}, {96, 64}};
  for (const Shape& s : shapes)
    for (bool vec : {false, true})
      for (size_t elem : {size_t(4), size_t(8)}) {
        if (vec && (size_t(s.lda) * elem) % 16 != 0) continue;  // plan only vectorizes aligned rows
        for (const Tile2& t : t2s) {
          Geometry g = plan_part2(s.M, s.N, s.lda, elem, t, vec);
          g.vec = vec ? int(16 / elem) : 1;
          const std::string what = std::to_string(s.M) + "x" + std::to_string(s.N) + " ty" + std::to_string(t.ty) +
                                   " tx" + std::to_string(t.tx) + " ny" + std::to_string(t.ny) + " vec" + std::to_string(g.vec);
          expect_cover(g, true, "part 2 " + what);
          g.grid_y = std::max(1, g.grid_y / 3);  // fewer blocks than row tiles: the stride loop
          expect_cover(g, true, "part 2 strided " + what);
        }
        for (const Tile4& t : t4s) {
          Geometry g = plan_part4(s.M, s.N, s.lda, elem, t, vec);
          const std::string what = std::to_string(s.M) + "x" + std::to_string(s.N) + " rtx" + std::to_string(t.tx) +
                                   " rny" + std::to_string(t.ny) + " vec" + std::to_string(g.vec);
          expect_cover(g, false, "part 4 " + what);
          g.grid_y = std::max(1, g.grid_y / 2);
          expect_cover(g, false, "part 4 strided " + what);
        }
      }
}

// ---- Iteration recipes against the reference (emulated backend) ----------------------------
using testing::Problem;
// Two iterations of `kind` on backend b compared with the reference: max error / tolerance.
template <class T>
double run_vs_reference(const Backend<T>& b, Kind kind, const Problem<T>& p, double fi, Tile2 t2, Tile4 t4,
                        int64_t offset = 0, Geometry* g2_out = nullptr) {
  const auto r = testing::against_reference(testing::two_iterations(b, kind, p, fi, t2, t4, offset, g2_out), kind, p, fi);
  return r.max_err / r.tol;
}

template <class T>
void recipes_match_reference() {
  const Backend<T> b = emu::backend<T>();
  const Shape shapes[] = {{1023, 517, 517}, {1, 301, 301}, {301, 1, 1}, {40, 64, 64}, {37, 29, 32}};
  for (const Shape& s : shapes) {
    const Problem<T> p(s.M, s.N, s.lda);
    for (Kind k : {Kind::mapuot, Kind::uv, Kind::baseline})
      for (double fi : {1.0, 0.6})
        for (auto [t2, t4] : {std::pair<Tile2, Tile4>{{}, {}}, {{4, 64, 3}, {64, 5}}}) {
          const double r = run_vs_reference(b, k, p, fi, t2, t4);
          EXPECT_LE(r, 1.0) << "kind " << int(k) << " " << s.M << "x" << s.N << " fi " << fi << " ty " << t2.ty;
        }
  }
}
TEST(SinkhornCudaEmulated, RecipesMatchReferenceF32) { recipes_match_reference<float>(); }
TEST(SinkhornCudaEmulated, RecipesMatchReferenceF64) { recipes_match_reference<double>(); }

TEST(SinkhornCudaEmulated, UnalignedMatrixTakesTheScalarPath) {
  const Backend<float> b = emu::backend<float>();
  const Problem<float> p(61, 64, 64);
  Geometry g;
  EXPECT_LE(run_vs_reference(b, Kind::mapuot, p, 1.0, {}, {}, 0, &g), 1.0);
  EXPECT_EQ(g.vec, 4);
  EXPECT_LE(run_vs_reference(b, Kind::mapuot, p, 1.0, {}, {}, 1, &g), 1.0);  // A 4 bytes past 256
  EXPECT_EQ(g.vec, 1);
}

// A kernel that misses the last column tile: verification must see it.
TEST(SinkhornCudaEmulated, AWrongKernelFailsTheComparison) {
  Backend<double> b = emu::backend<double>();
  b.part2 = [](const Geometry& g, const dev::PassArgs<double>& a) {
    Geometry short_g = g;
    short_g.col_tiles = std::max<int64_t>(1, g.col_tiles - 1);
    emu::part2<double>(short_g, a);
  };
  const Problem<double> p(50, 300, 300);
  EXPECT_GT(run_vs_reference(b, Kind::mapuot, p, 1.0, {}, {}), 1.0);
  EXPECT_GT(run_vs_reference(b, Kind::uv, p, 1.0, {}, {}), 1.0);
}

// ---- Family table --------------------------------------------------------------------------
Case cuda_case(const std::string& name) { return parse_case_name(name); }

TEST(SinkhornCudaFamily, RegisteredWithItsVariants) {
  const Family* f = find_family("sinkhorn_cuda");
  ASSERT_NE(f, nullptr);
  for (const char* v : {"mapuot", "fused_uv", "baseline"}) EXPECT_NE(f->find(v), nullptr) << v;
  const std::string n = "sinkhorn_cuda/mapuot/f32/10240x10240/ty:2/tx:32/ny:8/rtx:128/rny:8/part:iter/threads:1";
  EXPECT_EQ(cuda_case(n).name(), n);
}

TEST(SinkhornCudaFamily, ProfilesAndAcceptsFollowTheDevice) {
  const Family* f = find_family("sinkhorn_cuda");
  const Case good = cuda_case("sinkhorn_cuda/fused_uv/f64/1023x517/ty:4/tx:64/ny:3/rtx:64/rny:5/threads:1");
  const std::string why = variant_of(good).accepts(good);
  if (have_device()) {
    EXPECT_EQ(why, "");
    EXPECT_FALSE(f->cases("quick").empty());
    EXPECT_FALSE(f->cases("paper").empty());
  } else {
    // Empty profiles keep the quick run free of failures on machines without a device.
    EXPECT_TRUE(f->cases("quick").empty());
    EXPECT_TRUE(f->cases("paper").empty());
    EXPECT_TRUE(why.find("no CUDA device") != std::string::npos || why.find("built without CUDA") != std::string::npos)
        << why;
    EXPECT_NE(error_of([&] { variant_of(good).make(good); }).find(why), std::string::npos);
  }
}

TEST(SinkhornCudaFamily, BadParametersAreReportedBeforeTheDevice) {
  auto why = [](const std::string& n) {
    const Case c = cuda_case(n);
    return variant_of(c).accepts(c);
  };
  EXPECT_NE(why("sinkhorn_cuda/mapuot/f32/64x64/ty:2/tx:1024/ny:8/rtx:128/rny:8/part:iter/threads:1")
                .find("more than the 1024"), std::string::npos);
  EXPECT_NE(why("sinkhorn_cuda/mapuot/f32/64x64/rtx:100/part:iter/threads:1").find("multiple of 32"), std::string::npos);
  EXPECT_NE(why("sinkhorn_cuda/baseline/f32/64x64/tx:64/threads:1").find("unknown parameter 'tx'"), std::string::npos);
  EXPECT_NE(why("sinkhorn_cuda/fused_uv/f32/64x64/part:p2/threads:1").find("unknown parameter 'part'"), std::string::npos);
  EXPECT_NE(why("sinkhorn_cuda/mapuot/f32/64x64/part:p3/threads:1").find("part must be iter, p2 or p4"), std::string::npos);
  EXPECT_NE(why("sinkhorn_cuda/mapuot/f32/64x64/fi:1.5/threads:1").find("fi must be"), std::string::npos);
  EXPECT_NE(why("sinkhorn_cuda/mapuot/f32/64x64/threads:2").find("threads must be 1"), std::string::npos);
}

TEST(SinkhornCudaFamily, ModelsNameTheGpuCeilings) {
  auto model_of = [](const std::string& n) {
    const Case c = cuda_case(n);
    return variant_of(c).model(c);
  };
  const double MN = 1000.0 * 2000.0;
  const Model m = model_of("sinkhorn_cuda/mapuot/f32/1000x2000/part:iter/threads:1");
  EXPECT_EQ(m.compute_ceiling, "gpu:add_f32");
  EXPECT_DOUBLE_EQ(m.flops, 4 * MN);
  ASSERT_EQ(m.traffic.size(), 2u);
  EXPECT_EQ(m.traffic[0].kernel, "gpu:update");
  EXPECT_DOUBLE_EQ(m.traffic[0].bytes, 4 * MN * 4);  // parts 2 and 4 each update A
  const Model u = model_of("sinkhorn_cuda/fused_uv/f64/1000x2000/threads:1");
  EXPECT_EQ(u.compute_ceiling, "gpu:fma_f64");
  ASSERT_EQ(u.traffic.size(), 1u);
  EXPECT_EQ(u.traffic[0].kernel, "gpu:read");
  const double vec = 2.0 * (1000 + 2000);  // r, c, the factors and the sums: O(M + N)
  EXPECT_DOUBLE_EQ(u.bytes(), (2 * MN + vec) * 8);  // K read twice, never written
  const Model base = model_of("sinkhorn_cuda/baseline/f32/1000x2000/threads:1");
  EXPECT_DOUBLE_EQ(base.bytes(), (6 * MN + vec) * 4);  // 2 reads + 2 updates
  const Model p2 = model_of("sinkhorn_cuda/mapuot/f32/1000x2000/part:p2/threads:1");
  EXPECT_DOUBLE_EQ(p2.traffic[0].bytes, 2 * MN * 4);
}

// ---- machine.json "gpu" section and the GPU roofline ----------------------------------------
GpuMeasurement fake_measurement() {
  GpuMeasurement m;
  m.props.name = "Test GPU";
  m.props.cc_major = 9, m.props.cc_minor = 0;
  m.props.sms = 132;
  m.props.l2_bytes = 50u << 20;
  m.props.memory_clock_mhz = 2619;
  m.props.bus_width_bits = 5120;
  m.dram = {3000, 2800, 2700, 2900};
  m.l2 = {9000, 8000, 7000, 7500};
  m.dram_array_bytes = 256u << 20, m.l2_array_bytes = 4u << 20;
  m.peak = {50000, 25000, 25000, 12500};
  m.reps = 3;
  return m;
}

json cpu_machine() {
  return read_json_file(fs::path(ROOFLAB_SOURCE_DIR) / "tests/fixtures/run_small/machine.json");
}

TEST(SinkhornCudaRoofline, GpuSectionRoundTripsThroughMachineJson) {
  const json sec = gpu_section(fake_measurement());
  EXPECT_EQ(sec["schema"], "rooflab.gpu/1");
  EXPECT_EQ(sec["device"]["compute_capability"], "9.0");
  EXPECT_NEAR(sec["theoretical_dram_gbps"].get<double>(), 2 * 2619e6 * 640 / 1e9, 1e-6);
  const fs::path dir = fs::temp_directory_path() / ("rooflab_gpu_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  write_json_atomic(dir / "machine.json", cpu_machine());
  write_machine_section(dir / "machine.json", "gpu", sec);
  const roofline::Machine m = roofline::load_machine(dir / "machine.json");
  EXPECT_TRUE(m.has_gpu());
  EXPECT_DOUBLE_EQ(m.gpu_compute("fma_f32"), 50000);
  EXPECT_DOUBLE_EQ(m.gpu_bandwidth("DRAM", "copy"), 2800);
  EXPECT_DOUBLE_EQ(m.gpu_bandwidth("L2", "read"), 9000);
  EXPECT_EQ(m.gpu_level_for(100e6), "DRAM");
  EXPECT_EQ(m.gpu_level_for(10e6), "L2");
  EXPECT_NO_THROW(m.bandwidth("DRAM", "read", 1));  // the CPU part is untouched
  fs::remove_all(dir);
}

TEST(SinkhornCudaRoofline, PredictionUsesTheDeviceCeilings) {
  json j = cpu_machine();
  j["gpu"] = gpu_section(fake_measurement());
  const roofline::Machine m = roofline::machine_from_json(j);
  const Case c = cuda_case("sinkhorn_cuda/mapuot/f32/10240x10240/part:iter/threads:1");
  const Model md = variant_of(c).model(c);
  const roofline::Prediction p = roofline::predict(md, m, 1);
  EXPECT_EQ(p.level, "DRAM");
  EXPECT_EQ(p.bound, "memory");
  const double MN = 10240.0 * 10240.0, vec = 4.0 * 10240 * 4;
  EXPECT_NEAR(p.memory_time_s, 16 * MN / 2700e9 + vec / 3000e9, 1e-12);
  EXPECT_DOUBLE_EQ(p.compute_gflops, 25000);  // add_f32
  // fused_uv reads half of mapuot's bytes.
  const Case u = cuda_case("sinkhorn_cuda/fused_uv/f32/10240x10240/threads:1");
  const roofline::Prediction pu = roofline::predict(variant_of(u).model(u), m, 1);
  EXPECT_NEAR(pu.memory_time_s, (8 * MN + vec) / 3000e9, 1e-12);
  // A machine.json without the section: a clear error naming the command.
  const roofline::Machine cpu = roofline::machine_from_json(cpu_machine());
  EXPECT_NE(error_of([&] { roofline::predict(md, cpu, 1); }).find("rooflab gpu-characterize"), std::string::npos);
  // Mixing device and CPU ceilings is refused.
  Model mixed = md;
  mixed.compute_ceiling = "add_f32";
  EXPECT_NE(error_of([&] { roofline::predict(mixed, m, 1); }).find("mixes"), std::string::npos);
}

TEST(SinkhornCudaCharacterize, NoDeviceIsAClearErrorOrASkip) {
  const fs::path dir = fs::temp_directory_path() / ("rooflab_gpuchar_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  EXPECT_NE(error_of([&] { gpu_characterize_main({"--out", dir.string()}); }).find("rooflab characterize"),
            std::string::npos);
  EXPECT_EQ(gpu_characterize_main({"--bogus"}), 2);
  EXPECT_EQ(gpu_characterize_main({"--reps", "0"}), 2);
  write_json_atomic(dir / "machine.json", cpu_machine());
  if (have_device()) {
    ASSERT_EQ(gpu_characterize_main({"--out", dir.string(), "--reps", "2"}), 0);
    const json g = read_machine_json(dir / "machine.json")["gpu"];
    for (const char* k : {"read", "copy", "update", "triad"}) EXPECT_GT(g["bandwidth"]["DRAM"][k].get<double>(), 0) << k;
    for (const char* k : {"fma_f32", "fma_f64", "add_f32", "add_f64"}) EXPECT_GT(g["compute"][k].get<double>(), 0) << k;
  } else {
    EXPECT_NE(error_of([&] { gpu_characterize_main({"--out", dir.string()}); }).find(unavailable_reason()),
              std::string::npos);
    EXPECT_EQ(gpu_characterize_main({"--out", dir.string(), "--optional"}), 0);
    EXPECT_FALSE(read_machine_json(dir / "machine.json").contains("gpu"));
  }
  fs::remove_all(dir);
}

// ---- On a device ---------------------------------------------------------------------------
TEST(SinkhornCudaDevice, KernelsMatchTheReference) {
  if (!have_device()) GTEST_SKIP() << unavailable_reason();
  for (const char* n : {"sinkhorn_cuda/mapuot/f32/1023x517/ty:2/tx:32/ny:8/rtx:128/rny:8/part:iter/threads:1",
                        "sinkhorn_cuda/mapuot/f64/1023x1028/ty:4/tx:64/ny:3/rtx:64/rny:5/part:iter/threads:1",
                        "sinkhorn_cuda/mapuot/f32/4097x1/ty:2/tx:32/ny:8/rtx:128/rny:8/fi:0.5/part:p2/threads:1",
                        "sinkhorn_cuda/fused_uv/f32/1x4097/ty:2/tx:32/ny:8/rtx:128/rny:8/threads:1",
                        "sinkhorn_cuda/fused_uv/f64/1023x517/ty:3/tx:7/ny:5/rtx:96/rny:64/fi:0.7/threads:1",
                        "sinkhorn_cuda/baseline/f32/1023x517/threads:1", "sinkhorn_cuda/baseline/f64/64x4096/threads:1"}) {
    const Case c = cuda_case(n);
    validate_case(c);
    auto inst = variant_of(c).make(c);
    const Verification v = inst->verify();
    EXPECT_TRUE(v.ok) << n << ": " << v.detail;
    inst->run();  // the timed unit runs after verification
  }
}

TEST(SinkhornCudaDevice, UnalignedRowsAndOddTiles) {
  if (!have_device()) GTEST_SKIP() << unavailable_reason();
  const Problem<double> p(333, 1031, 1032);
  for (Kind k : {Kind::mapuot, Kind::uv, Kind::baseline})
    for (int64_t offset : {0, 1})
      EXPECT_LE(run_vs_reference(device_backend<double>(), k, p, 0.8, {3, 32, 4}, {64, 3}, offset), 1.0)
          << int(k) << " offset " << offset;
}

}  // namespace
}  // namespace rooflab::sinkhorn_cuda

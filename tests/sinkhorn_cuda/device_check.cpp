// sinkhorn_cuda_device_check: the sinkhorn_cuda kernels on a real device, with no dependency
// beyond the kernels, the long-double reference and nlohmann/json, so it also builds on a
// lent GPU machine that lacks the project's other libraries (see docs/families/sinkhorn_cuda.md):
//   1. correctness: every variant, f32/f64, odd shapes, unaligned rows, several tiles, fi < 1:
//      two iterations on the device against the long-double reference (the family's bound)
//      and against the host emulation of the same decomposition (informational);
//   2. with --time: the device ceilings (stream + peak kernels), the three variants at N x N
//      (default 10240) f32 and f64, and the part-2 / part-4 tile sweep (MAP-UOT Fig. 8).
// Exit 0 all correct, 1 a mismatch, 77 no device. --json FILE writes everything measured.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "harness/args.hpp"
#include "harness/measure.hpp"
#include "kernels/sinkhorn/cuda/sinkhorn_cuda.hpp"
#include "kernels/sinkhorn/sinkhorn.hpp"
#include "tests/sinkhorn_cuda/emulate.hpp"
#include "tests/sinkhorn_cuda/problem.hpp"

using namespace rooflab;
using namespace rooflab::sinkhorn_cuda;
using json = nlohmann::json;

namespace {

const char* kind_name(Kind k) { return k == Kind::mapuot ? "mapuot" : k == Kind::uv ? "fused_uv" : "baseline"; }

template <class T>
bool check_one(Kind kind, int64_t M, int64_t N, int64_t lda, int64_t offset, double fi, Tile2 t2, Tile4 t4, json& out) {
  const testing::Problem<T> p(M, N, lda, 11);
  Geometry g2;
  const std::vector<T> dev_r = testing::two_iterations(device_backend<T>(), kind, p, fi, t2, t4, offset, &g2);
  const std::vector<T> emu_r = testing::two_iterations(emu::backend<T>(), kind, p, fi, t2, t4, offset);
  const testing::RefCheck w = testing::against_reference(dev_r, kind, p, fi);
  const int vec = g2.vec;
  double emu_diff = 0;
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      const double a = dev_r[size_t(i * lda + j)], e = emu_r[size_t(i * lda + j)];
      emu_diff = std::max(emu_diff, std::abs(a - e) / std::max(std::abs(e), 1e-300));
    }
  const double tol = w.tol;
  const bool ok = w.ok();
  const std::string dt = sizeof(T) == 8 ? "f64" : "f32";
  char line[512];
  std::snprintf(line, sizeof line, "%-4s %-8s %s %5ldx%-5ld lda %-5ld off %ld vec %d fi %.1f ty%d tx%d ny%d rtx%d rny%d: "
                "ref err %.3g (tol %.3g) emu diff %.3g",
                ok ? "ok" : "FAIL", kind_name(kind), dt.c_str(), long(M), long(N), long(lda), long(offset), vec, fi,
                t2.ty, t2.tx, t2.ny, t4.tx, t4.ny, w.max_err, tol, emu_diff);
  std::printf("%s\n", line);
  out.push_back({{"variant", kind_name(kind)}, {"dtype", dt}, {"M", M}, {"N", N}, {"lda", lda}, {"offset", offset},
                 {"vec", vec}, {"fi", fi}, {"tile2", {t2.ty, t2.tx, t2.ny}}, {"tile4", {t4.tx, t4.ny}},
                 {"ref_max_err", w.max_err}, {"tol", tol}, {"emu_max_rel_diff", emu_diff}, {"ok", ok}});
  return ok;
}

bool correctness(json& out, bool large) {
  bool ok = true;
  struct S { int64_t M, N, lda, off; };
  const S shapes[] = {{1023, 517, 517, 0}, {1, 4097, 4097, 0}, {4097, 1, 1, 0}, {333, 1031, 1032, 0},
                      {333, 1031, 1032, 1}, {1024, 1028, 1028, 0}, {70000, 3, 4, 0}};
  const std::pair<Tile2, Tile4> tiles[] = {{{}, {}}, {{3, 32, 4}, {64, 3}}, {{4, 64, 3}, {96, 64}}, {{1, 7, 1}, {32, 1}}};
  for (const S& s : shapes)
    for (Kind k : {Kind::mapuot, Kind::uv, Kind::baseline})
      for (const auto& [t2, t4] : tiles) {
        if (k == Kind::baseline && t2.tx != Tile2{}.tx) continue;  // the baseline uses the default tiles
        for (double fi : {1.0, 0.7}) {
          ok &= check_one<float>(k, s.M, s.N, s.lda, s.off, fi, t2, t4, out);
          ok &= check_one<double>(k, s.M, s.N, s.lda, s.off, fi, t2, t4, out);
        }
      }
  // One large case per variant at the paper's size.
  if (large)
    for (Kind k : {Kind::mapuot, Kind::uv, Kind::baseline}) ok &= check_one<float>(k, 4096, 4096, 4096, 0, 1.0, {}, {}, out);
  return ok;
}

// ---- Timing ---------------------------------------------------------------------------------
// The median of `reps` single runs after two warm-ups (the launchers synchronize the device).
double median_seconds(int reps, const std::function<void()>& f) {
  measure::Policy p;
  p.warmup = 2, p.repetitions = reps, p.runs_per_sample = 1, p.quiet.mark = false;
  return measure::measure(f, p).stats().median;
}

template <class T>
void time_variants(int64_t n, int reps, double copy_gbps, json& out) {
  const Backend<T> b = device_backend<T>();
  std::vector<T> A0(static_cast<size_t>(n * n)), r(static_cast<size_t>(n)), c(static_cast<size_t>(n));
  std::mt19937_64 gen(3);
  std::uniform_real_distribution<double> a(0.1, 1.1), t(0.5, 1.5);
  for (auto& x : A0) x = T(a(gen));
  for (auto& x : r) x = T(t(gen));
  for (auto& x : c) x = T(t(gen));
  DeviceBuffer<T> dA(b, A0.size());
  const std::string dt = sizeof(T) == 8 ? "f64" : "f32";
  const double MN = double(n) * double(n), s = sizeof(T);
  double t_mapuot = 0;
  for (Kind k : {Kind::mapuot, Kind::uv, Kind::baseline}) {
    dA.upload(A0.data());
    Solver<T> sv(b, k, dA.data(), n, n, n, r.data(), c.data(), T(1), {}, {});
    sv.start();
    const double sec = median_seconds(reps, [&] { sv.run(); });
    const double bytes = (k == Kind::mapuot ? 4 : k == Kind::uv ? 2 : 6) * MN * s;
    if (k == Kind::mapuot) t_mapuot = sec;
    const double gbps = bytes / sec / 1e9;
    std::printf("%-8s %s %ldx%ld: %.4f ms/iteration, %.0f GB/s = %.1f%% of copy, speed-up over mapuot %.2fx\n",
                kind_name(k), dt.c_str(), long(n), long(n), sec * 1e3, gbps, 100 * gbps / copy_gbps, t_mapuot / sec);
    out.push_back({{"variant", kind_name(k)}, {"dtype", dt}, {"n", n}, {"seconds", sec}, {"model_bytes", bytes},
                   {"gbps", gbps}, {"copy_fraction", gbps / copy_gbps}, {"speedup_vs_mapuot", t_mapuot / sec}});
  }
}

void sweep(int64_t n, int reps, double copy_gbps, json& out) {
  const Backend<float> b = device_backend<float>();
  std::vector<float> A0(size_t(n * n), 0.5f), r(size_t(n), 1.0f), c(size_t(n), 1.0f);
  DeviceBuffer<float> dA(b, A0.size());
  dA.upload(A0.data());
  const double bytes = 2.0 * double(n) * double(n) * 4;
  for (int tx : {32, 64, 128, 256, 512})
    for (int ny : {1, 2, 4, 8, 16, 32}) {
      Solver<float> sv(b, Kind::mapuot, dA.data(), n, n, n, r.data(), c.data(), 1.0f, {2, tx, ny}, {});
      const double sec = median_seconds(reps, [&] { sv.run_part2_only(); });
      std::printf("p2 ty 2 tx %4d ny %2d: %.4f ms, %.1f%% of copy\n", tx, ny, sec * 1e3, 100 * bytes / sec / 1e9 / copy_gbps);
      out.push_back({{"part", "p2"}, {"ty", 2}, {"tx", tx}, {"ny", ny}, {"seconds", sec}, {"copy_fraction", bytes / sec / 1e9 / copy_gbps}});
    }
  for (int tx : {32, 64, 128, 256, 512, 1024})
    for (int ny : {1, 2, 4, 8, 16, 32}) {
      Solver<float> sv(b, Kind::mapuot, dA.data(), n, n, n, r.data(), c.data(), 1.0f, {}, {tx, ny});
      const double sec = median_seconds(reps, [&] { sv.run_part4_only(); });
      std::printf("p4 rtx %4d rny %2d: %.4f ms, %.1f%% of copy\n", tx, ny, sec * 1e3, 100 * bytes / sec / 1e9 / copy_gbps);
      out.push_back({{"part", "p4"}, {"rtx", tx}, {"rny", ny}, {"seconds", sec}, {"copy_fraction", bytes / sec / 1e9 / copy_gbps}});
    }
}
}  // namespace

static int run_check(const args::Values& v) {
  const bool timing = v.flag("--time"), large = !v.flag("--no-large");
  const std::string json_path = v.str("--json");
  const int64_t n = v.integer("--n");
  if (const std::string why = unavailable_reason(); !why.empty()) {
    std::printf("skipped: %s\n", why.c_str());
    return 77;
  }
  json doc = {{"schema", "rooflab.sinkhorn_cuda_device_check/1"}};
  int rc = 0;
  try {
    const dev::Props p = dev::props();
    std::printf("device: %s, cc %d.%d, %d SMs, L2 %zu MiB\n", p.name.c_str(), p.cc_major, p.cc_minor, p.sms, p.l2_bytes >> 20);
    json checks = json::array();
    const bool ok = correctness(checks, large);
    doc["correctness"] = checks;
    doc["all_correct"] = ok;
    std::printf("correctness: %s\n", ok ? "all cases within the reference bound" : "MISMATCH");
    rc = ok ? 0 : 1;
    if (timing) {
      GpuMeasurement m;
      m.props = p;
      m.reps = 20;
      const size_t nd = std::max<size_t>(size_t(1) << 25, p.l2_bytes);
      m.dram_array_bytes = nd * 8;
      m.dram = dev::stream(nd, m.reps);
      const size_t nl = p.l2_bytes / 4 / 3 / 8;
      m.l2_array_bytes = nl * 8;
      m.l2 = dev::stream(nl, m.reps);
      m.peak = dev::peak(m.reps);
      doc["gpu"] = gpu_section(m);
      std::printf("DRAM GB/s: read %.0f copy %.0f update %.0f triad %.0f; L2 GB/s: read %.0f copy %.0f\n", m.dram.read,
                  m.dram.copy, m.dram.update, m.dram.triad, m.l2.read, m.l2.copy);
      std::printf("GFLOP/s: fma_f32 %.0f fma_f64 %.0f add_f32 %.0f add_f64 %.0f\n", m.peak.fma_f32, m.peak.fma_f64,
                  m.peak.add_f32, m.peak.add_f64);
      json variants = json::array(), sw = json::array();
      time_variants<float>(n, 20, m.dram.copy, variants);
      time_variants<double>(n, 20, m.dram.copy, variants);
      doc["variants"] = variants;
      sweep(n, 10, m.dram.copy, sw);
      doc["sweep"] = sw;
    }
  } catch (const std::exception& e) {
    std::printf("error: %s\n", e.what());
    doc["error"] = e.what();
    rc = 1;
  }
  if (!json_path.empty()) std::ofstream(json_path) << doc.dump(1) << "\n";
  return rc;
}

int main(int argc, char** argv) {
  const args::Spec spec = args::Spec("sinkhorn_cuda_device_check",
                                     "the CUDA kernels against the reference and the emulation; exit 77 without a device")
                              .flag("--time", "also time the stream / peak kernels, the variants and the tile sweep")
                              .flag("--no-large", "skip the large shapes (e.g. under compute-sanitizer)")
                              .integer("--n", "N", "the N x N size of the timed variants and the sweep", 64, 65536, 10240)
                              .path("--json", args::PathKind::output_file, "FILE", "the results as JSON");
  try {
    return args::run_single(spec, {argv + 1, argv + argc}, run_check);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "sinkhorn_cuda_device_check: error: %s\n", e.what());
    return 1;
  }
}

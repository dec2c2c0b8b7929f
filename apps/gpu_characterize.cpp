// `rooflab gpu-characterize`: the device's bandwidth and peak-FLOP ceilings, written into
// machine.json's "gpu" section (docs/json.md), which the GPU roofline reads.
#include <cstdio>
#include <filesystem>
#include <string>

#include "apps/commands.hpp"
#include "harness/args.hpp"
#include "harness/error.hpp"
#include "harness/json_io.hpp"
#include "kernels/sinkhorn/cuda/sinkhorn_cuda.hpp"

namespace rooflab::sinkhorn_cuda {
namespace {
nlohmann::json stream_json(const dev::StreamResult& s) {
  return {{"read", s.read}, {"copy", s.copy}, {"update", s.update}, {"triad", s.triad}};
}
}  // namespace

nlohmann::json gpu_section(const GpuMeasurement& m) {
  const dev::Props& p = m.props;
  // Theoretical DRAM bandwidth: double data rate x bus width (bits -> bytes).
  const double theory = 2.0 * p.memory_clock_mhz * 1e6 * (p.bus_width_bits / 8.0) / 1e9;
  return {{"schema", "rooflab.gpu/1"},
          {"created", utc_timestamp()},
          {"device",
           {{"name", p.name},
            {"compute_capability", std::to_string(p.cc_major) + "." + std::to_string(p.cc_minor)},
            {"sms", p.sms},
            {"clock_mhz", p.clock_mhz},
            {"memory_clock_mhz", p.memory_clock_mhz},
            {"bus_width_bits", p.bus_width_bits},
            {"global_bytes", p.global_bytes},
            {"l2_bytes", p.l2_bytes}}},
          {"theoretical_dram_gbps", theory > 0 ? nlohmann::json(theory) : nlohmann::json(nullptr)},
          {"bandwidth", {{"DRAM", stream_json(m.dram)}, {"L2", stream_json(m.l2)}}},
          {"array_bytes", {{"DRAM", m.dram_array_bytes}, {"L2", m.l2_array_bytes}}},
          {"compute",
           {{"fma_f32", m.peak.fma_f32}, {"fma_f64", m.peak.fma_f64}, {"add_f32", m.peak.add_f32},
            {"add_f64", m.peak.add_f64}}},
          {"reps", m.reps},
          {"method",
           "bandwidth: f64 read (sum) / copy / update (a *= s) / triad grid-stride kernels, best of reps "
           "launches timed with CUDA events, bytes: read 1, copy 2, update 2, triad 3 arrays (no "
           "write-allocate); compute: 8 independent FMA (2 flops) or add (1 flop) chains per thread"}};
}

args::Spec gpu_characterize_spec() {
  return args::Spec("rooflab gpu-characterize",
                    "the CUDA device's (device 0) bandwidth and peak FLOP/s -> the \"gpu\" section of DIR/machine.json")
      .path("--out", args::PathKind::output_dir, "DIR", "the run directory with machine.json", ".")
      .integer("--reps", "K", "launches per kernel (the best is kept)", 1, 10000, 20)
      .flag("--optional", "exit 0 with a note when there is no device (for scripts run with and without one)")
      .epilog("BabelStream-style read / copy / update / triad bandwidth on f64 arrays far larger than L2 (\"DRAM\")\n"
              "and fitting in it (\"L2\"), FMA / add peak GFLOP/s in f32 and f64; run `rooflab characterize\n"
              "--out DIR` first.");
}

int gpu_characterize_run(const args::Values& v) {
  const std::string out = v.str("--out");
  const int reps = int(v.integer("--reps"));
  const bool optional = v.flag("--optional");
  const std::string why = unavailable_reason();
  if (!why.empty() && optional) {
    std::fprintf(stderr, "gpu-characterize: skipped: %s\n", why.c_str());
    return 0;
  }
  const std::filesystem::path machine = std::filesystem::path(out) / "machine.json";
  if (!std::filesystem::exists(machine))
    throw Error(machine.string() + " not found; run `rooflab characterize --out " + out + "` first");
  if (!why.empty()) throw Error(why);
  GpuMeasurement m;
  m.props = dev::props();
  m.reps = reps;
  auto say = [](const std::string& s) { std::fprintf(stderr, "[gpu-characterize] %s\n", s.c_str()); };
  say("device " + m.props.name + ", " + std::to_string(m.props.sms) + " SMs, L2 " +
      std::to_string(m.props.l2_bytes >> 20) + " MiB");
  // DRAM: arrays of >= 256 MiB and >= 8x L2 (BabelStream's default is 2^25 doubles), three
  // of them within half the free memory. L2: three arrays in a quarter of L2.
  size_t n = std::max<size_t>(size_t(1) << 25, 8 * m.props.l2_bytes / sizeof(double));
  n = std::min(n, m.props.free_bytes / 2 / 3 / sizeof(double));
  m.dram_array_bytes = n * sizeof(double);
  say("stream kernels on 3 x " + std::to_string(m.dram_array_bytes >> 20) + " MiB (DRAM)");
  m.dram = dev::stream(n, reps);
  const size_t nl2 = std::max<size_t>(m.props.l2_bytes / 4 / 3 / sizeof(double), 4096);
  m.l2_array_bytes = nl2 * sizeof(double);
  say("stream kernels on 3 x " + std::to_string(m.l2_array_bytes >> 10) + " KiB (L2)");
  m.l2 = dev::stream(nl2, reps);
  say("peak FMA / add kernels");
  m.peak = dev::peak(reps);
  const nlohmann::json sec = gpu_section(m);
  write_machine_section(machine, "gpu", sec);
  say("DRAM copy " + std::to_string(m.dram.copy) + " GB/s, read " + std::to_string(m.dram.read) +
      " GB/s; fma_f32 " + std::to_string(m.peak.fma_f32) + " GFLOP/s, fma_f64 " + std::to_string(m.peak.fma_f64));
  std::printf("%s\n", machine.c_str());
  return 0;
}

int gpu_characterize_main(const std::vector<std::string>& argv) {
  return args::run_single(gpu_characterize_spec(), argv, gpu_characterize_run);
}

}  // namespace rooflab::sinkhorn_cuda

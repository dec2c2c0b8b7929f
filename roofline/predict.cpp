#include "roofline/predict.hpp"

#include <algorithm>
#include <cstdio>

#include "harness/error.hpp"

namespace rooflab::roofline {

namespace {
// A model on the device names only "gpu:" ceilings (see Machine::gpu_compute).
Prediction predict_gpu(const Model& m, const Machine& machine) {
  Prediction p;
  p.level = machine.gpu_level_for(m.working_set);
  if (m.flops > 0) {
    std::string key = m.compute_ceiling;
    if (!strip_gpu_prefix(key)) throw Error("model mixes gpu: traffic with the CPU compute ceiling '" + key + "'");
    p.compute_gflops = machine.gpu_compute(key);
    p.compute_time_s = m.flops / (p.compute_gflops * 1e9);
  }
  for (const auto& t : m.traffic) {
    if (t.bytes <= 0) continue;
    std::string kernel = t.kernel;
    if (!strip_gpu_prefix(kernel)) throw Error("model mixes gpu: ceilings with the CPU bandwidth kernel '" + kernel + "'");
    p.memory_time_s += t.bytes / (machine.gpu_bandwidth(p.level, kernel) * 1e9);
  }
  return p;
}

// A bandwidth fallback's note, once. A file older than both by_isa tables gets one note for
// both: the compute one, extended.
void add_bandwidth_note(const Machine& machine, const Machine::BandwidthCeiling& c, Prediction& p) {
  if (c.note.empty()) return;
  const bool compute_by_isa = machine.raw.contains("compute") && machine.raw["compute"].contains("by_isa");
  if (c.no_by_isa && !compute_by_isa && !p.compute_note.empty()) {
    static const std::string kLikewise = "; in-cache bandwidth likewise (no bandwidth.by_isa)";
    if (p.compute_note.find(kLikewise) != std::string::npos) return;
    for (auto& n : p.notes)
      if (n == p.compute_note) n += kLikewise;
    p.compute_note += kLikewise;
    return;
  }
  if (std::find(p.notes.begin(), p.notes.end(), c.note) == p.notes.end()) p.notes.push_back(c.note);
}

// The ceiling of one CPU traffic term (see predict.hpp on S-stream kernels).
double term_bandwidth(const Traffic& t, const Machine& machine, int threads, Isa isa, Prediction& p) {
  const StreamKernel sk = split_streams(t.kernel);
  std::string used = sk.streams == 1 ? sk.base : t.kernel;
  double gbps = 0;
  if (sk.streams > 1) {
    if (auto v = machine.find_bandwidth(p.level, t.kernel, threads)) {
      gbps = *v;
    } else {
      used = sk.base;
      // In cache the fallback is by design (S-stream ceilings are DRAM only); at DRAM it
      // means a machine.json from before them, one whose sweep had no DRAM range, or one whose
      // writer left them out on purpose (bandwidth.streams.omitted says why: the perf gate).
      const nlohmann::json::json_pointer why("/bandwidth/streams/omitted");
      const std::string fix = machine.raw.contains(why) && machine.raw[why].is_string()
                                  ? "left out of machine.json: " + machine.raw[why].get<std::string>()
                                  : "re-run `rooflab characterize` (it measures bandwidth.streams at DRAM sizes)";
      const std::string note =
          "no " + p.level + " '" + t.kernel + "' ceiling (" + std::to_string(sk.streams) +
          " streams per thread) in machine.json: used the 1-stream '" + sk.base + "' ceiling" +
          (p.level == "DRAM" ? ", a floor that may be too slow (efficiency can exceed 1); " + fix
                             : " (S-stream ceilings are measured for DRAM only)");
      if (std::find(p.notes.begin(), p.notes.end(), note) == p.notes.end()) p.notes.push_back(note);
    }
  }
  if (gbps <= 0) {
    const Machine::BandwidthCeiling c = machine.find_bandwidth(p.level, used, threads, isa);
    gbps = c.gbps;
    p.bandwidth_isa = c.isa;
    add_bandwidth_note(machine, c, p);
  } else {
    p.bandwidth_isa = machine.best_bandwidth_isa();  // S-stream ceilings: widest ISA, DRAM only
  }
  p.bandwidth_kernels.push_back(used);
  return gbps;
}

bool names_gpu(const Model& m) {
  if (m.compute_ceiling.rfind("gpu:", 0) == 0) return true;
  for (const auto& t : m.traffic)
    if (t.kernel.rfind("gpu:", 0) == 0) return true;
  return false;
}
}  // namespace

Isa pricing_isa(Isa runs_isa, bool vendor_code) {
  if (runs_isa != Isa::none) return runs_isa;
  return vendor_code ? Isa::none : own_code_isa();
}

Isa own_code_isa() {
#if defined(__AVX512F__) && defined(__AVX512VL__) && defined(__AVX512BW__) && defined(__AVX512DQ__)
  return Isa::avx512;
#elif defined(__AVX2__) && defined(__FMA__)
  return Isa::avx2;
#else
  return Isa::scalar;
#endif
}

Prediction predict(const Model& m, const Machine& machine, int threads, Isa isa) {
  Prediction p;
  if (names_gpu(m)) {
    p = predict_gpu(m, machine);
  } else {
    p.level = machine.level_for(m.working_set, threads);
    // Ceilings at fewer threads than the case runs price it too slow (efficiency can exceed 1):
    // characterize ran with --threads below its cores, or on fewer CPUs (an affinity mask) than
    // the case's threads. Not on SMT: threads beyond the cores (one measured thread each) share
    // their cores' units, and those cores' ceilings are the ones to price them with.
    if (const int most = machine.measured_threads(); most > 0 && threads > most) {
      const auto& host = machine.raw.contains("host") ? machine.raw["host"] : nlohmann::json::object();
      const int cores = host.value("cores", 0), hw_threads = host.value("threads", 0);
      if (most < cores || hw_threads <= 0 || threads > hw_threads) {
        char r[32];
        std::snprintf(r, sizeof r, "%.3g", double(threads) / most);
        p.notes.push_back("machine.json measured up to " + std::to_string(most) + " thread(s) (characterize ran on " +
                          std::to_string(cores) + " core(s), " + std::to_string(hw_threads) + " hardware thread(s)" +
                          (most < cores ? ", with --threads " + std::to_string(most) : std::string()) + "): this " +
                          std::to_string(threads) + "-thread case is priced with " + std::to_string(most) +
                          "-thread ceilings, up to " + r + "x too slow (efficiency can exceed 1); characterize on "
                          "the CPUs the case runs on");
      }
    }
    if (m.flops > 0) {
      if (m.compute_ceiling.empty()) throw Error("model has flops but names no compute ceiling");
      const Machine::ComputeCeiling c = machine.find_compute(m.compute_ceiling, threads, isa);
      p.compute_gflops = c.gflops;
      p.compute_isa = c.isa;
      if (!c.note.empty()) p.notes.push_back(p.compute_note = c.note);
      p.compute_time_s = m.flops / (p.compute_gflops * 1e9);
    }
    for (const auto& t : m.traffic) {
      if (t.bytes <= 0) continue;
      p.memory_time_s += t.bytes / (term_bandwidth(t, machine, threads, isa, p) * 1e9);
    }
    // DRAM is one pipe: a kernel that prefetches reads faster than the plain read loop
    // measures (sinkhorn/blocked's column pass at 1 thread moved 47-51 GB/s of read + update,
    // against 41 for the read and update ceilings' mix), so each stream's ceiling is the fastest
    // DRAM traffic measured at this thread count, whatever kernel reached it.
    p.memory_time_kernels_s = p.memory_time_s;
    if (p.level == "DRAM" && p.memory_time_s > 0) {
      const auto [gbps, kernel] = machine.best_dram_traffic(threads);
      const double t = m.bytes() / (gbps * 1e9);
      if (gbps > 0 && t < p.memory_time_s * (1 - 1e-9)) {  // not on rounding alone
        p.memory_time_s = t;
        char b[64];
        std::snprintf(b, sizeof b, "%.1f GB/s", gbps);
        p.notes.push_back("DRAM: every stream at the fastest DRAM traffic measured at " + std::to_string(threads) +
                          " thread(s), '" + kernel + "' " + b + " (one pipe: per-kernel ceilings were beaten by "
                          "prefetching kernels)");
      }
    }
  }
  if (names_gpu(m)) p.memory_time_kernels_s = p.memory_time_s;
  if (p.memory_time_s > 0) p.bandwidth_gbps = m.bytes() / p.memory_time_s / 1e9;
  p.time_s = std::max(p.compute_time_s, p.memory_time_s);
  if (p.time_s <= 0) throw Error("model predicts zero time (no flops and no traffic)");
  p.bound = p.memory_time_s >= p.compute_time_s ? "memory" : "compute";
  return p;
}

nlohmann::json to_json(const Prediction& p) {
  return {{"level", p.level},           {"bound", p.bound},
          {"time_s", p.time_s},         {"compute_time_s", p.compute_time_s},
          {"memory_time_s", p.memory_time_s}, {"compute_gflops", p.compute_gflops},
          {"compute_isa", p.compute_isa.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.compute_isa)},
          {"bandwidth_isa", p.bandwidth_isa.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.bandwidth_isa)},
          {"bandwidth_gbps", p.bandwidth_gbps}, {"bandwidth_kernels", p.bandwidth_kernels},
          {"notes", p.notes}};
}
}  // namespace rooflab::roofline

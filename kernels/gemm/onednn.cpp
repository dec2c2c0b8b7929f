// oneDNN baseline: dnnl::matmul, f32 only (oneDNN 2.6 has no f64 matmul), C += A·B through a
// sum post-op (scale 1). The primitive is created once per instance (not timed); run() wraps
// the three buffers in memory objects and executes. oneDNN's OpenMP runtime uses
// omp_get_max_threads(), which the harness sets to T. Code path: oneDNN dispatches its JIT
// kernels up to dnnl_get_effective_cpu_isa() (this CPU, capped only by a user's
// ONEDNN_MAX_CPU_ISA or DNNL_MAX_CPU_ISA), which is what code_path reports.
#include <dnnl.hpp>

#include <memory>
#include <string>

#include "harness/error.hpp"
#include "harness/env.hpp"
#include "kernels/gemm/code_path.hpp"
#include "kernels/gemm/detail.hpp"

namespace rooflab::gemm::detail {
namespace {
std::string isa_name(dnnl_cpu_isa_t isa) {
  switch (isa) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "isa " + std::to_string(int(isa));
  }
}

const code_path::Facts& facts() {
  static const code_path::Facts f = [] {
    code_path::count_probe();
    const dnnl_version_t* v = dnnl_version();
    const Isa cpu = host_isa();  // the CPU, not ROOFLAB_MAX_ISA (code_path.hpp)
    code_path::Facts out;
    out.library = "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch);
    const std::string isa = isa_name(dnnl_get_effective_cpu_isa());
    out.ran = "ISA " + isa + " (effective CPU ISA)";
    out.best = cpu == Isa::avx512 ? "ISA avx512_core or above"
               : cpu == Isa::avx2  ? "ISA avx2 or above"
                                     : out.ran;
    out.selected_by = "oneDNN's own detection";
    for (const char* var : {"ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA"})  // oneDNN's order
      if (const auto cap = env(var)) {
        out.selected_by = std::string(var) + "=" + *cap + " set by the user (respected)";
        break;
      }
    return code_path::judge(out, code_path::onednn_isa_tier(isa), cpu,
                            "this CPU has " + std::string(code_path::tier_name(cpu)));
  }();
  return f;
}

std::string info() {
  const dnnl_version_t* v = dnnl_version();
  const char* rt = v->cpu_runtime == DNNL_RUNTIME_OMP ? "OpenMP" : v->cpu_runtime == DNNL_RUNTIME_TBB ? "TBB" : "other";
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->patch) +
         " (" + rt + " runtime, omp_get_max_threads() threads)";  // no probe: the ISA is in code_path
}

struct State {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream st{eng};
  dnnl::memory::desc a, b, c;
  dnnl::matmul prim;
};

Compute<float> make_f32(const Dims& d, int) {
  using dt = dnnl::memory::data_type;
  auto s = std::make_shared<State>();
  try {
    s->a = dnnl::memory::desc({d.m, d.k}, dt::f32, dnnl::memory::dims{d.lda, 1});
    s->b = dnnl::memory::desc({d.k, d.n}, dt::f32, dnnl::memory::dims{d.ldb, 1});
    s->c = dnnl::memory::desc({d.m, d.n}, dt::f32, dnnl::memory::dims{d.ldc, 1});
    dnnl::post_ops po;
    po.append_sum(1.0f);
    dnnl::primitive_attr attr;
    attr.set_post_ops(po);
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(s->a, s->b, s->c), attr, s->eng);
    s->prim = dnnl::matmul(pd);
  } catch (const dnnl::error& e) {
    throw Error(std::string("gemm/onednn: cannot create the matmul primitive: ") + e.what());
  }
  return [s](const Dims&, const float* A, const float* B, float* C) {
    dnnl::memory ma(s->a, s->eng, const_cast<float*>(A)), mb(s->b, s->eng, const_cast<float*>(B)),
        mc(s->c, s->eng, C);
    s->prim.execute(s->st, {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
    s->st.wait();
  };
}
Compute<double> no_f64(const Dims&, int) { throw Error("gemm/onednn: oneDNN 2.6 has no f64 matmul"); }
}  // namespace

const Baseline onednn = {"onednn", false, info, facts, no_f64, make_f32};
}  // namespace rooflab::gemm::detail

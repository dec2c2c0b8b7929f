// BLIS baseline: the typed API bli_?gemm with general strides (row stride ld, column stride 1),
// alpha = beta = 1; bli_thread_set_num_threads(T) before every call. The typed API (not cblas)
// avoids the cblas_* symbols OpenBLAS exports as well.
//
// Configuration: BLIS picks its sub-configuration once, at its first query, from CPUID; 0.9.0
// does not know recent CPUs (Zen 5 gets "generic", the reference C kernels). Before the first
// call rooflab asks BLIS's own choice in a child process (the choice cannot be undone in this
// one), compares it with the best configuration this build has for this CPU (code_path.hpp;
// the build's list is blis.h's BLIS_CONFIG_*), and when it is of a lower ISA tier and the user
// did not set BLIS_ARCH_TYPE, initialises BLIS with BLIS_ARCH_TYPE set for that call only.
#include <blis.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "harness/env.hpp"
#include "kernels/gemm/code_path.hpp"
#include "kernels/gemm/detail.hpp"

namespace rooflab::gemm::detail {
namespace {
const char* kArchVar = "BLIS_ARCH_TYPE";

struct Config {
  const char* name;
  arch_t id;
};
// The x86 configurations this build contains (blis.h of the same build).
std::vector<Config> built_configs() {
  return {
#ifdef BLIS_CONFIG_SKX
      {"skx", BLIS_ARCH_SKX},
#endif
#ifdef BLIS_CONFIG_HASWELL
      {"haswell", BLIS_ARCH_HASWELL},
#endif
#ifdef BLIS_CONFIG_ZEN3
      {"zen3", BLIS_ARCH_ZEN3},
#endif
#ifdef BLIS_CONFIG_ZEN2
      {"zen2", BLIS_ARCH_ZEN2},
#endif
#ifdef BLIS_CONFIG_ZEN
      {"zen", BLIS_ARCH_ZEN},
#endif
  };
}

// BLIS's own pick, from a child process (-1: the child failed; the parent stays untouched).
int detected_in_child() {
  int fd[2];
  if (pipe(fd) != 0) return -1;
  const pid_t pid = fork();
  if (pid < 0) {
    close(fd[0]);
    close(fd[1]);
    return -1;
  }
  if (pid == 0) {
    close(fd[0]);
    bli_init();
    const int id = int(bli_arch_query_id());
    const ssize_t n = write(fd[1], &id, sizeof id);
    _exit(n == ssize_t(sizeof id) ? 0 : 1);
  }
  close(fd[1]);
  int id = -1, status = 0;
  if (read(fd[0], &id, sizeof id) != ssize_t(sizeof id)) id = -1;
  close(fd[0]);
  waitpid(pid, &status, 0);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? id : -1;
}

// Chooses the configuration once, at the first make() or code_path() call.
const code_path::Facts& facts() {
  static const code_path::Facts f = [] {
    code_path::count_probe();
    const Isa cpu = host_isa();  // the CPU, not ROOFLAB_MAX_ISA (code_path.hpp)
    code_path::Facts out;
    out.library = std::string("BLIS ") + bli_info_get_version_str();
    std::vector<std::string> built;
    for (const Config& c : built_configs()) built.push_back(c.name);
    std::string best;
    if (const auto user = env(kArchVar)) {
      out.selected_by = std::string(kArchVar) + "=" + *user + " set by the user (respected)";
      bli_init();
      best = code_path::blis_best_config(cpu, built, "");
    } else {
      const int id = detected_in_child();
      const std::string detected = id >= 0 ? bli_arch_string(arch_t(id)) : "";
      best = code_path::blis_best_config(cpu, built, detected);
      arch_t best_id{};
      for (const Config& c : built_configs())
        if (best == c.name) best_id = c.id;
      // Detected "" (BLIS's own choice unknown): left to BLIS.
      if (!detected.empty() && code_path::blis_config_tier(best) > code_path::blis_config_tier(detected)) {
        // The variable is checked against the registered contexts: bli_init() first.
        const ScopedEnv scoped(kArchVar, std::to_string(int(best_id)));
        bli_init();
        bli_arch_query_id();
        out.selected_by = std::string(kArchVar) + "=" + std::to_string(int(best_id)) + " (" + best +
                          ") set by rooflab for BLIS's configuration choice only (its own detection: " + detected + ")";
      } else {
        bli_init();
        out.selected_by = "BLIS's own detection";
      }
    }
    const std::string ran = bli_arch_string(bli_arch_query_id());
    if (best.empty()) best = ran;
    out.ran = "config " + ran + " (" + bli_gks_l3_ukr_impl_string(BLIS_GEMM_UKR, BLIS_NAT, BLIS_DOUBLE) +
              " micro-kernel)";
    out.best = "config " + best;
    std::string note = "this CPU has " + std::string(code_path::tier_name(cpu));
    if (code_path::blis_config_tier(best) < cpu)
      note += " and this BLIS build has no configuration for it";
    return code_path::judge(out, code_path::blis_config_tier(ran), cpu, note);
  }();
  return f;
}

// No probe, not even bli_init() (BLIS would make its choice): the configuration is in code_path.
std::string info() {
  return std::string("BLIS ") + bli_info_get_version_str() + ", bli_thread_set_num_threads(T) per call";
}

template <class T>
Compute<T> make(const Dims&, int threads) {
  facts();
  return [threads](const Dims& d, const T* A, const T* B, T* C) {
    bli_thread_set_num_threads(threads);
    T one = 1;
    if constexpr (sizeof(T) == 8)
      bli_dgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, d.m, d.n, d.k, &one, const_cast<T*>(A), d.lda, 1,
                const_cast<T*>(B), d.ldb, 1, &one, C, d.ldc, 1);
    else
      bli_sgemm(BLIS_NO_TRANSPOSE, BLIS_NO_TRANSPOSE, d.m, d.n, d.k, &one, const_cast<T*>(A), d.lda, 1,
                const_cast<T*>(B), d.ldb, 1, &one, C, d.ldc, 1);
  };
}
}  // namespace

const Baseline blis = {"blis", true, info, facts, make<double>, make<float>};
}  // namespace rooflab::gemm::detail

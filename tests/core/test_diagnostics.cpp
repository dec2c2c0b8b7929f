// Self-diagnosis: unstable benchmarks are named worst first, too few repetitions for the U
// test are flagged, a stable run with enough repetitions gives no timing warning; the
// environment check always says something about the clock on this kind of machine.
#include <gtest/gtest.h>

#include <cstdlib>

#include "harness/diagnostics.hpp"
#include "harness/env.hpp"

using nlohmann::json;
using namespace rooflab;

namespace {
json run_of(const std::vector<std::pair<std::string, std::vector<double>>>& b) {
  json out = {{"benchmarks", json::array()}};
  for (const auto& [name, times] : b)
    for (double t : times)
      out["benchmarks"].push_back({{"run_name", name}, {"run_type", "iteration"}, {"real_time", t}});
  return out;
}
}  // namespace

TEST(Diagnostics, UnstableBenchmarksNamedWorstFirst) {
  const auto w = diag::timing(run_of({{"a", {1, 1, 1, 1, 1, 1, 1, 1, 1}},
                                      {"b", {1, 1.2, 1, 1.2, 1, 1.2, 1, 1.2, 1}},
                                      {"c", {1, 2, 1, 2, 1, 2, 1, 2, 1}}}));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("2 of 3 benchmarks are unstable"), std::string::npos) << w[0];
  EXPECT_LT(w[0].find("c ("), w[0].find("b (")) << w[0];
  EXPECT_EQ(w[0].find("a ("), std::string::npos) << w[0];
}

TEST(Diagnostics, TooFewRepetitionsForCompare) {
  const auto w = diag::timing(run_of({{"a", {1, 1, 1}}}));
  ASSERT_EQ(w.size(), 1u);
  EXPECT_NE(w[0].find("only 3 repetitions"), std::string::npos) << w[0];
  EXPECT_TRUE(diag::timing(run_of({{"a", std::vector<double>(9, 1.0)}})).empty());
  EXPECT_TRUE(diag::timing(json::object()).empty());
}

TEST(Diagnostics, ErroredEntriesAreNotTimings) {
  json r = run_of({{"a", std::vector<double>(9, 1.0)}});
  r["benchmarks"].push_back({{"run_name", "a"}, {"run_type", "iteration"}, {"real_time", 100.0},
                             {"error_occurred", true}});
  EXPECT_TRUE(diag::timing(r).empty());
}

TEST(Diagnostics, EnvironmentMentionsTheClockWhenItCannotBeControlled) {
  const auto env = diag::environment(1);
  const bool gov_known = diag::cpufreq_governor() == "performance";
  const auto boost = diag::boost_enabled();
  if (gov_known && boost && !*boost) GTEST_SKIP() << "clock fixed on this machine: nothing to warn about";
  bool mentions = false;
  for (const auto& s : env) mentions |= s.find("governor") != std::string::npos || s.find("boost") != std::string::npos;
  EXPECT_TRUE(mentions);
}

TEST(Diagnostics, RunQueueWaitIsACounterOfThisProcess) {
  // Linux exposes it per thread; it only grows (-1 where the kernel lacks schedstat).
  const int64_t a = rooflab::diag::runqueue_wait_ns();
  const int64_t b = rooflab::diag::runqueue_wait_ns();
  if (a < 0) GTEST_SKIP() << "no /proc/self/task/*/schedstat";
  EXPECT_GE(b, a);
}

TEST(Diagnostics, OmpWaitPolicySaysWhoSetIt) {
  // This test binary is not re-executed: the policy is the user's or libgomp's default.
  const nlohmann::json p = rooflab::diag::omp_wait_policy();
  for (const char* k : {"OMP_WAIT_POLICY", "GOMP_SPINCOUNT", "set_by", "note"}) EXPECT_TRUE(p.contains(k)) << k;
  const bool user_set = std::getenv("OMP_WAIT_POLICY") || std::getenv("GOMP_SPINCOUNT");
  if (!std::getenv("ROOFLAB_OMP_POLICY")) {
    EXPECT_EQ(p.at("set_by"), user_set ? "user" : "libgomp default");
  }
}

TEST(Diagnostics, ProcStatReadsTasksStealAndCpusInOnePass) {
  // The caller is runnable while it reads; the steal counter only grows; one "cpuN" line per CPU.
  const rooflab::diag::ProcStat a = rooflab::diag::proc_stat();
  if (a.procs_running < 0) GTEST_SKIP() << "no /proc/stat";
  const rooflab::diag::ProcStat b = rooflab::diag::proc_stat();
  EXPECT_GE(a.procs_running, 1);
  EXPECT_GE(rooflab::diag::procs_running(), 1);  // the same parse
  EXPECT_GE(a.cpus, 1);
  ASSERT_GE(a.steal_ticks, 0);  // 0 on bare metal
  EXPECT_GE(b.steal_ticks, a.steal_ticks);
  EXPECT_GT(rooflab::diag::clock_tick_s(), 0.0);
  EXPECT_LE(rooflab::diag::clock_tick_s(), 0.01);  // USER_HZ >= 100
}

TEST(Diagnostics, ProcessCpuTimeGrowsWhileThisThreadWorks) {
  const int64_t a = rooflab::diag::process_cpu_ns();
  ASSERT_GE(a, 0);
  volatile double x = 1;
  for (int i = 0; i < 5'000'000; ++i) x = x * 1.0000001 + 1e-9;
  EXPECT_GT(rooflab::diag::process_cpu_ns(), a);
}

TEST(Diagnostics, OwnRunningThreadsCountsTheCaller) {
  // The calling thread is running while it reads: at least 1 (-1 without /proc).
  const int n = rooflab::diag::own_running_threads();
  if (n < 0) GTEST_SKIP() << "no /proc/self/task";
  EXPECT_GE(n, 1);
}

// A library's selection variable set for its choice only (kernels/gemm), PATH for one test.
TEST(Env, ScopedEnvRestoresAbsenceAndValue) {
  const char* v = "ROOFLAB_TEST_SCOPED_ENV_VAR";
  ::unsetenv(v);
  {
    const ScopedEnv s(v, "SkylakeX");
    ASSERT_NE(std::getenv(v), nullptr);
    EXPECT_STREQ(std::getenv(v), "SkylakeX");
  }
  EXPECT_EQ(std::getenv(v), nullptr);
  ::setenv(v, "Haswell", 1);
  {
    const ScopedEnv s(v, "SkylakeX");
    EXPECT_STREQ(std::getenv(v), "SkylakeX");
  }
  EXPECT_STREQ(std::getenv(v), "Haswell");
  ::unsetenv(v);
}

TEST(Env, EmptyIsUnset) {
  const char* v = "ROOFLAB_TEST_SCOPED_ENV_VAR";
  ::unsetenv(v);
  EXPECT_EQ(env(v), std::nullopt);
  {
    const ScopedEnv s(v, "");
    EXPECT_EQ(env(v), std::nullopt);
  }
  {
    const ScopedEnv s(v, "avx2");
    EXPECT_EQ(env(v), "avx2");
  }
}

// measure::measure, the one timing driver: on synthetic run functions (a counter, a spin of a
// known length) and a test hook for the machine's runnable tasks, never the real load.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <csignal>

#include <unistd.h>

#include "harness/error.hpp"
#include "harness/measure.hpp"

namespace m = rooflab::measure;
using Clock = std::chrono::steady_clock;

namespace {
void spin(double s) {
  const auto end = Clock::now() + std::chrono::duration<double>(s);
  while (Clock::now() < end) {
  }
}
// A quiet machine: one runnable task (this test), whatever the real load.
int one_task() { return 1; }
m::Policy quiet_policy() {
  m::Policy p;
  p.quiet.running = one_task;
  return p;
}
}  // namespace

TEST(MeasureDriver, RepetitionsAndWarmupHonoured) {
  m::Policy p = quiet_policy();
  p.repetitions = 7;
  p.warmup = 2;
  p.runs_per_sample = 3;
  int runs = 0, setups = 0;
  const m::Result r = m::measure([&] { ++runs; }, p, [&] { ++setups; });
  EXPECT_EQ(r.samples.size(), 7u);
  EXPECT_EQ(r.runs_per_sample, 3);
  EXPECT_EQ(runs, 2 + 7 * 3);    // warm-up runs, then samples of 3 runs
  EXPECT_EQ(setups, 2 + 7);      // untimed setup before each warm-up run and each sample
  EXPECT_FALSE(r.interrupted);
  EXPECT_EQ(r.quiet_count(), 7u);
  EXPECT_DOUBLE_EQ(r.quiet_fraction(), 1.0);
  EXPECT_TRUE(r.disturbed().empty());
}

TEST(MeasureDriver, MinTimePerSampleHonoured) {
  // A batch on a fake clock (2 ms per run), so the test does not depend on this machine's load.
  m::Policy p = quiet_policy();
  p.repetitions = 3;
  p.warmup = 0;
  p.min_time_s = 0.02;
  const double run_s = 0.002;
  std::vector<int64_t> batches;
  const m::Result r = m::measure(m::Batch([&](int64_t runs, bool) {
                                   batches.push_back(runs);
                                   return double(runs) * run_s;
                                 }),
                                 p);
  ASSERT_EQ(r.samples.size(), 3u);
  // Each sample lasts at least min_time: enough runs of 2 ms for 20 ms.
  EXPECT_GE(double(r.runs_per_sample) * run_s, p.min_time_s);
  for (const m::Sample& s : r.samples) {
    EXPECT_DOUBLE_EQ(s.seconds, run_s);  // per run, not per sample
    EXPECT_GE(s.seconds * double(r.runs_per_sample), p.min_time_s);
  }
  // Calibration grew the runs from 1 (at least doubling) before the samples used the count.
  ASSERT_GE(batches.size(), 5u);
  EXPECT_EQ(batches.front(), 1);
  for (size_t i = 0; i + 1 < batches.size() - 3; ++i) EXPECT_GE(batches[i + 1], 2 * batches[i]);
  for (size_t i = batches.size() - 3; i < batches.size(); ++i) EXPECT_EQ(batches[i], r.runs_per_sample);
  EXPECT_DOUBLE_EQ(r.best(), run_s);
  EXPECT_DOUBLE_EQ(r.stats().median, run_s);
}

TEST(MeasureDriver, RunsOnTheRealClock) {
  // The steady_clock form: every sample at least as long as the run it repeats.
  m::Policy p = quiet_policy();
  p.repetitions = 2;
  p.warmup = 1;
  p.min_time_s = 0.005;
  int runs = 0;
  const m::Result r = m::measure([&] { ++runs, spin(0.001); }, p);
  ASSERT_EQ(r.samples.size(), 2u);
  for (const m::Sample& s : r.samples) EXPECT_GE(s.seconds, 0.001);
  EXPECT_GE(runs, 1 + 2);  // the warm-up, then at least one run per sample
}

TEST(MeasureDriver, FirstRunTimeSetsRunsWithoutCalibrating) {
  m::Policy p = quiet_policy();
  p.repetitions = 2;
  p.warmup = 0;
  p.min_time_s = 1.0;
  p.first_run_s = 0.1;  // as if the verification run took 100 ms: 10 runs per sample
  int calls = 0;
  const m::Batch b = [&](int64_t runs, bool) {
    ++calls;
    return 0.1 * double(runs);
  };
  const m::Result r = m::measure(b, p);
  EXPECT_EQ(r.runs_per_sample, 10);
  EXPECT_EQ(calls, 2);  // the two samples, no calibration batch
  EXPECT_DOUBLE_EQ(r.best(), 0.1);
}

TEST(MeasureDriver, DisturbedSampleIsMarked) {
  // The machine is busy (5 runnable tasks for a 1-thread sample) while sample 2 runs.
  int sample = -1;
  m::Policy p;
  p.repetitions = 4;
  p.warmup = 0;
  p.runs_per_sample = 1;
  p.quiet.threads = 1;
  p.quiet.running = [&] { return sample == 2 ? 5 : 1; };
  const m::Batch b = [&](int64_t, bool) {
    ++sample;
    return sample == 2 ? 0.001 : 0.01;  // the disturbed sample is also the fastest
  };
  // The after-check of sample 2 sees the load; so does the before-check of sample 3.
  const m::Result r = m::measure(b, p);
  ASSERT_EQ(r.samples.size(), 4u);
  EXPECT_TRUE(r.samples[0].quiet);
  EXPECT_TRUE(r.samples[1].quiet);
  EXPECT_FALSE(r.samples[2].quiet);
  EXPECT_FALSE(r.samples[3].quiet);
  EXPECT_EQ(r.disturbed(), (std::vector<size_t>{2, 3}));
  EXPECT_DOUBLE_EQ(r.quiet_fraction(), 0.5);
  EXPECT_DOUBLE_EQ(r.best(), 0.01);  // the fastest *quiet* sample, not the disturbed one
  EXPECT_DOUBLE_EQ(r.stats().min, 0.001);
  const auto j = r.to_json();
  EXPECT_EQ(j.at("disturbed"), nlohmann::json({2, 3}));
  EXPECT_EQ(j.at("quiet"), nlohmann::json({true, true, false, false}));
}

TEST(MeasureDriver, QuietSamplesWantedSamplesOnUpToTheMaximum) {
  // As gemm knob autotuning: `repetitions` quiet samples wanted, at most max_samples taken.
  int checks = 0;
  m::Policy p;
  p.repetitions = 2;
  p.max_samples = 6;
  p.warmup = 0;
  p.runs_per_sample = 1;
  p.quiet.running = [&] { return ++checks <= 6 ? 9 : 1; };  // busy for the first 3 samples' checks
  const m::Result r = m::measure(m::Batch([&](int64_t, bool) { return 1.0; }), p);
  EXPECT_EQ(r.quiet_count(), 2u);
  EXPECT_EQ(r.samples.size(), 5u);  // 3 disturbed, then 2 quiet: enough
  EXPECT_EQ(r.disturbed(), (std::vector<size_t>{0, 1, 2}));

  // Never quiet: stops at the maximum and keeps the fastest noisy sample.
  p.quiet.running = [] { return 9; };
  int n = 0;
  const m::Result busy = m::measure(m::Batch([&](int64_t, bool) { return 1.0 + ++n; }), p);
  EXPECT_EQ(busy.samples.size(), 6u);
  EXPECT_EQ(busy.quiet_count(), 0u);
  EXPECT_DOUBLE_EQ(busy.best(), 2.0);
}

TEST(MeasureDriver, RoundRobinInterleavesSamples) {
  std::vector<int> order;
  m::Policy p = quiet_policy();
  p.repetitions = 3;
  p.warmup = 0;
  p.runs_per_sample = 1;
  std::vector<m::Batch> bs;
  for (int i = 0; i < 2; ++i)
    bs.push_back([&, i](int64_t, bool) {
      order.push_back(i);
      return 1.0 + i;
    });
  const auto rs = m::measure_round_robin(bs, p);
  EXPECT_EQ(order, (std::vector<int>{0, 1, 0, 1, 0, 1}));
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_DOUBLE_EQ(rs[1].best(), 2.0);
}

TEST(MeasureDriver, StatisticsMatchTheDefinitions) {
  const m::Stats s = m::stats({4, 1, 3, 2});
  EXPECT_EQ(s.n, 4u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.median, 2.5);  // the mean of the two middle values
  EXPECT_NEAR(s.stddev, std::sqrt(5.0 / 3.0), 1e-12);
  EXPECT_NEAR(s.cv, std::sqrt(5.0 / 3.0) / 2.5, 1e-12);
  EXPECT_DOUBLE_EQ(m::quantile({1, 2, 3, 4, 5}, 0.25), 2);
  EXPECT_TRUE(std::isnan(m::stats({}).median));
  EXPECT_TRUE(std::isnan(m::stats({1}).cv));  // one sample says nothing about spread
}

TEST(MeasureDriver, BadPolicyIsAnError) {
  m::Policy p = quiet_policy();
  p.repetitions = 0;
  EXPECT_THROW(m::measure([] {}, p), rooflab::Error);
  p.repetitions = 1;
  p.min_time_s = NAN;
  EXPECT_THROW(m::measure([] {}, p), rooflab::Error);
}

TEST(MeasureDriver, InterruptStopsAtTheNextRunAndDropsTheCutSample) {
  m::Interrupt guard;
  m::Policy p = quiet_policy();
  p.repetitions = 5;
  p.warmup = 0;
  p.runs_per_sample = 4;
  int runs = 0;
  // The signal arrives during the third run of the second sample.
  const m::Result r = m::measure(
      [&] {
        if (++runs == 7) m::Interrupt::request(SIGINT);
      },
      p);
  EXPECT_TRUE(r.interrupted);
  EXPECT_EQ(runs, 7);               // no run after the signal
  EXPECT_EQ(r.samples.size(), 1u);  // the finished sample only
  EXPECT_EQ(m::Interrupt::signal_number(), SIGINT);
  m::Interrupt::clear();
  EXPECT_FALSE(m::Interrupt::requested());
}

TEST(MeasureDriver, RealSignalSetsTheFlagInsteadOfKilling) {
  {
    m::Interrupt guard;
    std::raise(SIGTERM);
    EXPECT_TRUE(m::Interrupt::requested());
    EXPECT_EQ(m::Interrupt::signal_number(), SIGTERM);
  }
  m::Interrupt::clear();
}

// bench's --benchmark_* flags: checked where bench hands them to Google Benchmark.
#include "harness/args.hpp"
#include "harness/bench_driver.hpp"

TEST(BenchFlags, ValidFlagsBecomePolicyOrPassOn) {
  const rooflab::BenchFlags f = rooflab::parse_benchmark_flags(
      {"--benchmark_repetitions=9", "--benchmark_min_time=0.5s", "--benchmark_filter=gemm/.*",
       "--benchmark_list_tests", "--benchmark_display_aggregates_only=false", "--benchmark_min_warmup_time=0",
       "--benchmark_enable_random_interleaving=true", "--benchmark_time_unit=us"});
  EXPECT_EQ(f.repetitions, 9);
  EXPECT_DOUBLE_EQ(f.min_time_s, 0.5);
  EXPECT_DOUBLE_EQ(f.min_warmup_time_s, 0);
  EXPECT_EQ(f.filter, "gemm/.*");
  EXPECT_TRUE(f.list_tests);
  EXPECT_FALSE(f.display_aggregates_only);
  // Repetitions, min times and the console's aggregates-only are rooflab's; the rest pass on.
  EXPECT_EQ(f.passed, (std::vector<std::string>{"--benchmark_filter=gemm/.*", "--benchmark_list_tests",
                                                "--benchmark_enable_random_interleaving=true",
                                                "--benchmark_time_unit=us"}));
  const rooflab::BenchFlags none = rooflab::parse_benchmark_flags({});
  EXPECT_EQ(none.repetitions, 0);  // the profile's
  EXPECT_TRUE(none.display_aggregates_only);
}

TEST(BenchFlags, InvalidValuesAreUsageErrors) {
  for (const char* bad :
       {"--benchmark_repetitions=-1", "--benchmark_repetitions=abc", "--benchmark_repetitions=0",
        "--benchmark_repetitions=", "--benchmark_repetitions", "--benchmark_repetitions=3.5",
        "--benchmark_repetitions=99999999999999999999", "--benchmark_min_time=-1", "--benchmark_min_time=nan",
        "--benchmark_min_time=inf", "--benchmark_min_time=0", "--benchmark_min_time=abc", "--benchmark_min_time=10x",
        "--benchmark_min_warmup_time=-0.1", "--benchmark_frobnicate", "--benchmark_frobnicate=1",
        "--benchmark_out=x.json", "--benchmark_out_format=json", "--benchmark_list_tests=maybe",
        "--benchmark_format=xml", "--benchmark_color=purple", "--benchmark_time_unit=h", "--benchmark_filter=",
        "--benchmarks_repetitions=3"}) {
    try {
      rooflab::parse_benchmark_flags({bad});
      ADD_FAILURE() << bad << " accepted";
    } catch (const rooflab::args::UsageError& e) {
      // One line naming the flag as given.
      const std::string msg = e.what();
      EXPECT_NE(msg.find(bad), std::string::npos) << msg;
      EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
    }
  }
}

// ---- disturbance: the per-sample run-queue check and the per-case rule ----------------------
TEST(MeasureDriver, RunQueueWaitMarksASampleDisturbed) {
  // A quiet snapshot before and after each sample, but during sample 1 the threads waited for a
  // CPU for most of it (the hook's counter jumps by 10 s of waiting): only that one is disturbed.
  int sample = -1;
  int64_t waited = 0;
  m::Policy p = quiet_policy();
  p.repetitions = 3, p.warmup = 0, p.runs_per_sample = 1, p.quiet.threads = 2;
  p.quiet.runqueue_wait_ns = [&] { return waited; };
  const m::Batch b = [&](int64_t, bool) {
    ++sample;
    spin(0.002);
    if (sample == 1) waited += 10'000'000'000;
    return 0.002;
  };
  const m::Result r = m::measure(b, p);
  ASSERT_EQ(r.samples.size(), 3u);
  EXPECT_TRUE(r.samples[0].quiet);
  EXPECT_FALSE(r.samples[1].quiet);
  EXPECT_TRUE(r.samples[2].quiet);
  EXPECT_DOUBLE_EQ(r.samples[0].runqueue_wait, 0.0);
  EXPECT_GT(r.samples[1].runqueue_wait, 1.0);  // 10 s over 2 threads x a few ms
  EXPECT_EQ(r.to_json().at("runqueue_wait").size(), 3u);

  // With only a `running` hook (a test's machine) the real run-queue wait is not read: unknown.
  p.quiet.runqueue_wait_ns = nullptr;
  const m::Result unknown = m::measure(m::Batch([](int64_t, bool) { return 0.001; }), p);
  EXPECT_EQ(unknown.quiet_count(), 3u);
  EXPECT_TRUE(std::isnan(unknown.samples[0].runqueue_wait));
  EXPECT_TRUE(unknown.to_json().at("runqueue_wait")[0].is_null());
  // Likewise the machine's steal and the process's CPU time.
  EXPECT_TRUE(std::isnan(unknown.samples[0].steal));
  EXPECT_TRUE(std::isnan(unknown.samples[0].cpu_utilization));
  EXPECT_TRUE(unknown.to_json().at("cpu_utilization").is_null());
}

TEST(MeasureDriver, HypervisorStealMarksASampleDisturbed) {
  // Quiet snapshots and no run-queue wait throughout; the steal counter (in USER_HZ ticks, summed
  // over 2 CPUs) grows by what each sample's script says, from the sample's own wall time.
  const double tick = 1.0 / double(sysconf(_SC_CLK_TCK));
  int sample = -1;
  int64_t ticks = 0;
  m::Policy p = quiet_policy();
  p.repetitions = 5, p.warmup = 0, p.runs_per_sample = 1, p.quiet.threads = 2;
  p.quiet.runqueue_wait_ns = [] { return int64_t(0); };
  p.quiet.steal_ticks = [&] { return ticks; };
  p.quiet.cpus = 2;
  const m::Batch b = [&](int64_t, bool) {
    ++sample;
    const double s = sample == 3 ? 0.2 : 0.05;  // a long sample for a small, countable steal
    const auto t0 = Clock::now();
    spin(s);
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    const double cpu_s = 2 * dt;  // what 2 CPUs could give in that time
    if (sample == 1) ticks += 1;  // the counter turns over once: granularity, not steal
    if (sample == 2) ticks += 1 + std::llround(0.5 * cpu_s / tick);  // half the CPU time stolen
    if (sample == 3) ticks += 1 + int64_t(std::floor(0.03 * cpu_s / tick));  // 3%: below the 5% fraction
    if (sample == 4) ticks += 1 + int64_t(std::ceil(0.08 * cpu_s / tick));   // 8%: above it
    return dt;
  };
  const m::Result r = m::measure(b, p);
  ASSERT_EQ(r.samples.size(), 5u);
  EXPECT_TRUE(r.samples[0].quiet);
  EXPECT_DOUBLE_EQ(r.samples[0].steal, 0.0);
  EXPECT_TRUE(r.samples[1].quiet);  // one tick in a 50 ms sample would be 10%: not counted
  EXPECT_DOUBLE_EQ(r.samples[1].steal, 0.0);
  EXPECT_FALSE(r.samples[2].quiet);
  EXPECT_NEAR(r.samples[2].steal, 0.5, 0.2);
  EXPECT_TRUE(r.samples[3].quiet);
  EXPECT_GT(r.samples[3].steal, 0.0);
  EXPECT_LE(r.samples[3].steal, 0.05);
  EXPECT_FALSE(r.samples[4].quiet);
  EXPECT_EQ(r.to_json().at("steal").size(), 5u);
  EXPECT_DOUBLE_EQ(m::disturbance_of(r, {}, 2).quiet_fraction, 0.6);  // the "load" rule's input

  // One thread on a 2-CPU machine: the machine's steal is shared out over its CPUs.
  sample = -1, ticks = 0;
  p.quiet.threads = 1, p.repetitions = 3;
  const m::Batch one = [&](int64_t, bool) {
    ++sample;
    const auto t0 = Clock::now();
    spin(0.05);
    const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
    if (sample == 1) ticks += 1 + std::llround(0.5 * 2 * dt / tick);  // half of both CPUs
    return dt;
  };
  const m::Result r1 = m::measure(one, p);
  EXPECT_FALSE(r1.samples[1].quiet);
  EXPECT_NEAR(r1.samples[1].steal, 0.5, 0.2);  // not 1.0: half of it hit the other CPU
}

TEST(MeasureDriver, CpuUtilizationOfTheSamplesThreads) {
  // The process's CPU time grows by `busy` x the sample's wall time: 2 threads at 1x (one did not
  // run) and at 1.9x (both ran).
  for (const double busy : {1.0, 1.9}) {
    int64_t cpu = 0;
    m::Policy p = quiet_policy();
    p.repetitions = 3, p.warmup = 0, p.runs_per_sample = 1, p.quiet.threads = 2;
    p.quiet.cpu_ns = [&] { return cpu; };
    const m::Batch b = [&](int64_t, bool) {
      const auto t0 = Clock::now();
      spin(0.01);
      const double dt = std::chrono::duration<double>(Clock::now() - t0).count();
      cpu += int64_t(busy * dt * 1e9);
      return dt;
    };
    const m::Result r = m::measure(b, p);
    ASSERT_EQ(r.samples.size(), 3u);
    // The mark's wall time is a little longer than the batch's: utilization a little below.
    EXPECT_NEAR(m::cpu_utilization(r.samples), busy / 2, 0.1);
    EXPECT_GT(r.samples[0].wall_s, 0.0);
    // Only the idle rule: the spin's real times may also trip the cv rule on a loaded machine.
    const m::Disturbance d = m::disturbance_of(r, {}, 2);
    EXPECT_EQ(d.reason.find("threads idle") != std::string::npos, busy < 1.5) << busy << ": " << d.reason;
    EXPECT_EQ(r.quiet_count(), 3u);  // a per-case rule: the samples' quiet marks are untouched
  }
}

TEST(Disturbance, ClassifiesSyntheticSamples) {
  const std::vector<bool> quiet5(5, true);
  // Steady and quiet: a good measurement.
  const m::Disturbance good = m::classify({1.00, 1.01, 0.99, 1.02, 1.00}, quiet5);
  EXPECT_FALSE(good.disturbed) << good.reason;
  EXPECT_EQ(good.reason, "");
  EXPECT_DOUBLE_EQ(good.quiet_fraction, 1.0);

  // Load: 3 of 5 samples beside other tasks, however steady their times.
  const m::Disturbance load = m::classify({1, 1, 1, 1, 1}, {true, false, false, true, false});
  EXPECT_TRUE(load.disturbed);
  EXPECT_NE(load.reason.find("load: 3 of 5"), std::string::npos) << load.reason;
  EXPECT_EQ(load.reason.find("cv"), std::string::npos) << load.reason;
  // 2 of 5 disturbed is a quiet majority: the median comes from quiet samples.
  EXPECT_FALSE(m::classify({1, 1, 1, 1, 1}, {true, false, false, true, true}).disturbed);

  // One sample far from the rest (a time slice lost): outlier, and the spread shows in the CV.
  const m::Disturbance outlier = m::classify({1.0, 1.0, 1.0, 1.0, 2.0}, quiet5);
  EXPECT_TRUE(outlier.disturbed);
  EXPECT_NE(outlier.reason.find("outlier: a sample 2x the median"), std::string::npos) << outlier.reason;
  EXPECT_NE(outlier.reason.find("cv "), std::string::npos) << outlier.reason;

  // Most samples slow, one fast: the median far above the best.
  const m::Disturbance median = m::classify({1.0, 1.4, 1.4}, {true, true, true});
  EXPECT_TRUE(median.disturbed);
  EXPECT_NE(median.reason.find("median 1.4x the best sample"), std::string::npos) << median.reason;

  // The thresholds are the rule's: a looser rule accepts the same samples.
  m::DisturbanceRule loose;
  loose.cv_max = 1, loose.outlier = 3, loose.median_over_best = 3;
  EXPECT_FALSE(m::classify({1.0, 1.0, 1.0, 1.0, 2.0}, quiet5, loose).disturbed);

  // Threads idle: 2 threads at ~1 CPU's worth (utilization 0.5) fire; 1.9 CPUs (0.95) do not;
  // never one thread (its utilization is ~1 at best); unknown (NaN) never.
  const std::vector<double> steady = {1.0, 1.01, 0.99, 1.02, 1.0};
  const m::Disturbance idle = m::classify(steady, quiet5, {}, 0.5, 2);
  EXPECT_TRUE(idle.disturbed);
  EXPECT_NE(idle.reason.find("threads idle: CPU utilization 0.50 < 0.60 (1.00 of 2 threads busy"), std::string::npos)
      << idle.reason;
  EXPECT_DOUBLE_EQ(idle.cpu_utilization, 0.5);
  EXPECT_TRUE(idle.idle_only);  // the driver keeps such a case when it stays so
  EXPECT_TRUE(m::classify(steady, quiet5, {}, 0.58, 2).disturbed);
  EXPECT_FALSE(m::classify(steady, quiet5, {}, 0.95, 2).disturbed);
  EXPECT_FALSE(m::classify(steady, quiet5, {}, 0.5, 1).disturbed);
  EXPECT_FALSE(m::classify(steady, quiet5, {}, NAN, 2).disturbed);
  EXPECT_TRUE(m::classify(steady, quiet5, {}, 0.3, 4).disturbed);   // 1.2 of 4 CPUs: below 1/4 + 0.1
  EXPECT_FALSE(m::classify(steady, quiet5, {}, 0.5, 4).disturbed);  // 2 of 4 CPUs: some ran
  m::DisturbanceRule strict;
  strict.idle_margin = 0.5;  // the margin is the rule's
  EXPECT_TRUE(m::classify(steady, quiet5, strict, 0.95, 2).disturbed);

  // No marks (a caller without quiet checks): only the times decide; no samples: undisturbed.
  EXPECT_FALSE(m::classify({1.0, 1.0, 1.0}, {}).disturbed);
  EXPECT_FALSE(m::classify({}, {}).disturbed);
}

TEST(Disturbance, BetterMeasurementIsKept) {
  const std::vector<bool> q3(3, true);
  const m::Disturbance good = m::classify({1.0, 1.01, 1.0}, q3);
  const m::Disturbance noisy = m::classify({1.0, 1.0, 2.0}, q3);
  const m::Disturbance loaded = m::classify({1.0, 1.0, 1.0}, {false, false, true});
  const m::Disturbance worse = m::classify({1.0, 1.0, 1.0}, {false, false, false});
  EXPECT_TRUE(good.better_than(noisy));
  EXPECT_FALSE(noisy.better_than(good));
  EXPECT_TRUE(loaded.better_than(worse));   // both disturbed: more quiet samples wins
  EXPECT_FALSE(worse.better_than(loaded));
  EXPECT_TRUE(noisy.better_than(worse));     // both disturbed, all quiet beats all loaded
  EXPECT_FALSE(good.better_than(good));      // equal: not better (the first measurement stays)
}

// A later measurement, quiet and steady but far slower than the case ran before (a host slowed by
// another guest, which no load probe sees: 2026-11-30, BLIS DGEMM 1024^3 2 threads on a Zen 3
// guest, first pass 32-48 ms, a retry 54-57 ms at CV 2%): disturbed, and never better than the
// earlier measurement, even a noisy one with more quiet samples.
TEST(Disturbance, ALaterMeasurementFarSlowerThanAnEarlierOneIsMarkedAndNotKept) {
  const std::vector<bool> q3 = {true, true, true};
  const m::Disturbance first = m::classify({0.032, 0.034, 0.048}, {false, false, true});  // loaded, spread
  m::Disturbance retry = m::classify({0.054, 0.054, 0.057}, q3);
  ASSERT_FALSE(retry.disturbed);
  ASSERT_TRUE(retry.better_than(first));  // without the mark, the slow retry would replace it
  m::mark_slower(retry, 0.054, 0.032);
  EXPECT_TRUE(retry.disturbed);
  EXPECT_TRUE(retry.slower);
  EXPECT_TRUE(retry.slower_only);  // quiet and steady: the rule alone fired
  EXPECT_NE(retry.reason.find("slower: median 1.69x"), std::string::npos) << retry.reason;
  EXPECT_FALSE(retry.better_than(first));
  EXPECT_TRUE(first.better_than(retry));
  // The mark counts only against a measurement that ran faster: a noisy earlier one with a lucky
  // fast sample and a higher median does not beat a steadier later one marked against that sample
  // (2026-12-01, cli_bench_disturbed beside another test).
  const m::Disturbance lucky = m::classify({0.0337, 0.119, 0.333}, q3);
  m::Disturbance steadier = m::classify({0.070, 0.0744, 0.090}, q3);
  m::mark_slower(steadier, 0.0744, 0.0337);
  ASSERT_TRUE(lucky.disturbed && steadier.slower);
  EXPECT_TRUE(steadier.better_than(lucky));
  EXPECT_FALSE(lucky.better_than(steadier));
  m::Disturbance loaded = m::classify({0.054, 0.054, 0.057}, {false, false, false});
  m::mark_slower(loaded, 0.054, 0.032);
  EXPECT_TRUE(loaded.slower);
  EXPECT_FALSE(loaded.slower_only);  // the load rule fired too
  // Within the rule's 1.3x: not marked.
  m::Disturbance close = m::classify({0.040, 0.041, 0.041}, q3);
  m::mark_slower(close, 0.041, 0.032);
  EXPECT_FALSE(close.disturbed);
  EXPECT_TRUE(close.reason.empty());
  // No earlier sample (0 or NaN): nothing to compare with.
  m::mark_slower(close, 1.0, 0.0);
  m::mark_slower(close, 1.0, NAN);
  EXPECT_FALSE(close.disturbed);
}

// diag::QuietBudget: the total time a command may wait for a quiet machine is bounded, however
// many samples wait, and the result says when it ran out.
#include <gtest/gtest.h>

#include <chrono>

#include "harness/diagnostics.hpp"

using rooflab::diag::QuietBudget;
using Clock = std::chrono::steady_clock;

namespace {
double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }
// A machine that is never quiet: more runnable tasks than any caller's threads.
int never_quiet() { return 1000; }
}  // namespace

TEST(QuietBudget, NeverQuietMachineWaitsAtMostTheBudgetInTotal) {
  QuietBudget b(0.3, never_quiet);
  const auto t0 = Clock::now();
  // 50 samples that would each wait up to 1 s: 50 s without a total budget.
  int quiet = 0;
  for (int i = 0; i < 50; ++i) quiet += b.wait(2, 1.0);
  const double wall = since(t0);
  EXPECT_EQ(quiet, 0);
  EXPECT_TRUE(b.exhausted());
  EXPECT_GE(b.waited_s(), 0.3);
  // The budget plus one polling interval (20 ms) per wait at most, with slack for a loaded
  // test machine; far below the 50 s the per-sample bound alone allows.
  EXPECT_LT(wall, 0.3 + 50 * 0.02 + 1.0);
  EXPECT_LE(b.waited_s(), wall + 1e-6);
  EXPECT_EQ(b.waits(), 50);
  EXPECT_EQ(b.not_quiet(), 50);
  const auto j = b.to_json();
  EXPECT_EQ(j.at("exhausted"), true);
  EXPECT_DOUBLE_EQ(j.at("budget_s").get<double>(), 0.3);
  EXPECT_EQ(j.at("waits_not_quiet"), 50);
  EXPECT_GE(j.at("waited_s").get<double>(), 0.3);
}

TEST(QuietBudget, EachWaitStillHonoursItsOwnDeadline) {
  QuietBudget b(100, never_quiet);
  const auto t0 = Clock::now();
  EXPECT_FALSE(b.wait(2, 0.05));
  EXPECT_LT(since(t0), 1.0);
  EXPECT_FALSE(b.exhausted());  // 0.05 s of 100 s spent
  EXPECT_GE(b.waited_s(), 0.05);
}

TEST(QuietBudget, QuietMachineCostsNothingAndUnknownCountIsQuiet) {
  int running = 2;
  QuietBudget b(0, [&] { return running; });  // a zero budget: never wait
  EXPECT_TRUE(b.wait(2, 10.0));               // 2 runnable, 2 threads: quiet at once
  EXPECT_FALSE(b.exhausted());
  running = -1;                               // /proc/stat unreadable
  EXPECT_TRUE(b.wait(1, 10.0));
  running = 3;
  const auto t0 = Clock::now();
  EXPECT_FALSE(b.wait(2, 10.0));  // zero budget: returns at once, marked exhausted
  EXPECT_LT(since(t0), 1.0);
  EXPECT_TRUE(b.exhausted());
  b.reset(5);
  EXPECT_FALSE(b.exhausted());
  EXPECT_EQ(b.waits(), 0);
  EXPECT_DOUBLE_EQ(b.waited_s(), 0);
}

TEST(QuietBudget, UnboundedBudgetIsNullInJson) {
  QuietBudget b(-1, never_quiet);
  EXPECT_TRUE(b.to_json().at("budget_s").is_null());
  EXPECT_FALSE(b.wait(2, 0.03));
  EXPECT_FALSE(b.exhausted());  // unbounded never runs out
}

TEST(QuietBudget, ProcessBudgetAndProfileDefaults) {
  EXPECT_LT(rooflab::diag::default_quiet_budget_s("smoke"), rooflab::diag::default_quiet_budget_s("quick"));
  EXPECT_LT(rooflab::diag::default_quiet_budget_s("quick"), rooflab::diag::default_quiet_budget_s("paper"));
  EXPECT_EQ(rooflab::diag::default_quiet_budget_s("full"), rooflab::diag::default_quiet_budget_s("paper"));
  rooflab::diag::set_quiet_budget(0);
  // Whatever this machine's load: a zero budget never sleeps through wait_quiet.
  const auto t0 = Clock::now();
  for (int i = 0; i < 20; ++i) rooflab::diag::wait_quiet(1, 5.0);
  EXPECT_LT(since(t0), 2.0);
  EXPECT_EQ(rooflab::diag::quiet_budget().waits(), 20);
  rooflab::diag::set_quiet_budget(-1);
}

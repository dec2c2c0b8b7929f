// The alpha-beta-gamma communication model of kernels/sinkhorn/mpi: each design's terms by
// hand for a few (P, R, n, C), so a changed formula or algorithm switch shows.
#include <gtest/gtest.h>

#include "kernels/sinkhorn/mpi/allreduce.hpp"

using namespace rooflab::sinkhorn_mpi;

namespace {
const CommModel m{2e-6, 1e9, 1e-10};  // alpha 2 us, beta 1 GB/s, gamma 0.1 ns/byte
double msg(double b) { return m.alpha + b / m.beta; }
double near(double x) { return 1e-12 + 1e-9 * x; }
}  // namespace

TEST(MpiModel, MpichShortVectorsUseRecursiveDoubling) {
  const double b = 1024;  // 128 doubles <= 2048 bytes
  EXPECT_STREQ(mpich_allreduce_algorithm(8, b, 8), "recursive doubling");
  const double want = 3 * (msg(b) + m.gamma * b);
  EXPECT_NEAR(predict_allreduce_s(Design::mpich, m, 8, 1, 128, 8, 1), want, near(want));
}

TEST(MpiModel, MpichLongVectorsUseRabenseifner) {
  const double b = 65536 * 8.0;
  EXPECT_STREQ(mpich_allreduce_algorithm(4, b, 8), "Rabenseifner");
  const double want = 2 * (2 * m.alpha + 0.75 * b / m.beta) + 0.75 * b * m.gamma;
  EXPECT_NEAR(predict_mpich_allreduce_s(m, 4, b, 8), want, near(want));
  // P = 6: two ranks fold a whole vector into partners first and get the result back.
  const double six = msg(b) + m.gamma * b + msg(b) + want;
  EXPECT_NEAR(predict_mpich_allreduce_s(m, 6, b, 8), six, near(six));
  EXPECT_EQ(predict_mpich_allreduce_s(m, 1, b, 8), 0);
}

TEST(MpiModel, RingIsTwoPMinusOneMessagesOfOnePth) {
  const int64_t n = 40000;
  const double b = n * 8.0;
  const double want = 2 * 3 * msg(b / 4) + 3 * m.gamma * b / 4;
  EXPECT_NEAR(predict_allreduce_s(Design::ring, m, 4, 1, n, 8, 1), want, near(want));
  EXPECT_EQ(predict_allreduce_s(Design::ring, m, 1, 1, n, 8, 1), 0);
}

TEST(MpiModel, SalarIsReduceLeadersAllreduceBcastPipelined) {
  const int64_t n = 4096;  // 32 KiB, 4 chunks of 8 KiB
  const double mb = n * 8.0 / 4;
  // R = 2: the node reduce is Rabenseifner's (8 KiB > 2048 B): halve + gather of half each.
  const double red = 2 * (m.alpha + 0.5 * mb / m.beta) + 0.5 * mb * m.gamma;
  const double all = predict_mpich_allreduce_s(m, 2, mb, 8);  // P / R = 2 leaders
  const double bc = msg(mb);
  const double want = red + all + bc + 3 * std::max({red, all, bc});
  EXPECT_NEAR(predict_allreduce_s(Design::salar, m, 4, 2, n, 8, 4), want, near(want));
  // One node: no leaders' allreduce.
  const double one = predict_allreduce_s(Design::salar, m, 4, 4, n, 8, 1);
  EXPECT_GT(one, 0);
  EXPECT_LT(one, predict_allreduce_s(Design::salar, m, 8, 4, n, 8, 1));
}

TEST(MpiModel, CoffeeBalancedReduceScatterBeatsTheBinomialReduceOnLongChunks) {
  const int64_t n = 1 << 16;
  const double mb = n * 8.0;
  // R = 4 (q = 4): two halving rounds (mb/2 + mb/4 = 3/4 mb, added), 3 parts of mb/4 to the
  // leader, leaders' allreduce over P / R = 2, binomial bcast (2 rounds).
  const double rs = 2 * m.alpha + 0.75 * mb * (1 / m.beta + m.gamma) + m.alpha + 0.75 * mb / m.beta;
  const double want = rs + predict_mpich_allreduce_s(m, 2, mb, 8) + 2 * msg(mb);
  EXPECT_NEAR(predict_allreduce_s(Design::coffee, m, 8, 4, n, 8, 1), want, near(want));
  const double unbalanced = predict_allreduce_s(Design::coffee, m, 8, 4, n, 8, 1, false);
  EXPECT_NEAR(unbalanced, predict_allreduce_s(Design::salar, m, 8, 4, n, 8, 1), near(unbalanced));
  EXPECT_NE(unbalanced, want);
  EXPECT_NE(std::string(model_assumption(Design::coffee, false)), model_assumption(Design::coffee, true));
}

// Message rounds on the critical path (what a shared core charges a scheduler slice for).
TEST(MpiModel, RoundsFollowTheSameAlgorithms) {
  // mpich: 64 KiB over 8 ranks is Rabenseifner (3 halving + 3 doubling rounds); over 6 ranks
  // two more (fold in, result out) around pof2 = 4; short vectors recursive doubling.
  EXPECT_EQ(allreduce_rounds(Design::mpich, 8, 1, 8192, 8, 1), 6);
  EXPECT_EQ(allreduce_rounds(Design::mpich, 6, 1, 8192, 8, 1), 2 + 4);
  EXPECT_EQ(allreduce_rounds(Design::mpich, 8, 1, 128, 8, 1), 3);
  EXPECT_EQ(allreduce_rounds(Design::mpich, 1, 1, 8192, 8, 1), 0);
  EXPECT_EQ(allreduce_rounds(Design::ring, 5, 1, 8192, 8, 1), 8);
  // coffee, P = 8, R = 4, 4 chunks of 2048 doubles: node 2 halvings + parts to the leader = 3,
  // 2 leaders' Rabenseifner = 2, bcast in 4 = 2; pipelined: 3 + 2 + 2 + 3 x 3.
  EXPECT_EQ(allreduce_rounds(Design::coffee, 8, 4, 8192, 8, 4), 7 + 9);
  // One node of 3 (not a power of two): fold + 1 halving + parts, no leaders, bcast 2 rounds.
  EXPECT_EQ(allreduce_rounds(Design::coffee, 3, 3, 8192, 8, 1), 3 + 0 + 2);
  // Without the balanced reduce: MPICH's reduce over R = 4 (halve + gather: 4 rounds).
  EXPECT_EQ(allreduce_rounds(Design::coffee, 4, 4, 8192, 8, 1, false), 4 + 2);
  // salar over 2 nodes of 2, 2 chunks of 4096 doubles: reduce 2, leaders 2, bcast 1.
  EXPECT_EQ(allreduce_rounds(Design::salar, 4, 2, 8192, 8, 2), 5 + 2);
}

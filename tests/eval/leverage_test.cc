#include "eval/leverage.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace graphsieve::eval {
namespace {

// Two users, two items, three pairs:
//   pair 0 (u0, i0): 2 instances, 1 positive
//   pair 1 (u0, i1): 3 instances, 0 positives
//   pair 2 (u1, i1): 4 instances, 2 positives
// Training positives: P_u0 = 1, P_u1 = 2, P_i0 = 1, P_i1 = 2.
PairTable SmallTable() {
  PairTable t;
  t.user_ids = {10, 11};
  t.item_ids = {20, 21};
  t.pair_user = {0, 0, 1};
  t.pair_item = {0, 1, 1};
  t.label = {1, 0, 1};
  t.instances = {2, 3, 4};
  t.negatives = {1, 3, 2};
  t.total_instances = 9;
  t.total_negatives = 6;
  return t;
}

TEST(LeverageTest, NodeTotals) {
  const NodeTotals n = CountNodeTotals(SmallTable());
  EXPECT_EQ(n.user_positives, (std::vector<double>{1, 2}));
  EXPECT_EQ(n.item_positives, (std::vector<double>{1, 2}));
  EXPECT_EQ(n.user_impressions, (std::vector<double>{5, 4}));
  EXPECT_EQ(n.item_impressions, (std::vector<double>{2, 7}));
}

TEST(LeverageTest, LeverageIsRootOfQOverPSquared) {
  const PairTable t = SmallTable();
  const NodeTotals n = CountNodeTotals(t);
  const std::vector<double> q_user = {4.0, 8.0}, q_item = {1.0, 2.0};
  const std::vector<double> h = LeverageOf(t, n, q_user, q_item);
  ASSERT_EQ(h.size(), 3u);
  EXPECT_NEAR(h[0], std::sqrt(4.0 / 1 + 1.0 / 1), 1e-12);
  EXPECT_NEAR(h[1], std::sqrt(4.0 / 1 + 2.0 / 4), 1e-12);
  EXPECT_NEAR(h[2], std::sqrt(8.0 / 4 + 2.0 / 4), 1e-12);
}

TEST(LeverageTest, ProxiesForTheOwnAndTheRandomTest) {
  const PairTable t = SmallTable();
  const NodeTotals n = CountNodeTotals(t);
  std::vector<double> qu, qi;
  ProxyExpectedPositives(t, n, ExposureProxy::kOwn, &qu, &qi);
  EXPECT_EQ(qu, (std::vector<double>{1, 2}));
  EXPECT_EQ(qi, (std::vector<double>{1, 2}));
  // Own: h = √(1/P_u + 1/P_i).
  const std::vector<double> h = LeverageOf(t, n, qu, qi);
  EXPECT_NEAR(h[1], std::sqrt(1.0 / 1 + 1.0 / 2), 1e-12);
  // Random: Q_u = (P_u / n_u) / U, Q_i = (P_i / n_i) / I with U = I = 2.
  ProxyExpectedPositives(t, n, ExposureProxy::kRandom, &qu, &qi);
  EXPECT_NEAR(qu[0], 1.0 / 5 / 2, 1e-15);
  EXPECT_NEAR(qu[1], 2.0 / 4 / 2, 1e-15);
  EXPECT_NEAR(qi[0], 1.0 / 2 / 2, 1e-15);
  EXPECT_NEAR(qi[1], 2.0 / 7 / 2, 1e-15);
}

TEST(LeverageTest, OracleScoresFromTheTruth) {
  const PairTable t = SmallTable();
  // Training instances: pair 0 twice (p 0.2, 0.4), pair 1 once (0.1), pair 2 once (0.3).
  const std::vector<uint32_t> pair_of = {0, 0, 1, 2};
  const std::vector<float> train_truth = {0.2f, 0.4f, 0.1f, 0.3f};
  // Test: (u0, i1) p 0.5, (u1, i0) p 0.25, and one of an unknown user on i1, p 1.
  const std::vector<int64_t> test_user = {0, 1, -1}, test_item = {1, 0, 1};
  const std::vector<float> test_truth = {0.5f, 0.25f, 1.0f};
  const std::vector<double> p =
      OracleScores(t, pair_of, train_truth, test_user, test_item, test_truth, false);
  EXPECT_NEAR(p[0], 0.3, 1e-7);
  EXPECT_NEAR(p[1], 0.1, 1e-7);
  EXPECT_NEAR(p[2], 0.3, 1e-7);
  // Q_u0 = 0.5, Q_u1 = 0.25, Q_i0 = 0.25, Q_i1 = 1.5; P_u = {1, 2}, P_i = {1, 2}.
  const std::vector<double> s =
      OracleScores(t, pair_of, train_truth, test_user, test_item, test_truth, true);
  EXPECT_NEAR(s[0], 0.3 * std::sqrt(0.5 / 1 + 0.25 / 1), 1e-7);
  EXPECT_NEAR(s[1], 0.1 * std::sqrt(0.5 / 1 + 1.5 / 4), 1e-7);
  EXPECT_NEAR(s[2], 0.3 * std::sqrt(0.25 / 4 + 1.5 / 4), 1e-7);
}

TEST(LeverageTest, PredictedRecoveryFromTheScoresCv) {
  // Negatives weigh the scores 1 and 3 once each: mean 2, variance 1, CV² 1/4.
  const std::vector<double> score = {1.0, 3.0, 100.0};
  const std::vector<uint32_t> negatives = {1, 1, 0};
  const double cv2 = ScoreCv2(score, negatives);
  EXPECT_NEAR(cv2, 0.25, 1e-12);
  EXPECT_NEAR(PredictedRecovery(cv2, 0.2), 0.25 / (1.25 * 0.8), 1e-12);
  // Equal scores: no variation, nothing to recover.
  EXPECT_EQ(ScoreCv2(std::vector<double>{2.0, 2.0}, std::vector<uint32_t>{3, 1}), 0.0);
  EXPECT_EQ(ScoreCv2(std::vector<double>{2.0}, std::vector<uint32_t>{0}), 0.0);
}

TEST(LeverageTest, PerUserBudgetKeepsAlphaOfEachUsersNegatives) {
  const PairTable t = SmallTable();
  const std::vector<double> score = {1.0, 2.0, 5.0};
  std::vector<double> rates;
  ASSERT_TRUE(FitPerUserMixtureRates(t, score, 0.2, 1.0, &rates).ok());
  // User 0's negatives: 1 of pair 0, 3 of pair 1; user 1's: 2 of pair 2.
  EXPECT_NEAR((1 * rates[0] + 3 * rates[1]) / 4.0, 0.2, 1e-9);
  EXPECT_NEAR(rates[2], 0.2, 1e-9);  // one pair: its rate is α
  // Within user 0 the mixture rule orders by score: π = ρ(s / s̄ + κ), s̄ = 7/4.
  EXPECT_NEAR(rates[1] / rates[0], (2.0 / 1.75 + 1.0) / (1.0 / 1.75 + 1.0), 1e-9);
  EXPECT_FALSE(
      FitPerUserMixtureRates(t, std::vector<double>{-1.0, 1.0, 1.0}, 0.2, 1.0, &rates).ok());
}

}  // namespace
}  // namespace graphsieve::eval

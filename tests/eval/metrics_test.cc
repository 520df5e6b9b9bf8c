#include "eval/metrics.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace graphsieve::eval {
namespace {

TEST(AucTest, HandComputedWithoutTies) {
  // Pairs (pos, neg): (0.35 vs 0.1) win, (0.35 vs 0.4) loss, (0.8 vs both) win -> 3/4.
  const std::vector<double> s = {0.1, 0.4, 0.35, 0.8};
  const std::vector<uint8_t> y = {0, 0, 1, 1};
  absl::StatusOr<double> auc = Auc(s, y);
  ASSERT_TRUE(auc.ok()) << auc.status();
  EXPECT_DOUBLE_EQ(*auc, 0.75);
}

TEST(AucTest, TiesCountOneHalf) {
  // pos {0.5, 0.9}, neg {0.5, 0.2}: 0.5 + 1 + 1 + 1 = 3.5 of 4.
  const std::vector<double> s = {0.5, 0.5, 0.2, 0.9};
  const std::vector<uint8_t> y = {1, 0, 0, 1};
  EXPECT_DOUBLE_EQ(*Auc(s, y), 0.875);
  // A constant score is uninformative.
  EXPECT_DOUBLE_EQ(*Auc(std::vector<double>{1, 1, 1}, std::vector<uint8_t>{1, 0, 0}), 0.5);
}

TEST(AucTest, ReversedScoresGiveOneMinusAuc) {
  const std::vector<double> s = {0.1, 0.4, 0.35, 0.8};
  const std::vector<double> r = {-0.1, -0.4, -0.35, -0.8};
  const std::vector<uint8_t> y = {0, 0, 1, 1};
  EXPECT_DOUBLE_EQ(*Auc(r, y), 1.0 - *Auc(s, y));
}

TEST(AucTest, RejectsBadInput) {
  EXPECT_FALSE(Auc(std::vector<double>{0.1, 0.2}, std::vector<uint8_t>{1}).ok());
  EXPECT_FALSE(Auc(std::vector<double>{0.1, 0.2}, std::vector<uint8_t>{1, 1}).ok());  // one class
  EXPECT_FALSE(Auc(std::vector<double>{0.1, 0.2}, std::vector<uint8_t>{1, 2}).ok());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  absl::StatusOr<double> bad = Auc(std::vector<double>{0.1, nan}, std::vector<uint8_t>{1, 0});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("score 1"), std::string_view::npos) << bad.status();
}

TEST(LogLossTest, HandComputed) {
  const std::vector<double> p = {0.9, 0.2};
  const std::vector<uint8_t> y = {1, 0};
  EXPECT_NEAR(*LogLoss(p, y), -(std::log(0.9) + std::log(0.8)) / 2.0, 1e-12);
  // Certain and right costs ~0, certain and wrong is clipped (finite).
  EXPECT_NEAR(*LogLoss(std::vector<double>{1.0}, std::vector<uint8_t>{1}), 0.0, 1e-9);
  const double wrong = *LogLoss(std::vector<double>{0.0}, std::vector<uint8_t>{1});
  EXPECT_TRUE(std::isfinite(wrong));
  EXPECT_NEAR(wrong, -std::log(1e-12), 1e-6);
}

TEST(LogLossTest, RejectsBadInput) {
  EXPECT_FALSE(LogLoss(std::vector<double>{}, std::vector<uint8_t>{}).ok());
  EXPECT_FALSE(LogLoss(std::vector<double>{1.5}, std::vector<uint8_t>{1}).ok());
  EXPECT_FALSE(LogLoss(std::vector<double>{0.5}, std::vector<uint8_t>{3}).ok());
  EXPECT_FALSE(LogLoss(std::vector<double>{0.5, 0.5}, std::vector<uint8_t>{1}).ok());
}

TEST(CalibrationTest, MeanPredictedOverObservedRate) {
  // Predicted 0.2 + 0.4 + 0.1 + 0.3 = 1.0 clicks against 2 observed: 0.5.
  const std::vector<double> p = {0.2, 0.4, 0.1, 0.3};
  const std::vector<uint8_t> y = {1, 0, 1, 0};
  EXPECT_NEAR(*Calibration(p, y), 0.5, 1e-12);
  // The base rate predicted everywhere is calibrated exactly.
  EXPECT_NEAR(*Calibration(std::vector<double>(4, 0.5), y), 1.0, 1e-12);
  EXPECT_FALSE(Calibration(std::vector<double>{0.5}, std::vector<uint8_t>{0}).ok());
  EXPECT_FALSE(Calibration(std::vector<double>{1.5}, std::vector<uint8_t>{1}).ok());
  EXPECT_FALSE(Calibration(std::vector<double>{}, std::vector<uint8_t>{}).ok());
}

TEST(NormalisedEntropyTest, LogLossOverTheBaseRatesEntropy) {
  // One positive of four: base entropy -(1/4 ln 1/4 + 3/4 ln 3/4).
  const std::vector<uint8_t> y = {1, 0, 0, 0};
  const double base = -(0.25 * std::log(0.25) + 0.75 * std::log(0.75));
  // Predicting the base rate everywhere scores exactly 1.
  EXPECT_NEAR(*NormalisedEntropy(std::vector<double>(4, 0.25), y), 1.0, 1e-12);
  const std::vector<double> p = {0.8, 0.1, 0.2, 0.1};
  const double ll = -(std::log(0.8) + std::log(0.9) + std::log(0.8) + std::log(0.9)) / 4.0;
  EXPECT_NEAR(*NormalisedEntropy(p, y), ll / base, 1e-12);
  EXPECT_FALSE(NormalisedEntropy(std::vector<double>{0.5, 0.5}, std::vector<uint8_t>{0, 0}).ok());
  EXPECT_FALSE(NormalisedEntropy(std::vector<double>{0.5}, std::vector<uint8_t>{1}).ok());
}

TEST(NdcgTest, HandComputedPerUser) {
  // user 0: ranked labels 0,1,1 -> DCG = 1/log2(3) + 1/log2(4), IDCG = 1 + 1/log2(3).
  // user 1: all negative -> skipped. user 2: one positive at rank 1 -> 1.
  const std::vector<uint32_t> u = {0, 1, 0, 2, 0, 1};
  const std::vector<double> s = {0.9, 0.3, 0.8, 0.5, 0.1, 0.7};
  const std::vector<uint8_t> y = {0, 0, 1, 1, 1, 0};
  absl::StatusOr<NdcgResult> r = NdcgAtK(u, s, y, 10);
  ASSERT_TRUE(r.ok()) << r.status();
  const double user0 = (1.0 / std::log2(3.0) + 0.5) / (1.0 + 1.0 / std::log2(3.0));
  EXPECT_NEAR(r->ndcg, (user0 + 1.0) / 2.0, 1e-12);
  EXPECT_EQ(r->users_counted, 2u);
  EXPECT_EQ(r->users_skipped, 1u);
  // Cutoff 1: user 0's top item is negative.
  EXPECT_NEAR(NdcgAtK(u, s, y, 1)->ndcg, 0.5, 1e-12);
}

TEST(NdcgTest, RejectsBadInput) {
  const std::vector<uint32_t> u = {0, 0};
  const std::vector<double> s = {0.1, 0.2};
  EXPECT_FALSE(NdcgAtK(u, s, std::vector<uint8_t>{0, 0}, 10).ok());  // no positives
  EXPECT_FALSE(NdcgAtK(u, s, std::vector<uint8_t>{1, 0}, 0).ok());
  EXPECT_FALSE(NdcgAtK(u, s, std::vector<uint8_t>{1}, 10).ok());
}

}  // namespace
}  // namespace graphsieve::eval

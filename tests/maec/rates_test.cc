// FitRates: exact negative-instance mean, floor and cap, reachable range.
#include "core/maec/rates.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

namespace graphsieve {
namespace {

struct Case {
  std::vector<double> scores;
  std::vector<uint32_t> weights;
};

Case RandomCase(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> expo(3.0);
  std::uniform_int_distribution<int> w(0, 4);
  Case c;
  for (size_t i = 0; i < n; ++i) {
    c.scores.push_back(i % 50 == 0 ? 0.0 : expo(rng));   // some zeros, heavy right tail
    if (i % 97 == 0) c.scores.back() = c.scores[i / 2];  // ties
    c.weights.push_back(w(rng));
  }
  return c;
}

TEST(FitRates, NegativeInstanceMeanIsExactlyAlpha) {
  const Case c = RandomCase(20000, 1);
  for (double alpha : {0.02, 0.1, 0.2, 0.5, 0.9}) {
    for (double floor : {0.0, 0.01}) {
      if (floor >= alpha) continue;
      std::vector<double> rates;
      absl::StatusOr<RateFit> fit = FitRates(c.scores, c.weights, alpha, floor, &rates, 2);
      ASSERT_TRUE(fit.ok()) << fit.status();
      double sum = 0, w = 0;
      for (size_t i = 0; i < rates.size(); ++i) {
        EXPECT_GE(rates[i], floor);
        EXPECT_LE(rates[i], 1.0);
        EXPECT_DOUBLE_EQ(rates[i], std::min(std::max(fit->rho * c.scores[i], floor), 1.0));
        sum += c.weights[i] * rates[i];
        w += c.weights[i];
      }
      EXPECT_NEAR(sum / w, alpha, 1e-9) << alpha << " " << floor;
      EXPECT_NEAR(fit->achieved_mean, alpha, 1e-9);
    }
  }
}

TEST(FitRates, CapsAndFloorsBothActive) {
  // Scores 0..9 with equal weights, α = 0.7, floor 0.2: some at 1, some at 0.2.
  std::vector<double> s;
  for (int i = 0; i < 10; ++i) s.push_back(i);
  std::vector<uint32_t> w(10, 1);
  std::vector<double> rates;
  RateFit fit = *FitRates(s, w, 0.7, 0.2, &rates);
  int capped = 0, floored = 0;
  for (double r : rates) capped += r == 1.0, floored += r == 0.2;
  EXPECT_GT(capped, 0);
  EXPECT_GT(floored, 0);
  double mean = 0;
  for (double r : rates) mean += r / 10;
  EXPECT_NEAR(mean, 0.7, 1e-12);
  // Hand check: capped from score 1/ρ upward.
  EXPECT_NEAR(rates[9], 1.0, 0);
  EXPECT_NEAR(rates[0], 0.2, 0);
  EXPECT_NEAR(rates[5], 5 * fit.rho, 1e-12);
}

// α and the floor were validated where the options entered
// (PipelineOptions::Validate); FitRates states them as preconditions that a
// debug build checks.
TEST(FitRatesDeathTest, OutOfRangeAlphaIsAProgrammerError) {
  std::vector<double> s = {0.1, 0.2};
  std::vector<uint32_t> w = {1, 1};
  EXPECT_DEBUG_DEATH(FitRates(s, w, 0.0, 0.01, nullptr).IgnoreError(), "alpha");
  EXPECT_DEBUG_DEATH(FitMixtureRates(s, w, 1.5, 0.1, nullptr).IgnoreError(), "alpha");
  EXPECT_DEBUG_DEATH(FitMixtureRates(s, w, 0.2, 0.0, nullptr).IgnoreError(), "kappa");
}

TEST(FitRates, UnreachableAlphaNamesTheRange) {
  // Half of the negatives score 0 and stay at the floor: α ≤ (1 + 0.1)/2.
  std::vector<double> s = {0, 0, 1, 2};
  std::vector<uint32_t> w = {1, 1, 1, 1};
  absl::StatusOr<RateFit> fit = FitRates(s, w, 0.9, 0.1, nullptr);
  ASSERT_FALSE(fit.ok());
  EXPECT_EQ(fit.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(fit.status().message()), ::testing::HasSubstr("[0.1, 0.55]"));
  // The upper end itself is reachable: everything with a score is kept.
  std::vector<double> rates;
  RateFit top = *FitRates(s, w, 0.55, 0.1, &rates);
  EXPECT_EQ(rates, (std::vector<double>{0.1, 0.1, 1, 1}));
  EXPECT_NEAR(top.achieved_mean, 0.55, 1e-12);
  EXPECT_FALSE(FitRates(s, w, 0.05, 0.1, nullptr).ok());  // below the floor
  EXPECT_FALSE(FitRates(s, {0, 0, 0, 0}, 0.2, 0.01, nullptr).ok());
}

TEST(FitRates, WeightsAreNegativeInstancesNotPairs) {
  // A pair with 9 negatives dominates: its rate counts 9 times.
  std::vector<double> s = {1, 3};
  std::vector<uint32_t> w = {9, 1};
  std::vector<double> rates;
  FitRates(s, w, 0.3, 0.0, &rates).IgnoreError();
  EXPECT_NEAR((9 * rates[0] + rates[1]) / 10, 0.3, 1e-12);
  EXPECT_NEAR(rates[1] / rates[0], 3.0, 1e-12);
}

}  // namespace
}  // namespace graphsieve

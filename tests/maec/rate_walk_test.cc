// The bucketed α-fit walk (core/maec/rate_walk.h) against the full sort.
#include "core/maec/rate_walk.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace graphsieve {
namespace maec_internal {
namespace {

struct Case {
  std::vector<double> scores;
  std::vector<uint32_t> weights;
  double total_w = 0;
};

// Scores over several binades with zeros, exact ties and zero weights.
Case RandomCase(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::lognormal_distribution<double> logn(0.0, 1.0);
  std::uniform_int_distribution<int> w(0, 5);
  Case c;
  for (size_t i = 0; i < n; ++i) {
    c.scores.push_back(i % 40 == 0 ? 0.0 : logn(rng));
    if (i % 31 == 0 && i > 0) c.scores.back() = c.scores[i / 3];
    c.weights.push_back(w(rng));
    c.total_w += c.weights.back();
  }
  return c;
}

// f(ρ) of rate_walk.h, summed directly.
double F(const Case& c, double rho, double floor) {
  double sum = 0;
  for (size_t i = 0; i < c.scores.size(); ++i) {
    sum += c.weights[i] * std::min(std::max(rho * c.scores[i], floor), 1.0);
  }
  return sum / c.total_w;
}

TEST(SolveRho, MixtureFitMatchesTheSortedWalkOpeningOneBucket) {
  for (uint64_t seed : {1, 2, 3}) {
    const Case c = RandomCase(300000, seed);
    for (double alpha : {0.01, 0.2, 0.5, 0.9, 0.95}) {  // f(∞) ≈ 0.975: 1 in 40 scores is 0
      RateWalkStats stats;
      const double fast = SolveRho(c.scores, c.weights, alpha, 0.0, c.total_w, &stats);
      const double sorted = SolveRhoSorted(c.scores, c.weights, alpha, 0.0, c.total_w);
      // Near f(∞) the linear piece's Σws is a difference of large sums: both
      // roundings are that far apart, and both solve f(ρ) = α to 1e-12.
      EXPECT_NEAR(fast, sorted, 1e-10 * sorted) << seed << " " << alpha;
      EXPECT_NEAR(F(c, fast, 0.0), alpha, 1e-12) << seed << " " << alpha;
      EXPECT_EQ(stats.gather_passes, 1) << seed << " " << alpha;
      EXPECT_FALSE(stats.fell_back);
    }
  }
}

TEST(SolveRho, FloorRuleIsExactOrFallsBackToTheSort) {
  const Case c = RandomCase(100000, 4);
  for (double floor : {0.001, 0.05, 0.3}) {
    for (double alpha : {0.35, 0.6, 0.9}) {
      RateWalkStats stats;
      const double fast = SolveRho(c.scores, c.weights, alpha, floor, c.total_w, &stats);
      const double sorted = SolveRhoSorted(c.scores, c.weights, alpha, floor, c.total_w);
      EXPECT_NEAR(fast, sorted, 1e-12 * sorted) << floor << " " << alpha;
      EXPECT_NEAR(F(c, fast, floor), alpha, 1e-12) << floor << " " << alpha;
      EXPECT_LE(stats.gather_passes, 16);
    }
  }
}

TEST(SolveRho, EdgeCases) {
  // No positive score: f is constant, ρ = 1 (as the sorted walk).
  Case zeros{{0.0, 0.0}, {2, 3}, 5};
  EXPECT_EQ(SolveRho(zeros.scores, zeros.weights, 0.5, 0.0, 5), 1.0);
  // One positive entry among zeros: f(ρ) = (2·min(ρ·0.5, 1) + 0) / 3.
  Case one{{0.5, 0.0}, {2, 1}, 3};
  EXPECT_DOUBLE_EQ(SolveRho(one.scores, one.weights, 0.5, 0.0, 3), 1.5);
  // α = f(∞) = 1: every entry capped, ρ = 1 / the smallest score.
  Case all{{0.25, 4.0, 1.0}, {1, 1, 1}, 3};
  EXPECT_DOUBLE_EQ(SolveRho(all.scores, all.weights, 1.0, 0.0, 3), 4.0);
  EXPECT_DOUBLE_EQ(SolveRhoSorted(all.scores, all.weights, 1.0, 0.0, 3), 4.0);
  // Every score equal: one bucket.
  Case same{std::vector<double>(1000, 0.7), std::vector<uint32_t>(1000, 1), 1000};
  EXPECT_NEAR(SolveRho(same.scores, same.weights, 0.35, 0.0, 1000), 0.5, 1e-13);
}

}  // namespace
}  // namespace maec_internal
}  // namespace graphsieve

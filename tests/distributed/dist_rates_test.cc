// The α fit across ranks (core/maec/rates.cc) against the single-process
// closed form (rates.h), for both rate rules. Started by mpirun on 2 ranks:
// every rank builds the same entries, keeps every second one (rank r keeps
// i % N == r) and fits with the communicator; the answer must be the fit of
// all entries in one process.
#include <cmath>
#include <random>
#include <vector>

#include "core/maec/rates.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/distributed/mpi_test_main.h"

namespace graphsieve {
namespace {

struct Entries {
  std::vector<double> scores;
  std::vector<uint32_t> weights;
};

// Power-law-ish scores with ties and zeros, weights 0..3 (0 = a positive pair).
Entries Make(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Entries e;
  for (size_t i = 0; i < n; ++i) {
    const double u = std::uniform_real_distribution<double>(0, 1)(rng);
    e.scores.push_back(i % 17 == 0 ? 0.0 : i % 29 == 0 ? 0.5 : std::pow(u, 3.0));
    e.weights.push_back(static_cast<uint32_t>(rng() % 4));
  }
  return e;
}

Entries Mine(const Entries& all) {
  Entries e;
  for (size_t i = 0; i < all.scores.size(); ++i) {
    if (int(i % g_comm->size()) != g_comm->rank()) continue;
    e.scores.push_back(all.scores[i]);
    e.weights.push_back(all.weights[i]);
  }
  return e;
}

TEST(DistRatesTest, FloorRuleMatchesTheSingleProcessFit) {
  ASSERT_EQ(g_comm->size(), 2) << "run under mpirun -np 2";
  for (double alpha : {0.02, 0.2, 0.5, 0.9}) {
    const Entries all = Make(20000, 7), mine = Mine(all);
    absl::StatusOr<RateFit> one = FitRates(all.scores, all.weights, alpha, 0.01, nullptr);
    std::vector<double> rates;
    absl::StatusOr<RateFit> dist =
        FitRates(mine.scores, mine.weights, alpha, 0.01, &rates, 1, g_comm);
    ASSERT_TRUE(one.ok()) << one.status();
    ASSERT_TRUE(dist.ok()) << dist.status();
    // Both solve the same linear piece exactly; they differ only by the
    // rounding of their sums (the merge walk's running sums lose ~1e-10 when
    // most entries are capped), far below the 1e-6 the builder promises.
    EXPECT_NEAR(dist->rho, one->rho, 1e-9 * one->rho) << "alpha " << alpha;
    EXPECT_NEAR(dist->achieved_mean, alpha, 1e-12);
    EXPECT_NEAR(one->achieved_mean, alpha, 1e-9);
    for (size_t i = 0; i < rates.size(); ++i) {
      ASSERT_NEAR(rates[i], FloorRate(mine.scores[i], one->rho, 0.01), 1e-9);
    }
  }
}

TEST(DistRatesTest, MixtureRuleMatchesTheSingleProcessFit) {
  for (double alpha : {0.05, 0.2, 0.7, 1.0}) {
    const Entries all = Make(20000, 11), mine = Mine(all);
    absl::StatusOr<RateFit> one = FitMixtureRates(all.scores, all.weights, alpha, 0.25, nullptr);
    absl::StatusOr<RateFit> dist =
        FitMixtureRates(mine.scores, mine.weights, alpha, 0.25, nullptr, 1, g_comm);
    ASSERT_TRUE(one.ok()) << one.status();
    ASSERT_TRUE(dist.ok()) << dist.status();
    EXPECT_NEAR(dist->rho, one->rho, 1e-9 * one->rho) << "alpha " << alpha;
    EXPECT_NEAR(dist->score_mean, one->score_mean, 1e-12 * one->score_mean);
    EXPECT_NEAR(dist->achieved_mean, alpha, 1e-12);
  }
}

TEST(DistRatesTest, UnreachableAlphaIsTheSameErrorOnEveryRank) {
  Entries all = Make(1000, 3);
  for (size_t i = 0; i < all.scores.size(); i += 2)
    all.scores[i] = 0.0;  // half the entries score 0
  const Entries mine = Mine(all);
  absl::StatusOr<RateFit> one = FitRates(all.scores, all.weights, 0.9, 0.01, nullptr);
  absl::StatusOr<RateFit> dist = FitRates(mine.scores, mine.weights, 0.9, 0.01, nullptr, 1, g_comm);
  ASSERT_FALSE(one.ok());
  ASSERT_FALSE(dist.ok());
  EXPECT_EQ(dist.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(dist.status().message()), ::testing::HasSubstr("is unreachable"));
}

}  // namespace
}  // namespace graphsieve

// The built-in pilot's fit (core/model/pilot.h) on small logs whose optimum
// is known, its determinism, and the cross-fitting's promise: no pair's label
// enters its own score.
#include "core/model/pilot.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

#include "core/model/pilot_row.h"
#include "core/records/pair_table.h"
#include "gtest/gtest.h"

namespace graphsieve {
namespace {

// A table of pairs: (user, item, instances, positives); folds from the ids.
PilotData Table(uint32_t users, uint32_t items, const std::vector<std::array<uint32_t, 4>>& rows,
                int folds, uint64_t seed) {
  PilotData d;
  d.num_users = users, d.num_items = items;
  for (const auto& r : rows) {
    d.user.push_back(r[0]), d.item.push_back(r[1]);
    d.instances.push_back(r[2]), d.positives.push_back(r[3]);
    d.fold.push_back(static_cast<uint8_t>(PilotFold(r[0], r[1], seed, folds)));
  }
  return d;
}

// A seeded random log: every user sees `per_user` distinct items.
PilotData RandomTable(uint32_t users, uint32_t items, int per_user, int folds, uint64_t seed) {
  std::vector<std::array<uint32_t, 4>> rows;
  uint64_t x = seed * 2654435761u + 1;
  auto next = [&] { return x = x * 6364136223846793005ULL + 1442695040888963407ULL, x >> 33; };
  for (uint32_t u = 0; u < users; ++u) {
    for (int k = 0; k < per_user; ++k) {
      const uint32_t i = (u * 7 + k * 3) % items;
      const uint32_t n = 1 + next() % 4;
      const uint32_t y = (next() % 5 == 0) ? 1 + next() % n : 0;
      rows.push_back({u, i, n, std::min(y, n)});
    }
  }
  return Table(users, items, rows, folds, seed);
}

TEST(PilotFitTest, ReachesTheExactOptimumOfAnAdditiveLog) {
  // 2 users x 2 items, 10 instances each, positive rates [[1/2, 1/5], [4/5,
  // 1/2]]: the odds ratio is 1, so the logits are exactly additive (user +
  // item) and the unpenalised maximum likelihood reproduces every pair's
  // observed rate. The fit must get there.
  const PilotData d = Table(2, 2, {{0, 0, 10, 5}, {0, 1, 10, 2}, {1, 0, 10, 8}, {1, 1, 10, 5}},
                            /*folds=*/2, 1);
  PilotOptions o;
  o.dim = 1, o.epochs = 3000, o.l2 = 0.0, o.learning_rate = 0.5, o.folds = 2;
  const PilotFactors f = FitPilotModel(d, o, /*index=*/o.folds);  // every pair
  for (size_t p = 0; p < d.size(); ++p) {
    const double observed = double(d.positives[p]) / d.instances[p];
    EXPECT_NEAR(f.Probability(d.user[p], d.item[p]), observed, 2e-3) << "pair " << p;
  }
}

TEST(PilotFitTest, ReachesTheSaturatedOptimumOfARankOneLog) {
  // 3 x 3 with one user's row off the additive pattern: the bias-only model
  // cannot fit it, the rank-1 interaction can (logit = a_u + c_i + p_u q_i with
  // the interaction only at user 2): every pair at its observed rate.
  // Observed logits: users 0 and 1 additive, user 2 reversed over the items.
  const PilotData d = Table(3, 3,
                            {{0, 0, 20, 10},
                             {0, 1, 20, 4},
                             {0, 2, 20, 16},  // 1/2, 1/5, 4/5
                             {1, 0, 20, 10},
                             {1, 1, 20, 4},
                             {1, 2, 20, 16},
                             {2, 0, 20, 10},
                             {2, 1, 20, 16},
                             {2, 2, 20, 4}},
                            2, 1);
  PilotOptions o;
  o.dim = 2, o.epochs = 4000, o.l2 = 0.0, o.learning_rate = 0.3, o.init_std = 0.3;
  const PilotFactors f = FitPilotModel(d, o, o.folds);
  double worst = 0;
  for (size_t p = 0; p < d.size(); ++p) {
    const double observed = double(d.positives[p]) / d.instances[p];
    worst = std::max(worst, std::abs(f.Probability(d.user[p], d.item[p]) - observed));
  }
  EXPECT_LT(worst, 1e-2);
  // Without the embedding (its rows at zero) the best additive fit misses user 2.
  PilotFactors additive = f;
  for (size_t c = 0; c < additive.user_rows.size(); ++c) {
    if (c % 3 != 0) additive.user_rows[c] = 0;
  }
  EXPECT_GT(std::abs(additive.Probability(2, 1) - 0.8), 0.1);
}

TEST(PilotFitTest, TheRowScoreIsTheModelsLogit) {
  const PilotData d = RandomTable(20, 15, 6, 5, 3);
  PilotOptions o;
  o.dim = 4, o.epochs = 3;
  const PilotFactors f = FitPilotModel(d, o, 5);
  double by_hand = f.bias + f.UserRow(3)[0] + f.ItemRow(7)[0];
  for (int k = 1; k <= 4; ++k) by_hand += double(f.UserRow(3)[k]) * f.ItemRow(7)[k];
  EXPECT_DOUBLE_EQ(f.Logit(3, 7), by_hand);
  EXPECT_DOUBLE_EQ(f.Probability(3, 7), 1.0 / (1.0 + std::exp(-by_hand)));
}

TEST(PilotFitTest, FactorsAreDeterministicPerSeedAndIndependentOfThreads) {
  const PilotData d = RandomTable(40, 30, 8, 5, 7);
  PilotOptions o;
  o.dim = 4, o.epochs = 3, o.threads = 1, o.seed = 11;
  auto one = FitPilotModels(d, o);
  ASSERT_TRUE(one.ok()) << one.status();
  o.threads = 4;
  auto four = FitPilotModels(d, o);
  ASSERT_TRUE(four.ok()) << four.status();
  ASSERT_EQ(one->size(), 6u);
  for (size_t m = 0; m < one->size(); ++m) {
    EXPECT_EQ((*one)[m].user_rows, (*four)[m].user_rows) << "model " << m;
    EXPECT_EQ((*one)[m].item_rows, (*four)[m].item_rows) << "model " << m;
    EXPECT_EQ((*one)[m].bias, (*four)[m].bias);
  }
  o.seed = 12;
  auto other = FitPilotModels(d, o);
  ASSERT_TRUE(other.ok());
  EXPECT_NE((*one)[5].user_rows, (*other)[5].user_rows);
}

TEST(PilotFitTest, RanksFitDisjointModelsThatTogetherAreTheOneProcessFit) {
  const PilotData d = RandomTable(30, 20, 6, 3, 5);
  PilotOptions o;
  o.dim = 3, o.epochs = 2, o.folds = 3;
  auto all = FitPilotModels(d, o);
  ASSERT_TRUE(all.ok());
  for (int rank = 0; rank < 2; ++rank) {
    auto part = FitPilotModels(d, o, rank, 2);
    ASSERT_TRUE(part.ok());
    for (int m = 0; m <= 3; ++m) {
      if (m % 2 == rank) {
        auto round_trip = ParsePilotFactors(SerializePilotFactors((*part)[m]));
        ASSERT_TRUE(round_trip.ok()) << round_trip.status();
        EXPECT_EQ(round_trip->user_rows, (*all)[m].user_rows);
        EXPECT_EQ(round_trip->item_rows, (*all)[m].item_rows);
        EXPECT_EQ(round_trip->bias, (*all)[m].bias);
      } else {
        EXPECT_TRUE((*part)[m].user_rows.empty()) << "rank " << rank << " fitted model " << m;
      }
    }
  }
}

TEST(PilotCrossFitTest, NoPairsLabelEntersItsOwnScore) {
  PilotData d = RandomTable(40, 30, 8, 5, 9);
  PilotOptions o;
  o.dim = 4, o.epochs = 3;
  o.negative_rate = 0.1;  // the flip also changes whether the pair is sampled
  auto models = FitPilotModels(d, o);
  ASSERT_TRUE(models.ok());
  const std::vector<float> before = CrossFittedScores(d, *models);
  // Flip one pair's label: all of its instances positive instead of none (or
  // the reverse).
  const size_t flipped = 17;
  d.positives[flipped] = d.positives[flipped] == 0 ? d.instances[flipped] : 0;
  auto refit = FitPilotModels(d, o);
  ASSERT_TRUE(refit.ok());
  const std::vector<float> after = CrossFittedScores(d, *refit);
  const uint8_t k = d.fold[flipped];
  EXPECT_EQ(before[flipped], after[flipped]);
  size_t other_folds = 0, other_changed = 0;
  for (size_t p = 0; p < d.size(); ++p) {
    if (d.fold[p] == k) {
      EXPECT_EQ(before[p], after[p]) << "pair " << p << " shares the flipped pair's fold";
    } else {
      ++other_folds;
      other_changed += before[p] != after[p];
    }
  }
  // The flipped pair trains every other fold's model: their scores move.
  EXPECT_GT(other_changed, other_folds / 2);
  // And the model the snapshot stores (every pair) sees it.
  EXPECT_NE((*models)[5].Probability(d.user[flipped], d.item[flipped]),
            (*refit)[5].Probability(d.user[flipped], d.item[flipped]));
}

TEST(PilotFitTest, AutoNegativeRateKeepsSmallLogsWholeAndBoundsLargeOnes) {
  PilotData d;
  d.positives.assign(500000, 0);
  EXPECT_EQ(AutoNegativeRate(d), 1.0);
  d.positives.assign(4000000, 0);
  d.positives.resize(4100000, 1);  // positives do not count
  EXPECT_DOUBLE_EQ(AutoNegativeRate(d), 0.25);
  d.positives.assign(50000000, 0);
  EXPECT_DOUBLE_EQ(AutoNegativeRate(d), 0.1);
}

TEST(PilotFitTest, SampledNegativesAreReweighted) {
  // 40 users x 50 items, one instance each, 1 in 20 positive: the model's
  // mean probability over every pair must stay near the log's rate when only
  // a quarter of the negative pairs is trained on (at weight 4); unweighted,
  // the sample's rate would be about 4x the log's.
  std::vector<std::array<uint32_t, 4>> rows;
  double positives = 0;
  for (uint32_t u = 0; u < 40; ++u) {
    for (uint32_t i = 0; i < 50; ++i) {
      const uint32_t y = (u * 7 + i * 13) % 20 == 0;
      rows.push_back({u, i, 1, y});
      positives += y;
    }
  }
  const PilotData d = Table(40, 50, rows, 2, 4);
  for (double rate : {1.0, 0.25}) {
    PilotOptions o;
    o.dim = 2, o.epochs = 20, o.negative_rate = rate;
    const PilotFactors f = FitPilotModel(d, o, o.folds);
    double mean = 0;
    for (size_t p = 0; p < d.size(); ++p) mean += f.Probability(d.user[p], d.item[p]);
    EXPECT_NEAR(mean / positives, 1.0, 0.3) << "rate " << rate;
  }
}

TEST(PilotCrossFitTest, OneCallFromAPairTableIsTheModelsCrossFit) {
  PairTable t;
  t.user_ids = {10, 20, 30};
  t.item_ids = {5, 6, 7, 8};
  for (uint32_t u = 0; u < 3; ++u) {
    for (uint32_t i = 0; i < 4; ++i) {
      t.pair_user.push_back(u), t.pair_item.push_back(i);
      t.instances.push_back(2 + u), t.negatives.push_back((u + i) % 3 == 0 ? 1 : 2 + u);
      t.label.push_back(t.negatives.back() < t.instances.back());
    }
  }
  PilotOptions o;
  o.dim = 2, o.epochs = 4, o.folds = 3;
  PilotFactors full;
  auto scores = CrossFittedPilotScores(t, o, &full);
  ASSERT_TRUE(scores.ok()) << scores.status();
  const PilotData d = PilotDataFromPairs(t, o);
  ASSERT_EQ(d.size(), 12u);
  EXPECT_EQ(d.positives[0], 1u);  // (10, 5): 2 instances, 1 negative
  EXPECT_EQ(d.fold[5], PilotFold(20, 6, o.seed, 3));
  auto models = FitPilotModels(d, o);
  ASSERT_TRUE(models.ok());
  EXPECT_EQ(*scores, CrossFittedScores(d, *models));
  EXPECT_EQ(full.user_rows, models->back().user_rows);
}

TEST(PilotCrossFitTest, FoldsSplitThePairsEvenly) {
  std::vector<int> count(5, 0);
  for (uint64_t u = 0; u < 100; ++u) {
    for (uint64_t i = 0; i < 100; ++i) ++count[PilotFold(u, i, 42, 5)];
  }
  for (int c : count) EXPECT_NEAR(c, 2000, 200);
  int moved = 0;  // another seed, other folds: about 4 pairs in 5 move
  for (uint64_t p = 0; p < 1000; ++p)
    moved += PilotFold(p, p + 1, 42, 5) != PilotFold(p, p + 1, 43, 5);
  EXPECT_GT(moved, 700);
}

TEST(PilotOptionsTest, BadOptionsAndDataNameTheFlagOrRow) {
  PilotOptions o;
  o.folds = 1;
  EXPECT_NE(o.Validate().message().find("--pilot_folds"), std::string::npos);
  o = PilotOptions();
  o.dim = 0;
  EXPECT_NE(o.Validate().message().find("--pilot_dim"), std::string::npos);
  PilotData d = Table(2, 2, {{0, 0, 2, 3}}, 5, 1);
  EXPECT_NE(d.Validate(5).message().find("pair 0"), std::string::npos);
  EXPECT_FALSE(FitPilotModels(d, PilotOptions()).ok());
}

}  // namespace
}  // namespace graphsieve

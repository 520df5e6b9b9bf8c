// DefaultPolicy: parsing (errors name the text) and the rate of each kind.
#include "core/serving/default_policy.h"

#include <algorithm>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphsieve {
namespace {

using ::testing::HasSubstr;

TEST(DefaultPolicyTest, ParsesEveryKindAndRoundTrips) {
  auto node_mean = DefaultPolicy::Parse("node-mean");
  ASSERT_TRUE(node_mean.ok());
  EXPECT_EQ(node_mean->kind, DefaultPolicy::Kind::kNodeMean);
  EXPECT_EQ(node_mean->ToString(), "node-mean");
  auto alpha = DefaultPolicy::Parse("alpha");
  ASSERT_TRUE(alpha.ok());
  EXPECT_EQ(alpha->ToString(), "alpha");
  auto fixed = DefaultPolicy::Parse("0.25");
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ(fixed->kind, DefaultPolicy::Kind::kFixed);
  EXPECT_DOUBLE_EQ(fixed->fixed_rate, 0.25);
  EXPECT_EQ(fixed->ToString(), "0.25");
  EXPECT_THAT(std::string(DefaultPolicy::Parse("1.5").status().message()),
              HasSubstr("outside (0, 1]"));
  EXPECT_THAT(std::string(DefaultPolicy::Parse("0").status().message()),
              HasSubstr("fixed rate 0 is outside"));
  EXPECT_THAT(std::string(DefaultPolicy::Parse("median").status().message()),
              HasSubstr("'median'"));
  EXPECT_FALSE(DefaultPolicy::Parse("nan").ok());
}

TEST(DefaultPolicyTest, RateOfEachKind) {
  NodeRecord user, item, no_negatives;
  user.mean_rate = 0.3f;
  item.mean_rate = 0.6f;
  no_negatives.mean_rate = 0.0f;
  const double alpha = 0.2;
  DefaultPolicy node_mean;
  EXPECT_DOUBLE_EQ(node_mean.Rate(alpha, &user, &item), 0.3f);  // the user's first
  EXPECT_DOUBLE_EQ(node_mean.Rate(alpha, nullptr, &item), 0.6f);
  EXPECT_DOUBLE_EQ(node_mean.Rate(alpha, &no_negatives, &item), 0.6f);
  EXPECT_DOUBLE_EQ(node_mean.Rate(alpha, &no_negatives, nullptr), alpha);
  EXPECT_DOUBLE_EQ(node_mean.Rate(alpha, nullptr, nullptr), alpha);
  DefaultPolicy by_alpha = *DefaultPolicy::Parse("alpha");
  EXPECT_DOUBLE_EQ(by_alpha.Rate(alpha, &user, &item), alpha);
  DefaultPolicy fixed = *DefaultPolicy::Parse("0.75");
  EXPECT_DOUBLE_EQ(fixed.Rate(alpha, &user, nullptr), 0.75);
}

TEST(DefaultPolicyTest, ModelFollowsTheSnapshotsRateRule) {
  auto model_policy = DefaultPolicy::Parse("model");
  ASSERT_TRUE(model_policy.ok());
  EXPECT_EQ(model_policy->kind, DefaultPolicy::Kind::kModel);
  EXPECT_EQ(model_policy->ToString(), "model");
  UnseenModel m;  // MA-EC, mixture rule, hardness range [0.5, 2.5]: conductance 0 sits below it
  m.rate_rule = 1;
  m.kappa = 0.25;
  m.score_mean = 0.1;
  m.rho = 0.4;
  m.geff_min = 0.5;
  m.geff_max = 2.5;
  m.uncertainty_propagation = m.score_propagation = false;
  // Neither node known: no graph evidence, only the uniform share: min(1, ρκ).
  EXPECT_NEAR(model_policy->Rate(m, nullptr, nullptr), 0.4 * 0.25, 1e-7);
  // A known user: one propagation step from its pairs, as for an unseen pair.
  m.uncertainty_propagation = m.score_propagation = true;
  m.gamma = 0.5;
  NodeView user;
  user.record.degree = 4;
  user.record.sum_uncertainty = 0.8f;
  user.record.sum_score = 0.6f;
  user.record.mean_rate = 0.3f;
  const double b = 0.5 * 0.0 + 0.5 * 0.8 / 4, s = 0.5 * b + 0.5 * 0.6 / 4;
  EXPECT_NEAR(model_policy->Rate(m, &user, nullptr), std::min(1.0, 0.4 * (s / 0.1 + 0.25)), 1e-6);
  EXPECT_NEAR(model_policy->Rate(m, &user, nullptr), ScoreUnknownNodePair(&user, nullptr, m), 1e-7);
  // The other kinds through the model overload are unchanged.
  DefaultPolicy node_mean;
  EXPECT_DOUBLE_EQ(node_mean.Rate(m, &user, nullptr), 0.3f);
  EXPECT_DOUBLE_EQ(node_mean.Rate(m, nullptr, nullptr), m.alpha);
}

}  // namespace
}  // namespace graphsieve

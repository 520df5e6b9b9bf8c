// DefaultPolicy: parsing (errors name the text) and the rate of each kind.
#include "core/serving/default_policy.h"

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

}  // namespace
}  // namespace graphsieve

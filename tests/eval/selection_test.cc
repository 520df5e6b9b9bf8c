#include "eval/selection.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace graphsieve::eval {
namespace {

RowEvidence Row(std::vector<double> d, std::optional<double> saved) {
  return RowEvidence{std::move(d), saved};
}

TEST(SelectionTest, NonInferiorityNeedsTheMarginAndOneStandardError) {
  const SelectionCriteria c;  // margin 0.0005, 1 SE
  // Mean −0.0004, SE 0.0001: within the margin but 4 SE below 0.
  EXPECT_FALSE(NonInferior(IntervalOf(std::vector<double>{-0.0003, -0.0005}), c));
  // Mean −0.0004, SE 0.0006: within the margin and within one SE.
  EXPECT_TRUE(NonInferior(IntervalOf(std::vector<double>{0.0002, -0.0010}), c));
  // Mean −0.0006, SE 0.0014: within one SE but beyond the margin.
  EXPECT_FALSE(NonInferior(IntervalOf(std::vector<double>{0.0008, -0.0020}), c));
  EXPECT_TRUE(NonInferior(IntervalOf(std::vector<double>{0.001, 0.002}), c));
  EXPECT_FALSE(NonInferior(IntervalOf(std::vector<double>{}), c));
}

TEST(SelectionTest, TheLargestSavingAmongThoseThatPassWins) {
  const std::vector<std::string> rows = {"own", "random"};
  std::map<std::string, std::map<std::string, RowEvidence>> e;
  // Saves most but loses on the random row: an option, not the winner.
  e["pilot"]["own"] = Row({0.003, 0.004}, 0.6);
  e["pilot"]["random"] = Row({-0.002, -0.003}, 0.0);
  // Passes both, saves 0.3 on average.
  e["graph"]["own"] = Row({0.001, 0.002}, 0.4);
  e["graph"]["random"] = Row({0.0001, -0.0001}, 0.2);
  // Passes both, saves less.
  e["flat"]["own"] = Row({0.0005, 0.0007}, 0.1);
  e["flat"]["random"] = Row({0.0, 0.0002}, 0.1);
  // Measured on one row only.
  e["partial"]["own"] = Row({0.01, 0.01}, 0.9);
  const SelectionResult r = SelectByNonInferiority(rows, e, SelectionCriteria{});
  EXPECT_EQ(r.winner, "graph");
  ASSERT_EQ(r.decisions.size(), 4u);
  std::map<std::string, CandidateDecision> by;
  for (const CandidateDecision& d : r.decisions) by[d.candidate] = d;
  EXPECT_FALSE(by["pilot"].passes);
  EXPECT_EQ(by["pilot"].failing_rows, std::vector<std::string>{"random"});
  EXPECT_TRUE(by["graph"].passes);
  EXPECT_NEAR(by["graph"].mean_budget_saved, 0.3, 1e-12);
  EXPECT_TRUE(by["flat"].passes);
  EXPECT_FALSE(by["partial"].complete);
  EXPECT_FALSE(by["partial"].passes);
}

TEST(SelectionTest, UniformWinsWhenNothingPassesWithASaving) {
  std::map<std::string, std::map<std::string, RowEvidence>> e;
  e["loses"]["a"] = Row({-0.01, -0.02}, 0.0);
  e["ties"]["a"] = Row({0.0, 0.0}, 0.0);
  EXPECT_EQ(SelectByNonInferiority({"a"}, e, SelectionCriteria{}).winner, "uniform");
}

TEST(SelectionTest, RowBudgetFromTheAlphaCurve) {
  const std::vector<double> alphas = {0.2, 0.4, 1.0};
  // Uniform − candidate: −0.002 at 0.2, +0.002 at 0.4: the crossing is the log-midpoint
  // √(0.2·0.4), so the saving is 1 − 0.2/√0.08.
  std::vector<std::vector<double>> d = {{-0.002, -0.002}, {0.002, 0.002}, {0.004, 0.004}};
  ASSERT_TRUE(RowBudget(alphas, d).has_value());
  EXPECT_NEAR(*RowBudget(alphas, d), 1.0 - 0.2 / std::sqrt(0.08), 1e-12);
  // Uniform already as good at 0.2: nothing saved.
  d = {{0.001, 0.001}, {0.002, 0.002}, {0.003, 0.003}};
  EXPECT_EQ(*RowBudget(alphas, d), 0.0);
  // Never caught up although uniform improves: the lower bound 1 − 0.2/1.
  d = {{-0.003, -0.003}, {-0.002, -0.002}, {-0.001, -0.001}};
  EXPECT_NEAR(*RowBudget(alphas, d), 0.8, 1e-12);
  // Never caught up and uniform does not improve with α: undefined.
  d = {{-0.003, -0.003}, {-0.004, -0.004}, {-0.005, -0.005}};
  EXPECT_FALSE(RowBudget(alphas, d).has_value());
}

}  // namespace
}  // namespace graphsieve::eval

// The exposure discount t / n_i^η (PipelineOptions::exposure_power,
// docs/METHOD.md "Exposure discount"): the rate score of a pair is its
// undiscounted score divided by its item's impressions to the power η, the
// rule is fitted to α on the discounted scores, and the unseen-pair scorer
// divides by the item node's impressions the same way.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/maec/pipeline.h"
#include "core/maec/rates.h"
#include "core/model/node_default_fit.h"
#include "core/model/unseen.h"
#include "tests/maec/toy_graphs.h"

namespace graphsieve {
namespace {

using ::testing::HasSubstr;

PipelineOptions Options(double alpha, double eta) {
  PipelineOptions o;
  o.rate_rule = RateRule::kMixture;
  o.kappa = 1.0;
  o.alpha = alpha;
  o.exposure_power = eta;
  o.resistance = ResistanceMethod::kExact;
  return o;
}

// n_i by hand: the instances of every pair of item i.
std::vector<double> ItemImpressions(const PairTable& t) {
  std::vector<double> n(t.num_items(), 0.0);
  for (size_t p = 0; p < t.num_pairs(); ++p) n[t.pair_item[p]] += t.instances[p];
  return n;
}

// Every rate is min(1, ρ(t/h̄ + κ)) with t = s / n_i^η of the score s built
// with η = 0 and h̄ the mean of t over the negative instances; α is reached.
TEST(ExposureDiscount, RatesAreTheMixtureOfTheDiscountedScore) {
  PairTable t = *BuildPairTable(testing::PowerLawLog(40, 30, 14.0, 0.3, 9), 1);
  const std::vector<double> n = ItemImpressions(t);
  ASSERT_GT(*std::max_element(n.begin(), n.end()), 2 * *std::min_element(n.begin(), n.end()));
  absl::StatusOr<ConductanceResult> cond = ComputeConductance(t, Options(0.2, 0.0));
  ASSERT_TRUE(cond.ok()) << cond.status();
  const PipelineResult base = *RunPipelineWithConductance(t, *cond, Options(0.2, 0.0));
  EXPECT_EQ(base.model.exposure_power, 0.0);
  for (double eta : {0.5, 1.0, 2.0}) {
    for (double alpha : {0.05, 0.2, 0.9}) {
      absl::StatusOr<PipelineResult> r = RunPipelineWithConductance(t, *cond, Options(alpha, eta));
      ASSERT_TRUE(r.ok()) << r.status();
      double tw = 0, w = 0, kept = 0;
      std::vector<double> expected_t(t.num_pairs());
      for (size_t p = 0; p < t.num_pairs(); ++p) {
        expected_t[p] = double(base.score[p]) / std::pow(n[t.pair_item[p]], eta);
        EXPECT_NEAR(r->score[p], expected_t[p], 1e-6 * std::max(1e-3, expected_t[p]))
            << "eta " << eta << " pair " << p;
        tw += t.negatives[p] * expected_t[p], w += t.negatives[p];
        kept += t.negatives[p] * double(r->rate[p]);
      }
      EXPECT_NEAR(kept / w, alpha, 1e-6) << eta << " " << alpha;
      EXPECT_NEAR(r->model.score_mean, tw / w, 1e-6 * tw / w);
      EXPECT_DOUBLE_EQ(r->model.exposure_power, eta);
      for (size_t p = 0; p < t.num_pairs(); ++p) {
        EXPECT_NEAR(r->rate[p], std::min(1.0, r->rho * (expected_t[p] / (tw / w) + 1.0)), 1e-5)
            << "pair " << p;
      }
    }
  }
  // The discount moves the kept share from the most shown item to the least shown one.
  const PipelineResult one = *RunPipelineWithConductance(t, *cond, Options(0.2, 1.0));
  auto item_rate = [&](const PipelineResult& r, size_t item) {
    double kept = 0, neg = 0;
    for (size_t p = 0; p < t.num_pairs(); ++p)
      if (t.pair_item[p] == item) kept += t.negatives[p] * double(r.rate[p]), neg += t.negatives[p];
    return kept / std::max(neg, 1.0);
  };
  const size_t most = std::max_element(n.begin(), n.end()) - n.begin();
  const size_t least = std::min_element(n.begin(), n.end()) - n.begin();
  EXPECT_LT(item_rate(one, most) / item_rate(one, least),
            item_rate(base, most) / item_rate(base, least));
}

// The unseen-pair scorer with propagation off: min(1, ρ(z / n_i^η / h̄ + κ)),
// n_i from the item node's impressions (CountNodeImpressions, as the builder
// stores them).
TEST(ExposureDiscount, UnseenScorerDividesByTheItemsImpressions) {
  PairTable t = *BuildPairTable(testing::PowerLawLog(30, 25, 12.0, 0.35, 8), 1);
  PipelineOptions o = Options(0.2, 1.0);
  o.resistance = ResistanceMethod::kAuto;
  o.uncertainty_propagation = o.score_propagation = false;
  o.sketch_dim = 48;
  PipelineResult r = *RunPipeline(t, o);
  ASSERT_TRUE(CountNodeImpressions(t, &r.nodes).ok());
  const NodeTable& nt = r.nodes;
  const UnseenModel& m = r.model;
  ASSERT_EQ(m.exposure_power, 1.0);
  const std::vector<double> n = ItemImpressions(t);
  const size_t U = t.num_users();
  int checked = 0;
  for (size_t u = 0; u < U && checked < 20; ++u) {
    for (size_t i = U; i < nt.ids.size() && checked < 20; i += 3) {
      ASSERT_EQ(nt.records[i].impressions, n[i - U]);
      const double z = testing::UnseenZ(nt, m, u, i);
      const double expected = std::min(1.0, m.rho * (z / n[i - U] / m.score_mean + m.kappa));
      EXPECT_NEAR(
          ScoreUnseenPair({nt.records[u], nt.SketchRow(u)}, {nt.records[i], nt.SketchRow(i)}, m),
          expected, 1e-5);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 20);
}

TEST(ExposureDiscount, OutOfRangeIsNamed) {
  for (double bad : {-0.1, 2.5, std::nan(""), HUGE_VAL}) {
    EXPECT_THAT(Options(0.2, bad).Validate().message(), HasSubstr("exposure_power")) << bad;
  }
  EXPECT_TRUE(Options(0.2, 0.0).Validate().ok());
  EXPECT_TRUE(Options(0.2, 2.0).Validate().ok());
  EXPECT_DOUBLE_EQ(ExposureDiscount(0.6, 4.0, 0.5), 0.3);
  EXPECT_DOUBLE_EQ(ExposureDiscount(0.6, 0.0, 1.0), 0.6);  // an uncounted item counts as 1
  EXPECT_DOUBLE_EQ(ExposureDiscount(0.6, 9.0, 0.0), 0.6);
}

}  // namespace
}  // namespace graphsieve

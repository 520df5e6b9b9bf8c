// The hardness-to-rate transform t(s) = s^β (PipelineOptions::score_power,
// docs/METHOD.md "Rate rules"): rates are the rule applied to t, α is reached
// exactly on every log (sparse, α = 1, α below the uniform share, no
// positives), and the unseen-pair scorer applies the same transform.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "core/maec/pipeline.h"
#include "core/maec/rates.h"
#include "core/model/unseen.h"
#include "tests/maec/toy_graphs.h"

namespace graphsieve {
namespace {

using ::testing::HasSubstr;

double NegativeMean(const PairTable& t, const std::vector<float>& rate) {
  double sum = 0, w = 0;
  for (size_t p = 0; p < t.num_pairs(); ++p)
    sum += double(t.negatives[p]) * rate[p], w += t.negatives[p];
  return sum / w;
}

PipelineOptions Options(double alpha, double power) {
  PipelineOptions o;
  o.rate_rule = RateRule::kMixture;
  o.kappa = 0.1;
  o.alpha = alpha;
  o.score_power = power;
  o.resistance = ResistanceMethod::kExact;
  return o;
}

// Every rate is min(1, ρ(t/h̄ + κ)) with t = s^β of the score built with β = 1,
// h̄ the mean of t over the negative instances; the mean over negatives is α.
TEST(ScorePower, RatesAreTheMixtureOfThePoweredScore) {
  PairTable t = *BuildPairTable(testing::PowerLawLog(40, 30, 14.0, 0.3, 9), 1);
  absl::StatusOr<ConductanceResult> cond = ComputeConductance(t, Options(0.2, 1.0));
  ASSERT_TRUE(cond.ok()) << cond.status();
  const PipelineResult base = *RunPipelineWithConductance(t, *cond, Options(0.2, 1.0));
  for (double power : {0.5, 0.75, 1.5}) {
    for (double alpha : {0.05, 0.2, 0.5, 0.9, 1.0}) {
      absl::StatusOr<PipelineResult> r =
          RunPipelineWithConductance(t, *cond, Options(alpha, power));
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_NEAR(NegativeMean(t, r->rate), alpha, 1e-6) << power << " " << alpha;
      double tw = 0, w = 0;
      for (size_t p = 0; p < t.num_pairs(); ++p) {
        const double tp = std::pow(double(base.score[p]), power);
        EXPECT_NEAR(r->score[p], tp, 1e-6 * std::max(1.0, tp));
        tw += t.negatives[p] * tp, w += t.negatives[p];
      }
      EXPECT_NEAR(r->model.score_mean, tw / w, 1e-6 * tw / w);
      EXPECT_DOUBLE_EQ(r->model.score_power, power);
      for (size_t p = 0; p < t.num_pairs(); ++p) {
        const double expected =
            std::min(1.0, r->rho * (std::pow(double(base.score[p]), power) / (tw / w) + 0.1));
        EXPECT_NEAR(r->rate[p], expected, 1e-5) << "pair " << p;
      }
      if (alpha == 1.0) {
        for (float rate : r->rate) EXPECT_FLOAT_EQ(rate, 1.0f);
      }
    }
  }
}

TEST(ScorePower, SparseLogAlphaBelowTheUniformShareAndNoPositives) {
  // Sparse: most negatives have h = 0 (t = 0) and get only the uniform share.
  PairTable sparse = *BuildPairTable(testing::RandomLog(200, 150, 0.02, 0.015, 17), 1);
  for (double alpha : {0.001, 0.05, 0.2, 0.5, 0.9, 1.0}) {
    absl::StatusOr<PipelineResult> r = RunPipeline(sparse, Options(alpha, 0.5));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_NEAR(NegativeMean(sparse, r->rate), alpha, 1e-6) << alpha;
    for (float rate : r->rate) {
      EXPECT_GT(rate, 0.0f);
      EXPECT_LE(rate, 1.0f);
    }
  }
  PairTable none = *BuildPairTable(testing::RandomLog(15, 12, 0.5, 0.0, 5), 1);
  absl::StatusOr<PipelineResult> r = RunPipeline(none, Options(0.3, 0.5));
  ASSERT_TRUE(r.ok()) << r.status();
  for (float rate : r->rate) EXPECT_NEAR(rate, 0.3, 1e-6);
}

// The unseen-pair scorer with propagation off: min(1, ρ(z^β/h̄ + κ)).
TEST(ScorePower, UnseenScorerAppliesTheSamePower) {
  PairTable t = *BuildPairTable(testing::PowerLawLog(30, 25, 12.0, 0.35, 8), 1);
  PipelineOptions o = Options(0.2, 0.5);
  o.resistance = ResistanceMethod::kAuto;
  o.uncertainty_propagation = o.score_propagation = false;
  o.sketch_dim = 48;
  PipelineResult r = *RunPipeline(t, o);
  const NodeTable& nt = r.nodes;
  const UnseenModel& m = r.model;
  const size_t U = t.num_users();
  int checked = 0;
  for (size_t u = 0; u < U && checked < 20; ++u) {
    for (size_t i = U; i < nt.ids.size() && checked < 20; i += 3) {
      const double z = testing::UnseenZ(nt, m, u, i);
      const double expected = std::min(1.0, m.rho * (std::sqrt(z) / m.score_mean + m.kappa));
      EXPECT_NEAR(
          ScoreUnseenPair({nt.records[u], nt.SketchRow(u)}, {nt.records[i], nt.SketchRow(i)}, m),
          expected, 1e-5);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 20);
}

TEST(ScorePower, OutOfRangeIsNamed) {
  for (double bad : {0.0, -1.0, 4.5, std::nan("")}) {
    EXPECT_THAT(Options(0.2, bad).Validate().message(), HasSubstr("score_power")) << bad;
  }
  EXPECT_DOUBLE_EQ(ScorePower(0.25, 0.5), 0.5);
  EXPECT_DOUBLE_EQ(ScorePower(0.3, 1.0), 0.3);
  EXPECT_DOUBLE_EQ(ScorePower(0.0, 0.5), 0.0);
}

}  // namespace
}  // namespace graphsieve

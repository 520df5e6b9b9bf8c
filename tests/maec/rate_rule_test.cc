// Rate rules (rates.h, docs/METHOD.md "Rate rules"): the mixture rule reaches
// every α exactly on every log; the floor rule says when α is unreachable;
// the pipeline and the unseen-pair scorer follow the selected rule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "core/maec/pipeline.h"
#include "core/maec/rates.h"
#include "core/model/unseen.h"
#include "tests/maec/toy_graphs.h"

namespace graphsieve {
namespace {

using ::testing::HasSubstr;

constexpr double kAlphas[] = {0.05, 0.2, 0.5, 0.9, 1.0};

// Σ w π / Σ w over negative instances, from the float rates the builder stores.
double NegativeMean(const PairTable& t, const std::vector<float>& rate) {
  double sum = 0, w = 0;
  for (size_t p = 0; p < t.num_pairs(); ++p)
    sum += double(t.negatives[p]) * rate[p], w += t.negatives[p];
  return sum / w;
}

TEST(FitMixtureRates, EveryAlphaExactlyWithZerosAndTies) {
  std::mt19937_64 rng(3);
  std::exponential_distribution<double> expo(2.0);
  std::vector<double> s;
  std::vector<uint32_t> w;
  for (int i = 0; i < 5000; ++i) {
    s.push_back(i % 3 == 0 ? 0.0 : expo(rng));  // a third score 0: the floor rule tops out below 1
    if (i % 101 == 0) s.back() = s[i / 2];
    w.push_back(static_cast<uint32_t>(i % 4));
  }
  for (double kappa : {0.05, 0.25, 2.0}) {
    for (double alpha : kAlphas) {
      std::vector<double> rates;
      absl::StatusOr<RateFit> fit = FitMixtureRates(s, w, alpha, kappa, &rates, 2);
      ASSERT_TRUE(fit.ok()) << fit.status();
      double sum = 0, tw = 0, sw = 0;
      for (size_t i = 0; i < s.size(); ++i) sum += w[i] * rates[i], tw += w[i], sw += w[i] * s[i];
      EXPECT_NEAR(sum / tw, alpha, 1e-9) << "kappa " << kappa;
      EXPECT_NEAR(fit->achieved_mean, alpha, 1e-9);
      EXPECT_NEAR(fit->score_mean, sw / tw, 1e-12);
      for (size_t i = 0; i < s.size(); ++i) {
        EXPECT_DOUBLE_EQ(rates[i], std::min(1.0, fit->rho * (s[i] / fit->score_mean + kappa)));
        // Bounded importance weights: π ≥ min(1, ρκ).
        EXPECT_GE(rates[i], std::min(1.0, fit->rho * kappa) * (1 - 1e-12));
      }
    }
  }
  // The floor rule cannot reach α = 0.9 here, and says so.
  absl::StatusOr<RateFit> floor = FitRates(s, w, 0.9, 0.01, nullptr, 1);
  EXPECT_THAT(floor.status().message(), HasSubstr("unreachable"));
}

TEST(FitMixtureRates, AlphaOneKeepsEverything) {
  std::vector<double> s = {0.0, 0.5, 3.0, 0.01};
  std::vector<uint32_t> w = {1, 2, 1, 5};
  std::vector<double> rates;
  ASSERT_TRUE(FitMixtureRates(s, w, 1.0, 0.1, &rates).ok());
  for (double r : rates) EXPECT_NEAR(r, 1.0, 1e-12);
}

TEST(FitMixtureRates, AllScoresZeroOrNoNegativesGiveUniformAlpha) {
  std::vector<double> rates;
  absl::StatusOr<RateFit> fit = FitMixtureRates({0.0, 0.0, 0.0}, {1, 3, 0}, 0.3, 0.2, &rates);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_EQ(fit->score_mean, 0.0);
  for (double r : rates) EXPECT_NEAR(r, 0.3, 1e-15);
  // No negative instances: nothing to subsample, every entry gets α.
  fit = FitMixtureRates({0.4, 0.0, 2.0}, {0, 0, 0}, 0.3, 0.2, &rates);
  ASSERT_TRUE(fit.ok()) << fit.status();
  for (double r : rates) EXPECT_NEAR(r, 0.3, 1e-15);
}

TEST(FitMixtureRates, BadArgumentsAreNamed) {
  // alpha and kappa are validated where they enter (PipelineOptions::Validate) and
  // asserted in debug builds; the scores are data and are checked here.
  EXPECT_THAT(FitMixtureRates({-1.0}, {1}, 0.2, 0.1, nullptr).status().message(),
              HasSubstr("score 0"));
  EXPECT_THAT(ParseRateRule("floors").status().message(), HasSubstr("floor or mixture"));
  EXPECT_EQ(*ParseRateRule("mixture"), RateRule::kMixture);
}

PipelineOptions Mixture(double alpha) {
  PipelineOptions o;
  o.rate_rule = RateRule::kMixture;
  o.kappa = 0.25;  // explicit: the tests' expectations do not follow the default κ
  o.alpha = alpha;
  o.resistance = ResistanceMethod::kExact;
  return o;
}

// A sparse log: 200 users × 150 items, 2% density, 1.5% positive instances,
// so most users have no positive and most negatives join two components or
// touch a node without a positive (h = 0).
ImpressionLog SparseLog() { return testing::RandomLog(200, 150, 0.02, 0.015, 17); }

TEST(MixtureRule, SparseLogReachesEveryAlphaInStoredFloats) {
  PairTable t = *BuildPairTable(SparseLog(), 1);
  std::vector<int> user_has_positive(t.num_users(), 0);
  for (size_t p = 0; p < t.num_pairs(); ++p) user_has_positive[t.pair_user[p]] |= t.label[p];
  const int users_with_positive = std::count(user_has_positive.begin(), user_has_positive.end(), 1);
  ASSERT_LT(users_with_positive, static_cast<int>(t.num_users()) / 2);  // the premise of the test
  absl::StatusOr<ConductanceResult> cond = ComputeConductance(t, Mixture(0.2));
  ASSERT_TRUE(cond.ok()) << cond.status();
  int zero_hardness = 0;
  for (size_t p = 0; p < t.num_pairs(); ++p)
    zero_hardness += !t.label[p] && cond->hardness[p] == 0.0f;
  EXPECT_GT(zero_hardness, static_cast<int>(t.num_pairs()) / 2);
  for (bool propagation : {false, true}) {
    for (Method method : {Method::kMaec, Method::kUniform}) {
      for (double alpha : kAlphas) {
        PipelineOptions o = Mixture(alpha);
        o.method = method;
        o.uncertainty_propagation = o.score_propagation = propagation;
        absl::StatusOr<PipelineResult> r = RunPipelineWithConductance(t, *cond, o);
        ASSERT_TRUE(r.ok()) << r.status();
        EXPECT_NEAR(NegativeMean(t, r->rate), alpha, 1e-6)
            << alpha << " propagation " << propagation;
        EXPECT_NEAR(r->achieved_negative_mean_rate, alpha, 1e-9);
        for (float rate : r->rate) {
          EXPECT_GT(rate, 0.0f);
          EXPECT_LE(rate, 1.0f);
        }
      }
    }
    // The floor rule on the same log: a high α is unreachable, and the error says why.
    PipelineOptions f = Mixture(0.9);
    f.rate_rule = RateRule::kFloor;
    f.uncertainty_propagation = f.score_propagation = propagation;
    if (!propagation) {
      EXPECT_THAT(RunPipelineWithConductance(t, *cond, f).status().message(),
                  HasSubstr("unreachable"));
    }
  }
}

TEST(MixtureRule, AlphaAtOrBelowAnyFloor) {
  PairTable t = *BuildPairTable(testing::RandomLog(20, 18, 0.5, 0.25, 4), 1);
  PipelineOptions o = Mixture(0.005);
  o.floor = 0.3;  // unused by the mixture rule
  absl::StatusOr<PipelineResult> r = RunPipeline(t, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NEAR(NegativeMean(t, r->rate), 0.005, 1e-6);
  o.rate_rule = RateRule::kFloor;  // the floor rule refuses, naming the mixture rule
  EXPECT_THAT(o.Validate().message(), HasSubstr("rate rule 'mixture' reaches every alpha"));
}

TEST(MixtureRule, NoPositivesGivesUniformAlpha) {
  ImpressionLog log = testing::RandomLog(15, 12, 0.5, 0.0, 5);
  PairTable t = *BuildPairTable(log, 1);
  for (double alpha : kAlphas) {
    absl::StatusOr<PipelineResult> r = RunPipeline(t, Mixture(alpha));
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->positive_pairs, 0u);
    for (float rate : r->rate) EXPECT_NEAR(rate, alpha, 1e-6);
  }
}

TEST(MixtureRule, NoNegativesGivesAlphaAndTheFloorRuleSaysWhy) {
  ImpressionLog log = testing::RandomLog(10, 10, 0.5, 1.0, 6);
  PairTable t = *BuildPairTable(log, 1);
  ASSERT_EQ(t.total_negatives, 0u);
  absl::StatusOr<PipelineResult> r = RunPipeline(t, Mixture(0.2));
  ASSERT_TRUE(r.ok()) << r.status();
  for (float rate : r->rate) EXPECT_NEAR(rate, 0.2, 1e-6);
  PipelineOptions f = Mixture(0.2);
  f.rate_rule = RateRule::kFloor;
  EXPECT_THAT(RunPipeline(t, f).status().message(), HasSubstr("no negative instances"));
}

TEST(MixtureRule, EnsembleMembersKeepTheirOwnKappa) {
  ImpressionLog log = testing::RandomLog(25, 20, 0.5, 0.25, 8);
  std::mt19937_64 rng(2);
  std::uniform_real_distribution<float> unif(0, 1);
  for (size_t i = 0; i < log.size(); ++i) log.pilot_scores.push_back(unif(rng));
  PairTable t = *BuildPairTable(log, 1);
  for (Method m : {Method::kOpt, Method::kMax, Method::kMean, Method::kProduct}) {
    for (double alpha : kAlphas) {
      PipelineOptions o = Mixture(alpha);
      o.method = m;
      o.kappa = 0.1;
      o.pilot_kappa = 1.5;
      o.product_kappa = 0.4;
      absl::StatusOr<PipelineResult> r = RunPipeline(t, o);
      ASSERT_TRUE(r.ok()) << MethodName(m) << ": " << r.status();
      EXPECT_NEAR(NegativeMean(t, r->rate), alpha, 1e-6) << MethodName(m);
    }
  }
  // opt alone uses the pilot's κ: π = min(1, ρ(s/h̄ + 1.5)).
  PipelineOptions o = Mixture(0.2);
  o.method = Method::kOpt;
  o.kappa = 0.1;
  o.pilot_kappa = 1.5;
  PipelineResult r = *RunPipeline(t, o);
  double sw = 0, w = 0;
  for (size_t p = 0; p < t.num_pairs(); ++p)
    sw += t.negatives[p] * double(t.pilot_mean[p]), w += t.negatives[p];
  for (size_t p = 0; p < t.num_pairs(); ++p) {
    EXPECT_NEAR(r.rate[p], std::min(1.0, r.rho * (t.pilot_mean[p] / (sw / w) + 1.5)), 1e-6);
  }
}

// The unseen-pair scorer with propagation off follows the mixture rule:
// π = min(1, ρ(z/h̄ + κ)), z the min-max normalised sketch conductance.
TEST(MixtureRule, UnseenScorerWithoutPropagation) {
  PairTable t = *BuildPairTable(testing::PowerLawLog(30, 25, 12.0, 0.35, 8), 1);
  PipelineOptions o = Mixture(0.2);
  o.resistance = ResistanceMethod::kAuto;
  o.uncertainty_propagation = o.score_propagation = false;
  o.sketch_dim = 48;
  PipelineResult r = *RunPipeline(t, o);
  const NodeTable& nt = r.nodes;
  const UnseenModel& m = r.model;
  EXPECT_EQ(m.rate_rule, static_cast<int>(RateRule::kMixture));
  EXPECT_DOUBLE_EQ(m.kappa, 0.25);
  double sw = 0, w = 0;
  for (size_t p = 0; p < t.num_pairs(); ++p)
    sw += t.negatives[p] * double(r.score[p]), w += t.negatives[p];
  EXPECT_NEAR(m.score_mean, sw / w, 1e-6);
  int checked = 0;
  const size_t U = t.num_users();
  for (size_t u = 0; u < U && checked < 20; ++u) {
    for (size_t i = U; i < nt.ids.size() && checked < 20; i += 3) {
      double rs = 0;
      for (int j = 0; j < nt.sketch_dim; ++j)
        rs += std::pow(nt.SketchRow(u)[j] - nt.SketchRow(i)[j], 2);
      const double g = nt.records[u].component == nt.records[i].component ? 1.0 / rs : 0.0;
      const double z = std::clamp((g - m.geff_min) / (m.geff_max - m.geff_min), 0.0, 1.0);
      const double expected = std::min(1.0, m.rho * (z / m.score_mean + m.kappa));
      EXPECT_NEAR(
          ScoreUnseenPair({nt.records[u], nt.SketchRow(u)}, {nt.records[i], nt.SketchRow(i)}, m),
          expected, 1e-5);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 20);
  // Across components only the uniform share is left: min(1, ρκ).
  NodeRecord other = nt.records[U];
  other.component = nt.records[0].component + 1;
  EXPECT_NEAR(ScoreUnseenPair({nt.records[0], nt.SketchRow(0)}, {other, nt.SketchRow(U)}, m),
              std::min(1.0, m.rho * (std::clamp(-m.geff_min / (m.geff_max - m.geff_min), 0.0, 1.0) /
                                         m.score_mean +
                                     m.kappa)),
              1e-6);
}

// Unknown nodes (RATE_SOURCE_DEFAULT with --default-policy=model): an unknown
// node is a node with no pairs, so the pair is an unseen pair of conductance 0.
TEST(MixtureRule, UnknownNodePairIsAnUnseenPairWithAnEmptyNode) {
  PairTable t = *BuildPairTable(testing::PowerLawLog(30, 25, 12.0, 0.35, 8), 1);
  PipelineResult r = *RunPipeline(t, Mixture(0.2));
  const NodeTable& nt = r.nodes;
  const UnseenModel& m = r.model;
  const NodeView user{nt.records[0], nt.SketchRow(0)};
  NodeView empty;
  empty.record.component = 123456;  // a component of its own, no pairs, no sketch row
  EXPECT_FLOAT_EQ(ScoreUnknownNodePair(&user, nullptr, m), ScoreUnseenPair(user, empty, m));
  const double z0 = std::clamp(-m.geff_min / (m.geff_max - m.geff_min), 0.0, 1.0);
  EXPECT_NEAR(ScoreUnknownNodePair(nullptr, nullptr, m),
              std::min(1.0, m.rho * (z0 / m.score_mean + m.kappa)), 1e-6);
  UnseenModel uniform = m;
  uniform.method = static_cast<int>(Method::kUniform);
  EXPECT_FLOAT_EQ(ScoreUnknownNodePair(&user, nullptr, uniform), 0.2f);
  UnseenModel opt = m;
  opt.method = static_cast<int>(Method::kOpt);
  EXPECT_FLOAT_EQ(ScoreUnknownNodePair(nullptr, &user, opt), nt.records[0].mean_rate);
  EXPECT_FLOAT_EQ(ScoreUnknownNodePair(nullptr, nullptr, opt), 0.2f);
}

}  // namespace
}  // namespace graphsieve

// RunPipeline end to end on small logs: counterfactual hardness, methods,
// node records and the unseen-pair scorer.
#include "core/maec/pipeline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "core/model/unseen.h"
#include "tests/maec/toy_graphs.h"

namespace graphsieve {
namespace {

PipelineOptions Exact() {
  PipelineOptions o;
  o.resistance = ResistanceMethod::kExact;
  o.solver_tolerance = 1e-12;
  return o;
}

TEST(Pipeline, PositiveEdgeHardnessIsConductanceWithoutTheEdge) {
  ImpressionLog log = testing::RandomLog(14, 12, 0.4, 0.3, 9);
  PairTable t = *BuildPairTable(log, 1);
  PipelineResult r = *RunPipeline(t, Exact());
  int checked = 0, bridges = 0;
  for (size_t p = 0; p < t.num_pairs(); ++p) {
    if (!t.label[p]) continue;
    PairTable without = t;
    without.label[p] = 0;  // the edge removed from the positive graph
    const double rr = testing::ReferenceResistance(without)[p];
    const double g_without = std::isinf(rr) ? 0.0 : 1.0 / rr;
    EXPECT_NEAR(r.hardness[p], g_without, 1e-4 * std::max(1.0, g_without)) << p;
    EXPECT_NEAR(r.geff[p], 1.0 + g_without, 1e-4 * (1.0 + g_without));
    bridges += g_without == 0.0;
    ++checked;
  }
  EXPECT_GT(checked, 10);
  EXPECT_GT(bridges, 0);  // the case h = 0 is covered too
}

TEST(Pipeline, NegativePairHardnessIsItsConductance) {
  PairTable t = *BuildPairTable(testing::RandomLog(10, 10, 0.5, 0.3, 4), 1);
  PipelineResult r = *RunPipeline(t, Exact());
  const std::vector<double> ref = testing::ReferenceResistance(t);
  for (size_t p = 0; p < t.num_pairs(); ++p) {
    if (t.label[p]) continue;
    EXPECT_NEAR(r.hardness[p], std::isinf(ref[p]) ? 0.0 : 1.0 / ref[p], 1e-5) << p;
  }
}

TEST(Pipeline, RoutesAgreeAndAutoIsRecorded) {
  PairTable t = *BuildPairTable(testing::PowerLawLog(80, 60, 25.0, 0.3, 2), 2);
  PipelineOptions o = Exact();
  PipelineResult dense = *RunPipeline(t, o);
  o.resistance = ResistanceMethod::kOneSided;
  PipelineResult one = *RunPipeline(t, o);
  o.resistance = ResistanceMethod::kAuto;
  o.exact_max_nodes = 10;
  PipelineResult autor = *RunPipeline(t, o);
  EXPECT_EQ(dense.resistance_route, "dense");
  EXPECT_EQ(one.resistance_route, "one-sided");
  EXPECT_EQ(autor.resistance_route, "one-sided");
  for (size_t p = 0; p < t.num_pairs(); ++p) {
    EXPECT_NEAR(one.geff[p], dense.geff[p], 1e-5 * std::max(1.0f, dense.geff[p]));
    EXPECT_NEAR(one.rate[p], dense.rate[p], 1e-5);
  }
  EXPECT_FALSE(one.solves.empty());
  for (const SolveSummary& s : one.solves) EXPECT_TRUE(s.converged) << s.message;
}

TEST(Pipeline, EveryMethodMeetsAlphaOverNegativeInstances) {
  ImpressionLog log = testing::PowerLawLog(60, 50, 20.0, 0.2, 3);
  for (size_t i = 0; i < log.size(); ++i)
    log.pilot_scores.push_back(float((i * 37) % 100) / 100.0f);
  PairTable t = *BuildPairTable(log, 2);
  for (const char* name : {"maec", "uniform", "opt", "max", "mean", "product"}) {
    for (bool correct : {false, true}) {
      PipelineOptions o;
      o.method = *ParseMethod(name);
      o.correct_pilot = correct;
      o.alpha = 0.25;
      absl::StatusOr<PipelineResult> r = RunPipeline(t, o);
      ASSERT_TRUE(r.ok()) << name << ": " << r.status();
      double sum = 0;
      for (size_t p = 0; p < t.num_pairs(); ++p) {
        sum += double(t.negatives[p]) * r->rate[p];
        EXPECT_GE(r->rate[p],
                  o.method == Method::kProduct ? o.product_floor - 1e-7 : o.floor - 1e-7);
        EXPECT_LE(r->rate[p], 1.0f);
      }
      EXPECT_NEAR(r->achieved_negative_mean_rate, 0.25, 1e-9) << name;
      EXPECT_NEAR(sum / t.total_negatives, 0.25, 1e-6) << name;  // float rates
    }
  }
  PairTable no_pilot = *BuildPairTable(testing::PowerLawLog(20, 20, 8.0, 0.2, 3), 1);
  PipelineOptions o;
  o.method = Method::kOpt;
  absl::StatusOr<PipelineResult> r = RunPipeline(no_pilot, o);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(r.status().message()), ::testing::HasSubstr("pilot"));
}

TEST(Pipeline, ConductanceOnceThenMethods) {
  ImpressionLog log = testing::PowerLawLog(40, 30, 12.0, 0.25, 6);
  for (size_t i = 0; i < log.size(); ++i)
    log.pilot_scores.push_back(float((i * 13) % 100) / 100.0f);
  PairTable t = *BuildPairTable(log, 2);
  PipelineOptions o;
  const ConductanceResult c = *ComputeConductance(t, o);
  for (Method m : {Method::kMaec, Method::kMax}) {
    o.method = m;
    const PipelineResult whole = *RunPipeline(t, o);
    const PipelineResult split = *RunPipelineWithConductance(t, c, o);
    EXPECT_EQ(whole.rate, split.rate);
    EXPECT_EQ(whole.nodes.sketch, split.nodes.sketch);
  }
  PairTable other = *BuildPairTable(testing::PowerLawLog(10, 10, 5.0, 0.25, 1), 1);
  o.method = Method::kMaec;
  EXPECT_EQ(RunPipelineWithConductance(other, c, o).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(Pipeline, OptionsAreValidated) {
  PipelineOptions o;
  o.rate_rule = RateRule::kFloor;  // the floor is only checked under its rule
  o.floor = 0.3;
  EXPECT_THAT(std::string(o.Validate().message()),
              ::testing::HasSubstr("floor must be in [0, alpha)"));
  o = PipelineOptions();
  o.gamma = 1.0;
  EXPECT_THAT(std::string(o.Validate().message()), ::testing::HasSubstr("gamma"));
  // Below kMinAlpha the rates underflow or the negative-mean gate cannot check them.
  o = PipelineOptions();
  o.alpha = 1e-300;
  EXPECT_EQ(std::string(o.Validate().message()),
            absl::StrCat("alpha must be in [", kMinAlpha, ", 1], got 1e-300"));
  o.alpha = kMinAlpha;
  EXPECT_TRUE(o.Validate().ok());
  EXPECT_FALSE(ParseMethod("maecx").ok());
  EXPECT_EQ(*ParseResistanceMethod("one-sided"), ResistanceMethod::kOneSided);
  EXPECT_STREQ(ResistanceMethodName(*ParseResistanceMethod("sketch")), "sketch");
}

class Unseen : public ::testing::TestWithParam<bool> {};

TEST_P(Unseen, ScorerIsOnePropagationStepFromNodeSums) {
  const bool symmetric = GetParam();
  // The builder sees every pair but (u0, i_last) of a connected toy log.
  ImpressionLog full = testing::PowerLawLog(30, 25, 12.0, 0.35, 8);
  ImpressionLog seen;
  const uint64_t hu = full.user_ids[0], hi = full.item_ids[0];
  for (size_t i = 0; i < full.size(); ++i) {
    if (full.user_ids[i] == hu && full.item_ids[i] == hi) continue;
    seen.user_ids.push_back(full.user_ids[i]);
    seen.item_ids.push_back(full.item_ids[i]);
    seen.labels.push_back(full.labels[i]);
  }
  PairTable t = *BuildPairTable(seen, 1);
  PipelineOptions o;
  o.rate_rule = RateRule::kFloor;  // the by-hand rate below is the floor rule's clip
  o.symmetric_normalisation = symmetric;
  o.sketch_dim = 48;
  PipelineResult r = *RunPipeline(t, o);
  const NodeTable& nt = r.nodes;
  const size_t U = t.num_users();
  const size_t un = std::lower_bound(t.user_ids.begin(), t.user_ids.end(), hu) - t.user_ids.begin();
  const size_t in =
      U + (std::lower_bound(t.item_ids.begin(), t.item_ids.end(), hi) - t.item_ids.begin());
  ASSERT_EQ(nt.ids[un], hu);
  ASSERT_EQ(nt.ids[in], hi);

  // Node sums recomputed from the per-pair outputs.
  std::vector<uint32_t> deg(nt.ids.size(), 0);
  for (size_t p = 0; p < t.num_pairs(); ++p) ++deg[t.pair_user[p]], ++deg[U + t.pair_item[p]];
  double mb_u = 0, mb_i = 0, ms_u = 0, ms_i = 0;
  for (size_t p = 0; p < t.num_pairs(); ++p) {
    const size_t a = t.pair_user[p], b = U + t.pair_item[p];
    const double w = symmetric ? 1.0 / std::sqrt(double(deg[a] + deg[b] - 2)) : 1.0;
    if (a == un) mb_u += w * r.uncertainty[p], ms_u += w * r.propagated_score[p];
    if (b == in) mb_i += w * r.uncertainty[p], ms_i += w * r.propagated_score[p];
  }
  EXPECT_NEAR(nt.records[un].sum_uncertainty, mb_u, 1e-4);
  EXPECT_NEAR(nt.records[in].sum_score, ms_i, 1e-4);
  EXPECT_EQ(nt.records[un].degree, deg[un]);

  // By hand: conductance from the sketch rows, min-max, one step each.
  double rs = 0;
  for (int j = 0; j < nt.sketch_dim; ++j) {
    const double d = nt.SketchRow(un)[j] - nt.SketchRow(in)[j];
    rs += d * d;
  }
  const bool same = nt.records[un].component == nt.records[in].component;
  const double g = same ? 1.0 / rs : 0.0;
  const UnseenModel& m = r.model;
  const double z = std::clamp((g - m.geff_min) / (m.geff_max - m.geff_min), 0.0, 1.0);
  const double d = deg[un] + deg[in];
  const double norm = symmetric ? std::sqrt(d) : d;
  const double b = (1 - m.gamma) * z + m.gamma * (mb_u + mb_i) / norm;
  const double s = (1 - m.gamma) * b + m.gamma * (ms_u + ms_i) / norm;
  const double expected = std::clamp(m.rho * s, m.floor, 1.0);
  const float got =
      ScoreUnseenPair({nt.records[un], nt.SketchRow(un)}, {nt.records[in], nt.SketchRow(in)}, m);
  EXPECT_NEAR(got, expected, 1e-5);
  EXPECT_GT(g, 0.0);  // the toy graph keeps the held-out pair inside one component

  // Across components the conductance term vanishes.
  NodeRecord other = nt.records[in];
  other.component += 1;
  const double s0 =
      (1 - m.gamma) *
          ((1 - m.gamma) * std::clamp(-m.geff_min / (m.geff_max - m.geff_min), 0.0, 1.0) +
           m.gamma * (mb_u + mb_i) / norm) +
      m.gamma * (ms_u + ms_i) / norm;
  EXPECT_NEAR(ScoreUnseenPair({nt.records[un], nt.SketchRow(un)}, {other, nt.SketchRow(in)}, m),
              std::clamp(m.rho * s0, m.floor, 1.0), 1e-5);
}

INSTANTIATE_TEST_SUITE_P(EdgeRuleAndSymmetric, Unseen, ::testing::Bool());

TEST(Unseen, MeanRateIsOverNegativeInstances) {
  PairTable t = *BuildPairTable(testing::RandomLog(8, 8, 0.6, 0.3, 1), 1);
  PipelineResult r = *RunPipeline(t, PipelineOptions());
  double num = 0, den = 0;
  for (size_t p = 0; p < t.num_pairs(); ++p) {
    if (t.pair_user[p] != 0) continue;
    num += double(t.negatives[p]) * r.rate[p];
    den += t.negatives[p];
  }
  ASSERT_GT(den, 0);
  EXPECT_NEAR(r.nodes.records[0].mean_rate, num / den, 1e-6);
  UnseenModel uniform = r.model;
  uniform.method = static_cast<int>(Method::kUniform);
  EXPECT_FLOAT_EQ(ScoreUnseenPair({r.nodes.records[0], {}}, {r.nodes.records[9], {}}, uniform),
                  0.2f);
}

}  // namespace
}  // namespace graphsieve

// Counterfactual positives (docs/METHOD.md "Counterfactual positives"): the
// rate of a positive pair is the rate it would get as a negative. Checked
// against the self-influence of a dense line-graph operator, against
// rebuilds with the pair's label flipped (graph held fixed: exact; full
// rebuild of a generated log: median relative difference), with and without
// propagation.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/maec/pipeline.h"
#include "core/maec/propagation.h"
#include "gen/generator.h"
#include "tests/maec/toy_graphs.h"

namespace graphsieve {
namespace {

// max over p's line-graph neighbours q of 1/d_q: the bound of the omitted tail.
std::vector<double> TailScale(const PairTable& t) {
  const std::vector<uint32_t> deg = NodeDegrees(t);
  const size_t U = t.num_users();
  auto d = [&](size_t q) { return double(deg[t.pair_user[q]]) + deg[U + t.pair_item[q]] - 2.0; };
  std::vector<double> c(t.num_pairs(), 0.0);
  for (size_t p = 0; p < t.num_pairs(); ++p) {
    for (size_t q = 0; q < t.num_pairs(); ++q) {
      if (q != p && (t.pair_user[p] == t.pair_user[q] || t.pair_item[p] == t.pair_item[q])) {
        c[p] = std::max(c[p], 1.0 / d(q));
      }
    }
  }
  return c;
}

class SelfInfluenceTest : public ::testing::TestWithParam<bool> {};

TEST_P(SelfInfluenceTest, MatchesDenseResolventDiagonalWithinTheTailBound) {
  const bool symmetric = GetParam();
  ImpressionLog log = testing::RandomLog(9, 8, 0.35, 0.3, 13);
  log.user_ids.push_back(77);  // an isolated pair: M_pp = 1
  log.item_ids.push_back(99);
  log.labels.push_back(1);
  PairTable t = *BuildPairTable(log, 1);
  ASSERT_EQ(t.user_ids[t.pair_user[0]], 77u);
  const Eigen::MatrixXd s = testing::LineGraphOperator(t, symmetric);
  const std::vector<double> c = TailScale(t);
  const int n = static_cast<int>(t.num_pairs());
  for (double gamma : {0.2, 0.5, 0.8}) {
    const Eigen::MatrixXd m = (1 - gamma) * (Eigen::MatrixXd::Identity(n, n) - gamma * s).inverse();
    const std::vector<double> est = SelfInfluence(t, NodeDegrees(t), gamma);
    double worst = 0;
    for (int p = 0; p < n; ++p) {
      const double tail = m(p, p) - est[p];
      EXPECT_GE(tail, -1e-12) << p;  // the omitted terms are non-negative
      EXPECT_LE(tail, std::pow(gamma, 4) * c[p] + 1e-12) << p << " gamma " << gamma;
      worst = std::max(worst, tail);
    }
    EXPECT_EQ(est[0], 1.0);  // the isolated pair (77, 99) sorts first (smallest user id)
    std::printf("gamma %.1f: worst omitted tail of M_pp %.2e\n", gamma, worst);
  }
}
INSTANTIATE_TEST_SUITE_P(EdgeRuleAndSymmetric, SelfInfluenceTest, ::testing::Bool());

// The premise: x* = M x⁽⁰⁾, so moving one initial value by Δ moves that
// pair's fixed point by exactly M_pp·Δ (dense M, O(pairs) iteration).
TEST(SelfInfluenceTest, OneInitialValueMovesItsFixedPointByMppDelta) {
  PairTable t = *BuildPairTable(testing::RandomLog(10, 9, 0.4, 0.3, 3), 1);
  const int n = static_cast<int>(t.num_pairs());
  const double gamma = 0.5;
  const Eigen::MatrixXd m =
      (1 - gamma) *
      (Eigen::MatrixXd::Identity(n, n) - gamma * testing::LineGraphOperator(t, false)).inverse();
  PropagationOptions po;
  po.gamma = gamma;
  po.tolerance = 1e-15;
  po.max_iterations = 100000;
  std::vector<double> x0(n);
  for (int p = 0; p < n; ++p) x0[p] = 0.1 + 0.8 * ((p * 37) % 11) / 11.0;
  std::vector<double> base = x0;
  Propagate(t, NodeDegrees(t), po, &base);
  for (int p : {0, n / 2, n - 1}) {
    std::vector<double> moved = x0;
    moved[p] += 0.3;
    Propagate(t, NodeDegrees(t), po, &moved);
    EXPECT_NEAR(moved[p] - base[p], 0.3 * m(p, p), 1e-10);
  }
}

// One pair's label flipped with the graph half held fixed (the positive's
// hardness already is G_eff without its edge): only the label's way through
// propagation differs. With c = max_{q∼p} 1/d_q, ΔB = 2z − 1 (p's initial
// uncertainty as a negative minus as a positive) and ΔZ = B̂ᶜᶠ − (1 − B̂) (its
// initial score likewise), the counterfactual score differs from the flipped
// build by at most
//   uncertainty step only: γ⁴c|ΔB|                      (the omitted tail of M_pp)
//   score step only:       0                            (Ẑ⁽⁰⁾ = z for either label)
//   both:                  γ⁴c(|ΔB| + |ΔZ|) + (1 − M_pp)·γc·|ΔB|
// the last term bounding p's label's effect on its neighbours' scores,
// Σ_{q≠p} M_pq M_qp ≤ (1 − M_pp)·max_q M_qp ≤ (1 − M_pp)·γc (edge rule: M's rows sum to 1).
struct FlipCase {
  bool uncertainty, score;
};

class FixedGraphFlip : public ::testing::TestWithParam<FlipCase> {};

TEST_P(FixedGraphFlip, CounterfactualScoreEqualsTheFlippedBuild) {
  const FlipCase fc = GetParam();
  PairTable t = *BuildPairTable(testing::RandomLog(14, 12, 0.4, 0.3, 9), 1);
  PipelineOptions o;
  o.resistance = ResistanceMethod::kExact;
  o.solver_tolerance = 1e-12;
  o.propagation_tolerance = 1e-14;
  o.propagation_max_iterations = 100000;
  o.uncertainty_propagation = fc.uncertainty;
  o.score_propagation = fc.score;
  const ConductanceResult cond = *ComputeConductance(t, o);
  const PipelineResult orig = *RunPipelineWithConductance(t, cond, o);
  o.counterfactual_positives = false;
  const PipelineResult plain = *RunPipelineWithConductance(t, cond, o);
  o.counterfactual_positives = true;
  const std::vector<double> c = TailScale(t);
  const std::vector<double> self = SelfInfluence(t, NodeDegrees(t), o.gamma);
  const double g4 = std::pow(o.gamma, 4);
  double hmin = 1e300, hmax = -1e300;
  for (float h : cond.hardness) hmin = std::min<double>(hmin, h), hmax = std::max<double>(hmax, h);
  int checked = 0;
  double worst = 0, worst_plain = 0;
  for (size_t p = 0; p < t.num_pairs(); ++p) {
    if (!t.label[p]) continue;
    PairTable flipped = t;
    flipped.label[p] = 0;
    flipped.negatives[p] = flipped.instances[p];
    flipped.total_negatives += flipped.instances[p] - t.negatives[p];
    const PipelineResult f = *RunPipelineWithConductance(flipped, cond, o);
    const double z = (cond.hardness[p] - hmin) / (hmax - hmin);
    const double db = std::abs(2 * z - 1);
    const double b_cf = orig.uncertainty[p] + self[p] * (2 * z - 1);
    const double dz = std::abs(b_cf - (1 - orig.uncertainty[p]));
    double bound = 1e-9;
    if (fc.uncertainty && !fc.score) bound += g4 * c[p] * db;
    if (fc.uncertainty && fc.score)
      bound += g4 * c[p] * (db + dz) + (1 - self[p]) * o.gamma * c[p] * db;
    EXPECT_NEAR(orig.score[p], f.score[p], bound) << "pair " << p;
    worst = std::max(worst, std::abs(double(orig.score[p]) - f.score[p]));
    worst_plain = std::max(worst_plain, std::abs(double(plain.score[p]) - f.score[p]));
    ++checked;
  }
  EXPECT_GT(checked, 10);
  std::printf(
      "propagation u=%d s=%d: max |score - flipped score| %.2e counterfactual, %.2e "
      "label-dependent\n",
      fc.uncertainty, fc.score, worst, worst_plain);
}
INSTANTIATE_TEST_SUITE_P(Steps, FixedGraphFlip,
                         ::testing::Values(FlipCase{false, false}, FlipCase{true, false},
                                           FlipCase{false, true}, FlipCase{true, true}));

// The graph half needs no correction: a positive's hardness G_eff − 1 equals
// the hardness the pair gets in a full rebuild with its label flipped (its
// edge gone from the positive graph), exact route, every positive of a toy log.
TEST(FullRebuildFlip, PositiveHardnessEqualsItsHardnessAsANegative) {
  PairTable t = *BuildPairTable(testing::RandomLog(14, 12, 0.4, 0.3, 9), 1);
  PipelineOptions o;
  o.resistance = ResistanceMethod::kExact;
  const ConductanceResult cond = *ComputeConductance(t, o);
  int checked = 0;
  for (size_t p = 0; p < t.num_pairs(); ++p) {
    if (!t.label[p]) continue;
    PairTable flipped = t;
    flipped.label[p] = 0;
    flipped.negatives[p] = flipped.instances[p];
    const ConductanceResult f = *ComputeConductance(flipped, o);
    EXPECT_NEAR(cond.hardness[p], f.hardness[p], 1e-5 * std::max(1.0f, f.hardness[p]))
        << "pair " << p;
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

// Flip single-instance positive pairs of a generated log to negative and
// rebuild everything (graph included): their rates must agree with the
// original build's counterfactual rates (median relative difference ≤ 5%).
double MedianRelativeDifference(const std::vector<size_t>& pairs, const std::vector<float>& a,
                                const std::vector<float>& b) {
  std::vector<double> rel;
  for (size_t p : pairs) rel.push_back(std::abs(double(a[p]) - b[p]) / b[p]);
  std::nth_element(rel.begin(), rel.begin() + rel.size() / 2, rel.end());
  return rel[rel.size() / 2];
}

TEST(GeneratedLogFlip, RatesOfPositivesMatchTheirRatesAsNegatives) {
  GeneratorOptions g = *GeneratorPreset("small", 1.0);
  g.seed = 5;
  ImpressionLog log = *GenerateImpressionLog(g);
  PairTable t = *BuildPairTable(log, 2);
  // 40 single-instance positive pairs, spread over the table.
  std::vector<size_t> chosen;
  size_t single = 0;
  for (size_t p = 0; p < t.num_pairs(); ++p) single += t.label[p] && t.instances[p] == 1;
  ASSERT_GE(single, 400u);
  for (size_t p = 0, k = 0; p < t.num_pairs() && chosen.size() < 40; ++p) {
    if (t.label[p] && t.instances[p] == 1 && k++ % (single / 40) == 0) chosen.push_back(p);
  }
  ImpressionLog flipped_log = log;
  for (size_t i = 0; i < log.size(); ++i) {
    for (size_t p : chosen) {
      if (log.user_ids[i] == t.user_ids[t.pair_user[p]] &&
          log.item_ids[i] == t.item_ids[t.pair_item[p]]) {
        flipped_log.labels[i] = 0;
      }
    }
  }
  PairTable ft = *BuildPairTable(flipped_log, 2);
  ASSERT_EQ(ft.num_pairs(), t.num_pairs());  // same pairs, same order
  PipelineOptions o;
  const ConductanceResult cond = *ComputeConductance(t, o);
  const ConductanceResult fcond = *ComputeConductance(ft, o);
  for (RateRule rule : {RateRule::kFloor, RateRule::kMixture}) {
    for (bool propagation : {false, true}) {
      o.rate_rule = rule;
      o.uncertainty_propagation = o.score_propagation = propagation;
      o.counterfactual_positives = true;
      const PipelineResult orig = *RunPipelineWithConductance(t, cond, o);
      const PipelineResult flip = *RunPipelineWithConductance(ft, fcond, o);
      o.counterfactual_positives = false;
      const PipelineResult before = *RunPipelineWithConductance(t, cond, o);
      const double after_med = MedianRelativeDifference(chosen, orig.rate, flip.rate);
      const double before_med = MedianRelativeDifference(chosen, before.rate, flip.rate);
      std::printf(
          "rule %s, propagation %s: median |rate as positive - rate as negative| / rate as "
          "negative = "
          "%.4f counterfactual (label-dependent: %.4f), %zu pairs\n",
          RateRuleName(rule), propagation ? "on" : "off", after_med, before_med, chosen.size());
      EXPECT_LE(after_med, 0.05) << RateRuleName(rule) << " propagation " << propagation;
    }
  }
}

}  // namespace
}  // namespace graphsieve

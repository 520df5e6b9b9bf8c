// The pipeline's memory-lean path (docs/SCALING.md "Memory per impression":
// one per-pair array of doubles live at a time, the conductance consumed,
// per-pair diagnostics only when asked) gives bit-identical results:
//   - against a plain reference of the method half written here the way
//     docs/DESIGN.md §2.5–2.6 states it (every intermediate held per pair:
//     z, B̂, Ẑ, the full self-influence, rates fitted out of place);
//   - with and without PipelineOptions::per_pair_details;
//   - consuming the conductance (&&) or not (const&).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/maec/pipeline.h"
#include "core/maec/propagation.h"
#include "core/maec/rates.h"
#include "tests/maec/toy_graphs.h"

namespace graphsieve {
namespace {

bool SameBits(float a, float b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// A log with repeated pairs, both labels and a pilot score per instance.
PairTable Table() {
  ImpressionLog log = testing::RandomLog(60, 90, 0.2, 0.1, 11);
  for (size_t k = 0; k < log.size(); ++k) {
    log.pilot_scores.push_back(static_cast<float>((k * 37 % 101) / 100.0));
  }
  return *BuildPairTable(log, 2);
}

struct Reference {
  std::vector<double> uncertainty, score, rate_score, rate;
  std::vector<double> sum_b, sum_s;
};

// The MA-EC method half with every intermediate held (the formulas of
// docs/DESIGN.md §2.5–2.6 and docs/METHOD.md "Counterfactual positives").
Reference PlainMaec(const PairTable& t, const ConductanceResult& cond, const PipelineOptions& o) {
  const size_t P = t.num_pairs();
  const std::vector<uint32_t> deg = NodeDegrees(t);
  double lo = INFINITY, hi = -INFINITY;
  for (float h : cond.hardness) lo = std::min<double>(lo, h), hi = std::max<double>(hi, h);
  std::vector<double> z(P);
  for (size_t p = 0; p < P; ++p) z[p] = hi > lo ? (cond.hardness[p] - lo) / (hi - lo) : 0.0;
  PropagationOptions po;
  po.gamma = o.gamma;
  po.tolerance = o.propagation_tolerance;
  po.max_iterations = o.propagation_max_iterations;
  po.symmetric = o.symmetric_normalisation;
  po.threads = o.threads;
  Reference r;
  r.uncertainty.resize(P);
  for (size_t p = 0; p < P; ++p) r.uncertainty[p] = std::abs(double(t.label[p]) - z[p]);
  if (o.uncertainty_propagation) Propagate(t, deg, po, &r.uncertainty);
  r.score.resize(P);
  for (size_t p = 0; p < P; ++p) {
    r.score[p] = t.label[p] ? 1.0 - r.uncertainty[p] : r.uncertainty[p];
  }
  if (o.score_propagation) Propagate(t, deg, po, &r.score);
  r.rate_score = r.score;
  if (o.counterfactual_positives) {
    const std::vector<double> self = SelfInfluence(t, deg, o.gamma);
    for (size_t p = 0; p < P; ++p) {
      if (!t.label[p]) continue;
      const double mb = o.uncertainty_propagation ? self[p] : 1.0;
      const double ms = o.score_propagation ? self[p] : 1.0;
      const double b_cf = r.uncertainty[p] + mb * (2.0 * z[p] - 1.0);
      r.rate_score[p] = std::max(r.score[p] + ms * (b_cf - (1.0 - r.uncertainty[p])), 0.0);
    }
  }
  for (double& s : r.score) s = std::max(s, 0.0);
  for (double& s : r.rate_score) s = std::max(s, 0.0);
  std::vector<double> n(t.num_items(), 0.0);
  for (size_t p = 0; p < P; ++p) n[t.pair_item[p]] += t.instances[p];
  for (size_t p = 0; p < P; ++p) {
    double& s = r.rate_score[p];
    s = ScorePower(s, o.score_power);
    if (o.exposure_power != 0.0) s = ExposureDiscount(s, n[t.pair_item[p]], o.exposure_power);
  }
  const absl::StatusOr<RateFit> fit =
      o.rate_rule == RateRule::kMixture
          ? FitMixtureRates(r.rate_score, t.negatives, o.alpha, o.kappa, &r.rate, o.threads)
          : FitRates(r.rate_score, t.negatives, o.alpha, o.floor, &r.rate, o.threads);
  EXPECT_TRUE(fit.ok()) << fit.status();
  r.sum_b = PropagationNodeSums(t, deg, r.uncertainty, o.symmetric_normalisation, o.threads);
  r.sum_s = PropagationNodeSums(t, deg, r.score, o.symmetric_normalisation, o.threads);
  return r;
}

// Named option sets: each changes one part of the method half.
std::vector<std::pair<std::string, PipelineOptions>> OptionSets() {
  std::vector<std::pair<std::string, PipelineOptions>> sets;
  PipelineOptions base;
  base.alpha = 0.2;
  base.threads = 2;
  sets.push_back({"default", base});
  PipelineOptions floor = base;
  floor.rate_rule = RateRule::kFloor;
  floor.floor = 0.01;
  sets.push_back({"floor rule", floor});
  PipelineOptions no_cf = base;
  no_cf.counterfactual_positives = false;
  sets.push_back({"no counterfactual", no_cf});
  PipelineOptions no_unc = base;
  no_unc.uncertainty_propagation = false;
  sets.push_back({"no uncertainty propagation", no_unc});
  PipelineOptions no_steps = base;
  no_steps.uncertainty_propagation = false;
  no_steps.score_propagation = false;
  sets.push_back({"no propagation", no_steps});
  PipelineOptions sym = base;
  sym.symmetric_normalisation = true;
  sym.threads = 1;
  sets.push_back({"symmetric, one thread", sym});
  PipelineOptions power = base;
  power.score_power = 0.5;
  power.exposure_power = 0.7;
  sets.push_back({"score power and exposure", power});
  return sets;
}

TEST(PipelineMemoryTest, LeanPathMatchesThePlainMethodHalfBitForBit) {
  const PairTable t = Table();
  ASSERT_GT(t.num_pairs(), 500u);
  for (const auto& [name, o] : OptionSets()) {
    SCOPED_TRACE(name);
    const ConductanceResult cond = *ComputeConductance(t, o);
    const Reference ref = PlainMaec(t, cond, o);
    const PipelineResult r = *RunPipelineWithConductance(t, cond, o);
    ASSERT_EQ(r.rate.size(), t.num_pairs());
    ASSERT_EQ(r.score.size(), t.num_pairs());
    size_t positives_checked = 0;
    for (size_t p = 0; p < t.num_pairs(); ++p) {
      ASSERT_TRUE(SameBits(r.rate[p], static_cast<float>(ref.rate[p]))) << "rate, pair " << p;
      ASSERT_TRUE(SameBits(r.score[p], static_cast<float>(ref.rate_score[p]))) << "score " << p;
      ASSERT_TRUE(SameBits(r.uncertainty[p], static_cast<float>(ref.uncertainty[p]))) << p;
      ASSERT_TRUE(SameBits(r.propagated_score[p], static_cast<float>(ref.score[p]))) << p;
      ASSERT_TRUE(SameBits(r.geff[p], cond.geff[p])) << p;
      ASSERT_TRUE(SameBits(r.hardness[p], cond.hardness[p])) << p;
      positives_checked += t.label[p];
    }
    EXPECT_GT(positives_checked, 10u);  // the counterfactual path was exercised
    for (size_t w = 0; w < r.nodes.records.size(); ++w) {
      ASSERT_TRUE(SameBits(r.nodes.records[w].sum_uncertainty, static_cast<float>(ref.sum_b[w])))
          << "node " << w;
      ASSERT_TRUE(SameBits(r.nodes.records[w].sum_score, static_cast<float>(ref.sum_s[w])))
          << "node " << w;
    }
  }
}

void ExpectSameRatesAndNodes(const PipelineResult& a, const PipelineResult& b) {
  ASSERT_EQ(a.rate.size(), b.rate.size());
  for (size_t p = 0; p < a.rate.size(); ++p) {
    ASSERT_TRUE(SameBits(a.rate[p], b.rate[p])) << "rate, pair " << p;
  }
  ASSERT_EQ(a.nodes.records.size(), b.nodes.records.size());
  for (size_t w = 0; w < a.nodes.records.size(); ++w) {
    const NodeRecord &x = a.nodes.records[w], &y = b.nodes.records[w];
    ASSERT_EQ(x.component, y.component) << w;
    ASSERT_EQ(x.degree, y.degree) << w;
    ASSERT_TRUE(SameBits(x.sum_uncertainty, y.sum_uncertainty)) << w;
    ASSERT_TRUE(SameBits(x.sum_score, y.sum_score)) << w;
    ASSERT_TRUE(SameBits(x.mean_rate, y.mean_rate)) << w;
  }
  EXPECT_EQ(a.nodes.sketch, b.nodes.sketch);
  EXPECT_EQ(a.rho, b.rho);
  EXPECT_EQ(a.achieved_negative_mean_rate, b.achieved_negative_mean_rate);
  EXPECT_EQ(a.model.rho, b.model.rho);
  EXPECT_EQ(a.model.score_mean, b.model.score_mean);
}

TEST(PipelineMemoryTest, DetailsOffAndConsumedConductanceGiveTheSameRatesForEveryMethod) {
  const PairTable t = Table();
  std::vector<std::pair<std::string, PipelineOptions>> sets = OptionSets();
  for (Method m : {Method::kUniform, Method::kOpt, Method::kMax, Method::kMean, Method::kProduct}) {
    PipelineOptions o = sets[0].second;
    o.method = m;
    sets.push_back({MethodName(m), o});
  }
  PipelineOptions corrected = sets[0].second;
  corrected.method = Method::kMax;
  corrected.correct_pilot = true;
  sets.push_back({"max, corrected pilot", corrected});
  for (const auto& [name, o] : sets) {
    SCOPED_TRACE(name);
    const ConductanceResult cond = *ComputeConductance(t, o);
    const PipelineResult full = *RunPipelineWithConductance(t, cond, o);
    ASSERT_EQ(full.geff.size(), t.num_pairs());
    // The same conductance consumed: the same result, every column.
    ConductanceResult copy = cond;
    const PipelineResult consumed = *RunPipelineWithConductance(t, std::move(copy), o);
    ExpectSameRatesAndNodes(full, consumed);
    EXPECT_EQ(full.geff, consumed.geff);
    EXPECT_EQ(full.hardness, consumed.hardness);
    EXPECT_EQ(full.score, consumed.score);
    EXPECT_EQ(full.uncertainty, consumed.uncertainty);
    EXPECT_EQ(full.propagated_score, consumed.propagated_score);
    // Without the per-pair details: rates and node records only.
    PipelineOptions lean = o;
    lean.per_pair_details = false;
    const PipelineResult r = *RunPipeline(t, lean);
    ExpectSameRatesAndNodes(full, r);
    EXPECT_TRUE(r.geff.empty() && r.hardness.empty() && r.score.empty() && r.uncertainty.empty() &&
                r.propagated_score.empty());
  }
}

TEST(PipelineMemoryTest, DetailsAskedOfAConductanceComputedWithoutThemIsRefused) {
  const PairTable t = Table();
  PipelineOptions lean;
  lean.alpha = 0.2;
  lean.per_pair_details = false;
  const ConductanceResult cond = *ComputeConductance(t, lean);
  EXPECT_TRUE(cond.geff.empty());
  PipelineOptions full = lean;
  full.per_pair_details = true;
  const absl::StatusOr<PipelineResult> r = RunPipelineWithConductance(t, cond, full);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("per_pair_details"), std::string::npos) << r.status();
}

}  // namespace
}  // namespace graphsieve

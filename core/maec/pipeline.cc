// RunPipeline (pipeline.h): the method half of MA-EC — prediction from the
// hardness, propagation, rates per method, node table and unseen-pair model —
// on top of ComputeConductance (conductance.h). The heavy numerics live in
// propagation / rates; this file wires them in named stages.
#include "core/maec/pipeline.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/distributed/communicator.h"
#include "core/maec/propagation.h"
#include "core/maec/rates.h"
#include "core/maec/stage_clock.h"

namespace graphsieve {
namespace {

struct Corrected {
  std::vector<double>
      uncertainty;            // B̂ per pair, propagated with every pair's own label (node sums)
  std::vector<double> score;  // Ẑ per pair, likewise (node sums)
  std::vector<double> rate_score;  // what rates are made from: Ẑ, counterfactual for positive pairs
  PropagationReport uncertainty_report, score_report;
};

// A positive pair's score as if it were a negative, everything else as built
// (docs/METHOD.md "Counterfactual positives"). Propagation is linear, x* =
// M x⁽⁰⁾, so changing only p's initial value by Δ moves p's fixed point by
// M_pp·Δ (M_pp = 1 for a step that is switched off):
//   B⁽⁰⁾: 1 − z → z          B̂ᶜᶠ = B̂ + M_pp (2z − 1)
//   Ẑ⁽⁰⁾: 1 − B̂ → B̂ᶜᶠ       Ẑᶜᶠ = Ẑ + M_pp (B̂ᶜᶠ − (1 − B̂))
void CounterfactualPositives(const PairTable& pairs, absl::Span<const uint32_t> degrees,
                             const std::vector<double>& z, const PipelineOptions& o, Corrected* c) {
  const bool any_step = o.uncertainty_propagation || o.score_propagation;
  const std::vector<double> self =
      any_step ? SelfInfluence(pairs, degrees, o.gamma, o.comm) : std::vector<double>();
  for (size_t p = 0; p < z.size(); ++p) {
    if (!pairs.label[p]) continue;
    const double mb = o.uncertainty_propagation ? self[p] : 1.0;
    const double ms = o.score_propagation ? self[p] : 1.0;
    const double b_cf = c->uncertainty[p] + mb * (2.0 * z[p] - 1.0);
    const double s_cf = c->score[p] + ms * (b_cf - (1.0 - c->uncertainty[p]));
    c->rate_score[p] = std::max(s_cf, 0.0);
  }
}

// docs/DESIGN.md §2.5–2.6 applied to a base prediction z ∈ [0, 1] per pair.
Corrected Correct(const PairTable& pairs, absl::Span<const uint32_t> degrees,
                  const std::vector<double>& z, const PipelineOptions& o) {
  Corrected c;
  PropagationOptions po;
  po.gamma = o.gamma;
  po.tolerance = o.propagation_tolerance;
  po.max_iterations = o.propagation_max_iterations;
  po.symmetric = o.symmetric_normalisation;
  po.threads = o.threads;
  po.comm = o.comm;
  c.uncertainty.resize(z.size());
  for (size_t p = 0; p < z.size(); ++p) c.uncertainty[p] = std::abs(double(pairs.label[p]) - z[p]);
  if (o.uncertainty_propagation)
    c.uncertainty_report = Propagate(pairs, degrees, po, &c.uncertainty);
  c.score.resize(z.size());
  for (size_t p = 0; p < c.score.size(); ++p) {
    c.score[p] = pairs.label[p] ? 1.0 - c.uncertainty[p] : c.uncertainty[p];
  }
  if (o.score_propagation) c.score_report = Propagate(pairs, degrees, po, &c.score);
  c.rate_score = c.score;
  if (o.counterfactual_positives) CounterfactualPositives(pairs, degrees, z, o, &c);
  for (double& s : c.score) s = std::max(s, 0.0);
  for (double& s : c.rate_score) s = std::max(s, 0.0);
  return c;
}

absl::Status CheckInputs(const PairTable& pairs, const ConductanceResult& cond,
                         const PipelineOptions& o) {
  if (absl::Status s = o.Validate(); !s.ok()) return s;
  if (NeedsPilot(o.method) && pairs.pilot_mean.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("method '", MethodName(o.method),
                     "' needs a pilot score per pair, and this pair table has none: read the "
                     "log with its pilot score column (LogReaderOptions::pilot_column; "
                     "graphsieve-build --pilot_col)"));
  }
  if (cond.geff.size() != pairs.num_pairs()) {
    return absl::InvalidArgumentError("conductance was computed for a different pair table");
  }
  return absl::OkStatus();
}

// The hardness range that min-max normalises it (also stored for unseen pairs).
struct HardnessRange {
  double min = std::numeric_limits<double>::infinity();
  double max = -std::numeric_limits<double>::infinity();
};

HardnessRange RangeOf(const std::vector<float>& hardness, Communicator* comm) {
  HardnessRange r;
  for (float h : hardness) {
    r.min = std::min<double>(r.min, h);
    r.max = std::max<double>(r.max, h);
  }
  if (comm != nullptr) {  // over every rank's pairs
    comm->AllReduceMin(absl::MakeSpan(&r.min, 1));
    comm->AllReduceMax(absl::MakeSpan(&r.max, 1));
  }
  return r;
}

// MA-EC prediction: min-max normalised hardness, then correction.
Corrected MaecScore(const PairTable& pairs, absl::Span<const uint32_t> degrees,
                    const ConductanceResult& cond, const HardnessRange& range,
                    const PipelineOptions& o) {
  const double span = range.max - range.min;
  std::vector<double> z(pairs.num_pairs());
  for (size_t p = 0; p < z.size(); ++p)
    z[p] = span > 0 ? (cond.hardness[p] - range.min) / span : 0.0;
  return Correct(pairs, degrees, z, o);
}

struct MethodRates {
  std::vector<double> score;  // what the rate was made from
  std::vector<double> rate;
  RateFit fit;
};

// One member's rule: which rule, its floor (floor rule) and κ (mixture).
struct RuleParams {
  RateRule rule;
  double floor;
  double kappa;
};
RuleParams MaecRule(const PipelineOptions& o) { return {o.rate_rule, o.floor, o.kappa}; }
RuleParams PilotRule(const PipelineOptions& o) {
  return {o.rate_rule, o.PilotFloor(), o.PilotKappa()};
}
// The refit of a max/product ensemble. Under the mixture rule the max of two
// mixture rates is > 0 everywhere, so a pure rescale (floor rule, ϱ = 0)
// reaches every α; the product gets its own uniform share.
RuleParams CombinedRule(const PipelineOptions& o) {
  if (o.method == Method::kProduct) return {o.rate_rule, o.product_floor, o.product_kappa};
  if (o.rate_rule == RateRule::kMixture) return {RateRule::kFloor, 0.0, 0.0};
  return {o.rate_rule, o.floor, o.kappa};
}

absl::StatusOr<RateFit> FitByRule(const std::vector<double>& score, const PairTable& pairs,
                                  const RuleParams& r, const PipelineOptions& o,
                                  std::vector<double>* rate) {
  if (r.rule == RateRule::kMixture) {
    return FitMixtureRates(score, pairs.negatives, o.alpha, r.kappa, rate, o.threads, o.comm);
  }
  return FitRates(score, pairs.negatives, o.alpha, r.floor, rate, o.threads, o.comm);
}

// max / mean / product of the MA-EC and pilot rates (docs/METHOD.md "Methods").
absl::StatusOr<MethodRates> EnsembleRates(const PairTable& pairs,
                                          const std::vector<double>& maec_score,
                                          const std::vector<double>& pilot,
                                          const PipelineOptions& o) {
  const size_t P = pairs.num_pairs();
  MethodRates out;
  std::vector<double> rate_m, rate_o;
  absl::StatusOr<RateFit> fit = FitByRule(maec_score, pairs, MaecRule(o), o, &rate_m);
  if (!fit.ok()) return fit.status();
  fit = FitByRule(pilot, pairs, PilotRule(o), o, &rate_o);
  if (!fit.ok()) return fit.status();
  out.score.resize(P);
  for (size_t p = 0; p < P; ++p) {
    out.score[p] = o.method == Method::kMax    ? std::max(rate_m[p], rate_o[p])
                   : o.method == Method::kMean ? 0.5 * (rate_m[p] + rate_o[p])
                                               : rate_m[p] * rate_o[p];
  }
  if (o.method == Method::kMean) {
    // The mean of two rates with mean α already has mean α.
    out.rate = out.score;
    double sum = 0, w = 0;
    for (size_t p = 0; p < P; ++p) sum += pairs.negatives[p] * out.rate[p], w += pairs.negatives[p];
    if (o.comm != nullptr) sum = SumOverRanks(*o.comm, sum), w = SumOverRanks(*o.comm, w);
    out.fit = RateFit{1.0, w > 0 ? sum / w : o.alpha, 1.0, 0.0};
    return out;
  }
  fit = FitByRule(out.score, pairs, CombinedRule(o), o, &out.rate);
  if (!fit.ok()) return fit.status();
  out.fit = *fit;
  return out;
}

// Rates per method from the MA-EC score (and the pilot score).
absl::StatusOr<MethodRates> RatesFor(const PairTable& pairs, absl::Span<const uint32_t> degrees,
                                     const std::vector<double>& maec_score,
                                     const PipelineOptions& o) {
  const size_t P = pairs.num_pairs();
  MethodRates out;
  if (o.method == Method::kUniform) {
    out.score.assign(P, o.alpha);
    out.rate.assign(P, o.alpha);
    out.fit = RateFit{0.0, o.alpha, 1.0, 0.0};
    return out;
  }
  RuleParams rule = MaecRule(o);
  if (o.method == Method::kMaec) {
    out.score = maec_score;
  } else {
    std::vector<double> pilot(pairs.pilot_mean.begin(), pairs.pilot_mean.end());
    if (o.correct_pilot) pilot = Correct(pairs, degrees, pilot, o).rate_score;
    if (o.method != Method::kOpt) return EnsembleRates(pairs, maec_score, pilot, o);
    out.score = std::move(pilot);
    rule = PilotRule(o);
  }
  absl::StatusOr<RateFit> fit = FitByRule(out.score, pairs, rule, o, &out.rate);
  if (!fit.ok()) return fit.status();
  out.fit = *fit;
  return out;
}

// Per node: component, degree, propagation sums, mean rate (core/model/unseen.h).
void FillNodeTable(const PairTable& pairs, absl::Span<const uint32_t> degrees,
                   const ConductanceResult& cond, const Corrected& maec,
                   const std::vector<double>& rate, const PipelineOptions& o, NodeTable* nt) {
  const uint32_t U = static_cast<uint32_t>(pairs.num_users());
  const size_t N = degrees.size();
  nt->ids.reserve(N);
  nt->ids.insert(nt->ids.end(), pairs.user_ids.begin(), pairs.user_ids.end());
  nt->ids.insert(nt->ids.end(), pairs.item_ids.begin(), pairs.item_ids.end());
  nt->is_item.assign(N, 1);
  std::fill(nt->is_item.begin(), nt->is_item.begin() + U, 0);
  nt->sketch_dim = cond.sketch_dim;
  nt->sketch = cond.sketch;
  nt->records.resize(N);
  const std::vector<double> sum_b = PropagationNodeSums(
      pairs, degrees, maec.uncertainty, o.symmetric_normalisation, o.threads, o.comm);
  const std::vector<double> sum_s =
      PropagationNodeSums(pairs, degrees, maec.score, o.symmetric_normalisation, o.threads, o.comm);
  // Per node: Σ negatives·rate, Σ negatives, Σ rate, side by side (an item's
  // random lookup touches one line); a user's sums are added up in registers
  // over its run of pairs (pairs are sorted by user; same order: bit-identical).
  std::vector<double> sums(3 * N, 0.0);
  for (size_t p = 0; p < pairs.num_pairs();) {
    const uint32_t u = pairs.pair_user[p];
    double user[3] = {0.0, 0.0, 0.0};
    for (; p < pairs.num_pairs() && pairs.pair_user[p] == u; ++p) {
      const double n = pairs.negatives[p], r = rate[p];
      double* item = &sums[3 * (size_t(U) + pairs.pair_item[p])];
      user[0] += n * r, item[0] += n * r;
      user[1] += n, item[1] += n;
      user[2] += r, item[2] += r;
    }
    for (int k = 0; k < 3; ++k) sums[3 * size_t(u) + k] += user[k];
  }
  if (o.comm != nullptr)
    o.comm->AllReduceSum(absl::MakeSpan(sums));  // nodes whose pairs live on several ranks
  for (size_t w = 0; w < N; ++w) {
    NodeRecord& rec = nt->records[w];
    const double rate_sum = sums[3 * w], neg = sums[3 * w + 1], plain_sum = sums[3 * w + 2];
    rec.component = cond.component[w];
    rec.degree = degrees[w];
    rec.sum_uncertainty = static_cast<float>(sum_b[w]);
    rec.sum_score = static_cast<float>(sum_s[w]);
    rec.mean_rate = static_cast<float>(neg > 0          ? rate_sum / neg
                                       : degrees[w] > 0 ? plain_sum / degrees[w]
                                                        : o.alpha);
  }
}

// Impressions per item over every rank's pairs (the n_i of the exposure
// discount; the same count as the node records' `impressions`).
std::vector<double> ItemImpressions(const PairTable& pairs, Communicator* comm) {
  std::vector<double> n(pairs.num_items(), 0.0);
  for (size_t p = 0; p < pairs.num_pairs(); ++p) n[pairs.pair_item[p]] += pairs.instances[p];
  if (comm != nullptr) comm->AllReduceSum(absl::MakeSpan(n));
  return n;
}

UnseenModel MakeUnseenModel(const PipelineOptions& o, const RateFit& fit,
                            const HardnessRange& range, int sketch_dim) {
  UnseenModel m;
  m.method = static_cast<int>(o.method);
  m.alpha = o.alpha;
  m.floor = o.method == Method::kProduct ? o.product_floor
            : o.method == Method::kOpt   ? o.PilotFloor()
                                         : o.floor;
  m.rate_rule = static_cast<int>(o.rate_rule);
  m.kappa = o.method == Method::kOpt ? o.PilotKappa() : o.kappa;  // the rule `fit` was made by
  m.score_power = o.score_power;
  m.exposure_power = o.method == Method::kMaec ? o.exposure_power : 0.0;
  m.score_mean = fit.score_mean;
  m.rho = fit.rho;
  m.gamma = o.gamma;
  m.geff_min = std::isfinite(range.min) ? range.min : 0.0;
  m.geff_max = std::isfinite(range.max) ? range.max : 1.0;
  m.uncertainty_propagation = o.uncertainty_propagation;
  m.score_propagation = o.score_propagation;
  m.symmetric_normalisation = o.symmetric_normalisation;
  m.sketch_dim = sketch_dim;
  return m;
}

}  // namespace

absl::StatusOr<PipelineResult> RunPipelineWithConductance(const PairTable& pairs,
                                                          const ConductanceResult& cond,
                                                          const PipelineOptions& o) {
  if (absl::Status s = CheckInputs(pairs, cond, o); !s.ok()) return s;
  PipelineResult res;
  maec_internal::StageClock clock(&res.timings, o);
  const std::vector<uint32_t> degrees = NodeDegrees(pairs, o.comm);

  const HardnessRange range = RangeOf(cond.hardness, o.comm);
  Corrected maec = MaecScore(pairs, degrees, cond, range, o);
  for (double& s : maec.rate_score) s = ScorePower(s, o.score_power);  // t(s) = s^β
  if (o.exposure_power != 0.0) {                                       // t(s) / n_i^η
    const std::vector<double> n = ItemImpressions(pairs, o.comm);
    for (size_t p = 0; p < pairs.num_pairs(); ++p) {
      maec.rate_score[p] =
          ExposureDiscount(maec.rate_score[p], n[pairs.pair_item[p]], o.exposure_power);
    }
  }
  res.uncertainty_iterations = maec.uncertainty_report.iterations;
  res.score_iterations = maec.score_report.iterations;
  res.uncertainty_converged = !o.uncertainty_propagation || maec.uncertainty_report.converged;
  res.score_converged = !o.score_propagation || maec.score_report.converged;
  clock.Done("propagation");

  absl::StatusOr<MethodRates> rates = RatesFor(pairs, degrees, maec.rate_score, o);
  if (!rates.ok()) return rates.status();
  res.rho = rates->fit.rho;
  res.achieved_negative_mean_rate = rates->fit.achieved_mean;
  clock.Done("rates");

  res.geff = cond.geff;
  res.hardness = cond.hardness;
  res.uncertainty.assign(maec.uncertainty.begin(), maec.uncertainty.end());
  res.propagated_score.assign(maec.score.begin(), maec.score.end());
  res.score.assign(rates->score.begin(), rates->score.end());
  res.rate.assign(rates->rate.begin(), rates->rate.end());
  res.num_components = cond.num_components;
  res.positive_pairs = cond.positive_pairs;
  res.solves = cond.solves;
  res.resistance_route = cond.resistance_route;
  FillNodeTable(pairs, degrees, cond, maec, rates->rate, o, &res.nodes);
  res.model = MakeUnseenModel(o, rates->fit, range, cond.sketch_dim);
  clock.Done("node_table");
  return res;
}

absl::StatusOr<PipelineResult> RunPipeline(const PairTable& pairs, const PipelineOptions& o) {
  absl::StatusOr<ConductanceResult> cond = ComputeConductance(pairs, o);
  if (!cond.ok()) return cond.status();
  absl::StatusOr<PipelineResult> res = RunPipelineWithConductance(pairs, *cond, o);
  if (!res.ok()) return res.status();
  res->timings.insert(res->timings.begin(), cond->timings.begin(), cond->timings.end());
  return res;
}

}  // namespace graphsieve

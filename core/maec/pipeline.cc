// RunPipeline (pipeline.h): the method half of MA-EC — prediction from the
// hardness, propagation, rates per method, node table and unseen-pair model —
// on top of ComputeConductance (conductance.h). The heavy numerics live in
// propagation / rates; this file wires them in named stages.
#include "core/maec/pipeline.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <functional>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/distributed/communicator.h"
#include "core/maec/propagation.h"
#include "core/maec/rates.h"
#include "core/maec/stage_clock.h"

namespace graphsieve {
namespace {

// What the correction (docs/DESIGN.md §2.5–2.6) leaves. One per-pair array
// of doubles is live at a time (docs/SCALING.md "Memory per impression"):
// B̂ is propagated, its node sums and floats taken, then it becomes Ẑ⁽⁰⁾ in
// place, is propagated, clipped, and becomes the rate score in place.
struct Corrected {
  std::vector<double> rate_score;  // what rates are made from: Ẑ ≥ 0, counterfactual for positives
  std::vector<float> uncertainty;    // B̂ per pair, own labels (with per-pair outputs)
  std::vector<float> score;          // Ẑ ≥ 0 per pair, own labels (with per-pair outputs)
  std::vector<double> sum_b, sum_s;  // node sums of B̂ and of Ẑ ≥ 0 (with node sums)
  PropagationReport uncertainty_report, score_report;
};

// A positive pair's score as if it were a negative, everything else as built
// (docs/METHOD.md "Counterfactual positives"). Propagation is linear, x* =
// M x⁽⁰⁾, so changing only p's initial value by Δ moves p's fixed point by
// M_pp·Δ (M_pp = 1 for a step that is switched off):
//   B⁽⁰⁾: 1 − z → z          B̂ᶜᶠ = B̂ + M_pp (2z − 1)
//   Ẑ⁽⁰⁾: 1 − B̂ → B̂ᶜᶠ       Ẑᶜᶠ = Ẑ + M_pp (B̂ᶜᶠ − (1 − B̂))
// `z` and `b` hold z and B̂ of the positive pairs in pair order, `score` Ẑ of
// every pair (before clipping); returns max(Ẑᶜᶠ, 0) of the positive pairs in
// pair order.
std::vector<double> CounterfactualPositives(
    const PairTable& pairs, absl::Span<const uint32_t> degrees, const std::vector<double>& z,
    const std::vector<double>& b, const std::vector<double>& score, const PipelineOptions& o) {
  const bool any_step = o.uncertainty_propagation || o.score_propagation;
  const std::vector<double> self =
      any_step ? SelfInfluenceOfPositives(pairs, degrees, o.gamma, o.comm) : std::vector<double>();
  std::vector<double> out;
  out.reserve(b.size());
  for (size_t p = 0, k = 0; p < score.size(); ++p) {
    if (!pairs.label[p]) continue;
    const double mb = o.uncertainty_propagation ? self[k] : 1.0;
    const double ms = o.score_propagation ? self[k] : 1.0;
    const double b_cf = b[k] + mb * (2.0 * z[k] - 1.0);
    const double s_cf = score[p] + ms * (b_cf - (1.0 - b[k]));
    out.push_back(std::max(s_cf, 0.0));
    ++k;
  }
  return out;
}

// docs/DESIGN.md §2.5–2.6 applied to a base prediction z(p) ∈ [0, 1] per
// pair. `node_sums`: also the node sums of B̂ and Ẑ (the node records');
// `pair_floats`: also B̂ and Ẑ per pair as floats (PipelineResult's).
// z is read once per pair, then `z_done` runs (what z reads may be freed).
template <typename Z>
Corrected Correct(const PairTable& pairs, absl::Span<const uint32_t> degrees, const Z& z,
                  const PipelineOptions& o, bool node_sums, bool pair_floats,
                  const std::function<void()>& z_done = nullptr) {
  Corrected c;
  PropagationOptions po;
  po.gamma = o.gamma;
  po.tolerance = o.propagation_tolerance;
  po.max_iterations = o.propagation_max_iterations;
  po.symmetric = o.symmetric_normalisation;
  po.threads = o.threads;
  po.comm = o.comm;
  const size_t P = pairs.num_pairs();
  std::vector<double>& x = c.rate_score;
  x.resize(P);
  std::vector<double> positive_z;  // z of the positive pairs, for their counterfactual
  for (size_t p = 0; p < P; ++p) {
    const double zp = z(p);
    x[p] = std::abs(double(pairs.label[p]) - zp);
    if (o.counterfactual_positives && pairs.label[p]) positive_z.push_back(zp);
  }
  if (z_done) z_done();
  if (o.uncertainty_propagation) c.uncertainty_report = Propagate(pairs, degrees, po, &x);
  // x = B̂.
  if (node_sums) {
    c.sum_b = PropagationNodeSums(pairs, degrees, x, o.symmetric_normalisation, o.threads, o.comm);
  }
  if (pair_floats) c.uncertainty.assign(x.begin(), x.end());
  std::vector<double> positive_b;
  if (o.counterfactual_positives) {
    for (size_t p = 0; p < P; ++p) {
      if (pairs.label[p]) positive_b.push_back(x[p]);
    }
  }
  for (size_t p = 0; p < P; ++p) x[p] = pairs.label[p] ? 1.0 - x[p] : x[p];
  if (o.score_propagation) c.score_report = Propagate(pairs, degrees, po, &x);
  // x = Ẑ.
  std::vector<double> positive_cf;
  if (o.counterfactual_positives) {
    positive_cf = CounterfactualPositives(pairs, degrees, positive_z, positive_b, x, o);
    positive_b = std::vector<double>();
    positive_z = std::vector<double>();
  }
  for (double& s : x) s = std::max(s, 0.0);
  if (node_sums) {
    c.sum_s = PropagationNodeSums(pairs, degrees, x, o.symmetric_normalisation, o.threads, o.comm);
  }
  if (pair_floats) c.score.assign(x.begin(), x.end());
  if (o.counterfactual_positives) {
    for (size_t p = 0, k = 0; p < P; ++p) {
      if (pairs.label[p]) x[p] = positive_cf[k++];
    }
  }
  return c;
}

absl::Status CheckInputs(const PairTable& pairs, const ConductanceResult& cond,
                         const PipelineOptions& o) {
  assert(o.Validate().ok() && "PipelineOptions are validated where they enter (pipeline.h)");
  if (NeedsPilot(o.method) && pairs.pilot_mean.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("method '", MethodName(o.method),
                     "' needs a pilot score per pair, and this pair table has none: read the "
                     "log with its pilot score column (LogReaderOptions::pilot_column; "
                     "graphsieve-build --pilot_col)"));
  }
  if (o.per_pair_details && cond.geff.empty() && !cond.hardness.empty()) {
    return absl::InvalidArgumentError(
        "conductance was computed without per-pair details (no geff) but the pipeline is asked "
        "for them: compute it with the same PipelineOptions::per_pair_details");
  }
  if (cond.hardness.size() != pairs.num_pairs() ||
      (o.per_pair_details && cond.geff.size() != pairs.num_pairs())) {
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
                    const ConductanceResult& cond, ConductanceResult* take,
                    const HardnessRange& range, const PipelineOptions& o) {
  const double span = range.max - range.min;
  const float* hardness = cond.hardness.data();
  auto z = [&](size_t p) { return span > 0 ? (hardness[p] - range.min) / span : 0.0; };
  // Consumed and not wanted in the result: the hardness goes once z is read.
  std::function<void()> z_done;
  if (take != nullptr && !o.per_pair_details) {
    z_done = [take] { take->hardness = std::vector<float>(); };
  }
  return Correct(pairs, degrees, z, o, /*node_sums=*/true, o.per_pair_details, z_done);
}

struct MethodRates {
  std::vector<double> rate;
  RateFit fit;
  // max / mean / product: each member's rule and fit, and the combination's
  // (UnseenModel::has_members).
  bool has_members = false;
  RuleFit maec, pilot, combined;
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

RuleFit Fitted(const RuleParams& r, const RateFit& fit) {
  return {static_cast<int>(r.rule), r.floor, r.kappa, fit.rho, fit.score_mean};
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
                                          const PipelineOptions& o,
                                          std::vector<float>* score_floats) {
  const size_t P = pairs.num_pairs();
  MethodRates out;
  std::vector<double> rate_m, rate_o, score(P);
  absl::StatusOr<RateFit> fit = FitByRule(maec_score, pairs, MaecRule(o), o, &rate_m);
  if (!fit.ok()) return fit.status();
  out.has_members = true;
  out.maec = Fitted(MaecRule(o), *fit);
  fit = FitByRule(pilot, pairs, PilotRule(o), o, &rate_o);
  if (!fit.ok()) return fit.status();
  out.pilot = Fitted(PilotRule(o), *fit);
  for (size_t p = 0; p < P; ++p) {
    score[p] = CombineMemberRates(o.method, rate_m[p], rate_o[p]);
  }
  if (score_floats != nullptr) score_floats->assign(score.begin(), score.end());
  if (o.method == Method::kMean) {
    // The mean of two rates with mean α already has mean α.
    out.rate = std::move(score);
    double sum = 0, w = 0;
    for (size_t p = 0; p < P; ++p) sum += pairs.negatives[p] * out.rate[p], w += pairs.negatives[p];
    if (o.comm != nullptr) sum = SumOverRanks(*o.comm, sum), w = SumOverRanks(*o.comm, w);
    out.fit = RateFit{1.0, w > 0 ? sum / w : o.alpha, 1.0, 0.0};
    // No refit: the floor rule with ρ 1 and ϱ 0 is the identity on [0, 1].
    out.combined = {static_cast<int>(RateRule::kFloor), 0.0, 0.0, 1.0, 0.0};
    return out;
  }
  fit = FitByRule(score, pairs, CombinedRule(o), o, &out.rate);
  if (!fit.ok()) return fit.status();
  out.fit = *fit;
  out.combined = Fitted(CombinedRule(o), *fit);
  return out;
}

// Rates per method from the MA-EC score (and the pilot score), consumed;
// `score_floats` (may be null) gets what each rate was made from.
absl::StatusOr<MethodRates> RatesFor(const PairTable& pairs, absl::Span<const uint32_t> degrees,
                                     std::vector<double>&& maec_score, const PipelineOptions& o,
                                     std::vector<float>* score_floats) {
  const size_t P = pairs.num_pairs();
  MethodRates out;
  if (o.method == Method::kUniform) {
    if (score_floats != nullptr) score_floats->assign(P, static_cast<float>(o.alpha));
    out.rate.assign(P, o.alpha);
    out.fit = RateFit{0.0, o.alpha, 1.0, 0.0};
    return out;
  }
  RuleParams rule = MaecRule(o);
  std::vector<double> score;
  if (o.method == Method::kMaec) {
    score = std::move(maec_score);
  } else {
    std::vector<double> pilot(pairs.pilot_mean.begin(), pairs.pilot_mean.end());
    if (o.correct_pilot) {
      const float* mean = pairs.pilot_mean.data();
      auto z = [&](size_t p) { return double(mean[p]); };
      pilot = Correct(pairs, degrees, z, o, /*node_sums=*/false, /*pair_floats=*/false).rate_score;
    }
    if (o.method != Method::kOpt) {
      return EnsembleRates(pairs, maec_score, pilot, o, score_floats);
    }
    score = std::move(pilot);
    rule = PilotRule(o);
  }
  if (score_floats != nullptr) score_floats->assign(score.begin(), score.end());
  // The rates replace the scores in place (rates.h): one array per pair.
  absl::StatusOr<RateFit> fit = FitByRule(score, pairs, rule, o, &score);
  if (!fit.ok()) return fit.status();
  out.rate = std::move(score);
  out.fit = *fit;
  return out;
}

// Per node: component, degree, propagation sums, mean rate (core/model/unseen.h).
void FillNodeTable(const PairTable& pairs, absl::Span<const uint32_t> degrees,
                   const ConductanceResult& cond, ConductanceResult* take, const Corrected& maec,
                   const std::vector<double>& rate, const PipelineOptions& o, NodeTable* nt) {
  const uint32_t U = static_cast<uint32_t>(pairs.num_users());
  const size_t N = degrees.size();
  nt->ids.reserve(N);
  nt->ids.insert(nt->ids.end(), pairs.user_ids.begin(), pairs.user_ids.end());
  nt->ids.insert(nt->ids.end(), pairs.item_ids.begin(), pairs.item_ids.end());
  nt->is_item.assign(N, 1);
  std::fill(nt->is_item.begin(), nt->is_item.begin() + U, 0);
  nt->sketch_dim = cond.sketch_dim;
  if (take != nullptr) {
    nt->sketch = std::move(take->sketch);
  } else {
    nt->sketch = cond.sketch;
  }
  nt->records.resize(N);
  const std::vector<double>& sum_b = maec.sum_b;
  const std::vector<double>& sum_s = maec.sum_s;
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

UnseenModel MakeUnseenModel(const PipelineOptions& o, const MethodRates& rates,
                            const HardnessRange& range, int sketch_dim) {
  const RateFit& fit = rates.fit;
  UnseenModel m;
  m.method = static_cast<int>(o.method);
  m.alpha = o.alpha;
  m.floor = o.method == Method::kProduct ? o.product_floor
            : o.method == Method::kOpt   ? o.PilotFloor()
                                         : o.floor;
  m.rate_rule = static_cast<int>(o.rate_rule);
  m.kappa = o.method == Method::kOpt ? o.PilotKappa() : o.kappa;  // the rule `fit` was made by
  m.score_power = o.score_power;
  // The MA-EC score's discount: MA-EC and the ensembles' MA-EC member.
  m.exposure_power = rates.has_members || o.method == Method::kMaec ? o.exposure_power : 0.0;
  m.score_mean = fit.score_mean;
  m.rho = fit.rho;
  m.gamma = o.gamma;
  m.geff_min = std::isfinite(range.min) ? range.min : 0.0;
  m.geff_max = std::isfinite(range.max) ? range.max : 1.0;
  m.uncertainty_propagation = o.uncertainty_propagation;
  m.score_propagation = o.score_propagation;
  m.symmetric_normalisation = o.symmetric_normalisation;
  m.sketch_dim = sketch_dim;
  m.has_members = rates.has_members;
  m.maec_member = rates.maec;
  m.pilot_member = rates.pilot;
  m.combined = rates.combined;
  return m;
}

}  // namespace

namespace {

// The method half on `cond`. `take` is null or &cond: then its per-pair
// columns and node rows move into the result, or are freed as soon as they
// are no longer needed.
absl::StatusOr<PipelineResult> MethodHalf(const PairTable& pairs, const ConductanceResult& cond,
                                          ConductanceResult* take, const PipelineOptions& o) {
  if (absl::Status s = CheckInputs(pairs, cond, o); !s.ok()) return s;
  PipelineResult res;
  maec_internal::StageClock clock(&res.timings, o);
  const std::vector<uint32_t> degrees = NodeDegrees(pairs, o.comm);

  const HardnessRange range = RangeOf(cond.hardness, o.comm);
  Corrected maec = MaecScore(pairs, degrees, cond, take, range, o);
  if (o.per_pair_details) {
    res.geff = take != nullptr ? std::move(take->geff) : cond.geff;
    res.hardness = take != nullptr ? std::move(take->hardness) : cond.hardness;
    res.uncertainty = std::move(maec.uncertainty);
    res.propagated_score = std::move(maec.score);
  }
  if (take != nullptr) take->geff = std::vector<float>(), take->hardness = std::vector<float>();
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

  absl::StatusOr<MethodRates> rates = RatesFor(pairs, degrees, std::move(maec.rate_score), o,
                                               o.per_pair_details ? &res.score : nullptr);
  if (!rates.ok()) return rates.status();
  maec.rate_score = std::vector<double>();
  res.rho = rates->fit.rho;
  res.achieved_negative_mean_rate = rates->fit.achieved_mean;
  clock.Done("rates");

  res.num_components = cond.num_components;
  res.positive_pairs = cond.positive_pairs;
  res.solves = cond.solves;
  res.resistance_route = cond.resistance_route;
  FillNodeTable(pairs, degrees, cond, take, maec, rates->rate, o, &res.nodes);
  res.rate.assign(rates->rate.begin(), rates->rate.end());
  rates->rate = std::vector<double>();
  res.model = MakeUnseenModel(o, *rates, range, cond.sketch_dim);
  clock.Done("node_table");
  return res;
}

}  // namespace

absl::StatusOr<PipelineResult> RunPipelineWithConductance(const PairTable& pairs,
                                                          const ConductanceResult& cond,
                                                          const PipelineOptions& o) {
  return MethodHalf(pairs, cond, /*take=*/nullptr, o);
}

absl::StatusOr<PipelineResult> RunPipelineWithConductance(const PairTable& pairs,
                                                          ConductanceResult&& cond,
                                                          const PipelineOptions& o) {
  return MethodHalf(pairs, cond, /*take=*/&cond, o);
}

absl::StatusOr<PipelineResult> RunPipeline(const PairTable& pairs, const PipelineOptions& o) {
  absl::StatusOr<ConductanceResult> cond = ComputeConductance(pairs, o);
  if (!cond.ok()) return cond.status();
  absl::StatusOr<PipelineResult> res = RunPipelineWithConductance(pairs, std::move(*cond), o);
  if (!res.ok()) return res.status();
  res->timings.insert(res->timings.begin(), cond->timings.begin(), cond->timings.end());
  return res;
}

}  // namespace graphsieve

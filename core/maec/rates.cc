#include "core/maec/rates.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/maec/rate_walk.h"
#include "core/maec/rates_dist.h"

namespace graphsieve {

absl::StatusOr<RateRule> ParseRateRule(std::string_view name) {
  for (RateRule r : {RateRule::kFloor, RateRule::kMixture}) {
    if (name == RateRuleName(r)) return r;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown rate rule '", std::string(name), "': expected floor or mixture"));
}

const char* RateRuleName(RateRule rule) {
  switch (rule) {
    case RateRule::kFloor:
      return "floor";
    case RateRule::kMixture:
      return "mixture";
  }
  return "?";
}

absl::StatusOr<RateFit> FloorRuleRange(double total_w, double zero_w, double alpha, double floor) {
  if (total_w == 0.0) {
    return absl::FailedPreconditionError("no negative instances: there is nothing to subsample");
  }
  RateFit fit;
  fit.max_alpha = ((total_w - zero_w) + floor * zero_w) / total_w;
  if (alpha < floor || alpha > fit.max_alpha * (1.0 + 1e-12)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "alpha %g is unreachable with floor %g: the mean rate over negative instances can be any "
        "value in [%g, %.9g] for these scores (%.4g%% of negative instances score 0 and stay at "
        "the floor); lower alpha, raise the floor, or use rate rule 'mixture' "
        "(--rate-rule=mixture), "
        "which reaches every alpha",
        alpha, floor, floor, fit.max_alpha, 100.0 * zero_w / total_w));
  }
  return fit;
}

absl::StatusOr<RateFit> FitRates(absl::Span<const double> scores,
                                 absl::Span<const uint32_t> weights, double alpha, double floor,
                                 std::vector<double>* rates, int threads, Communicator* comm) {
  if (comm != nullptr && comm->size() > 1) {
    return maec_internal::FitRatesAcrossRanks(scores, weights, alpha, floor, rates, *comm);
  }
  if (scores.size() != weights.size()) {
    return absl::InvalidArgumentError("FitRates: scores and weights differ in length");
  }
  if (!(floor >= 0.0 && floor < 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("rate floor must be in [0, 1), got %g", floor));
  }
  if (!(alpha > 0.0 && alpha <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrFormat("alpha must be in (0, 1], got %g", alpha));
  }
  double total_w = 0.0, zero_w = 0.0;
  for (size_t i = 0; i < scores.size(); ++i) {
    const double s = scores[i];
    if (!std::isfinite(s) || s < 0.0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("FitRates: score %d is %g, expected >= 0", i, s));
    }
    total_w += weights[i];
    if (s == 0.0) zero_w += weights[i];
  }
  absl::StatusOr<RateFit> range = FloorRuleRange(total_w, zero_w, alpha, floor);
  if (!range.ok()) return range.status();
  RateFit fit = *range;
  // rate_walk.h: with ϱ > 0 the floor exits ϱ/s and the cap entries 1/s of
  // nearby scores interleave, so the bucketed walk would open most buckets;
  // the sort is the cheaper route there. The default mixture rule fits with ϱ = 0.
  fit.rho = floor > 0.0 ? maec_internal::SolveRhoSorted(scores, weights, alpha, floor, total_w)
                        : maec_internal::SolveRho(scores, weights, alpha, floor, total_w);
  (void)threads;  // the walk is one pass over the scores; kept for the API
  double sum = 0.0;
  if (rates != nullptr) rates->resize(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    const double r = FloorRate(scores[i], fit.rho, floor);
    if (rates != nullptr) (*rates)[i] = r;
    sum += weights[i] * r;
  }
  fit.achieved_mean = sum / total_w;
  return fit;
}

absl::StatusOr<RateFit> FitMixtureRates(absl::Span<const double> scores,
                                        absl::Span<const uint32_t> weights, double alpha,
                                        double kappa, std::vector<double>* rates, int threads,
                                        Communicator* comm) {
  if (scores.size() != weights.size()) {
    return absl::InvalidArgumentError("FitMixtureRates: scores and weights differ in length");
  }
  if (!(kappa > 0.0 && kappa <= 1e6)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("kappa (uniform share) must be in (0, 1e6], got %g", kappa));
  }
  if (!(alpha > 0.0 && alpha <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrFormat("alpha must be in (0, 1], got %g", alpha));
  }
  double total_w = 0.0, total_ws = 0.0;
  for (size_t i = 0; i < scores.size(); ++i) {
    const double s = scores[i];
    if (!std::isfinite(s) || s < 0.0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("FitMixtureRates: score %d is %g, expected >= 0", i, s));
    }
    total_w += weights[i];
    total_ws += weights[i] * s;
  }
  if (comm != nullptr) {  // h̄ over every rank's negatives
    total_w = SumOverRanks(*comm, total_w);
    total_ws = SumOverRanks(*comm, total_ws);
  }
  RateFit fit;
  fit.score_mean = total_w > 0.0 ? total_ws / total_w : 0.0;
  std::vector<double> a(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    a[i] = fit.score_mean > 0.0 ? scores[i] / fit.score_mean + kappa : kappa;
  }
  if (total_w == 0.0) {
    // Nothing to subsample: every entry gets α (the uniform share alone).
    fit.rho = alpha / kappa;
    fit.achieved_mean = alpha;
  } else {
    absl::StatusOr<RateFit> linear = FitRates(a, weights, alpha, 0.0, nullptr, threads, comm);
    if (!linear.ok()) return linear.status();
    fit.rho = linear->rho;
    fit.max_alpha = linear->max_alpha;
  }
  double sum = 0.0;
  if (rates != nullptr) rates->resize(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    const double r = MixtureRate(scores[i], fit.rho, fit.score_mean, kappa);
    if (rates != nullptr) (*rates)[i] = r;
    sum += weights[i] * r;
  }
  if (comm != nullptr) sum = SumOverRanks(*comm, sum);
  if (total_w > 0.0) fit.achieved_mean = sum / total_w;
  return fit;
}

}  // namespace graphsieve

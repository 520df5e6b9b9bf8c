#include "core/maec/rates.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/distributed/communicator.h"
#include "core/maec/rate_walk.h"

namespace graphsieve {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The linear piece of f that holds ρ, summed over every rank.
struct Piece {
  double cap_w = 0, lin_ws = 0, floor_w = 0;  // Σ w capped, Σ w s linear, Σ w at the floor
  double below = 0, above = kInf;             // nearest breakpoints ≤ ρ and > ρ
};

Piece PieceAt(absl::Span<const double> scores, absl::Span<const uint32_t> weights, double floor,
              double rho, Communicator& comm) {
  double sums[3] = {0, 0, 0}, below = 0, above = kInf;
  for (size_t i = 0; i < scores.size(); ++i) {
    const double s = scores[i], w = weights[i];
    if (w == 0) continue;
    if (s <= 0) {
      sums[2] += w;
      continue;
    }
    const double leave_floor = floor / s, reach_cap = 1.0 / s;
    if (rho >= reach_cap) {
      sums[0] += w;
    } else if (rho > leave_floor) {
      sums[1] += w * s;
    } else {
      sums[2] += w;
    }
    for (double bp : {leave_floor, reach_cap}) {
      if (bp <= rho)
        below = std::max(below, bp);
      else
        above = std::min(above, bp);
    }
  }
  comm.AllReduceSum(absl::MakeSpan(sums, 3));
  comm.AllReduceMax(absl::MakeSpan(&below, 1));
  comm.AllReduceMin(absl::MakeSpan(&above, 1));
  return {sums[0], sums[1], sums[2], below, above};
}

// The α fit of the floor rule when the entries are spread over the ranks of
// a distributed build (docs/DESIGN.md §5): FitRates calls it when given a
// communicator of more than one rank.
//
// f(ρ) = (W_cap + ρ·Σ_lin w s + ϱ·W_floor) / W is continuous, piecewise
// linear and non-decreasing. Each round every rank classifies its entries at
// a candidate ρ (floor / linear / capped) and reports the three sums and the
// nearest breakpoints on either side; after one all-reduce every rank solves
// the linear piece that holds the candidate. If the solution lies on that
// piece it is exact — the same closed form as the single-process merge walk;
// otherwise the bracket shrinks past the piece and the next candidate is that
// solution (or the bracket's midpoint). Every round is O(local entries) and
// three small all-reduces; the bracket only shrinks, so the loop ends.
//
// A collective; every rank calls it with its own entries.
absl::StatusOr<RateFit> FitRatesAcrossRanks(absl::Span<const double> scores,
                                            absl::Span<const uint32_t> weights, double alpha,
                                            double floor, std::vector<double>* rates,
                                            Communicator& comm) {
  // totals[0] = W, [1] = W at score 0, [2] = a bad score seen; max_s, min positive s.
  double totals[3] = {0, 0, 0}, max_min[2] = {0, -kInf};
  for (size_t i = 0; i < scores.size(); ++i) {
    const double s = scores[i];
    if (!std::isfinite(s) || s < 0.0) totals[2] = 1;
    if (weights[i] == 0 || !std::isfinite(s)) continue;
    totals[0] += weights[i];
    if (s > 0) {
      max_min[1] = std::max(max_min[1], -s);  // -min positive score
    } else {
      totals[1] += weights[i];
    }
  }
  comm.AllReduceSum(absl::MakeSpan(totals, 3));
  comm.AllReduceMax(absl::MakeSpan(max_min, 2));
  if (totals[2] > 0)
    return absl::InvalidArgumentError("FitRates: a score is negative or not finite");
  const double total_w = totals[0], zero_w = totals[1];
  absl::StatusOr<RateFit> range = FloorRuleRange(total_w, zero_w, alpha, floor);
  if (!range.ok()) return range.status();
  RateFit fit = *range;
  const double min_pos = -max_min[1];
  // f(0) = ϱ <= α and f(1/min s) = f(∞) >= α: the answer lies in [lo, hi].
  double lo = 0.0, hi = std::isfinite(min_pos) && min_pos > 0 ? 1.0 / min_pos : 1.0;
  double rho = hi;
  fit.rho = hi;
  for (int round = 0; round < 4096; ++round) {
    const Piece p = PieceAt(scores, weights, floor, rho, comm);
    const double f = (p.cap_w + rho * p.lin_ws + floor * p.floor_w) / total_w;
    double solved = -1.0;
    if (f == alpha) {
      fit.rho = rho;
      break;
    }
    if (p.lin_ws > 0.0) {
      solved = (alpha * total_w - p.cap_w - floor * p.floor_w) / p.lin_ws;
      if (solved >= p.below && solved <= p.above) {  // on this piece: exact
        fit.rho = solved;
        break;
      }
    }
    // The whole piece lies on one side of α: move the bracket past it.
    if (f < alpha)
      lo = std::max(lo, std::min(p.above, hi));
    else
      hi = std::min(hi, std::max(p.below, lo));
    if (hi <= lo) {  // α sits exactly on a breakpoint
      fit.rho = lo;
      break;
    }
    // Alternate the piece's own solution (fast when f is nearly linear) with
    // bisection (bounded rounds).
    rho = round % 2 == 0 && solved > lo && solved < hi ? solved : 0.5 * (lo + hi);
  }
  double sum = 0.0;
  if (rates != nullptr) rates->resize(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    const double r = FloorRate(scores[i], fit.rho, floor);
    if (rates != nullptr) (*rates)[i] = r;
    sum += weights[i] * r;
  }
  fit.achieved_mean = SumOverRanks(comm, sum) / total_w;
  return fit;
}

}  // namespace

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
  // Preconditions (rates.h); the options were validated where they entered.
  assert(scores.size() == weights.size());
  assert(alpha > 0.0 && alpha <= 1.0);
  assert(floor >= 0.0 && floor < 1.0);
  if (comm != nullptr && comm->size() > 1) {
    return FitRatesAcrossRanks(scores, weights, alpha, floor, rates, *comm);
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
  // Preconditions (rates.h); the options were validated where they entered.
  assert(scores.size() == weights.size());
  assert(alpha > 0.0 && alpha <= 1.0);
  assert(kappa > 0.0 && kappa <= 1e6);
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

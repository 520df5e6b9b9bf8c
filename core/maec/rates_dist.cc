#include "core/maec/rates_dist.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_format.h"

namespace graphsieve {
namespace maec_internal {
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

}  // namespace

absl::StatusOr<RateFit> FitRatesAcrossRanks(absl::Span<const double> scores,
                                            absl::Span<const uint32_t> weights, double alpha,
                                            double floor, std::vector<double>* rates,
                                            Communicator& comm) {
  if (scores.size() != weights.size()) {
    return absl::InvalidArgumentError("FitRates: scores and weights differ in length");
  }
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

}  // namespace maec_internal
}  // namespace graphsieve

// Sampling rates from scores (docs/DESIGN.md §2.7, docs/METHOD.md "Rate
// rules"). Two rules, both with ρ chosen in closed form so that the mean of π
// over the negative INSTANCES (each pair weighted by its negative count) is
// exactly α:
//   floor    π = min(max(ρ·s, ϱ), 1). (The paper prints the clip as
//            max(min(ρh, ϱ), 1), which is 1 everywhere: an erratum.) α can be
//            unreachable when many negatives score 0; the error says so.
//   mixture  π = min(1, ρ·(s/h̄ + κ)), h̄ = the mean score over negative
//            instances, κ > 0 the uniform share (defensive importance
//            sampling). Every α ∈ (0, 1] is reachable on every input.
//
// The floor rule:
//
// f(ρ) = Σ w π / Σ w is continuous, piecewise linear and non-decreasing in ρ,
// with breakpoints ϱ/s_i (a pair leaves the floor) and 1/s_i (it reaches the
// cap). Both sequences are ordered by descending score, so one sort and one
// merge-walk find the linear piece that contains α; ρ is then solved exactly
// on that piece. Reachable means ϱ ≤ α ≤ f(∞) = (W_{s>0} + ϱ W_{s=0}) / W.
//
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_CORE_MAEC_RATES_H_
#define GRAPHSIEVE_CORE_MAEC_RATES_H_

#include <cstdint>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/maec/rate_rule.h"

namespace graphsieve {

class Communicator;  // core/distributed/communicator.h

// "floor", "mixture". Errors: INVALID_ARGUMENT listing them.
absl::StatusOr<RateRule> ParseRateRule(std::string_view name);
const char* RateRuleName(RateRule rule);

struct RateFit {
  double rho = 0.0;
  double achieved_mean = 0.0;  // Σ w π / Σ w of the returned rates (double precision)
  double max_alpha = 1.0;      // f(∞): the largest reachable α for these scores and floor
  double score_mean = 0.0;     // mixture: h̄ = Σ w s / Σ w (0 for the floor rule)
};

// `comm` (may be null): a distributed build, the entries being this rank's
// share; α is then fit exactly over every rank's entries (rates.cc).
// REQUIRES: scores.size() == weights.size(); α in (0, 1]; floor in [0, 1)
// (checked in debug builds).
// Errors: INVALID_ARGUMENT naming the valid α range when α is unreachable
// or a score is negative or not finite; FAILED_PRECONDITION when Σ weights == 0.
// `rates` (may be null) receives π per entry; it may be the vector `scores`
// views (the rates then replace the scores: each score is read before its
// rate is written, and none is written before the fit succeeded).
absl::StatusOr<RateFit> FitRates(absl::Span<const double> scores,
                                 absl::Span<const uint32_t> weights, double alpha, double floor,
                                 std::vector<double>* rates, int threads = 1,
                                 Communicator* comm = nullptr);

// The floor rule's reachable range for negative-instance weight `total_w`, of
// which `zero_w` scores 0: a RateFit with max_alpha = f(∞) set (rho and
// achieved_mean 0), or the errors FitRates documents for an empty or
// unreachable fit. Shared by FitRates and its distributed form (rates.cc).
absl::StatusOr<RateFit> FloorRuleRange(double total_w, double zero_w, double alpha, double floor);

// The mixture rule: π = min(1, ρ·(s/h̄ + κ)). With a_i = s_i/h̄ + κ > 0 this
// is FitRates(a, weights, α, floor 0), whose reachable range is all of (0, 1]
// because no a_i is 0. Edge cases: no negative instances (Σ w = 0) or h̄ = 0
// give the uniform rate α for every entry (ρ = α/κ).
// REQUIRES: as FitRates, and κ in (0, 1e6] (checked in debug builds).
// Errors: INVALID_ARGUMENT when a score is negative or not finite.
// `rates` as FitRates' (it may replace the scores in place).
absl::StatusOr<RateFit> FitMixtureRates(absl::Span<const double> scores,
                                        absl::Span<const uint32_t> weights, double alpha,
                                        double kappa, std::vector<double>* rates, int threads = 1,
                                        Communicator* comm = nullptr);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_RATES_H_

// Sampling rates from scores (docs/DESIGN.md §2.7): π = min(max(ρ·s, ϱ), 1) with ρ
// chosen in closed form so that the mean of π over the negative INSTANCES
// (each pair weighted by its negative count) is exactly α. (The paper prints
// the clip as max(min(ρh, ϱ), 1), which is 1 everywhere: an erratum.)
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
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace graphsieve {

struct RateFit {
  double rho = 0.0;
  double achieved_mean = 0.0;   // Σ w π / Σ w of the returned rates (double precision)
  double max_alpha = 1.0;       // f(∞): the largest reachable α for these scores and floor
};

// REQUIRES: scores.size() == weights.size(); scores finite and >= 0.
// Errors: INVALID_ARGUMENT naming the valid α range when α is unreachable
// (or floor/α out of [0, 1]); FAILED_PRECONDITION when Σ weights == 0.
// `rates` (may be null) receives π per entry.
absl::StatusOr<RateFit> FitRates(absl::Span<const double> scores, absl::Span<const uint32_t> weights,
                                 double alpha, double floor, std::vector<double>* rates,
                                 int threads = 1);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_RATES_H_

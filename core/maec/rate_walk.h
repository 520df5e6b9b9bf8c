// The single-process α fit's root finder (docs/METHOD.md "Rate rules"):
// ρ with f(ρ) = α for f(ρ) = Σ_i w_i·min(max(ρ s_i, ϱ), 1) / Σ_i w_i, a
// monotone piecewise-linear function whose breakpoints are ϱ/s_i (an entry
// leaves the floor) and 1/s_i (it reaches the cap). Internal to core/maec
// (FitRates, rates.h).
//
// Linear in the number of entries: instead of sorting every positive score,
// the scores are bucketed by the upper bits of their IEEE-754 pattern
// (monotone for non-negative doubles) with Σw and Σws per bucket; the
// breakpoint walk moves whole buckets while f stays below α at the bucket's
// last breakpoint and sorts only the entries of the bucket that holds the
// solution (one pass over the scores gathers them). ρ then comes from the
// same closed form on the same linear piece as with a full sort; only the
// order in which the piece's sums were added differs (float reassociation,
// ≈ 1e-13 relative on 10M entries). It is exact for any ϱ, but with ϱ > 0
// the two breakpoint streams of nearby scores interleave and most buckets
// must be opened: after 16 passes it falls back to the full sort, and
// FitRates uses the sort directly when ϱ > 0. With ϱ = 0 (the mixture
// rule's fit) every floor exit is at ρ = 0 and one bucket is opened.
//
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_CORE_MAEC_RATE_WALK_H_
#define GRAPHSIEVE_CORE_MAEC_RATE_WALK_H_

#include <cstdint>

#include "absl/types/span.h"

namespace graphsieve {
namespace maec_internal {

struct RateWalkStats {
  int gather_passes = 0;   // passes over the scores that sorted one bucket
  bool fell_back = false;  // the full sort was used
};

// ρ for the fit above. Entries with weight 0 are ignored; `total_w` is
// Σ w_i (> 0) and α must lie in f's range (FloorRuleRange checked both).
// When f never reaches α below its last breakpoint (α = f(∞)) ρ is 1/min s_i
// over positive scores, or 1 when there is none.
// REQUIRES: scores finite and >= 0, scores.size() == weights.size().
double SolveRho(absl::Span<const double> scores, absl::Span<const uint32_t> weights, double alpha,
                double floor, double total_w, RateWalkStats* stats = nullptr);

// The same ρ by sorting every positive-score entry (the fallback; kept
// callable so tests can compare the two).
double SolveRhoSorted(absl::Span<const double> scores, absl::Span<const uint32_t> weights,
                      double alpha, double floor, double total_w);

}  // namespace maec_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_RATE_WALK_H_

// The α fit of the floor rule (rates.h) when the entries are spread over the
// ranks of a distributed build (docs/DESIGN.md §5). Internal to core/maec:
// FitRates calls it when given a communicator of more than one rank.
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
// Thread-safety: a collective; every rank calls it with its own entries.
#ifndef GRAPHSIEVE_CORE_MAEC_RATES_DIST_H_
#define GRAPHSIEVE_CORE_MAEC_RATES_DIST_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/dist/communicator.h"
#include "core/maec/rates.h"

namespace graphsieve {
namespace maec_internal {

// As FitRates (rates.h), over every rank's entries; `rates` gets this rank's.
absl::StatusOr<RateFit> FitRatesAcrossRanks(absl::Span<const double> scores,
                                            absl::Span<const uint32_t> weights, double alpha,
                                            double floor, std::vector<double>* rates,
                                            Communicator& comm);

}  // namespace maec_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_RATES_DIST_H_

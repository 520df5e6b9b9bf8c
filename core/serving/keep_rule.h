// The keep rule of the log-ingestion filter (docs/DESIGN.md §2 item 9), the one
// definition used by the server (GetSamplingRate with labels) and by the
// client's local mode (client/ingestion_filter.h):
//
//   positive, rate r  -> kept
//   negative, rate r  -> kept iff KeepNegative(instance_key, seed, r) (core/io/ids.h)
//   every impression  -> log-odds offset log(r), whatever its label (the
//                        pair's correction; only kept rows reach training)
//
// `seed` is the keep seed of the snapshot version that gave the rates
// (ManifestSummary::seed).
//
// Thread-safety: a pure function.
#ifndef GRAPHSIEVE_CORE_SERVING_KEEP_RULE_H_
#define GRAPHSIEVE_CORE_SERVING_KEEP_RULE_H_

#include <cstdint>

#include "absl/types/span.h"

namespace graphsieve {

// Fills keep[i] and log_odds_offsets[i] for every impression.
// REQUIRES: all spans have the same size.
void DecideKeep(absl::Span<const float> rates, absl::Span<const bool> positives,
                absl::Span<const uint64_t> instance_keys, uint64_t seed, absl::Span<bool> keep,
                absl::Span<float> log_odds_offsets);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SERVING_KEEP_RULE_H_

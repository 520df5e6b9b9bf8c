#include "core/serving/keep_rule.h"

#include <cassert>
#include <cmath>

#include "core/io/ids.h"

namespace graphsieve {

void DecideKeep(absl::Span<const float> rates, absl::Span<const bool> positives,
                absl::Span<const uint64_t> instance_keys, uint64_t seed, absl::Span<bool> keep,
                absl::Span<float> log_odds_offsets) {
  assert(positives.size() == rates.size() && instance_keys.size() == rates.size() &&
         keep.size() == rates.size() && log_odds_offsets.size() == rates.size());
  for (size_t i = 0; i < rates.size(); ++i) {
    // The log-odds correction depends on the pair's rate, not the label:
    // positives carry log(pi) too (docs/DESIGN.md §2 item 9).
    keep[i] = positives[i] || KeepNegative(instance_keys[i], seed, rates[i]);
    log_odds_offsets[i] = std::log(rates[i]);
  }
}

}  // namespace graphsieve

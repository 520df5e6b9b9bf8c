// The canary's statistics: how far a candidate's rates are from a baseline's on
// the same pairs, as pure functions (the CLI feeds them from two servers or two
// snapshot directories).
//
// Thread-safety: pure functions and plain values.
#ifndef GRAPHSIEVE_CORE_SERVING_CANARY_STATS_H_
#define GRAPHSIEVE_CORE_SERVING_CANARY_STATS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "nlohmann/json.hpp"

namespace graphsieve {

// Sources as the proto numbers them: 1 EXACT, 2 INFERRED, 3 DEFAULT.
struct SourceMix {
  uint64_t exact = 0;
  uint64_t inferred = 0;
  uint64_t by_default = 0;
  uint64_t other = 0;  // unspecified / unknown values
  uint64_t total() const { return exact + inferred + by_default + other; }
  void Add(int source);
};

// Limits; a negative value switches that check off. A run passes when every
// checked statistic is <= its limit.
struct CanaryThresholds {
  double delta_threshold = 0.05;    // |Δrate| above this counts toward fraction_over
  double max_mean_delta = 0.01;     // mean |Δrate|
  double max_p99_delta = 0.05;      // 99th percentile of |Δrate|
  double max_ks = 0.05;             // Kolmogorov–Smirnov distance of the two rate distributions
  double max_fraction_over = 0.01;  // fraction of pairs with |Δrate| > delta_threshold
  // Names the broken constraint (delta_threshold must be >= 0).
  std::string Validate() const;
};

struct CanaryInput {
  std::vector<float> baseline_rates;
  std::vector<float> candidate_rates;
  std::vector<int> baseline_sources;
  std::vector<int> candidate_sources;
  // Per entry: 1 = a negative instance (counts toward the expected kept
  // fraction of negatives). Empty = labels unknown: every entry counts.
  std::vector<uint8_t> negative;
};

struct CanaryReport {
  // Filled by the caller (descriptive).
  std::string baseline_name, candidate_name;  // "127.0.0.1:5000" or a snapshot dir
  std::string baseline_version, candidate_version;
  std::string pairs_description;  // where the compared pairs came from
  // Computed by CompareRates.
  uint64_t pairs = 0;
  uint64_t negatives = 0;          // entries counted in the kept fractions
  std::string kept_fraction_over;  // "negative instances" or "pairs (labels unknown)"
  double mean_abs_delta = 0, p50_abs_delta = 0, p99_abs_delta = 0, max_abs_delta = 0;
  double mean_signed_delta = 0;       // mean of candidate - baseline
  double fraction_over = 0;           // |Δ| > thresholds.delta_threshold
  double baseline_kept_fraction = 0;  // mean rate over the counted negatives
  double candidate_kept_fraction = 0;
  double ks_distance = 0;
  SourceMix baseline_mix, candidate_mix;
  uint64_t source_changed = 0;  // pairs whose source differs
  CanaryThresholds thresholds;
  std::vector<std::string> violations;  // one line per limit exceeded
  bool pass() const { return violations.empty(); }
};

// Two-sample Kolmogorov–Smirnov statistic sup_x |F_a(x) - F_b(x)| of the
// empirical distributions (ties handled exactly). 0 when either is empty.
double KolmogorovSmirnovDistance(absl::Span<const float> a, absl::Span<const float> b);

// The q-quantile (q in [0,1]) of sorted values by the nearest-rank rule
// (smallest value with at least ceil(q*n) values <= it). 0 when empty.
double NearestRankQuantile(absl::Span<const double> sorted, double q);

// REQUIRES: the four vectors of `input` have equal sizes; `negative` empty or
// of that size too. Fills every computed field of *report.
void CompareRates(const CanaryInput& input, const CanaryThresholds& thresholds,
                  CanaryReport* report);

// A table for people (several lines, ends with PASS/FAIL and the violations).
std::string FormatCanaryTable(const CanaryReport& report);
nlohmann::json CanaryReportToJson(const CanaryReport& report);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SERVING_CANARY_STATS_H_

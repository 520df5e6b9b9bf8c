// What a snapshot version's rates look like, and how far they moved from the
// version served before it: computed by the server when a version starts
// serving (off the request path), shown on the dashboard and in /status.json.
//
// - RateProfile: the histogram of the stored pairs' rates (20 bins of 0.05, the
//   bins of the manifest's rate_histogram), their mean and quantiles, and the
//   expected kept fraction of negative instances (the manifest's
//   achieved_negative_mean_rate: the mean rate over the log's negatives, what
//   the builder's alpha targets; docs/DESIGN.md §2.7). It also keeps a sample
//   of (pair, rate) for the comparison: the pairs whose XXH3 hash has its low
//   `sample_bits` bits zero, so two versions sample the same pairs and the
//   coarser sample is a subset of the finer one.
// - IncrementalRateProfiler: the profile of a delta served over its base from
//   the base's kept scan state and the delta's pairs alone, so its cost is in
//   proportion to the delta rather than base + delta.
// - CompareProfiles: on the pairs sampled in both versions, the canary's
//   statistics (core/serving/canary_stats.h CompareRates): mean signed and absolute
//   Δrate, the share of pairs moved more than a threshold, the
//   Kolmogorov–Smirnov distance of the two rate distributions.
//
// Thread-safety: plain values and pure functions.
#ifndef GRAPHSIEVE_SERVER_RATE_PROFILE_H_
#define GRAPHSIEVE_SERVER_RATE_PROFILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/snapshot/snapshot_reader.h"
#include "nlohmann/json.hpp"

namespace graphsieve {

struct RateProfileOptions {
  // At most about this many pairs are sampled for comparisons (a power of two
  // fraction of the pairs: every pair when pairs <= max_sample_pairs).
  uint64_t max_sample_pairs = uint64_t{1} << 19;
  int bins = 20;  // equal-width bins over (0, 1]
};

struct RateProfile {
  std::string version;
  uint64_t pairs = 0;
  double mean_rate = 0, min_rate = 0, p50_rate = 0, p99_rate = 0, max_rate = 0;
  std::vector<double> bin_upper_edges;  // bins[i] = (edge[i-1], edge[i]], edge[-1] = 0
  std::vector<uint64_t> pair_counts;    // pairs per bin
  uint64_t negative_instances = 0;      // the manifest's counts.negative_instances
  double expected_kept_fraction = 0;    // manifest achieved_negative_mean_rate
  double alpha = 0;                     // the builder's target for it
  double profile_seconds = 0;           // time the scan took
  // The pairs read to compute it: every pair served for a full scan; for an
  // incremental profile (a delta over a base whose scan state was kept) the
  // delta's pairs only.
  uint64_t pairs_scanned = 0;
  bool incremental = false;
  // The sample, sorted by key: pairs with (hash & ((1 << sample_bits) - 1)) == 0.
  int sample_bits = 0;
  struct Sampled {
    uint64_t user, item, hash;
    float rate;
  };
  std::vector<Sampled> sample;
};

// Nearest-rank quantiles of rates in [0, 1] without keeping them: a count
// (and the smallest and largest value) per float bit pattern with its low
// kDroppedBits mantissa bits dropped, 2^18 keys, 4 MiB whatever the count (an
// exact sort kept 4 bytes a pair: 44 MiB for an 11M-pair version while it was
// profiled). A quantile is exact when every value of its key is equal, else
// the middle of the key's range clamped to the values seen, within a relative
// 2^-(24 - kDroppedBits) (2.4e-4) of the exact one.
//
// Remove takes one value out again (a delta overriding a base pair's rate).
// A key's smallest and largest value are then bounds of the values left in
// it, not necessarily values left: quantiles keep the bound above (the exact
// value and the answer are both in the key's range), and min() / max() are
// within the same relative 2^-(24 - kDroppedBits) of the exact ones.
class RateQuantiles {
 public:
  static constexpr int kDroppedBits = 12;
  RateQuantiles();
  void Add(float rate);  // clamped into [0, 1]
  // REQUIRES: `rate` was added and not removed since (clamped the same way).
  void Remove(float rate);
  uint64_t count() const { return count_; }
  // REQUIRES: count() > 0 and q in [0, 1]. The value of rank ceil(q * count()), at least 1.
  double Quantile(double q) const;
  // REQUIRES: count() > 0. The smallest and largest value added: exact
  // without Remove, else within the bound above.
  float min() const;
  float max() const;

 private:
  static uint32_t Key(float rate);
  std::vector<uint64_t> counts_;
  std::vector<float> min_, max_;
  uint64_t count_ = 0;
};

// Scans every stored pair of `reader` (ForEachPair). Errors: the scan's.
absl::StatusOr<RateProfile> ProfileSnapshot(const SnapshotReader& reader,
                                            const RateProfileOptions& options = {});

// What a profile scan accumulates: the quantile counts, the rate sum, the
// pairs per bin and the sample (sorted by key, sample_bits as in RateProfile).
struct RateProfileState;

// Profiles versions one after another, keeping the scan state of the most
// recent version profiled that is not a delta (a full version served, or a
// base scanned for its first delta), keyed by its version id:
//   * a delta served over its base (LayeredSnapshotReader) whose base's state
//     is kept: a copy of that state, then for each of the delta's pairs the
//     base's rate of the pair (base().LookupPairs, in batches) is removed when
//     the base stores it and the delta's rate is added: O(delta pairs) + the
//     state's copy (RateQuantiles' 4 MiB and the sample);
//   * a delta over a base whose state is not kept: the base is scanned once
//     (its state kept), then as above;
//   * anything else: the full scan (ProfileSnapshot), its state kept.
// The profile equals ProfileSnapshot's of the same reader: pairs, bins and
// sample exactly, the mean up to the sum's rounding, quantiles, min and max
// within RateQuantiles' bound (docs/SERVER.md "Rate profile and version
// comparison").
//
// Thread-safety: not thread-safe (the version profiler's thread owns one).
class IncrementalRateProfiler {
 public:
  explicit IncrementalRateProfiler(RateProfileOptions options = {});
  ~IncrementalRateProfiler();
  IncrementalRateProfiler(const IncrementalRateProfiler&) = delete;
  IncrementalRateProfiler& operator=(const IncrementalRateProfiler&) = delete;

  absl::StatusOr<RateProfile> Profile(const SnapshotReader& reader);
  // The version whose state is kept ("" = none).
  std::string kept_version() const;

 private:
  const RateProfileOptions options_;
  std::unique_ptr<RateProfileState> kept_;
};

struct VersionComparison {
  std::string from_version, to_version;
  uint64_t pairs_compared = 0;                      // sampled pairs stored in both versions
  uint64_t pairs_only_from = 0, pairs_only_to = 0;  // sampled pairs in one version only
  int sample_bits = 0;                              // 0 = every pair compared
  double threshold = 0;                             // |Δrate| counted as "moved" above this
  double mean_rate_from = 0, mean_rate_to = 0;      // over the compared pairs
  double mean_delta = 0;                            // mean of to - from
  double mean_abs_delta = 0, p99_abs_delta = 0, max_abs_delta = 0;
  double fraction_moved = 0;  // share of compared pairs with |Δrate| > threshold
  double ks_distance = 0;     // sup |F_from - F_to| over the compared pairs
  double expected_kept_fraction_from = 0, expected_kept_fraction_to = 0;  // manifests
};

// REQUIRES: both profiles come from ProfileSnapshot (samples sorted by key).
VersionComparison CompareProfiles(const RateProfile& from, const RateProfile& to, double threshold);

nlohmann::json RateProfileToJson(const RateProfile& profile);  // without the sample
nlohmann::json VersionComparisonToJson(const VersionComparison& comparison);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_RATE_PROFILE_H_

#include "server/rate_profile.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>

#include "core/serving/canary_stats.h"
#include "core/snapshot/layered_snapshot_reader.h"
#include "xxhash.h"

namespace graphsieve {
namespace {

uint64_t PairHash(uint64_t user, uint64_t item) {
  unsigned char key[16];
  std::memcpy(key, &user, 8);
  std::memcpy(key + 8, &item, 8);
  return XXH3_64bits(key, sizeof(key));
}

uint64_t Mask(int bits) { return bits == 0 ? 0 : (uint64_t{1} << bits) - 1; }

bool KeyLess(const RateProfile::Sampled& a, const RateProfile::Sampled& b) {
  return std::tie(a.user, a.item) < std::tie(b.user, b.item);
}

}  // namespace

// 1.0f is 0x3F800000: keys 0 .. 0x3F800000 >> kDroppedBits.
RateQuantiles::RateQuantiles()
    : counts_((0x3F800000u >> kDroppedBits) + 1, 0),
      min_(counts_.size(), std::numeric_limits<float>::infinity()),
      max_(counts_.size(), -std::numeric_limits<float>::infinity()) {}

uint32_t RateQuantiles::Key(float rate) {
  uint32_t bits;
  std::memcpy(&bits, &rate, sizeof(bits));
  return bits >> kDroppedBits;  // monotone in the value for non-negative floats
}

void RateQuantiles::Add(float rate) {
  rate = std::isnan(rate) ? 0.0f : std::clamp(rate, 0.0f, 1.0f);
  const uint32_t k = Key(rate);
  ++counts_[k];
  min_[k] = std::min(min_[k], rate);
  max_[k] = std::max(max_[k], rate);
  ++count_;
}

double RateQuantiles::Quantile(double q) const {
  // NearestRankQuantile's rank (core/serving/canary_stats.h).
  uint64_t rank = static_cast<uint64_t>(std::ceil(q * static_cast<double>(count_)));
  rank = std::clamp<uint64_t>(rank, 1, count_);
  uint64_t below = 0;
  size_t k = 0;
  while (below + counts_[k] < rank) below += counts_[k++];
  if (min_[k] == max_[k]) return min_[k];
  const uint32_t middle = (static_cast<uint32_t>(k) << kDroppedBits) | (1u << (kDroppedBits - 1));
  float value;
  std::memcpy(&value, &middle, sizeof(value));
  return std::clamp(value, min_[k], max_[k]);
}

float RateQuantiles::min() const {
  size_t k = 0;
  while (counts_[k] == 0) ++k;
  return min_[k];
}

float RateQuantiles::max() const {
  size_t k = counts_.size() - 1;
  while (counts_[k] == 0) --k;
  return max_[k];
}

absl::StatusOr<RateProfile> ProfileSnapshot(const SnapshotReader& reader,
                                            const RateProfileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const ManifestSummary& manifest = reader.manifest();
  RateProfile p;
  p.version = manifest.version;
  p.expected_kept_fraction = manifest.achieved_negative_mean_rate;
  const nlohmann::json m =
      nlohmann::json::parse(manifest.json, nullptr, /*allow_exceptions=*/false);
  if (!m.is_discarded() && m.contains("counts") && m["counts"].is_object() &&
      m["counts"].contains("negative_instances") &&
      m["counts"]["negative_instances"].is_number_unsigned()) {
    p.negative_instances = m["counts"]["negative_instances"].get<uint64_t>();
  }
  p.alpha = manifest.alpha;
  // A delta's manifest counts only its own pairs; the scan sees its base's too.
  const uint64_t served = ServedPairsBound(reader);
  while (p.sample_bits < 63 && (served >> p.sample_bits) > options.max_sample_pairs) {
    ++p.sample_bits;
  }
  const uint64_t mask = Mask(p.sample_bits);
  const int bins = std::max(1, options.bins);
  for (int i = 1; i <= bins; ++i) p.bin_upper_edges.push_back(static_cast<double>(i) / bins);
  p.pair_counts.assign(bins, 0);
  RateQuantiles quantiles;
  double sum = 0;
  absl::Status st = reader.ForEachPair([&](uint64_t user, uint64_t item, float rate) {
    quantiles.Add(rate);
    sum += rate;
    // Bin i holds (i/bins - 1/bins, i/bins]: ceil(rate * bins) - 1, clamped.
    const int bin = std::clamp(static_cast<int>(std::ceil(rate * bins)) - 1, 0, bins - 1);
    ++p.pair_counts[bin];
    const uint64_t h = PairHash(user, item);
    if ((h & mask) == 0) p.sample.push_back({user, item, h, rate});
  });
  if (!st.ok()) return st;
  p.pairs = quantiles.count();
  if (p.pairs > 0) {
    p.mean_rate = sum / static_cast<double>(p.pairs);
    p.min_rate = quantiles.min();
    p.max_rate = quantiles.max();
    p.p50_rate = quantiles.Quantile(0.5);
    p.p99_rate = quantiles.Quantile(0.99);
  }
  std::sort(p.sample.begin(), p.sample.end(), KeyLess);
  p.profile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return p;
}

VersionComparison CompareProfiles(const RateProfile& from, const RateProfile& to,
                                  double threshold) {
  VersionComparison c;
  c.from_version = from.version;
  c.to_version = to.version;
  c.threshold = threshold;
  c.sample_bits = std::max(from.sample_bits, to.sample_bits);
  c.expected_kept_fraction_from = from.expected_kept_fraction;
  c.expected_kept_fraction_to = to.expected_kept_fraction;
  const uint64_t mask = Mask(c.sample_bits);
  CanaryInput input;
  size_t i = 0, j = 0;
  const auto& a = from.sample;
  const auto& b = to.sample;
  while (i < a.size() || j < b.size()) {
    if (i < a.size() && (a[i].hash & mask) != 0) {
      ++i;
      continue;
    }
    if (j < b.size() && (b[j].hash & mask) != 0) {
      ++j;
      continue;
    }
    if (j == b.size() || (i < a.size() && KeyLess(a[i], b[j]))) {
      ++c.pairs_only_from;
      ++i;
    } else if (i == a.size() || KeyLess(b[j], a[i])) {
      ++c.pairs_only_to;
      ++j;
    } else {
      input.baseline_rates.push_back(a[i++].rate);
      input.candidate_rates.push_back(b[j++].rate);
    }
  }
  const size_t n = input.baseline_rates.size();
  c.pairs_compared = n;
  if (n == 0) return c;
  input.baseline_sources.assign(n, 1);  // stored pairs: RATE_SOURCE_EXACT
  input.candidate_sources.assign(n, 1);
  CanaryThresholds thresholds;
  thresholds.delta_threshold = threshold;
  CanaryReport report;
  CompareRates(input, thresholds, &report);
  c.mean_rate_from = report.baseline_kept_fraction;  // mean rate (no labels: every pair)
  c.mean_rate_to = report.candidate_kept_fraction;
  c.mean_delta = report.mean_signed_delta;
  c.mean_abs_delta = report.mean_abs_delta;
  c.p99_abs_delta = report.p99_abs_delta;
  c.max_abs_delta = report.max_abs_delta;
  c.fraction_moved = report.fraction_over;
  c.ks_distance = report.ks_distance;
  return c;
}

nlohmann::json RateProfileToJson(const RateProfile& p) {
  return {{"version", p.version},
          {"pairs", p.pairs},
          {"mean_rate", p.mean_rate},
          {"min_rate", p.min_rate},
          {"p50_rate", p.p50_rate},
          {"p99_rate", p.p99_rate},
          {"max_rate", p.max_rate},
          {"bin_upper_edges", p.bin_upper_edges},
          {"pair_counts", p.pair_counts},
          {"expected_kept_fraction", p.expected_kept_fraction},
          {"negative_instances", p.negative_instances},
          {"alpha", p.alpha},
          {"sampled_pairs", p.sample.size()},
          {"sample_bits", p.sample_bits},
          {"profile_seconds", p.profile_seconds}};
}

nlohmann::json VersionComparisonToJson(const VersionComparison& c) {
  return {{"from_version", c.from_version},
          {"to_version", c.to_version},
          {"pairs_compared", c.pairs_compared},
          {"pairs_only_from", c.pairs_only_from},
          {"pairs_only_to", c.pairs_only_to},
          {"sample_bits", c.sample_bits},
          {"threshold", c.threshold},
          {"mean_rate_from", c.mean_rate_from},
          {"mean_rate_to", c.mean_rate_to},
          {"mean_delta", c.mean_delta},
          {"mean_abs_delta", c.mean_abs_delta},
          {"p99_abs_delta", c.p99_abs_delta},
          {"max_abs_delta", c.max_abs_delta},
          {"fraction_moved", c.fraction_moved},
          {"ks_distance", c.ks_distance},
          {"expected_kept_fraction_from", c.expected_kept_fraction_from},
          {"expected_kept_fraction_to", c.expected_kept_fraction_to}};
}

}  // namespace graphsieve

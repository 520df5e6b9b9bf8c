#include "server/rate_profile.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <tuple>
#include <utility>

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

void RateQuantiles::Remove(float rate) {
  rate = std::isnan(rate) ? 0.0f : std::clamp(rate, 0.0f, 1.0f);
  const uint32_t k = Key(rate);
  --counts_[k];
  --count_;
  if (counts_[k] == 0) {  // an empty key has no range
    min_[k] = std::numeric_limits<float>::infinity();
    max_[k] = -std::numeric_limits<float>::infinity();
  }
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

// The accumulated scan (rate_profile.h).
struct RateProfileState {
  std::string version;  // of the reader scanned (a delta's: its base's)
  int sample_bits = 0;
  RateQuantiles quantiles;
  double sum = 0;
  std::vector<uint64_t> pair_counts;         // per bin
  std::vector<RateProfile::Sampled> sample;  // sorted by key

  RateProfileState(std::string v, int bins, int bits)
      : version(std::move(v)), sample_bits(bits), pair_counts(bins, 0) {}
  int Bin(float rate) const {
    // Bin i holds (i/bins - 1/bins, i/bins]: ceil(rate * bins) - 1, clamped.
    const int bins = static_cast<int>(pair_counts.size());
    return std::clamp(static_cast<int>(std::ceil(rate * bins)) - 1, 0, bins - 1);
  }
  void Add(float rate) {
    quantiles.Add(rate);
    sum += rate;
    ++pair_counts[Bin(rate)];
  }
  void Remove(float rate) {
    quantiles.Remove(rate);
    sum -= rate;
    --pair_counts[Bin(rate)];
  }
};

namespace {

// The sample's bits for a reader: the fewest that keep about
// max_sample_pairs of its pairs.
int SampleBits(const SnapshotReader& reader, const RateProfileOptions& options) {
  // A delta's manifest counts only its own pairs; the scan sees its base's too.
  const uint64_t served = ServedPairsBound(reader);
  int bits = 0;
  while (bits < 63 && (served >> bits) > options.max_sample_pairs) ++bits;
  return bits;
}

// Every pair of `reader` into `state` (its sample sorted at the end).
absl::Status Scan(const SnapshotReader& reader, RateProfileState* state) {
  const uint64_t mask = Mask(state->sample_bits);
  absl::Status st = reader.ForEachPair([&](uint64_t user, uint64_t item, float rate) {
    state->Add(rate);
    const uint64_t h = PairHash(user, item);
    if ((h & mask) == 0) state->sample.push_back({user, item, h, rate});
  });
  std::sort(state->sample.begin(), state->sample.end(), KeyLess);
  return st;
}

// `state`, the scan of layered.base() (sample_bits <= sample_bits), becomes
// the scan of `layered`: for each of the delta's pairs the base's rate is
// removed when the base stores the pair, and the delta's rate added; the
// sample keeps the coarser `sample_bits`. Counts the delta's pairs in *scanned.
absl::Status ApplyDelta(const LayeredSnapshotReader& layered, int sample_bits,
                        RateProfileState* state, uint64_t* scanned) {
  const uint64_t mask = Mask(sample_bits);
  if (sample_bits > state->sample_bits) {
    std::vector<RateProfile::Sampled>& s = state->sample;
    s.erase(std::remove_if(s.begin(), s.end(),
                           [mask](const RateProfile::Sampled& e) { return (e.hash & mask) != 0; }),
            s.end());
    state->sample_bits = sample_bits;
  }
  constexpr size_t kBatch = 4096;
  std::vector<uint64_t> users, items;
  std::vector<float> rates, base_rates(kBatch);
  std::unique_ptr<bool[]> in_base(new bool[kBatch]);
  users.reserve(kBatch);
  items.reserve(kBatch);
  rates.reserve(kBatch);
  std::vector<RateProfile::Sampled> added;  // the delta's sampled pairs
  absl::Status lookup;
  auto flush = [&]() {
    const size_t n = users.size();
    if (n == 0 || !lookup.ok()) return;
    lookup = layered.base().LookupPairs(users, items, absl::MakeSpan(in_base.get(), n),
                                        absl::MakeSpan(base_rates.data(), n));
    if (!lookup.ok()) return;
    for (size_t k = 0; k < n; ++k) {
      if (in_base[k]) state->Remove(base_rates[k]);
      state->Add(rates[k]);
      const uint64_t h = PairHash(users[k], items[k]);
      if ((h & mask) == 0) added.push_back({users[k], items[k], h, rates[k]});
    }
    users.clear();
    items.clear();
    rates.clear();
  };
  absl::Status st = layered.delta().ForEachPair([&](uint64_t u, uint64_t i, float r) {
    users.push_back(u);
    items.push_back(i);
    rates.push_back(r);
    ++*scanned;
    if (users.size() == kBatch) flush();
  });
  if (!st.ok()) return st;
  flush();
  if (!lookup.ok()) return lookup;
  // The delta's sampled pairs replace the base's entries of the same pairs.
  std::sort(added.begin(), added.end(), KeyLess);
  const std::vector<RateProfile::Sampled>& a = state->sample;
  std::vector<RateProfile::Sampled> merged;
  merged.reserve(a.size() + added.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < added.size()) {
    if (j == added.size() || (i < a.size() && KeyLess(a[i], added[j]))) {
      merged.push_back(a[i++]);
    } else {
      if (i < a.size() && !KeyLess(added[j], a[i])) ++i;  // the same pair: overridden
      merged.push_back(added[j++]);
    }
  }
  state->sample = std::move(merged);
  return absl::OkStatus();
}

// The profile of `reader` from `state`, the scan of every pair it serves.
RateProfile Finish(const SnapshotReader& reader, const RateProfileState& state,
                   std::chrono::steady_clock::time_point start) {
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
  const int bins = static_cast<int>(state.pair_counts.size());
  for (int i = 1; i <= bins; ++i) p.bin_upper_edges.push_back(static_cast<double>(i) / bins);
  p.pair_counts = state.pair_counts;
  p.pairs = state.quantiles.count();
  if (p.pairs > 0) {
    p.mean_rate = state.sum / static_cast<double>(p.pairs);
    p.min_rate = state.quantiles.min();
    p.max_rate = state.quantiles.max();
    p.p50_rate = state.quantiles.Quantile(0.5);
    p.p99_rate = state.quantiles.Quantile(0.99);
  }
  p.sample_bits = state.sample_bits;
  p.sample = state.sample;
  p.profile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return p;
}

}  // namespace

absl::StatusOr<RateProfile> ProfileSnapshot(const SnapshotReader& reader,
                                            const RateProfileOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  RateProfileState state(reader.manifest().version, std::max(1, options.bins),
                         SampleBits(reader, options));
  absl::Status st = Scan(reader, &state);
  if (!st.ok()) return st;
  RateProfile p = Finish(reader, state, start);
  p.pairs_scanned = p.pairs;
  return p;
}

IncrementalRateProfiler::IncrementalRateProfiler(RateProfileOptions options)
    : options_(std::move(options)) {}

IncrementalRateProfiler::~IncrementalRateProfiler() = default;

std::string IncrementalRateProfiler::kept_version() const {
  return kept_ != nullptr ? kept_->version : std::string();
}

absl::StatusOr<RateProfile> IncrementalRateProfiler::Profile(const SnapshotReader& reader) {
  const auto start = std::chrono::steady_clock::now();
  const int bins = std::max(1, options_.bins);
  const auto* layered = dynamic_cast<const LayeredSnapshotReader*>(&reader);
  const SnapshotReader& scanned_reader = layered != nullptr ? layered->base() : reader;
  uint64_t scanned = 0;
  const bool kept =
      layered != nullptr && kept_ != nullptr && kept_->version == scanned_reader.manifest().version;
  if (!kept) {
    kept_.reset();  // one state in memory at a time
    auto state = std::make_unique<RateProfileState>(scanned_reader.manifest().version, bins,
                                                    SampleBits(scanned_reader, options_));
    absl::Status st = Scan(scanned_reader, state.get());
    if (!st.ok()) return st;
    scanned = state->quantiles.count();
    kept_ = std::move(state);
    if (layered == nullptr) {
      RateProfile p = Finish(reader, *kept_, start);
      p.pairs_scanned = scanned;
      return p;
    }
  }
  RateProfileState state = *kept_;
  absl::Status st = ApplyDelta(*layered, std::max(state.sample_bits, SampleBits(reader, options_)),
                               &state, &scanned);
  if (!st.ok()) return st;
  RateProfile p = Finish(reader, state, start);
  p.pairs_scanned = scanned;
  p.incremental = kept;
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
          {"profile_seconds", p.profile_seconds},
          {"pairs_scanned", p.pairs_scanned},
          {"incremental", p.incremental}};
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

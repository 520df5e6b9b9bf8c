// The numbers behind the ops dashboard, against exact references: windowed
// traffic rates and histogram percentiles (server/traffic_window.h), a
// version's rate profile on a real snapshot and the comparison of two
// versions (server/rate_profile.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "core/snapshot/version_opener.h"
#include "gtest/gtest.h"
#include "server/rate_profile.h"
#include "server/traffic_window.h"
#include "tests/server/test_snapshots.h"
#include "tests/temp_dir.h"
#include "xxhash.h"

namespace graphsieve {
namespace {

TEST(HistogramQuantile, InterpolatesInsideTheBucketLikePrometheus) {
  const std::vector<double> bounds = {1, 2, 4};
  bool above = true;
  // 10 observations, all in (1, 2].
  EXPECT_DOUBLE_EQ(HistogramQuantile(0.5, bounds, {0, 10, 10, 10}, &above), 1.5);
  EXPECT_FALSE(above);
  EXPECT_DOUBLE_EQ(HistogramQuantile(0.99, bounds, {0, 10, 10, 10}, &above), 1.99);
  // The first bucket starts at 0.
  EXPECT_DOUBLE_EQ(HistogramQuantile(0.5, bounds, {10, 10, 10, 10}, &above), 0.5);
  // 4 in (0,1], 4 in (2,4]: the median is the top of the first bucket's mass.
  EXPECT_DOUBLE_EQ(HistogramQuantile(0.5, bounds, {4, 4, 8, 8}, &above), 1.0);
  EXPECT_DOUBLE_EQ(HistogramQuantile(0.75, bounds, {4, 4, 8, 8}, &above), 3.0);
}

TEST(HistogramQuantile, RankInTheInfBucketSaysAbove) {
  bool above = false;
  EXPECT_DOUBLE_EQ(HistogramQuantile(0.99, {1, 2}, {5, 5, 10}, &above), 2.0);
  EXPECT_TRUE(above);
}

// Counters growing at `per_second` from t0 (constant before).
TrafficSample At(double t, double requests_per_second, double pairs_per_second) {
  TrafficSample s;
  s.at_seconds = t;
  s.requests_ok = requests_per_second * t;
  s.requests_failed = 0.1 * t;
  s.pairs_exact = 0.6 * pairs_per_second * t;
  s.pairs_inferred = 0.3 * pairs_per_second * t;
  s.pairs_default = 0.1 * pairs_per_second * t;
  s.latency_upper_bounds = {0.001, 0.002, 0.005};
  const uint64_t calls = static_cast<uint64_t>(requests_per_second * t);
  s.latency_count = calls;
  s.latency_sum_seconds = 0.0015 * static_cast<double>(calls);
  s.latency_cumulative = {0, calls, calls, calls};  // every call in (1, 2] ms
  return s;
}

TEST(SummariseTraffic, RatesOverTheWindowOnly) {
  std::deque<TrafficSample> samples;
  // 0..40 s: idle; 40..100 s: 10 requests/s and 1000 pairs/s.
  for (int t = 0; t <= 100; ++t) {
    TrafficSample s = At(t <= 40 ? 0 : t - 40, 10, 1000);
    s.at_seconds = t;
    samples.push_back(s);
  }
  const nlohmann::json j = SummariseTraffic(samples, 60);
  EXPECT_DOUBLE_EQ(j["window_seconds"].get<double>(), 60);
  EXPECT_NEAR(j["requests_per_second"].get<double>(), 10.1, 1e-9);
  EXPECT_NEAR(j["errors_per_second"].get<double>(), 0.1, 1e-9);
  EXPECT_NEAR(j["pairs_per_second"].get<double>(), 1000, 1e-9);
  EXPECT_NEAR(j["source_share"]["exact"].get<double>(), 0.6, 1e-12);
  EXPECT_NEAR(j["source_share"]["default"].get<double>(), 0.1, 1e-12);
  EXPECT_EQ(j["latency"]["calls"].get<uint64_t>(), 600u);
  EXPECT_NEAR(j["latency"]["mean_seconds"].get<double>(), 0.0015, 1e-12);
  EXPECT_NEAR(j["latency"]["p50_seconds"].get<double>(), 0.0015, 1e-12);
  EXPECT_NEAR(j["latency"]["p99_seconds"].get<double>(), 0.00199, 1e-12);
  EXPECT_EQ(j["series"].size(), 100u);
  EXPECT_NEAR(j["series"].back()["pairs_per_second"].get<double>(), 1000, 1e-9);
  EXPECT_NEAR(j["series"][0]["pairs_per_second"].get<double>(), 0, 1e-9);
  EXPECT_DOUBLE_EQ(j["series"][0]["t"].get<double>(), -99);
}

TEST(SummariseTraffic, IdleWindowHasNoLatencyAndZeroRates) {
  std::deque<TrafficSample> samples;
  for (int t = 0; t <= 10; ++t) {
    TrafficSample s = At(5, 10, 1000);  // counters frozen: no traffic
    s.at_seconds = t;
    samples.push_back(s);
  }
  const nlohmann::json j = SummariseTraffic(samples, 60);
  EXPECT_DOUBLE_EQ(j["window_seconds"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(j["requests_per_second"].get<double>(), 0);
  EXPECT_EQ(j["latency"]["calls"].get<uint64_t>(), 0u);
  EXPECT_TRUE(j["latency"]["p99_seconds"].is_null());
  EXPECT_TRUE(j["latency"]["mean_seconds"].is_null());
  EXPECT_TRUE(j["source_share"]["exact"].is_null());
}

TEST(SummariseTraffic, OneSampleHasNoRates) {
  const nlohmann::json j = SummariseTraffic({At(1, 1, 1)}, 60);
  EXPECT_TRUE(j["requests_per_second"].is_null());
  EXPECT_TRUE(j["window_seconds"].is_null());
}

TEST(TrafficWindow, SamplesOnConstructionAndStopsPromptly) {
  double requests = 0;
  {
    // An hour between samples: the destructor must not wait for the next one.
    TrafficWindow window(
        [&] {
          TrafficSample s;
          s.requests_ok = requests;
          return s;
        },
        3600, 7200);
    requests = 42;
    window.SampleNow();
    const nlohmann::json j = window.Summarise(60);
    ASSERT_FALSE(j["requests_per_second"].is_null());
    EXPECT_GT(j["requests_per_second"].get<double>(), 0);
  }
}

RateProfile::Sampled S(uint64_t user, uint64_t item, float rate, uint64_t hash = 0) {
  return {user, item, hash, rate};
}

TEST(CompareProfiles, CanaryStatisticsOnThePairsInBoth) {
  RateProfile from, to;
  from.version = "A";
  to.version = "B";
  from.expected_kept_fraction = 0.2;
  to.expected_kept_fraction = 0.1;
  from.sample = {S(1, 1, 0.1f), S(1, 2, 0.2f), S(2, 1, 0.3f), S(2, 2, 0.4f)};
  to.sample = {S(1, 1, 0.1f), S(1, 2, 0.3f), S(2, 1, 0.3f), S(3, 3, 0.9f)};
  const VersionComparison c = CompareProfiles(from, to, 0.05);
  EXPECT_EQ(c.from_version, "A");
  EXPECT_EQ(c.to_version, "B");
  EXPECT_EQ(c.pairs_compared, 3u);
  EXPECT_EQ(c.pairs_only_from, 1u);  // (2, 2)
  EXPECT_EQ(c.pairs_only_to, 1u);    // (3, 3)
  EXPECT_NEAR(c.mean_delta, 0.1 / 3, 1e-6);
  EXPECT_NEAR(c.mean_abs_delta, 0.1 / 3, 1e-6);
  EXPECT_NEAR(c.max_abs_delta, 0.1, 1e-6);
  EXPECT_NEAR(c.fraction_moved, 1.0 / 3, 1e-12);
  // F_from(0.2) = 2/3, F_to(0.2) = 1/3; equal elsewhere.
  EXPECT_NEAR(c.ks_distance, 1.0 / 3, 1e-12);
  EXPECT_NEAR(c.mean_rate_from, 0.2, 1e-6);
  EXPECT_NEAR(c.mean_rate_to, 0.7 / 3, 1e-6);
  EXPECT_DOUBLE_EQ(c.expected_kept_fraction_from, 0.2);
  EXPECT_DOUBLE_EQ(c.expected_kept_fraction_to, 0.1);
}

TEST(CompareProfiles, CoarserSampleDecidesWhichPairsAreCompared) {
  RateProfile from, to;
  from.sample_bits = 0;  // every pair
  to.sample_bits = 1;    // pairs with an even hash
  from.sample = {S(1, 1, 0.1f, 2), S(1, 2, 0.2f, 3), S(2, 1, 0.3f, 4)};
  to.sample = {S(1, 1, 0.5f, 2), S(2, 1, 0.3f, 4)};
  const VersionComparison c = CompareProfiles(from, to, 0.05);
  EXPECT_EQ(c.sample_bits, 1);
  EXPECT_EQ(c.pairs_compared, 2u);  // (1, 2) has an odd hash: in neither sample at 1 bit
  EXPECT_EQ(c.pairs_only_from, 0u);
  EXPECT_NEAR(c.mean_delta, 0.2, 1e-6);
  EXPECT_NEAR(c.fraction_moved, 0.5, 1e-12);
}

uint64_t PairHash(uint64_t user, uint64_t item) {
  unsigned char key[16];
  std::memcpy(key, &user, 8);
  std::memcpy(key + 8, &item, 8);
  return XXH3_64bits(key, sizeof(key));
}

// The exact nearest-rank quantile (canary_stats.h's rank) of `values`.
double ExactQuantile(std::vector<float> values, double q) {
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  rank = std::clamp<size_t>(rank, 1, values.size());
  return values[rank - 1];
}

TEST(RateQuantiles, WithinTheBoundOfTheExactQuantileAndExactOnTies) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> uniform(1e-4f, 1.0f);
  std::lognormal_distribution<float> skewed(-3.0f, 1.0f);
  const double bound = std::ldexp(1.0, -(24 - RateQuantiles::kDroppedBits));
  for (int shape = 0; shape < 4; ++shape) {
    std::vector<float> values;
    RateQuantiles quantiles;
    for (int k = 0; k < 20000; ++k) {
      float v = 0;
      switch (shape) {
        case 0:
          v = uniform(rng);
          break;
        case 1:
          v = std::min(1.0f, skewed(rng));
          break;
        case 2:  // a third at one value
          v = k % 3 == 0 ? 0.2f : uniform(rng);
          break;
        case 3:  // two values only, 2% at 1
          v = k < 400 ? 1.0f : 0.05f;
          break;
      }
      values.push_back(v);
      quantiles.Add(v);
    }
    ASSERT_EQ(quantiles.count(), values.size());
    for (double q : {0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 1.0}) {
      const double exact = ExactQuantile(values, q);
      EXPECT_NEAR(quantiles.Quantile(q), exact, exact * bound) << "shape " << shape << " q " << q;
    }
    if (shape == 3) {  // every key holds one value: exact
      EXPECT_EQ(quantiles.Quantile(0.5), 0.05f);
      EXPECT_EQ(quantiles.Quantile(0.99), 1.0f);
    }
  }
  // Out-of-range input is clamped, never indexes out of the table.
  RateQuantiles odd;
  odd.Add(-1.0f);
  odd.Add(2.0f);
  odd.Add(std::nanf(""));
  EXPECT_EQ(odd.Quantile(0.0), 0.0f);
  EXPECT_EQ(odd.Quantile(1.0), 1.0f);
}

TEST(ProfileSnapshot, HistogramMeanAndSampleOfARealSnapshot) {
  const std::string root = testing::NewTempDir("profile");
  const testing::SyntheticSnapshot snap = testing::SyntheticSnapshot::Make(3, 20, 25);
  absl::StatusOr<std::string> version = testing::PublishSnapshot(root, snap);
  ASSERT_TRUE(version.ok()) << version.status();
  absl::StatusOr<std::shared_ptr<const SnapshotReader>> reader =
      VersionOpener().OpenStored(root, *version, SnapshotReaderOptions{});
  ASSERT_TRUE(reader.ok()) << reader.status();

  // The reference: every stored pair of the synthetic snapshot.
  std::vector<uint64_t> bins(20, 0);
  std::map<std::pair<uint64_t, uint64_t>, float> stored;
  double sum = 0;
  for (uint64_t u = 1; u <= 20; ++u) {
    for (uint64_t i = 1001; i <= 1025; ++i) {
      const float r = snap.StoredRate(u, i);
      if (r < 0) continue;
      stored[{u, i}] = r;
      sum += r;
      ++bins[std::min(19, static_cast<int>(std::ceil(r * 20)) - 1)];
    }
  }
  absl::StatusOr<RateProfile> p = ProfileSnapshot(**reader);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->version, *version);
  EXPECT_EQ(p->pairs, stored.size());
  EXPECT_EQ(p->pair_counts, bins);
  EXPECT_NEAR(p->mean_rate, sum / static_cast<double>(stored.size()), 1e-6);
  std::vector<float> all;
  for (const auto& [key, rate] : stored) all.push_back(rate);
  const double bound = std::ldexp(1.0, -(24 - RateQuantiles::kDroppedBits));
  EXPECT_EQ(p->min_rate, ExactQuantile(all, 0.0));
  EXPECT_EQ(p->max_rate, ExactQuantile(all, 1.0));
  EXPECT_NEAR(p->p50_rate, ExactQuantile(all, 0.5), ExactQuantile(all, 0.5) * bound);
  EXPECT_NEAR(p->p99_rate, ExactQuantile(all, 0.99), ExactQuantile(all, 0.99) * bound);
  EXPECT_EQ(p->sample_bits, 0);
  EXPECT_EQ(p->sample.size(), stored.size());
  EXPECT_DOUBLE_EQ(p->expected_kept_fraction, (*reader)->manifest().achieved_negative_mean_rate);

  // A smaller sample: exactly the pairs whose hash has its low bits zero.
  RateProfileOptions small;
  small.max_sample_pairs = 16;
  absl::StatusOr<RateProfile> q = ProfileSnapshot(**reader, small);
  ASSERT_TRUE(q.ok()) << q.status();
  ASSERT_GT(q->sample_bits, 0);
  EXPECT_LE(stored.size() >> q->sample_bits, 16u);
  size_t expected = 0;
  const uint64_t mask = (uint64_t{1} << q->sample_bits) - 1;
  for (const auto& [key, rate] : stored) expected += (PairHash(key.first, key.second) & mask) == 0;
  EXPECT_EQ(q->sample.size(), expected);
  for (const RateProfile::Sampled& s : q->sample) {
    EXPECT_EQ(s.hash & mask, 0u);
    EXPECT_FLOAT_EQ(s.rate, stored.at({s.user, s.item}));
  }
  // The profile compared with itself: nothing moved.
  const VersionComparison same = CompareProfiles(*p, *p, 0.0);
  EXPECT_EQ(same.pairs_compared, stored.size());
  EXPECT_DOUBLE_EQ(same.mean_abs_delta, 0);
  EXPECT_DOUBLE_EQ(same.ks_distance, 0);
}

}  // namespace
}  // namespace graphsieve

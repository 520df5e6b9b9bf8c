// The incremental rate profile of delta versions (server/rate_profile.h
// IncrementalRateProfiler) against the full scan of the same layered reader
// (ProfileSnapshot), on a real base and real deltas written by the builder;
// RateQuantiles::Remove against exact quantiles; and the version profiler
// taking the incremental path.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/offline/build_job.h"
#include "core/offline/delta_build.h"
#include "core/snapshot/layered_snapshot_reader.h"
#include "core/snapshot/version_opener.h"
#include "gtest/gtest.h"
#include "server/rate_profile.h"
#include "server/version_profiler.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

// RateQuantiles' relative bound (rate_profile.h).
const double kBound = std::ldexp(1.0, -(24 - RateQuantiles::kDroppedBits));

// Users [first_user, first_user + users), 20 impressions each.
void WriteLog(const std::string& path, uint64_t first_user, int users, int items, int shift) {
  std::ofstream out(path);
  out << "user_id,item_id,label\n";
  for (int u = 0; u < users; ++u) {
    for (int k = 0; k < 20; ++k) {
      out << first_user + u << "," << (u * 7 + k * 13 + shift) % items << ","
          << ((k + shift) % 6 == 0) << "\n";
    }
  }
}

BuildOptions Options(std::vector<std::string> logs, const std::string& root) {
  BuildOptions o;
  o.inputs = std::move(logs);
  o.snapshot_root = root;
  o.pipeline.sketch_dim = 16;
  o.pipeline.threads = 1;
  return o;
}

// Nearest-rank quantile (canary_stats.h's rank) of `sorted`.
double ExactQuantile(const std::vector<float>& sorted, double q) {
  size_t rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  rank = std::clamp<size_t>(rank, 1, sorted.size());
  return sorted[rank - 1];
}

// A real base (200 users) and two deltas over it, each with new users and
// new impressions of base users (so the deltas override base pairs); the
// second re-reads the first's log as a delta does.
struct World {
  std::string root, base, d1, d2;
};

World Build() {
  World w;
  const std::string dir = testing::NewTempDir("incremental_profile");
  w.root = dir + "/root";
  const std::string base_log = dir + "/base.csv", log1 = dir + "/d1.csv", log2 = dir + "/d2.csv";
  WriteLog(base_log, 1, 200, 300, 0);
  WriteLog(log1, 500000, 10, 300, 0);
  WriteLog(log2, 1, 15, 300, 5);  // base users' new impressions
  {
    std::ofstream more(log1, std::ios::app);
    for (int u = 30; u < 40; ++u) more << u << "," << (u * 11) % 300 << ",1\n";
  }
  auto base = RunBuild(Options({base_log}, w.root), BuildObserver());
  EXPECT_TRUE(base.ok()) << base.status();
  if (!base.ok()) return w;
  w.base = base->version;
  DeltaBuildOptions d;
  d.base = w.base;
  d.build = Options({log1}, w.root);
  auto d1 = RunDeltaBuild(d, BuildObserver());
  EXPECT_TRUE(d1.ok()) << d1.status();
  if (!d1.ok()) return w;
  w.d1 = d1->version;
  d.build = Options({log1, log2}, w.root);
  auto d2 = RunDeltaBuild(d, BuildObserver());
  EXPECT_TRUE(d2.ok()) << d2.status();
  if (d2.ok()) w.d2 = d2->version;
  return w;
}

// Pairs of the delta of `layered` that its base stores too.
uint64_t Overridden(const LayeredSnapshotReader& layered) {
  std::vector<uint64_t> users, items;
  EXPECT_TRUE(layered.delta()
                  .ForEachPair([&](uint64_t u, uint64_t i, float) {
                    users.push_back(u);
                    items.push_back(i);
                  })
                  .ok());
  std::unique_ptr<bool[]> found(new bool[users.size()]);
  std::vector<float> rates(users.size());
  EXPECT_TRUE(layered.base()
                  .LookupPairs(users, items, absl::MakeSpan(found.get(), users.size()),
                               absl::MakeSpan(rates))
                  .ok());
  return static_cast<uint64_t>(std::count(found.get(), found.get() + users.size(), true));
}

// `got` (incremental) against `full` (ProfileSnapshot of the same reader) and
// the exact rates the reader serves.
void ExpectSameProfile(const RateProfile& got, const RateProfile& full,
                       const SnapshotReader& reader) {
  std::vector<float> rates;
  ASSERT_TRUE(reader.ForEachPair([&](uint64_t, uint64_t, float r) { rates.push_back(r); }).ok());
  std::sort(rates.begin(), rates.end());
  ASSERT_FALSE(rates.empty());
  EXPECT_EQ(got.version, full.version);
  EXPECT_EQ(got.pairs, full.pairs);
  EXPECT_EQ(got.pairs, rates.size());
  EXPECT_EQ(got.pair_counts, full.pair_counts);
  EXPECT_EQ(got.bin_upper_edges, full.bin_upper_edges);
  EXPECT_NEAR(got.mean_rate, full.mean_rate, 1e-12 * full.mean_rate);
  EXPECT_EQ(got.sample_bits, full.sample_bits);
  ASSERT_EQ(got.sample.size(), full.sample.size());
  for (size_t k = 0; k < got.sample.size(); ++k) {
    EXPECT_EQ(got.sample[k].user, full.sample[k].user) << k;
    EXPECT_EQ(got.sample[k].item, full.sample[k].item) << k;
    EXPECT_EQ(got.sample[k].hash, full.sample[k].hash) << k;
    EXPECT_EQ(got.sample[k].rate, full.sample[k].rate) << k;
  }
  const double exact50 = ExactQuantile(rates, 0.5), exact99 = ExactQuantile(rates, 0.99);
  EXPECT_NEAR(got.p50_rate, exact50, exact50 * kBound);
  EXPECT_NEAR(got.p99_rate, exact99, exact99 * kBound);
  EXPECT_NEAR(got.min_rate, rates.front(), rates.front() * kBound);
  EXPECT_NEAR(got.max_rate, rates.back(), rates.back() * kBound);
  EXPECT_EQ(got.expected_kept_fraction, full.expected_kept_fraction);
  EXPECT_EQ(got.negative_instances, full.negative_instances);
}

TEST(IncrementalProfileTest, DeltasOverAKeptBaseEqualTheFullScan) {
  const World w = Build();
  ASSERT_FALSE(w.d2.empty());
  VersionOpener opener;
  auto base = opener.Open(w.root, w.base, SnapshotReaderOptions());
  auto d1 = opener.Open(w.root, w.d1, SnapshotReaderOptions());
  auto d2 = opener.Open(w.root, w.d2, SnapshotReaderOptions());
  ASSERT_TRUE(base.ok() && d1.ok() && d2.ok());
  const auto& l1 = dynamic_cast<const LayeredSnapshotReader&>(**d1);
  const auto& l2 = dynamic_cast<const LayeredSnapshotReader&>(**d2);
  // The deltas replace base pairs (Remove is exercised) and add new ones.
  EXPECT_GT(Overridden(l1), 0u);
  EXPECT_GT(Overridden(l2), 0u);
  EXPECT_GT(l1.delta().manifest().pairs, Overridden(l1));

  RateProfileOptions every;  // every pair sampled at this size
  RateProfileOptions coarse;
  coarse.max_sample_pairs = 64;  // a sampled fraction; the layered bound may add a bit
  for (const RateProfileOptions& options : {every, coarse}) {
    SCOPED_TRACE(options.max_sample_pairs);
    IncrementalRateProfiler profiler(options);
    absl::StatusOr<RateProfile> p0 = profiler.Profile(**base);
    ASSERT_TRUE(p0.ok()) << p0.status();
    EXPECT_FALSE(p0->incremental);
    EXPECT_EQ(p0->pairs_scanned, (*base)->manifest().pairs);
    EXPECT_EQ(profiler.kept_version(), w.base);
    absl::StatusOr<RateProfile> full0 = ProfileSnapshot(**base, options);
    ASSERT_TRUE(full0.ok());
    ExpectSameProfile(*p0, *full0, **base);

    for (const auto* layered : {&l1, &l2}) {
      absl::StatusOr<RateProfile> p = profiler.Profile(*layered);
      ASSERT_TRUE(p.ok()) << p.status();
      EXPECT_TRUE(p->incremental);
      EXPECT_EQ(p->pairs_scanned, layered->delta().manifest().pairs);  // the delta's alone
      EXPECT_EQ(profiler.kept_version(), w.base);                      // the base's, unchanged
      absl::StatusOr<RateProfile> full = ProfileSnapshot(*layered, options);
      ASSERT_TRUE(full.ok());
      EXPECT_EQ(full->pairs_scanned, full->pairs);
      ExpectSameProfile(*p, *full, *layered);
    }
    // Back to d1 after d2: the kept base is not changed by a delta's profile.
    absl::StatusOr<RateProfile> again = profiler.Profile(l1);
    ASSERT_TRUE(again.ok());
    absl::StatusOr<RateProfile> full1 = ProfileSnapshot(l1, options);
    ASSERT_TRUE(full1.ok());
    ExpectSameProfile(*again, *full1, l1);
  }
}

TEST(IncrementalProfileTest, FirstDeltaOverAnUnkeptBaseScansTheBaseOnce) {
  const World w = Build();
  ASSERT_FALSE(w.d2.empty());
  VersionOpener opener;
  auto d1 = opener.Open(w.root, w.d1, SnapshotReaderOptions());
  auto d2 = opener.Open(w.root, w.d2, SnapshotReaderOptions());
  ASSERT_TRUE(d1.ok() && d2.ok());
  const auto& l1 = dynamic_cast<const LayeredSnapshotReader&>(**d1);
  const auto& l2 = dynamic_cast<const LayeredSnapshotReader&>(**d2);
  IncrementalRateProfiler profiler;
  absl::StatusOr<RateProfile> p1 = profiler.Profile(l1);
  ASSERT_TRUE(p1.ok()) << p1.status();
  EXPECT_FALSE(p1->incremental);
  EXPECT_EQ(p1->pairs_scanned, l1.base().manifest().pairs + l1.delta().manifest().pairs);
  EXPECT_EQ(profiler.kept_version(), w.base);
  absl::StatusOr<RateProfile> full1 = ProfileSnapshot(l1);
  ASSERT_TRUE(full1.ok());
  ExpectSameProfile(*p1, *full1, l1);
  absl::StatusOr<RateProfile> p2 = profiler.Profile(l2);
  ASSERT_TRUE(p2.ok()) << p2.status();
  EXPECT_TRUE(p2->incremental);
  EXPECT_EQ(p2->pairs_scanned, l2.delta().manifest().pairs);
}

TEST(IncrementalProfileTest, TheVersionProfilerProfilesADeltaFromItsBase) {
  const World w = Build();
  ASSERT_FALSE(w.d1.empty());
  VersionOpener opener;
  auto serving = [&](const std::string& version) {
    auto s = std::make_shared<ServingSnapshot>();
    s->version = version;
    auto reader = opener.Open(w.root, version, SnapshotReaderOptions());
    EXPECT_TRUE(reader.ok()) << reader.status();
    if (reader.ok()) s->reader = *std::move(reader);
    return s;
  };
  VersionProfilerOptions o;
  o.nice = 0;
  VersionProfiler profiler(std::move(o));
  auto base = serving(w.base);
  profiler.OnServing(base);
  profiler.WaitIdle();
  nlohmann::json j = profiler.ToJson();
  EXPECT_EQ(j["rate_profile"]["incremental"], false);
  EXPECT_EQ(j["rate_profile"]["pairs_scanned"], base->reader->manifest().pairs);
  auto d1 = serving(w.d1);
  const uint64_t delta_pairs =
      dynamic_cast<const LayeredSnapshotReader&>(*d1->reader).delta().manifest().pairs;
  profiler.OnServing(d1);
  profiler.WaitIdle();
  j = profiler.ToJson();
  EXPECT_EQ(j["rate_profile"]["version"], w.d1);
  EXPECT_EQ(j["rate_profile"]["incremental"], true);
  EXPECT_EQ(j["rate_profile"]["pairs_scanned"], delta_pairs);
  EXPECT_GT(j["rate_profile"]["pairs"].get<uint64_t>(), 4 * delta_pairs);
  EXPECT_EQ(j["comparison"]["from_version"], w.base);
}

TEST(IncrementalProfileTest, RemoveKeepsQuantilesWithinTheBound) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<float> uniform(1e-4f, 1.0f);
  std::lognormal_distribution<float> skewed(-3.0f, 1.0f);
  for (int shape = 0; shape < 2; ++shape) {
    std::vector<float> all;
    RateQuantiles quantiles;
    for (int k = 0; k < 20000; ++k) {
      const float v = shape == 0 ? uniform(rng) : std::min(1.0f, skewed(rng));
      all.push_back(v);
      quantiles.Add(v);
    }
    // Remove the largest tenth and every third of the rest: min, max and the
    // keys' ranges all move.
    std::vector<float> sorted = all;
    std::sort(sorted.begin(), sorted.end());
    const float cut = sorted[sorted.size() * 9 / 10];
    std::vector<float> left;
    for (size_t k = 0; k < all.size(); ++k) {
      if (all[k] >= cut || k % 3 == 0) {
        quantiles.Remove(all[k]);
      } else {
        left.push_back(all[k]);
      }
    }
    std::sort(left.begin(), left.end());
    ASSERT_EQ(quantiles.count(), left.size());
    for (double q : {0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 1.0}) {
      const double exact = ExactQuantile(left, q);
      EXPECT_NEAR(quantiles.Quantile(q), exact, exact * kBound) << "shape " << shape << " q " << q;
    }
    EXPECT_NEAR(quantiles.min(), left.front(), left.front() * kBound);
    EXPECT_NEAR(quantiles.max(), left.back(), left.back() * kBound);
  }
  // A key emptied and filled again has the new values' range: exact on ties.
  RateQuantiles q;
  q.Add(0.3f);
  q.Add(0.30001f);
  q.Remove(0.3f);
  q.Remove(0.30001f);
  q.Add(0.2f);
  q.Add(0.2f);
  EXPECT_EQ(q.count(), 2u);
  EXPECT_EQ(q.Quantile(0.5), 0.2f);
  EXPECT_EQ(q.max(), 0.2f);
}

}  // namespace
}  // namespace graphsieve

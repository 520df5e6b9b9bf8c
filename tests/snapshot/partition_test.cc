// Partitioned versions (docs/SNAPSHOT.md "Partitioned versions"):
// SlicePartition puts every pair in exactly the part core/io/partition.h
// names, with that part's user nodes and every item node; WriteVersionDir
// writes part-<I>/ directories that SnapshotReader opens by partition, each
// answering its own pairs exactly; the partition argument is checked. A part
// with no pairs (only nodes: a delta's part whose users logged nothing new) is
// written only when allowed and reads back in every lookup mode; the parts
// opened as one reader answer every pair and node as the whole version.
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "core/io/partition.h"
#include "core/snapshot/partition_split.h"
#include "core/snapshot/partitioned_snapshot_reader.h"
#include "core/snapshot/snapshot_reader.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/snapshot_writer.h"
#include "core/snapshot/version_opener.h"
#include "gtest/gtest.h"
#include "tests/snapshot/synthetic.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using ::graphsieve::testing::ScopedTempDir;
using testing_util::MakeSynthetic;
using testing_util::Synthetic;

TEST(SlicePartitionTest, EveryPairInExactlyItsPartWithItsUsersAndAllItems) {
  Synthetic s = MakeSynthetic(90, 70, 12, 21);
  constexpr uint32_t kParts = 3;
  std::set<std::pair<uint64_t, uint64_t>> seen;
  uint64_t instances = 0;
  for (uint32_t p = 0; p < kParts; ++p) {
    PartSlice slice = SlicePartition(s.pairs, s.result, p, kParts);
    const PairTable& t = slice.pairs;
    ASSERT_EQ(slice.result.rate.size(), t.num_pairs());
    ASSERT_EQ(t.item_ids, s.pairs.item_ids);
    for (uint64_t u : t.user_ids) EXPECT_EQ(PartitionOfUser(u, kParts), p);
    for (size_t i = 0; i < t.num_pairs(); ++i) {
      const uint64_t u = t.user_ids[t.pair_user[i]], it = t.item_ids[t.pair_item[i]];
      EXPECT_TRUE(seen.insert({u, it}).second) << "pair in two parts";
    }
    instances += t.total_instances;
    // Nodes: the part's users, then all items, with their records and sketches.
    const NodeTable& n = slice.result.nodes;
    ASSERT_EQ(n.ids.size(), t.num_users() + t.num_items());
    for (size_t k = 0; k < n.ids.size(); ++k) {
      const bool item = k >= t.num_users();
      EXPECT_EQ(n.is_item[k] != 0, item);
      EXPECT_EQ(n.ids[k], item ? t.item_ids[k - t.num_users()] : t.user_ids[k]);
    }
    EXPECT_EQ(n.sketch.size(), n.ids.size() * static_cast<size_t>(n.sketch_dim));
  }
  EXPECT_EQ(seen.size(), s.pairs.num_pairs());
  EXPECT_EQ(instances, s.pairs.total_instances);
}

std::string PublishParts(const std::string& root, Synthetic& s, uint32_t parts,
                         const SnapshotWriterOptions& options = SnapshotWriterOptions()) {
  auto store = SnapshotStore::Create({root, true});
  EXPECT_TRUE(store.ok());
  auto lock = (*store)->AcquirePublishLock(0);
  EXPECT_TRUE(lock.ok());
  const std::string version = (*store)->NewVersionId(**lock, absl::Now(), parts);
  s.info.version = version;
  auto w = WriteVersionDir((*store)->TempDir(version), s.pairs, s.result, s.info, options, parts);
  EXPECT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE((*store)->Publish(**lock, version).ok());
  return version;
}

TEST(PartitionedVersionTest, EachPartOpensByPartitionAndAnswersItsPairs) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(60, 50, 8, 22);
  const std::string version = PublishParts(dir.path(), s, 3);
  SnapshotReaderOptions whole;
  auto refused = VersionOpener().OpenStored(dir.path(), version, whole);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "is partitioned")) << refused.status();
  size_t found_total = 0;
  for (int p = 0; p < 3; ++p) {
    SnapshotReaderOptions o;
    o.partition = p;
    auto reader = VersionOpener().OpenStored(dir.path(), version, o);
    ASSERT_TRUE(reader.ok()) << reader.status();
    EXPECT_EQ((*reader)->manifest().partition, static_cast<uint32_t>(p));
    EXPECT_EQ((*reader)->manifest().num_partitions, 3u);
    EXPECT_TRUE((*reader)->load_stats().index_mapped);
    for (size_t i = 0; i < s.pairs.num_pairs(); ++i) {
      const uint64_t u = s.pairs.user_ids[s.pairs.pair_user[i]];
      const uint64_t it = s.pairs.item_ids[s.pairs.pair_item[i]];
      bool found = false;
      float rate = 0;
      ASSERT_TRUE((*reader)->LookupPairs({&u, 1}, {&it, 1}, {&found, 1}, {&rate, 1}).ok());
      EXPECT_EQ(found, PartitionOfUser(u, 3) == static_cast<uint32_t>(p));
      if (found) {
        EXPECT_EQ(rate, s.result.rate[i]);
        ++found_total;
      }
      NodeView view;
      EXPECT_TRUE((*reader)->FindNode(/*is_item=*/true, it, &view)) << "every item in every part";
    }
  }
  EXPECT_EQ(found_total, s.pairs.num_pairs());
  SnapshotReaderOptions beyond;
  beyond.partition = 3;
  auto missing = VersionOpener().OpenStored(dir.path(), version, beyond);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "has no partition 3"))
      << missing.status();
}

TEST(PartitionedVersionTest, AnUnpartitionedVersionIsItsOwnPartitionZero) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(30, 20, 5, 23);
  const std::string version = PublishParts(dir.path(), s, 1);
  SnapshotReaderOptions zero;
  zero.partition = 0;
  auto reader = VersionOpener().OpenStored(dir.path(), version, zero);
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->manifest().num_partitions, 1u);
  SnapshotReaderOptions one;
  one.partition = 1;
  auto refused = VersionOpener().OpenStored(dir.path(), version, one);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "is not partitioned"))
      << refused.status();
}

// One user in three parts: two parts hold no pairs and no users, only every
// item's node. Refused by default (a full build's mistake), written with
// allow_no_pairs, and every part opens and answers in every lookup mode.
TEST(PartitionedVersionTest, APartWithNoPairsIsWrittenOnlyWhenAllowedAndReadsBack) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(/*users=*/1, /*items=*/30, /*pairs_per_user=*/6, 24);
  const uint64_t user = s.pairs.user_ids[0];
  const uint32_t home = PartitionOfUser(user, 3);
  {
    auto store = SnapshotStore::Create({dir.path() + "/refused", true});
    ASSERT_TRUE(store.ok());
    auto w = WriteVersionDir((*store)->TempDir("20260101T000000Z-00000001"), s.pairs, s.result,
                             s.info, SnapshotWriterOptions(), 3);
    ASSERT_FALSE(w.ok());
    EXPECT_EQ(w.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(w.status().message(), "holds no pairs")) << w.status();
  }
  SnapshotWriterOptions allow;
  allow.allow_no_pairs = true;
  const std::string version = PublishParts(dir.path(), s, 3, allow);
  struct Mode {
    LookupMode lookup;
    bool index_file;
  };
  for (const Mode mode : {Mode{LookupMode::kMemory, true}, Mode{LookupMode::kMemory, false},
                          Mode{LookupMode::kRocksDb, true}}) {
    for (int p = 0; p < 3; ++p) {
      SCOPED_TRACE(::testing::Message() << "part " << p << " lookup " << LookupModeName(mode.lookup)
                                        << " index file " << mode.index_file);
      SnapshotReaderOptions o;
      o.partition = p;
      o.lookup = mode.lookup;
      o.use_index_file = mode.index_file;
      auto reader = VersionOpener().OpenStored(dir.path(), version, o);
      ASSERT_TRUE(reader.ok()) << reader.status();
      const bool mine = static_cast<uint32_t>(p) == home;
      EXPECT_EQ((*reader)->manifest().pairs, mine ? s.pairs.num_pairs() : 0u);
      size_t scanned = 0;
      ASSERT_TRUE((*reader)->ForEachPair([&](uint64_t, uint64_t, float) { ++scanned; }).ok());
      EXPECT_EQ(scanned, mine ? s.pairs.num_pairs() : 0u);
      NodeView view;
      EXPECT_EQ((*reader)->FindNode(/*is_item=*/false, user, &view), mine);
      for (uint64_t item : s.pairs.item_ids) {
        ASSERT_TRUE((*reader)->FindNode(/*is_item=*/true, item, &view)) << item;
      }
      for (size_t i = 0; i < s.pairs.num_pairs(); ++i) {
        const uint64_t it = s.pairs.item_ids[s.pairs.pair_item[i]];
        bool found = !mine;
        float rate = -1;
        ASSERT_TRUE((*reader)->LookupPairs({&user, 1}, {&it, 1}, {&found, 1}, {&rate, 1}).ok());
        EXPECT_EQ(found, mine);
        if (mine) {
          EXPECT_EQ(rate, s.result.rate[i]);
        }
      }
    }
  }
}

// The parts opened as one reader (the delta build's view of a partitioned
// base) answer every stored pair, unknown pair and node as the parts do.
TEST(PartitionedVersionTest, PartsOpenedAsOneReaderRouteUsersToTheirPart) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(60, 50, 8, 25);
  const std::string version = PublishParts(dir.path(), s, 3);
  auto store = SnapshotStore::Create({dir.path()});
  ASSERT_TRUE(store.ok());
  auto whole = VersionOpener().OpenAllParts(**store, version, SnapshotReaderOptions());
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(static_cast<const PartitionedSnapshotReader&>(**whole).num_parts(), 3u);
  EXPECT_EQ((*whole)->manifest().num_partitions, 3u);
  // Every stored pair, and each user with an item it did not log, in one batch.
  std::vector<uint64_t> users, items;
  for (size_t i = 0; i < s.pairs.num_pairs(); ++i) {
    users.push_back(s.pairs.user_ids[s.pairs.pair_user[i]]);
    items.push_back(s.pairs.item_ids[s.pairs.pair_item[i]]);
  }
  const size_t stored = users.size();
  for (uint64_t u : s.pairs.user_ids) users.push_back(u), items.push_back(12345);
  std::unique_ptr<bool[]> found(new bool[users.size()]);
  std::vector<float> rates(users.size(), -1);
  ASSERT_TRUE((*whole)
                  ->LookupPairs(users, items, absl::MakeSpan(found.get(), users.size()),
                                absl::MakeSpan(rates))
                  .ok());
  for (size_t i = 0; i < users.size(); ++i) {
    EXPECT_EQ(found[i], i < stored) << i;
    if (i < stored) {
      EXPECT_EQ(rates[i], s.result.rate[i]) << i;
    }
  }
  for (size_t k = 0; k < s.result.nodes.ids.size(); ++k) {
    NodeView view;
    const bool item = s.result.nodes.is_item[k] != 0;
    ASSERT_TRUE((*whole)->FindNode(item, s.result.nodes.ids[k], &view)) << k;
    EXPECT_EQ(view.record.degree, s.result.nodes.records[k].degree) << k;
    std::vector<float> row(s.result.nodes.sketch_dim);
    NodeRecord record;
    EXPECT_TRUE(item ? (*whole)->LookupItem(s.result.nodes.ids[k], &record, absl::MakeSpan(row))
                     : (*whole)->LookupUser(s.result.nodes.ids[k], &record, absl::MakeSpan(row)));
    EXPECT_EQ(record.degree, s.result.nodes.records[k].degree) << k;
  }
  size_t scanned = 0;
  ASSERT_TRUE((*whole)->ForEachPair([&](uint64_t, uint64_t, float) { ++scanned; }).ok());
  EXPECT_EQ(scanned, s.pairs.num_pairs());
}

}  // namespace
}  // namespace graphsieve

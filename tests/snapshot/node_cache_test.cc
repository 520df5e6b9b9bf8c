// NodeCache over a real snapshot (writer + store + RocksDB): known nodes come
// back with the stored record and sketch row, unknown ids are nullptr,
// repeated lookups return the same entry, concurrent lookups agree, and
// unknown ids stop being remembered past the bound. Also SnapshotReader::FindNode,
// the one node lookup of the request path, in both lookup modes.
#include "core/snapshot/node_cache.h"

#include <set>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
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

std::string WriteAndPublish(const std::string& root, Synthetic& s) {
  absl::StatusOr<std::string> version = testing_util::PublishSynthetic(root, s);
  EXPECT_TRUE(version.ok()) << version.status();
  return version.value_or("");
}

// An id that is neither a user nor an item of `s`.
uint64_t UnknownId(const Synthetic& s, uint64_t from) {
  std::set<uint64_t> known(s.result.nodes.ids.begin(), s.result.nodes.ids.end());
  while (known.count(from) != 0) ++from;
  return from;
}

TEST(NodeCacheTest, KnownUnknownStableAndBounded) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(/*users=*/12, /*items=*/15, /*pairs_per_user=*/4, /*seed=*/3);
  const std::string version = WriteAndPublish(dir.path(), s);
  SnapshotReaderOptions options;
  options.lookup = LookupMode::kRocksDb;
  auto reader = VersionOpener().OpenStored(dir.path(), version, options);
  ASSERT_TRUE(reader.ok()) << reader.status();
  NodeCache cache(**reader, /*max_unknown=*/3);

  const NodeTable& t = s.result.nodes;
  for (size_t k = 0; k < t.ids.size(); ++k) {
    const CachedNode* n = cache.Find(t.is_item[k], t.ids[k]);
    ASSERT_NE(n, nullptr) << k;
    EXPECT_EQ(n->record.degree, t.records[k].degree);
    EXPECT_FLOAT_EQ(n->record.mean_rate, t.records[k].mean_rate);
    ASSERT_EQ(n->sketch.size(), 4u);
    for (int d = 0; d < 4; ++d) EXPECT_FLOAT_EQ(n->sketch[d], t.SketchRow(k)[d]);
    EXPECT_EQ(cache.Find(t.is_item[k], t.ids[k]), n) << "same entry on a hit";
  }
  // A user id asked as an item is unknown (users and items are separate).
  EXPECT_EQ(cache.Find(/*is_item=*/true, s.pairs.user_ids[0]), nullptr);
  EXPECT_EQ(cache.known_size(), 27u);
  EXPECT_EQ(cache.unknown_size(), 1u);

  // Concurrent readers agree on every entry.
  std::vector<const CachedNode*> seen(8 * 15);
  std::vector<std::thread> threads;
  for (int w = 0; w < 8; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < 15; ++i) seen[w * 15 + i] = cache.Find(true, s.pairs.item_ids[i]);
    });
  }
  for (auto& th : threads) th.join();
  for (int w = 0; w < 8; ++w) {
    for (int i = 0; i < 15; ++i) EXPECT_EQ(seen[w * 15 + i], cache.Find(true, s.pairs.item_ids[i]));
  }
  // Unknown ids: always nullptr, remembered only up to the bound.
  uint64_t id = 0;
  for (int k = 0; k < 10; ++k) {
    id = UnknownId(s, id + 1);
    EXPECT_EQ(cache.Find(false, id), nullptr);
  }
  EXPECT_EQ(cache.known_size(), 27u);
  EXPECT_EQ(cache.unknown_size(), 3u) << "unknown ids are remembered up to max_unknown only";
}

// FindNode gives the same node whatever the lookup mode (index or node cache).
TEST(FindNodeTest, SameAnswerInBothLookupModes) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(/*users=*/30, /*items=*/40, /*pairs_per_user=*/5, /*seed=*/9);
  const std::string version = WriteAndPublish(dir.path(), s);
  const NodeTable& t = s.result.nodes;
  const uint64_t unknown = UnknownId(s, 1);
  for (LookupMode mode : {LookupMode::kMemory, LookupMode::kRocksDb}) {
    SnapshotReaderOptions options;
    options.lookup = mode;
    auto reader = VersionOpener().OpenStored(dir.path(), version, options);
    ASSERT_TRUE(reader.ok()) << reader.status();
    for (size_t k = 0; k < t.ids.size(); ++k) {
      NodeView view;
      ASSERT_TRUE((*reader)->FindNode(t.is_item[k], t.ids[k], &view)) << LookupModeName(mode);
      EXPECT_EQ(view.record.degree, t.records[k].degree);
      EXPECT_EQ(view.record.component, t.records[k].component);
      EXPECT_FLOAT_EQ(view.record.mean_rate, t.records[k].mean_rate);
      ASSERT_EQ(view.sketch.size(), 4u);
      for (int d = 0; d < 4; ++d) EXPECT_FLOAT_EQ(view.sketch[d], t.SketchRow(k)[d]);
    }
    NodeView view;
    EXPECT_FALSE((*reader)->FindNode(/*is_item=*/false, unknown, &view)) << LookupModeName(mode);
    EXPECT_FALSE((*reader)->FindNode(/*is_item=*/true, unknown, &view)) << LookupModeName(mode);
  }
}

}  // namespace
}  // namespace graphsieve

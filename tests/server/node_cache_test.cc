// NodeCache over a real snapshot: known nodes come back with the stored
// record and sketch row, unknown ids are nullptr, repeated lookups return the
// same entry, concurrent lookups agree, and unknown ids stop being remembered
// past the bound.
#include "server/node_cache.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "tests/server/test_snapshots.h"

namespace graphsieve {
namespace {

TEST(NodeCacheTest, KnownUnknownStableAndBounded) {
  const std::string root = testing::MakeTempDir("nodecache");
  const testing::SyntheticSnapshot snap = testing::SyntheticSnapshot::Make(4);
  auto version = testing::PublishSnapshot(root, snap);
  ASSERT_TRUE(version.ok()) << version.status();
  auto reader = SnapshotReader::Open(root, *version, SnapshotReaderOptions());
  ASSERT_TRUE(reader.ok()) << reader.status();
  NodeCache cache(**reader, /*max_unknown=*/3);

  const NodeTable& t = snap.result.nodes;
  for (uint64_t u = 1; u <= 12; ++u) {
    const CachedNode* n = cache.Find(/*is_item=*/false, u);
    ASSERT_NE(n, nullptr) << u;
    const int idx = snap.UserNode(u);
    EXPECT_EQ(n->record.degree, t.records[idx].degree);
    EXPECT_FLOAT_EQ(n->record.mean_rate, t.records[idx].mean_rate);
    ASSERT_EQ(n->sketch.size(), 4u);
    for (int d = 0; d < 4; ++d) EXPECT_FLOAT_EQ(n->sketch[d], t.SketchRow(idx)[d]);
    EXPECT_EQ(cache.Find(false, u), n) << "same entry on a hit";
  }
  EXPECT_EQ(cache.Find(/*is_item=*/true, 5), nullptr);   // 5 is a user id, not an item
  EXPECT_NE(cache.Find(/*is_item=*/true, 1005), nullptr);
  EXPECT_EQ(cache.known_size(), 13u);

  // Concurrent readers agree on every entry.
  std::vector<const CachedNode*> seen(8 * 15);
  std::vector<std::thread> threads;
  for (int w = 0; w < 8; ++w) {
    threads.emplace_back([&, w] {
      for (int i = 0; i < 15; ++i) seen[w * 15 + i] = cache.Find(true, 1001 + i);
    });
  }
  for (auto& th : threads) th.join();
  for (int w = 1; w < 8; ++w) {
    for (int i = 0; i < 15; ++i) EXPECT_EQ(seen[w * 15 + i], seen[i]);
  }
  // Unknown ids: always nullptr, remembered only up to the bound.
  for (uint64_t id = 50000; id < 50010; ++id) EXPECT_EQ(cache.Find(false, id), nullptr);
  EXPECT_EQ(cache.known_size(), 12u + 15u);
  EXPECT_EQ(cache.unknown_size(), 3u) << "unknown ids are remembered up to max_unknown only";
}

}  // namespace
}  // namespace graphsieve

#include "client/batching.h"

#include "gtest/gtest.h"

namespace graphsieve {
namespace {

TEST(SplitIntoChunks, CoversTheBatchInOrderWithinTheLimit) {
  for (size_t n : {1u, 2u, 9u, 10u, 11u, 99u, 100u, 101u, 1000u, 10001u}) {
    for (size_t max : {1u, 3u, 10u, 100u, 10000u}) {
      const std::vector<ChunkRange> chunks = SplitIntoChunks(n, max);
      ASSERT_FALSE(chunks.empty());
      EXPECT_EQ(chunks.front().begin, 0u);
      EXPECT_EQ(chunks.back().end, n);
      EXPECT_EQ(chunks.size(), (n + max - 1) / max) << n << " " << max;
      size_t smallest = n, largest = 0;
      for (size_t i = 0; i < chunks.size(); ++i) {
        if (i > 0) {
          EXPECT_EQ(chunks[i].begin, chunks[i - 1].end);
        }
        EXPECT_LE(chunks[i].size(), max);
        EXPECT_GE(chunks[i].size(), 1u);
        smallest = std::min(smallest, chunks[i].size());
        largest = std::max(largest, chunks[i].size());
      }
      EXPECT_LE(largest - smallest, 1u) << "chunks should be balanced: " << n << " " << max;
    }
  }
}

TEST(SplitIntoChunks, BalancesInsteadOfLeavingATinyTail) {
  const std::vector<ChunkRange> chunks = SplitIntoChunks(10001, 10000);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].size(), 5001u);
  EXPECT_EQ(chunks[1].size(), 5000u);
}

TEST(SplitIntoChunks, EmptyBatchHasNoChunks) { EXPECT_TRUE(SplitIntoChunks(0, 5).empty()); }

TEST(BackoffSeconds, GrowsGeometricallyUpToTheCapWithBoundedJitter) {
  BackoffPolicy p;
  p.initial_seconds = 0.1;
  p.multiplier = 2.0;
  p.max_seconds = 1.0;
  p.jitter = 0.25;
  EXPECT_DOUBLE_EQ(BackoffSeconds(p, 0, 0.5), 0.1);
  EXPECT_DOUBLE_EQ(BackoffSeconds(p, 1, 0.5), 0.2);
  EXPECT_DOUBLE_EQ(BackoffSeconds(p, 3, 0.5), 0.8);
  EXPECT_DOUBLE_EQ(BackoffSeconds(p, 4, 0.5), 1.0);   // capped
  EXPECT_DOUBLE_EQ(BackoffSeconds(p, 40, 0.5), 1.0);  // still capped, no overflow
  EXPECT_DOUBLE_EQ(BackoffSeconds(p, 0, 0.0), 0.1 * 0.75);
  EXPECT_NEAR(BackoffSeconds(p, 0, 0.999999), 0.1 * 1.25, 1e-6);
  EXPECT_LT(BackoffSeconds(p, 2, 0.1), BackoffSeconds(p, 2, 0.9));
}

}  // namespace
}  // namespace graphsieve

// BatchScorer over a real snapshot (writer + store + RocksDB), in both lookup
// modes: stored pairs are kExact with the stored rate, unseen pairs of known
// nodes kInferred with ScoreUnseenPair's value, pairs with an unknown node
// kDefault with the policy's rate; both modes give identical answers;
// should_stop aborts between chunks; a chunk split across a BlockPool's
// helpers gives the same answers and counts as one thread.
#include "core/serving/batch_scorer.h"

#include "core/serving/block_pool.h"

#include <map>
#include <set>
#include <vector>

#include "absl/time/clock.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/snapshot_writer.h"
#include "core/snapshot/version_opener.h"
#include "gtest/gtest.h"
#include "tests/serving/block_pool_test_access.h"
#include "tests/snapshot/synthetic.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using ::graphsieve::testing::ScopedTempDir;
using testing_util::MakeSynthetic;
using testing_util::Synthetic;

class BatchScorerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    s_ = MakeSynthetic(/*users=*/40, /*items=*/60, /*pairs_per_user=*/6, /*seed=*/21);
    absl::StatusOr<std::string> version =
        testing_util::PublishSynthetic(dir_.path(), s_, {}, /*content_hash=*/5);
    ASSERT_TRUE(version.ok()) << version.status();
    for (size_t p = 0; p < s_.pairs.num_pairs(); ++p) {
      stored_[{s_.pairs.user_ids[s_.pairs.pair_user[p]],
               s_.pairs.item_ids[s_.pairs.pair_item[p]]}] = s_.result.rate[p];
    }
    for (size_t k = 0; k < s_.result.nodes.ids.size(); ++k) {
      node_[{s_.result.nodes.is_item[k] != 0, s_.result.nodes.ids[k]}] = k;
    }
    // Every user with every item (stored and unseen), then unknown nodes.
    for (uint64_t u : s_.pairs.user_ids) {
      for (uint64_t i : s_.pairs.item_ids) {
        users_.push_back(u);
        items_.push_back(i);
      }
    }
    const uint64_t unknown = UnknownId();
    users_.push_back(unknown);
    items_.push_back(s_.pairs.item_ids[0]);
    users_.push_back(s_.pairs.user_ids[0]);
    items_.push_back(unknown);
    users_.push_back(unknown);
    items_.push_back(unknown);
  }

  uint64_t UnknownId() const {
    uint64_t id = 1;
    while (node_.count({false, id}) || node_.count({true, id})) ++id;
    return id;
  }

  NodeView View(bool is_item, uint64_t id) const {
    const size_t k = node_.at({is_item, id});
    return NodeView{s_.result.nodes.records[k], s_.result.nodes.SketchRow(k)};
  }

  std::shared_ptr<const SnapshotReader> Open(LookupMode mode) const {
    SnapshotReaderOptions options;
    options.lookup = mode;
    auto reader = VersionOpener().OpenStored(dir_.path(), s_.info.version, options);
    EXPECT_TRUE(reader.ok()) << reader.status();
    return reader.ok() ? *reader : nullptr;
  }

  ScopedTempDir dir_;
  Synthetic s_;
  std::map<std::pair<uint64_t, uint64_t>, float> stored_;
  std::map<std::pair<bool, uint64_t>, size_t> node_;
  std::vector<uint64_t> users_, items_;
};

TEST_F(BatchScorerTest, ExactInferredDefaultInBothLookupModes) {
  const size_t n = users_.size();
  const BatchScorer scorer(DefaultPolicy(), /*chunk_pairs=*/97);
  std::vector<std::vector<float>> rates_by_mode;
  std::vector<std::vector<RateSource>> sources_by_mode;
  for (LookupMode mode : {LookupMode::kMemory, LookupMode::kRocksDb}) {
    auto reader = Open(mode);
    ASSERT_NE(reader, nullptr);
    std::vector<float> rates(n, -1.0f);
    std::vector<RateSource> sources(n);
    SourceCounts counts;
    ASSERT_TRUE(scorer
                    .Score(*reader, users_, items_, /*should_stop=*/{}, absl::MakeSpan(rates),
                           absl::MakeSpan(sources), &counts)
                    .ok());
    for (size_t k = 0; k < n; ++k) {
      auto it = stored_.find({users_[k], items_[k]});
      const bool u_known = node_.count({false, users_[k]}) != 0;
      const bool v_known = node_.count({true, items_[k]}) != 0;
      if (it != stored_.end()) {
        ASSERT_EQ(sources[k], RateSource::kExact) << k;
        ASSERT_EQ(rates[k], it->second) << k;
      } else if (u_known && v_known) {
        ASSERT_EQ(sources[k], RateSource::kInferred) << k;
        ASSERT_EQ(rates[k],
                  ScoreUnseenPair(View(false, users_[k]), View(true, items_[k]), s_.result.model))
            << k;
      } else {
        ASSERT_EQ(sources[k], RateSource::kDefault) << k;
        const NodeRecord* user =
            u_known ? &s_.result.nodes.records[node_[{false, users_[k]}]] : nullptr;
        const NodeRecord* item =
            v_known ? &s_.result.nodes.records[node_[{true, items_[k]}]] : nullptr;
        ASSERT_EQ(rates[k],
                  static_cast<float>(DefaultPolicy().Rate(reader->model().alpha, user, item)))
            << k;
      }
    }
    EXPECT_EQ(counts.exact, stored_.size());
    EXPECT_EQ(counts.by_default, 3u);
    EXPECT_EQ(counts.exact + counts.inferred + counts.by_default, n);
    rates_by_mode.push_back(rates);
    sources_by_mode.push_back(sources);
  }
  EXPECT_EQ(rates_by_mode[0], rates_by_mode[1]) << "memory and rocksdb lookups must agree";
  EXPECT_EQ(sources_by_mode[0], sources_by_mode[1]);
}

TEST_F(BatchScorerTest, ShouldStopAbortsBetweenChunks) {
  auto reader = Open(LookupMode::kMemory);
  ASSERT_NE(reader, nullptr);
  const BatchScorer scorer(DefaultPolicy(), /*chunk_pairs=*/100);
  const size_t n = users_.size();
  std::vector<float> rates(n);
  std::vector<RateSource> sources(n);
  int calls = 0;
  absl::Status st = scorer.Score(
      *reader, users_, items_,
      [&calls]() { return ++calls == 3 ? absl::CancelledError("stop here") : absl::OkStatus(); },
      absl::MakeSpan(rates), absl::MakeSpan(sources), nullptr);
  EXPECT_EQ(st.code(), absl::StatusCode::kCancelled) << st;
  EXPECT_EQ(calls, 3) << "asked between chunks, not before the first";
}

TEST_F(BatchScorerTest, AChunkSplitAcrossHelpersGivesTheSameAnswers) {
  const size_t n = users_.size();  // 2403 pairs: 19 blocks of 128
  BlockPool pool(/*helpers=*/1);
  BlockPoolTestAccess::SetHooks(pool, /*helper_before_claims=*/nullptr,
                                /*caller_waits_for_helper=*/true);
  const BatchScorer alone(DefaultPolicy(), /*chunk_pairs=*/4096);
  const BatchScorer split(DefaultPolicy(), /*chunk_pairs=*/4096, &pool);
  for (LookupMode mode : {LookupMode::kMemory, LookupMode::kRocksDb}) {
    auto reader = Open(mode);
    ASSERT_NE(reader, nullptr);
    std::vector<float> rates_alone(n, -1.0f), rates_split(n, -2.0f);
    std::vector<RateSource> sources_alone(n), sources_split(n);
    SourceCounts counts_alone, counts_split;
    ASSERT_TRUE(alone
                    .Score(*reader, users_, items_, {}, absl::MakeSpan(rates_alone),
                           absl::MakeSpan(sources_alone), &counts_alone)
                    .ok());
    const uint64_t helper_blocks = pool.helper_blocks();
    ASSERT_TRUE(split
                    .Score(*reader, users_, items_, {}, absl::MakeSpan(rates_split),
                           absl::MakeSpan(sources_split), &counts_split)
                    .ok());
    EXPECT_GT(pool.helper_blocks(), helper_blocks) << "the helper scored no block";
    EXPECT_EQ(rates_split, rates_alone);
    EXPECT_EQ(sources_split, sources_alone);
    EXPECT_EQ(counts_split.exact, counts_alone.exact);
    EXPECT_EQ(counts_split.inferred, counts_alone.inferred);
    EXPECT_EQ(counts_split.by_default, counts_alone.by_default);
    EXPECT_EQ(counts_alone.on_helpers, 0u);
    EXPECT_GT(counts_split.on_helpers, 0u);
    EXPECT_LE(counts_split.on_helpers, n);
  }
}

}  // namespace
}  // namespace graphsieve

#include "server/batch_scorer.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/io/ids.h"
#include "core/maec/unseen.h"
#include "graphsieve/v1/sampling.pb.h"

namespace graphsieve {
namespace {

// Nodes looked up while scoring one batch: each id is read from the snapshot
// at most once per batch, however often it repeats.
class NodeCache {
 public:
  NodeCache(const SnapshotReader& snapshot, bool is_item)
      : snapshot_(snapshot), is_item_(is_item), dim_(snapshot.model().sketch_dim) {}

  // Returns the node's index in this cache, or -1 when the snapshot does not know it.
  int Find(uint64_t id) {
    auto [it, inserted] = index_.try_emplace(id, -1);
    if (!inserted) return it->second;
    NodeRecord record;
    const size_t offset = sketch_.size();
    sketch_.resize(offset + static_cast<size_t>(dim_));
    absl::Span<float> row(sketch_.data() + offset, static_cast<size_t>(dim_));
    const bool known =
        is_item_ ? snapshot_.LookupItem(id, &record, row) : snapshot_.LookupUser(id, &record, row);
    if (!known) {
      sketch_.resize(offset);
      return -1;
    }
    it->second = static_cast<int>(records_.size());
    records_.push_back(record);
    offsets_.push_back(offset);
    return it->second;
  }

  const NodeRecord& record(int i) const { return records_[i]; }
  // Valid until the next Find().
  NodeView view(int i) const {
    return NodeView{records_[i],
                    absl::MakeConstSpan(sketch_.data() + offsets_[i], static_cast<size_t>(dim_))};
  }

 private:
  const SnapshotReader& snapshot_;
  const bool is_item_;
  const int dim_;
  absl::flat_hash_map<uint64_t, int> index_;
  std::vector<NodeRecord> records_;
  std::vector<size_t> offsets_;
  std::vector<float> sketch_;
};

}  // namespace

BatchScorer::BatchScorer(DefaultPolicy policy, int chunk_pairs)
    : policy_(policy), chunk_pairs_(std::max(1, chunk_pairs)) {}

double BatchScorer::DefaultRate(const SnapshotReader& snapshot, const NodeRecord* user,
                                const NodeRecord* item) const {
  const double alpha = snapshot.model().alpha;
  switch (policy_.kind) {
    case DefaultPolicy::Kind::kFixed:
      return policy_.fixed_rate;
    case DefaultPolicy::Kind::kAlpha:
      return alpha;
    case DefaultPolicy::Kind::kNodeMean:
      // A node without negatives has no mean rate (stored as 0): fall through to alpha.
      if (user != nullptr && user->mean_rate > 0.0f) return user->mean_rate;
      if (item != nullptr && item->mean_rate > 0.0f) return item->mean_rate;
      return alpha;
  }
  return alpha;
}

absl::Status BatchScorer::Score(const SnapshotReader& snapshot, absl::Span<const uint64_t> users,
                                absl::Span<const uint64_t> items,
                                const std::function<absl::Status()>& should_stop,
                                absl::Span<float> rates, absl::Span<int> sources,
                                SourceCounts* counts) const {
  const size_t n = users.size();
  std::unique_ptr<bool[]> found(new bool[std::min(n, static_cast<size_t>(chunk_pairs_))]);
  std::unique_ptr<NodeCache> user_cache, item_cache;  // built on the first unseen pair
  SourceCounts local;
  for (size_t begin = 0; begin < n; begin += static_cast<size_t>(chunk_pairs_)) {
    if (begin > 0 && should_stop) {
      absl::Status stop = should_stop();
      if (!stop.ok()) return stop;
    }
    const size_t len = std::min(n - begin, static_cast<size_t>(chunk_pairs_));
    absl::Span<bool> found_chunk(found.get(), len);
    absl::Status st = snapshot.LookupPairs(users.subspan(begin, len), items.subspan(begin, len),
                                           found_chunk, rates.subspan(begin, len));
    if (!st.ok()) return st;
    for (size_t j = 0; j < len; ++j) {
      const size_t i = begin + j;
      if (found_chunk[j]) {
        sources[i] = v1::RATE_SOURCE_EXACT;
        ++local.exact;
        continue;
      }
      if (!user_cache) {
        user_cache = std::make_unique<NodeCache>(snapshot, /*is_item=*/false);
        item_cache = std::make_unique<NodeCache>(snapshot, /*is_item=*/true);
      }
      const int u = user_cache->Find(users[i]);
      const int v = item_cache->Find(items[i]);
      if (u >= 0 && v >= 0) {
        rates[i] = ScoreUnseenPair(user_cache->view(u), item_cache->view(v), snapshot.model());
        sources[i] = v1::RATE_SOURCE_INFERRED;
        ++local.inferred;
      } else {
        rates[i] =
            static_cast<float>(DefaultRate(snapshot, u >= 0 ? &user_cache->record(u) : nullptr,
                                           v >= 0 ? &item_cache->record(v) : nullptr));
        sources[i] = v1::RATE_SOURCE_DEFAULT;
        ++local.by_default;
      }
    }
  }
  if (counts != nullptr) *counts = local;
  return absl::OkStatus();
}

void BatchScorer::Decide(absl::Span<const float> rates, absl::Span<const bool> labels,
                         absl::Span<const uint64_t> instance_keys, uint64_t seed,
                         absl::Span<bool> keep, absl::Span<float> log_odds_offsets) {
  for (size_t i = 0; i < rates.size(); ++i) {
    if (labels[i]) {
      keep[i] = true;
      log_odds_offsets[i] = 0.0f;
    } else {
      keep[i] = KeepNegative(instance_keys[i], seed, rates[i]);
      log_odds_offsets[i] = std::log(rates[i]);
    }
  }
}

}  // namespace graphsieve

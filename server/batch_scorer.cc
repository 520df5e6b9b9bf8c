#include "server/batch_scorer.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "core/io/ids.h"
#include "core/maec/unseen.h"
#include "core/snapshot/memory_index.h"
#include "graphsieve/v1/sampling.pb.h"
#include "server/node_cache.h"

namespace graphsieve {
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

absl::Status BatchScorer::Score(const SnapshotReader& snapshot, const NodeCache* nodes,
                                absl::Span<const uint64_t> users, absl::Span<const uint64_t> items,
                                const std::function<absl::Status()>& should_stop,
                                absl::Span<float> rates, absl::Span<int> sources,
                                SourceCounts* counts) const {
  const size_t n = users.size();
  std::unique_ptr<bool[]> found(new bool[std::min(n, static_cast<size_t>(chunk_pairs_))]);
  std::unique_ptr<NodeCache> batch_nodes;  // only without a shared cache, on the first unseen pair
  SourceCounts local;
  // In-memory snapshots answer node lookups without I/O or locks.
  const MemoryIndex* index = snapshot.memory_index();
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
      NodeView u, v;
      bool u_known, v_known;
      if (index != nullptr) {
        u_known = index->FindNode(/*is_item=*/false, users[i], &u);
        v_known = index->FindNode(/*is_item=*/true, items[i], &v);
      } else {
        if (nodes == nullptr) {
          batch_nodes = std::make_unique<NodeCache>(snapshot);
          nodes = batch_nodes.get();
        }
        const CachedNode* cu = nodes->Find(/*is_item=*/false, users[i]);
        const CachedNode* cv = nodes->Find(/*is_item=*/true, items[i]);
        u_known = cu != nullptr;
        v_known = cv != nullptr;
        if (u_known) u = cu->view();
        if (v_known) v = cv->view();
      }
      if (u_known && v_known) {
        rates[i] = ScoreUnseenPair(u, v, snapshot.model());
        sources[i] = v1::RATE_SOURCE_INFERRED;
        ++local.inferred;
      } else {
        rates[i] = static_cast<float>(DefaultRate(snapshot, u_known ? &u.record : nullptr,
                                                  v_known ? &v.record : nullptr));
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
    // The log-odds correction depends on the pair's rate, not the label:
    // positives carry log(pi) too (DESIGN §2 item 9).
    keep[i] = labels[i] || KeepNegative(instance_keys[i], seed, rates[i]);
    log_odds_offsets[i] = std::log(rates[i]);
  }
}

}  // namespace graphsieve

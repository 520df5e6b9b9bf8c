#include "core/serving/batch_scorer.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "core/io/partition.h"
#include "core/model/unseen.h"
#include "core/serving/block_pool.h"

namespace graphsieve {

absl::Status CheckPartition(const ManifestSummary& manifest, absl::Span<const uint64_t> users) {
  const uint32_t parts = manifest.num_partitions;
  if (parts <= 1) return absl::OkStatus();
  uint64_t last = 0;
  bool have_last = false;
  for (uint64_t user : users) {
    if (have_last && user == last) continue;
    const uint32_t p = PartitionOfUser(user, parts);
    if (p != manifest.partition) {
      return absl::FailedPreconditionError(absl::StrCat(
          "user ", user, " belongs to partition ", p, " of ", parts,
          "; this server holds partition ", manifest.partition, " of version ", manifest.version,
          " (route by core/io/partition.h, e.g. graphsieve --server HOST:PORT,HOST:PORT)"));
    }
    last = user;
    have_last = true;
  }
  return absl::OkStatus();
}

namespace {

// Pairs a helper of the pool claims at a time: four of LookupPairs' rounds.
constexpr size_t kBlockPairs = 128;

struct BlockResult {
  SourceCounts counts;
  absl::Status status;
};

void Add(const SourceCounts& from, SourceCounts* to) {
  to->exact += from.exact;
  to->inferred += from.inferred;
  to->by_default += from.by_default;
  to->on_helpers += from.on_helpers;
}

}  // namespace

BatchScorer::BatchScorer(DefaultPolicy policy, int chunk_pairs, BlockPool* pool)
    : policy_(policy), chunk_pairs_(std::max(1, chunk_pairs)), pool_(pool) {}

absl::Status BatchScorer::ScoreRange(const SnapshotReader& snapshot,
                                     absl::Span<const uint64_t> users,
                                     absl::Span<const uint64_t> items, absl::Span<float> rates,
                                     absl::Span<RateSource> sources, SourceCounts* counts) const {
  const size_t len = users.size();
  // The found flags and the misses: per-thread buffers, grown once, so a
  // call allocates nothing after a thread's first range of this size.
  thread_local std::unique_ptr<bool[]> found_buffer;
  thread_local size_t found_capacity = 0;
  if (found_capacity < len) {
    found_buffer.reset(new bool[len]);
    found_capacity = len;
  }
  absl::Span<bool> found(found_buffer.get(), len);
  thread_local std::vector<size_t> miss;  // the range's pairs the index does not hold
  if (miss.size() < len) miss.resize(len);
  auto score = [&](size_t i) {
    NodeView u, v;
    const bool u_known = snapshot.FindNode(/*is_item=*/false, users[i], &u);
    const bool v_known = snapshot.FindNode(/*is_item=*/true, items[i], &v);
    if (u_known && v_known) {
      rates[i] = ScoreUnseenPair(u, v, snapshot.model());
      sources[i] = RateSource::kInferred;
      ++counts->inferred;
    } else {
      rates[i] = static_cast<float>(
          policy_.Rate(snapshot.model(), u_known ? &u : nullptr, v_known ? &v : nullptr));
      sources[i] = RateSource::kDefault;
      ++counts->by_default;
    }
  };
  absl::Status st = snapshot.LookupPairs(users, items, found, rates);
  if (!st.ok()) return st;
  size_t misses = 0;
  for (size_t j = 0; j < len; ++j) {
    if (found[j]) {
      sources[j] = RateSource::kExact;
      ++counts->exact;
    } else {
      miss[misses++] = j;
    }
  }
  if (!snapshot.prefetches()) {
    for (size_t k = 0; k < misses; ++k) score(miss[k]);
    return absl::OkStatus();
  }
  // With the in-memory index, the misses (INFERRED or DEFAULT) are scored
  // in a software pipeline: miss k's id-map lines are requested kAhead
  // misses before its node rows, and those kAhead misses before it is
  // scored, so the node lines of about 2·kAhead misses are in flight while
  // one is scored (docs/SERVER.md, "Request path and the protocol's ceiling").
  constexpr size_t kAhead = 8;
  for (size_t t = 0; t < misses + 2 * kAhead; ++t) {
    if (t < misses) {
      snapshot.PrefetchNodes(SnapshotReader::PrefetchStage::kIds, users[miss[t]], items[miss[t]]);
    }
    if (t >= kAhead && t - kAhead < misses) {
      snapshot.PrefetchNodes(SnapshotReader::PrefetchStage::kRows, users[miss[t - kAhead]],
                             items[miss[t - kAhead]]);
    }
    if (t >= 2 * kAhead && t - 2 * kAhead < misses) score(miss[t - 2 * kAhead]);
  }
  return absl::OkStatus();
}

absl::Status BatchScorer::Score(const SnapshotReader& snapshot, absl::Span<const uint64_t> users,
                                absl::Span<const uint64_t> items,
                                const std::function<absl::Status()>& should_stop,
                                absl::Span<float> rates, absl::Span<RateSource> sources,
                                SourceCounts* counts) const {
  const size_t n = users.size();
  absl::Status owned = CheckPartition(snapshot.manifest(), users);
  if (!owned.ok()) return owned;
  // How many calls are being scored now: a chunk goes to the pool only when
  // this call is the only one (the other cores are then mostly idle).
  scoring_.fetch_add(1, std::memory_order_relaxed);
  const absl::Cleanup scored = [this] { scoring_.fetch_sub(1, std::memory_order_relaxed); };
  SourceCounts local;
  for (size_t begin = 0; begin < n; begin += static_cast<size_t>(chunk_pairs_)) {
    if (begin > 0 && should_stop) {
      absl::Status stop = should_stop();
      if (!stop.ok()) return stop;
    }
    const size_t len = std::min(n - begin, static_cast<size_t>(chunk_pairs_));
    const absl::Span<const uint64_t> chunk_users = users.subspan(begin, len);
    const absl::Span<const uint64_t> chunk_items = items.subspan(begin, len);
    const absl::Span<float> chunk_rates = rates.subspan(begin, len);
    const absl::Span<RateSource> chunk_sources = sources.subspan(begin, len);
    const size_t blocks = (len + kBlockPairs - 1) / kBlockPairs;
    if (pool_ != nullptr && blocks >= 2 && blocks <= 0xffff &&
        scoring_.load(std::memory_order_relaxed) == 1) {
      thread_local std::vector<BlockResult> results;  // grown once per thread
      if (results.size() < blocks) results.resize(blocks);
      BlockResult* result = results.data();
      const bool pooled =
          pool_->TryRun(static_cast<uint32_t>(blocks), [&](uint32_t b, bool on_helper) {
            const size_t first = b * kBlockPairs;
            const size_t m = std::min(kBlockPairs, len - first);
            result[b].counts = SourceCounts();
            result[b].counts.on_helpers = on_helper ? m : 0;
            result[b].status = ScoreRange(
                snapshot, chunk_users.subspan(first, m), chunk_items.subspan(first, m),
                chunk_rates.subspan(first, m), chunk_sources.subspan(first, m), &result[b].counts);
          });
      if (pooled) {
        for (size_t b = 0; b < blocks; ++b) {
          if (!result[b].status.ok()) return result[b].status;
          Add(result[b].counts, &local);
        }
        continue;
      }
    }
    absl::Status st =
        ScoreRange(snapshot, chunk_users, chunk_items, chunk_rates, chunk_sources, &local);
    if (!st.ok()) return st;
  }
  if (counts != nullptr) *counts = local;
  return absl::OkStatus();
}

}  // namespace graphsieve

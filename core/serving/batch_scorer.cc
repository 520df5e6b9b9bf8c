#include "core/serving/batch_scorer.h"

#include <algorithm>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/io/partition.h"
#include "core/maec/unseen.h"
#include "core/snapshot/memory_index.h"

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

BatchScorer::BatchScorer(DefaultPolicy policy, int chunk_pairs)
    : policy_(policy), chunk_pairs_(std::max(1, chunk_pairs)) {}

absl::Status BatchScorer::Score(const SnapshotReader& snapshot, absl::Span<const uint64_t> users,
                                absl::Span<const uint64_t> items,
                                const std::function<absl::Status()>& should_stop,
                                absl::Span<float> rates, absl::Span<RateSource> sources,
                                SourceCounts* counts) const {
  const size_t n = users.size();
  absl::Status owned = CheckPartition(snapshot.manifest(), users);
  if (!owned.ok()) return owned;
  // The chunk's found flags: a per-thread buffer, grown once, so a call
  // allocates nothing after a thread's first batch of this size.
  thread_local std::unique_ptr<bool[]> found_buffer;
  thread_local size_t found_capacity = 0;
  const size_t chunk = std::min(n, static_cast<size_t>(chunk_pairs_));
  if (found_capacity < chunk) {
    found_buffer.reset(new bool[chunk]);
    found_capacity = chunk;
  }
  bool* found = found_buffer.get();
  thread_local std::vector<size_t> miss;  // the chunk's pairs the index does not hold
  if (miss.size() < chunk) miss.resize(chunk);
  SourceCounts local;
  const MemoryIndex* index = snapshot.memory_index();
  auto score = [&](size_t i) {
    NodeView u, v;
    const bool u_known = snapshot.FindNode(/*is_item=*/false, users[i], &u);
    const bool v_known = snapshot.FindNode(/*is_item=*/true, items[i], &v);
    if (u_known && v_known) {
      rates[i] = ScoreUnseenPair(u, v, snapshot.model());
      sources[i] = RateSource::kInferred;
      ++local.inferred;
    } else {
      rates[i] = static_cast<float>(
          policy_.Rate(snapshot.model(), u_known ? &u : nullptr, v_known ? &v : nullptr));
      sources[i] = RateSource::kDefault;
      ++local.by_default;
    }
  };
  for (size_t begin = 0; begin < n; begin += static_cast<size_t>(chunk_pairs_)) {
    if (begin > 0 && should_stop) {
      absl::Status stop = should_stop();
      if (!stop.ok()) return stop;
    }
    const size_t len = std::min(n - begin, static_cast<size_t>(chunk_pairs_));
    absl::Span<bool> found_chunk(found, len);
    absl::Status st = snapshot.LookupPairs(users.subspan(begin, len), items.subspan(begin, len),
                                           found_chunk, rates.subspan(begin, len));
    if (!st.ok()) return st;
    size_t misses = 0;
    for (size_t j = 0; j < len; ++j) {
      if (found_chunk[j]) {
        sources[begin + j] = RateSource::kExact;
        ++local.exact;
      } else {
        miss[misses++] = begin + j;
      }
    }
    if (index == nullptr) {
      for (size_t k = 0; k < misses; ++k) score(miss[k]);
      continue;
    }
    // With the in-memory index, the misses (INFERRED or DEFAULT) are scored
    // in a software pipeline: miss k's id-map lines are requested kAhead
    // misses before its node rows, and those kAhead misses before it is
    // scored, so the node lines of about 2·kAhead misses are in flight while
    // one is scored (docs/SERVER.md, "Request path and the protocol's ceiling").
    constexpr size_t kAhead = 8;
    for (size_t t = 0; t < misses + 2 * kAhead; ++t) {
      if (t < misses) index->PrefetchNodeIds(users[miss[t]], items[miss[t]]);
      if (t >= kAhead && t - kAhead < misses) {
        index->PrefetchNodeRows(users[miss[t - kAhead]], items[miss[t - kAhead]]);
      }
      if (t >= 2 * kAhead && t - 2 * kAhead < misses) score(miss[t - 2 * kAhead]);
    }
  }
  if (counts != nullptr) *counts = local;
  return absl::OkStatus();
}

}  // namespace graphsieve

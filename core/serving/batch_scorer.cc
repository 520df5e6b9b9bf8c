#include "core/serving/batch_scorer.h"

#include <algorithm>
#include <memory>

#include "absl/strings/str_cat.h"
#include "core/io/partition.h"
#include "core/maec/unseen.h"

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
  std::unique_ptr<bool[]> found(new bool[std::min(n, static_cast<size_t>(chunk_pairs_))]);
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
        sources[i] = RateSource::kExact;
        ++local.exact;
        continue;
      }
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
    }
  }
  if (counts != nullptr) *counts = local;
  return absl::OkStatus();
}

}  // namespace graphsieve

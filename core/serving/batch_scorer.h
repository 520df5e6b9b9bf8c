// Rates for one batch of (user, item) pairs from one snapshot version: the
// request-path core of GetSamplingRate, free of gRPC and proto types so the
// server, the CLI's offline canary, the benchmark and the tests share it.
//
//   stored pair                      -> RateSource::kExact    (reader's batched LookupPairs)
//   unseen pair, both nodes known    -> RateSource::kInferred (ScoreUnseenPair,
//   core/model/unseen.h) user or item unknown             -> RateSource::kDefault  (DefaultPolicy,
//   default_policy.h)
//
// A call that is the only one being scored can hand blocks of 128 pairs to a
// BlockPool's helper threads (core/serving/block_pool.h); the answers are the
// same either way.
//
// Thread-safety: const after construction; Score() may run concurrently.
#ifndef GRAPHSIEVE_CORE_SERVING_BATCH_SCORER_H_
#define GRAPHSIEVE_CORE_SERVING_BATCH_SCORER_H_

#include <atomic>
#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/serving/default_policy.h"
#include "core/serving/rate_source.h"
#include "core/snapshot/snapshot_reader.h"

namespace graphsieve {

class BlockPool;

struct SourceCounts {
  uint64_t exact = 0;
  uint64_t inferred = 0;
  uint64_t by_default = 0;
  // Of all of them, the pairs a BlockPool helper scored (not the call's thread).
  uint64_t on_helpers = 0;
};

// OK when the reader's part owns every user (core/io/partition.h); else
// FAILED_PRECONDITION naming the first foreign user, its partition and this
// one. Unpartitioned versions own every user.
absl::Status CheckPartition(const ManifestSummary& manifest, absl::Span<const uint64_t> users);

class BatchScorer {
 public:
  // chunk_pairs < 1 is taken as 1. `pool` (optional, not owned, must outlive
  // the scorer): the helpers a lone call's chunks are split across.
  BatchScorer(DefaultPolicy policy, int chunk_pairs, BlockPool* pool = nullptr);

  // Fills rates[i] and sources[i] for every pair; FAILED_PRECONDITION
  // (CheckPartition) when a user belongs to another part. Between chunks of
  // chunk_pairs pairs it calls `should_stop` (may be empty); a non-OK status
  // from it aborts the batch and is returned as is. Nodes come from
  // SnapshotReader::FindNode, whatever the reader's lookup mode.
  // REQUIRES: users.size() == items.size() == rates.size() == sources.size().
  absl::Status Score(const SnapshotReader& snapshot, absl::Span<const uint64_t> users,
                     absl::Span<const uint64_t> items,
                     const std::function<absl::Status()>& should_stop, absl::Span<float> rates,
                     absl::Span<RateSource> sources, SourceCounts* counts) const;

 private:
  // Scores one range of pairs on this thread: the batched lookup, then the
  // pairs it does not hold. Adds to *counts.
  absl::Status ScoreRange(const SnapshotReader& snapshot, absl::Span<const uint64_t> users,
                          absl::Span<const uint64_t> items, absl::Span<float> rates,
                          absl::Span<RateSource> sources, SourceCounts* counts) const;

  // Constant after construction.
  const DefaultPolicy policy_;
  const int chunk_pairs_;
  BlockPool* const pool_;
  // Calls in Score() now.
  mutable std::atomic<int> scoring_{0};
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SERVING_BATCH_SCORER_H_

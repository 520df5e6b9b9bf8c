// Rates for one batch of (user, item) pairs from one snapshot version: the
// request-path core of GetSamplingRate, free of gRPC types so the benchmark
// and the tests can call it in-process too.
//
//   stored pair                      -> RATE_SOURCE_EXACT    (reader's batched LookupPairs)
//   unseen pair, both nodes known    -> RATE_SOURCE_INFERRED (ScoreUnseenPair, core/maec/unseen.h)
//   user or item unknown             -> RATE_SOURCE_DEFAULT  (DefaultPolicy, options.h)
//
// Thread-safety: const after construction; Score() may run concurrently.
#ifndef GRAPHSIEVE_SERVER_BATCH_SCORER_H_
#define GRAPHSIEVE_SERVER_BATCH_SCORER_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/snapshot/snapshot_reader.h"
#include "server/node_cache.h"
#include "server/options.h"

namespace graphsieve {

struct SourceCounts {
  uint64_t exact = 0;
  uint64_t inferred = 0;
  uint64_t by_default = 0;
};

class BatchScorer {
 public:
  // REQUIRES: chunk_pairs >= 1.
  BatchScorer(DefaultPolicy policy, int chunk_pairs);

  // Fills rates[i] and sources[i] (graphsieve::v1::RateSource values) for every
  // pair. Between chunks of chunk_pairs pairs it calls `should_stop` (may be
  // empty); a non-OK status from it aborts the batch and is returned as is.
  // REQUIRES: users.size() == items.size() == rates.size() == sources.size().
  // `nodes` caches the snapshot's nodes across batches (node_cache.h); null =
  // a cache for this batch only. Unused when the snapshot has an in-memory
  // index (SnapshotReader::memory_index()), which holds every node.
  absl::Status Score(const SnapshotReader& snapshot, const NodeCache* nodes,
                     absl::Span<const uint64_t> users, absl::Span<const uint64_t> items,
                     const std::function<absl::Status()>& should_stop, absl::Span<float> rates,
                     absl::Span<int> sources, SourceCounts* counts) const;

  // Keep decisions and log-odds offsets: positives are always kept, a negative
  // when KeepNegative(key, seed, rate); every impression carries log(rate), the
  // log-odds correction of its pair (it depends on the pair, not the label).
  // REQUIRES: all spans have the same size.
  static void Decide(absl::Span<const float> rates, absl::Span<const bool> labels,
                     absl::Span<const uint64_t> instance_keys, uint64_t seed, absl::Span<bool> keep,
                     absl::Span<float> log_odds_offsets);

  // The DEFAULT rate given what is known about the two nodes (nullptr = unknown).
  double DefaultRate(const SnapshotReader& snapshot, const NodeRecord* user,
                     const NodeRecord* item) const;

  const DefaultPolicy& policy() const { return policy_; }

 private:
  // Constant after construction.
  const DefaultPolicy policy_;
  const int chunk_pairs_;
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_BATCH_SCORER_H_

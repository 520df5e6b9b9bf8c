// Rates for one batch of (user, item) pairs from one snapshot version: the
// request-path core of GetSamplingRate, free of gRPC and proto types so the
// server, the CLI's offline canary, the benchmark and the tests share it.
//
//   stored pair                      -> RateSource::kExact    (reader's batched LookupPairs)
//   unseen pair, both nodes known    -> RateSource::kInferred (ScoreUnseenPair, core/maec/unseen.h)
//   user or item unknown             -> RateSource::kDefault  (DefaultPolicy, default_policy.h)
//
// Thread-safety: const after construction; Score() may run concurrently.
#ifndef GRAPHSIEVE_CORE_SERVING_BATCH_SCORER_H_
#define GRAPHSIEVE_CORE_SERVING_BATCH_SCORER_H_

#include <cstdint>
#include <functional>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/serving/default_policy.h"
#include "core/serving/rate_source.h"
#include "core/snapshot/snapshot_reader.h"

namespace graphsieve {

struct SourceCounts {
  uint64_t exact = 0;
  uint64_t inferred = 0;
  uint64_t by_default = 0;
};

// OK when the reader's part owns every user (core/io/partition.h); else
// FAILED_PRECONDITION naming the first foreign user, its partition and this
// one. Unpartitioned versions own every user.
absl::Status CheckPartition(const ManifestSummary& manifest, absl::Span<const uint64_t> users);

class BatchScorer {
 public:
  // chunk_pairs < 1 is taken as 1.
  BatchScorer(DefaultPolicy policy, int chunk_pairs);

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
  // Constant after construction.
  const DefaultPolicy policy_;
  const int chunk_pairs_;
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SERVING_BATCH_SCORER_H_

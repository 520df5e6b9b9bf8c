// Offline access to one snapshot's rates for `graphsieve canary
// --baseline-snapshot/--candidate-snapshot`: the same answers a
// graphsieve-server on that version would give (the same request-path core,
// core/serving/batch_scorer.h: EXACT lookups, INFERRED from the node data,
// DEFAULT policy), without a server. A version is opened as the server opens
// it (VersionOpener::Open, core/snapshot/version_opener.h; this object owns
// the opener of its versions): a delta
// version layered over its base, so comparing a base with a delta over it
// shows what the delta changes. A partitioned version (docs/SNAPSHOT.md
// "Partitioned versions") is opened part by part and each pair scored by the
// part of its user (core/io/partition.h), as the routing clients do.
//
// Thread-safety: const methods may run concurrently (SnapshotReader is thread-safe).
#ifndef GRAPHSIEVE_CLIENT_SNAPSHOT_RATES_H_
#define GRAPHSIEVE_CLIENT_SNAPSHOT_RATES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/serving/batch_scorer.h"
#include "core/serving/default_policy.h"
#include "core/snapshot/snapshot_reader.h"
#include "core/snapshot/version_opener.h"

namespace graphsieve {

// Splits "ROOT" (its CURRENT version, read by SnapshotStore::ReadCurrent with
// its version-id checks) or "ROOT/VERSION" (a directory with a MANIFEST.json)
// into root and version. Errors name `flag` and the path.
absl::StatusOr<std::pair<std::string, std::string>> ResolveSnapshotPath(const std::string& path,
                                                                        const char* flag);

class SnapshotRates {
 public:
  // Opens and verifies the snapshot (checksums included; a delta's base too).
  static absl::StatusOr<std::unique_ptr<SnapshotRates>> Open(const std::string& path,
                                                             const char* flag,
                                                             const DefaultPolicy& policy);

  const std::string& version() const { return version_; }
  // Part 0's manifest for a partitioned version (the version's parameters);
  // a delta's own manifest (base_version names its base).
  const ManifestSummary& manifest() const { return readers_[0]->manifest(); }

  // Rates and sources (v1::RateSource numbers, as a server's answers carry)
  // for the pairs.
  // REQUIRES: all spans have the same size.
  absl::Status Score(absl::Span<const uint64_t> users, absl::Span<const uint64_t> items,
                     absl::Span<float> rates, absl::Span<int> sources) const;

  // Appends every stored pair (key order).
  absl::Status AppendStoredPairs(std::vector<std::pair<uint64_t, uint64_t>>* pairs) const;

 private:
  SnapshotRates(std::unique_ptr<VersionOpener> opener,
                std::vector<std::shared_ptr<const SnapshotReader>> readers, std::string version,
                const DefaultPolicy& policy)
      : opener_(std::move(opener)),
        readers_(std::move(readers)),
        version_(std::move(version)),
        scorer_(policy, 4096) {}

  // Constant after construction.
  const std::unique_ptr<VersionOpener> opener_;                       // opened readers_
  const std::vector<std::shared_ptr<const SnapshotReader>> readers_;  // one per part
  const std::string version_;
  const BatchScorer scorer_;
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CLIENT_SNAPSHOT_RATES_H_

// A delta version served over its base as one version (docs/SNAPSHOT.md
// "Delta versions"): the delta's pairs and nodes override the base's; every
// other lookup is answered by the base. The pair (base, delta) is one
// immutable reader, so a request that pins it sees both layers or neither.
//
// The base is opened once per process and shared: OpenServingVersion keeps a
// weak reference to every full version it opened (served alone or as a base),
// so a delta over a base that is served, or that an older delta's reader still
// holds, maps nothing again (the base's index stays one mapping however many
// deltas arrive, and the server keeps it resident across their swaps).
//
// Thread-safety: immutable after construction; lookups may run concurrently.
// OpenServingVersion is thread-safe.
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_LAYERED_SNAPSHOT_READER_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_LAYERED_SNAPSHOT_READER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "core/snapshot/snapshot_reader.h"

namespace graphsieve {

class LayeredSnapshotReader final : public SnapshotReader {
 public:
  // REQUIRES: delta->manifest().base_version == base->manifest().version.
  LayeredSnapshotReader(std::shared_ptr<const SnapshotReader> base,
                        std::shared_ptr<const SnapshotReader> delta);

  const SnapshotReader& base() const { return *base_; }
  const SnapshotReader& delta() const { return *delta_; }

  // The delta's manifest (its base_version names the base), load stats and
  // model (the base's constants: the delta build copies them).
  const ManifestSummary& manifest() const override { return delta_->manifest(); }
  const SnapshotLoadStats& load_stats() const override { return delta_->load_stats(); }
  const UnseenModel& model() const override { return delta_->model(); }
  // The delta first; the pairs it does not store from the base.
  absl::Status LookupPairs(absl::Span<const uint64_t> users, absl::Span<const uint64_t> items,
                           absl::Span<bool> found, absl::Span<float> rates) const override;
  bool FindNode(bool is_item, uint64_t id, NodeView* view) const override;
  bool LookupUser(uint64_t id, NodeRecord* record, absl::Span<float> sketch) const override;
  bool LookupItem(uint64_t id, NodeRecord* record, absl::Span<float> sketch) const override;
  // The base's index (the large one; its resident pages are what a swap releases).
  const MemoryIndex* memory_index() const override { return base_->memory_index(); }
  // The base's pairs the delta does not override, then the delta's (each part
  // in key order, not the whole).
  absl::Status ForEachPair(
      const std::function<void(uint64_t user, uint64_t item, float rate)>& fn) const override;

 private:
  const std::shared_ptr<const SnapshotReader> base_;  // constant after construction
  const std::shared_ptr<const SnapshotReader> delta_;
};

// Opens `version` under `root` for serving: a full version is
// SnapshotReader::Open; a delta version is opened and layered over its base
// (shared, see above). A partitioned delta is opened part by part: part
// `options.partition` of the delta over the same part of its base. Errors:
// Open's, for the delta and then for the base (the message names which);
// FAILED_PRECONDITION when the base is itself a delta, its version does not
// match, or the delta's part count is not its base's (naming both versions
// and both counts).
absl::StatusOr<std::shared_ptr<const SnapshotReader>> OpenServingVersion(
    const std::string& root, const std::string& version, const SnapshotReaderOptions& options);

// Pairs `reader` answers EXACT, for sizing a scan of ForEachPair: a full
// version's stored pairs; for a delta served over its base an upper bound,
// base + delta (the pairs the delta overrides count twice). The layered
// reader's manifest() is the delta's, whose `pairs` counts the delta alone.
uint64_t ServedPairsBound(const SnapshotReader& reader);

// Base readers OpenServingVersion holds alive through some layered reader
// (for tests and metrics).
int OpenSharedBases();

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_LAYERED_SNAPSHOT_READER_H_

// A delta version served over its base as one version (docs/SNAPSHOT.md
// "Delta versions"): the delta's pairs and nodes override the base's; every
// other lookup is answered by the base. The pair (base, delta) is one
// immutable reader, so a request that pins it sees both layers or neither.
//
// VersionOpener::Open (version_opener.h) builds it, sharing the base among
// the deltas over it.
//
// Thread-safety: immutable after construction; lookups may run concurrently.
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
  // The base's (most of a batch's nodes are the base's).
  bool prefetches() const override { return base_->prefetches(); }
  void PrefetchNodes(PrefetchStage stage, uint64_t user, uint64_t item) const override {
    base_->PrefetchNodes(stage, user, item);
  }
  // The base's pairs the delta does not override, then the delta's (each part
  // in key order, not the whole).
  absl::Status ForEachPair(
      const std::function<void(uint64_t user, uint64_t item, float rate)>& fn) const override;

 private:
  const std::shared_ptr<const SnapshotReader> base_;  // constant after construction
  const std::shared_ptr<const SnapshotReader> delta_;
};

// Pairs `reader` answers EXACT, for sizing a scan of ForEachPair: a full
// version's stored pairs; for a delta served over its base an upper bound,
// base + delta (the pairs the delta overrides count twice). The layered
// reader's manifest() is the delta's, whose `pairs` counts the delta alone.
uint64_t ServedPairsBound(const SnapshotReader& reader);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_LAYERED_SNAPSHOT_READER_H_

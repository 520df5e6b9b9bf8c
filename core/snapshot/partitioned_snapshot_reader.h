// A partitioned version read as one (docs/SNAPSHOT.md "Partitioned
// versions"): every part opened, a user's lookups and pairs answered by part
// PartitionOfUser(user, P) (core/io/partition.h), an item's by part 0 (every
// part holds every item's node). For a program that needs the whole version
// in one process — the delta build over a partitioned base computes its
// records once over the whole new log, as a partitioned full build computes
// once and splits — not for serving: a server serves one part.
//
// Thread-safety: immutable after construction; lookups may run concurrently.
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_PARTITIONED_SNAPSHOT_READER_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_PARTITIONED_SNAPSHOT_READER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/snapshot/snapshot_reader.h"

namespace graphsieve {

class SnapshotStore;  // snapshot_store.h

class PartitionedSnapshotReader final : public SnapshotReader {
 public:
  // The parts in order, as VersionOpener::OpenAllParts opened them
  // (version_opener.h). REQUIRES: at least two, all of one version.
  explicit PartitionedSnapshotReader(std::vector<std::shared_ptr<const SnapshotReader>> parts)
      : parts_(std::move(parts)) {}

  uint32_t num_parts() const { return static_cast<uint32_t>(parts_.size()); }
  const SnapshotReader& part(uint32_t p) const { return *parts_[p]; }

  // Part 0's: the version's id, parameters, delta object, part count and
  // model are every part's; its counts and load stats are part 0's alone.
  const ManifestSummary& manifest() const override { return parts_[0]->manifest(); }
  const SnapshotLoadStats& load_stats() const override { return parts_[0]->load_stats(); }
  const UnseenModel& model() const override { return parts_[0]->model(); }
  // Each pair asked of its user's part, answers in request order.
  absl::Status LookupPairs(absl::Span<const uint64_t> users, absl::Span<const uint64_t> items,
                           absl::Span<bool> found, absl::Span<float> rates) const override;
  bool FindNode(bool is_item, uint64_t id, NodeView* view) const override;
  bool LookupUser(uint64_t id, NodeRecord* record, absl::Span<float> sketch) const override;
  bool LookupItem(uint64_t id, NodeRecord* record, absl::Span<float> sketch) const override;
  // The parts' pairs one part after the other (each part in key order, not the whole).
  absl::Status ForEachPair(
      const std::function<void(uint64_t user, uint64_t item, float rate)>& fn) const override;

 private:
  const SnapshotReader& PartOfUser(uint64_t user) const;

  const std::vector<std::shared_ptr<const SnapshotReader>> parts_;  // constant after construction
};

// The manifest of a published version without opening it (no file is
// verified, nothing is mapped): of a partitioned version, part 0's (see
// manifest() above). Errors: PublishedPartDir's, DATA_LOSS naming the
// manifest (unreadable, not a manifest, another version's).
absl::StatusOr<ManifestSummary> ReadPublishedManifest(const SnapshotStore& store,
                                                      const std::string& version);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_PARTITIONED_SNAPSHOT_READER_H_

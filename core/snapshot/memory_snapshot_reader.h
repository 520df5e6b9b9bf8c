// Internal to graphsieve_snapshot: the LookupMode::kMemory reader
// (snapshot_reader.h). Pairs and nodes come from the version's serving index
// (memory_index.h) without I/O or locks: the index file mapped, or for a
// version without one the index built in memory by one scan of its RocksDB
// store, which the reader then keeps open for ForEachPair. A mapped reader
// keeps no RocksDB open: ForEachPair opens one for its scan and closes it at
// the end (an open RocksDB holds its table readers in anonymous memory, and
// a mapped version lives on as the active and then the held version,
// docs/SERVER.md "Memory across many swaps").
//
// Thread-safety: const after construction; lookups and scans may run
// concurrently.
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_MEMORY_SNAPSHOT_READER_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_MEMORY_SNAPSHOT_READER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/snapshot/memory_index.h"
#include "core/snapshot/rocksdb_snapshot_reader.h"
#include "core/snapshot/snapshot_reader_internal.h"

namespace graphsieve {
namespace snapshot_internal {

class MemorySnapshotReader final : public ReaderBase {
 public:
  // A mapped index file. REQUIRES: index != nullptr. `open_dbs`: the
  // opener's count of RocksDB instances, which ForEachPair's scan joins.
  MemorySnapshotReader(snapshot::ParsedManifest manifest, UnseenModel model, std::string dir,
                       SnapshotReaderOptions options, std::unique_ptr<const MemoryIndex> index,
                       std::shared_ptr<std::atomic<int64_t>> open_dbs);

  // Builds the index by one scan of `store` (its pairs and nodes tables, block
  // checksums verified) and keeps `store` for ForEachPair. DATA_LOSS naming
  // the version when the tables disagree with each other or the manifest.
  static absl::StatusOr<std::unique_ptr<MemorySnapshotReader>> BuildFrom(
      std::unique_ptr<const RocksDbSnapshotReader> store);

  absl::Status LookupPairs(absl::Span<const uint64_t> users, absl::Span<const uint64_t> items,
                           absl::Span<bool> found, absl::Span<float> rates) const override;
  bool FindNode(bool is_item, uint64_t id, NodeView* view) const override {
    return index_->FindNode(is_item, id, view);
  }
  bool LookupUser(uint64_t id, NodeRecord* record, absl::Span<float> sketch) const override {
    return LookupNode(false, id, record, sketch);
  }
  bool LookupItem(uint64_t id, NodeRecord* record, absl::Span<float> sketch) const override {
    return LookupNode(true, id, record, sketch);
  }
  bool prefetches() const override { return true; }
  void PrefetchNodes(PrefetchStage stage, uint64_t user, uint64_t item) const override {
    if (stage == PrefetchStage::kIds) {
      index_->PrefetchNodeIds(user, item);
    } else {
      index_->PrefetchNodeRows(user, item);
    }
  }
  const MemoryIndex& index() const { return *index_; }
  absl::Status ForEachPair(
      const std::function<void(uint64_t user, uint64_t item, float rate)>& fn) const override;

 private:
  MemorySnapshotReader(std::unique_ptr<const RocksDbSnapshotReader> store,
                       std::unique_ptr<const MemoryIndex> index);

  bool LookupNode(bool is_item, uint64_t id, NodeRecord* record, absl::Span<float> sketch) const;

  // Constant after construction.
  const std::unique_ptr<const MemoryIndex> index_;
  const std::unique_ptr<const RocksDbSnapshotReader> store_;  // null for a mapped index
  const std::shared_ptr<std::atomic<int64_t>> open_dbs_;      // a mapped index's scans
};

}  // namespace snapshot_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_MEMORY_SNAPSHOT_READER_H_

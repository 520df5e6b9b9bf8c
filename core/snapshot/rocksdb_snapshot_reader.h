// Internal to graphsieve_snapshot: the LookupMode::kRocksDb reader
// (snapshot_reader.h). Pairs by sorted MultiGet in chunks of 256, nodes by
// point reads through a NodeCache (node_cache.h), scans by iterators. Also
// the store of record under a MemorySnapshotReader: the index is built from
// its scans, and a mapped version opens one for each ForEachPair.
//
// Thread-safety: const after construction; lookups and scans may run
// concurrently (the node cache is thread-safe).
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_ROCKSDB_SNAPSHOT_READER_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_ROCKSDB_SNAPSHOT_READER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "core/snapshot/memory_index.h"
#include "core/snapshot/node_cache.h"
#include "core/snapshot/snapshot_reader_internal.h"

namespace graphsieve {
namespace snapshot_internal {

class RocksDbSnapshotReader final : public ReaderBase {
 public:
  // REQUIRES: db != nullptr.
  RocksDbSnapshotReader(snapshot::ParsedManifest manifest, UnseenModel model,
                        std::unique_ptr<OpenDb> db, std::string dir, SnapshotReaderOptions options);

  absl::Status LookupPairs(absl::Span<const uint64_t> users, absl::Span<const uint64_t> items,
                           absl::Span<bool> found, absl::Span<float> rates) const override;
  bool FindNode(bool is_item, uint64_t id, NodeView* view) const override;
  bool LookupUser(uint64_t id, NodeRecord* record, absl::Span<float> sketch) const override {
    return LookupNode(false, id, record, sketch);
  }
  bool LookupItem(uint64_t id, NodeRecord* record, absl::Span<float> sketch) const override {
    return LookupNode(true, id, record, sketch);
  }
  absl::Status ForEachPair(
      const std::function<void(uint64_t user, uint64_t item, float rate)>& fn) const override;

  // Iterates the nodes column family (decoded).
  absl::Status ForEachNode(const MemoryIndex::NodeSink& fn) const;

  // Reads every pairs and nodes entry once (fills the block cache / page cache).
  absl::Status Warm() const;

 private:
  bool LookupNode(bool is_item, uint64_t id, NodeRecord* record, absl::Span<float> sketch) const;

  // Constant after construction.
  const std::unique_ptr<OpenDb> db_;
  const std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // default, pairs, nodes, meta
  const std::unique_ptr<const NodeCache> nodes_;             // FindNode's cache
};

}  // namespace snapshot_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_ROCKSDB_SNAPSHOT_READER_H_

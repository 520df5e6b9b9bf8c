// Internal to graphsieve_snapshot: the reader behind SnapshotReader
// (snapshot_reader.h), shared by its open/verify path (snapshot_reader.cc)
// and its lookups and scans (snapshot_reader_lookup.cc). Not a public
// interface.
//
// Thread-safety: a SnapshotReaderImpl is mutated only while Open builds it;
// once returned, every lookup is const and may run concurrently.
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_READER_INTERNAL_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_READER_INTERNAL_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/snapshot/format.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/memory_index.h"
#include "core/snapshot/node_cache.h"
#include "core/snapshot/snapshot_reader.h"
#include "rocksdb/cache.h"
#include "rocksdb/db.h"

namespace graphsieve {
namespace snapshot_internal {

// RocksDB opened read-only over a version's db/ (column families default,
// pairs, nodes, meta); closed on destruction.
struct OpenDb {
  std::shared_ptr<rocksdb::Cache> cache;
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  ~OpenDb();  // snapshot_reader.cc: counts OpenRocksDbInstances() down
};

// Defined in snapshot_reader.cc.
absl::StatusOr<std::unique_ptr<OpenDb>> OpenRocksDb(const std::string& dir,
                                                    snapshot::TableFormat format,
                                                    const SnapshotReaderOptions& options);

// Lookups and scans are defined in snapshot_reader_lookup.cc.
class SnapshotReaderImpl final : public SnapshotReader {
 public:
  // `db` may be null for a mapped index: ForEachPair then opens RocksDB for
  // the scan and closes it at its end (the version profiler, tests, offline
  // tools), never the request path.
  SnapshotReaderImpl(snapshot::ParsedManifest manifest, UnseenModel model,
                     std::unique_ptr<OpenDb> db, std::string dir, SnapshotReaderOptions options)
      : parsed_(std::move(manifest)),
        model_(model),
        dir_(std::move(dir)),
        options_(options),
        owned_db_(std::move(db)),
        db_(owned_db_ ? owned_db_->db.get() : nullptr),
        handles_(owned_db_ ? owned_db_->handles : std::vector<rocksdb::ColumnFamilyHandle*>()) {}

  void SetIndex(std::unique_ptr<const MemoryIndex> index) { index_ = std::move(index); }

  const ManifestSummary& manifest() const override { return parsed_.summary; }
  const SnapshotLoadStats& load_stats() const override { return stats_; }
  SnapshotLoadStats* mutable_load_stats() { return &stats_; }
  const UnseenModel& model() const override { return model_; }

  const MemoryIndex* memory_index() const override { return index_.get(); }

  bool FindNode(bool is_item, uint64_t id, NodeView* view) const override;

  absl::Status LookupPairs(absl::Span<const uint64_t> users, absl::Span<const uint64_t> items,
                           absl::Span<bool> found, absl::Span<float> rates) const override;

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

  // LookupMode::kMemory: builds the index from the pairs and nodes tables.
  absl::Status BuildIndex();

  // LookupMode::kRocksDb: FindNode reads nodes through a cache.
  void CreateNodeCache() { nodes_ = std::make_unique<const NodeCache>(*this); }

  // Reads every pairs and nodes entry once (fills the block cache / page cache).
  absl::Status Warm() const;

 private:
  bool LookupNode(bool is_item, uint64_t id, NodeRecord* record, absl::Span<float> sketch) const;

  // A mapped reader's RocksDB side for one scan: a reader over the same
  // version in kRocksDb mode (Open digested its files; block checksums are
  // verified as ForEachPair reads). Not kept: an open RocksDB holds its table
  // readers (index and filter blocks) in anonymous memory, and a mapped
  // version lives on as the active and then the held version
  // (docs/SERVER.md "Memory across many swaps").
  absl::StatusOr<std::unique_ptr<const SnapshotReaderImpl>> OpenScanDb() const;

  // Constant after construction.
  const snapshot::ParsedManifest parsed_;
  const UnseenModel model_;
  const std::string dir_;
  const SnapshotReaderOptions options_;
  const std::unique_ptr<OpenDb> owned_db_;
  rocksdb::DB* const db_;  // null for a mapped index (ForEachPair opens one per scan)
  const std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // default, pairs, nodes, meta
  std::unique_ptr<const MemoryIndex> index_;                 // set once by BuildIndex() in Open
  std::unique_ptr<const NodeCache> nodes_;                   // kRocksDb: set once in Open
  SnapshotLoadStats stats_;                                  // set in Open
};

}  // namespace snapshot_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_READER_INTERNAL_H_

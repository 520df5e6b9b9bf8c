// Internal to graphsieve_snapshot: what the two readers behind
// SnapshotReader (snapshot_reader.h) share — the RocksDB handle over a
// version's db/ and the members every reader has (manifest, unseen model,
// load statistics). The readers themselves, one per lookup mode:
// memory_snapshot_reader.h (LookupMode::kMemory) and
// rocksdb_snapshot_reader.h (LookupMode::kRocksDb). Not a public interface.
//
// Thread-safety: a reader is mutated only while Open builds it; once
// returned, every lookup is const and may run concurrently.
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_READER_INTERNAL_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_READER_INTERNAL_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "core/snapshot/format.h"
#include "core/snapshot/manifest.h"
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
  // The opener's count of open instances (VersionOpener::OpenRocksDbInstances;
  // may be null: not counted), counted down on destruction.
  std::shared_ptr<std::atomic<int64_t>> open_dbs;
  ~OpenDb();  // rocksdb_snapshot_reader.cc
};

// Defined in rocksdb_snapshot_reader.cc. `open_dbs` (may be null) counts the
// instance while it is open. `scan_only`: for a reader that only iterates the
// pairs (snapshot::PairsCfOptions).
absl::StatusOr<std::unique_ptr<OpenDb>> OpenRocksDb(const std::string& dir,
                                                    snapshot::TableFormat format,
                                                    const SnapshotReaderOptions& options,
                                                    std::shared_ptr<std::atomic<int64_t>> open_dbs,
                                                    bool scan_only = false);

// The members and accessors both readers have. The opener
// (version_opener.h) sets the load statistics once, before the reader is
// shared.
class ReaderBase : public SnapshotReader {
 public:
  ReaderBase(snapshot::ParsedManifest manifest, UnseenModel model, std::string dir,
             SnapshotReaderOptions options)
      : parsed_(std::move(manifest)), model_(model), dir_(std::move(dir)), options_(options) {}

  const ManifestSummary& manifest() const final { return parsed_.summary; }
  const SnapshotLoadStats& load_stats() const final { return stats_; }
  const UnseenModel& model() const final { return model_; }
  SnapshotLoadStats* mutable_load_stats() { return &stats_; }

  const snapshot::ParsedManifest& parsed() const { return parsed_; }
  const std::string& dir() const { return dir_; }
  const SnapshotReaderOptions& options() const { return options_; }

 private:
  // Constant after construction.
  const snapshot::ParsedManifest parsed_;
  const UnseenModel model_;
  const std::string dir_;
  const SnapshotReaderOptions options_;
  SnapshotLoadStats stats_;  // set by the opener
};

// LookupPairs' argument check, the same in both lookup modes: the four spans
// must have one entry per pair.
inline absl::Status CheckLookupSpans(size_t users, size_t items, size_t found, size_t rates) {
  if (items == users && found == users && rates == users) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("LookupPairs: users has ", users,
                                                 " entries, items ", items, ", found ", found,
                                                 ", rates ", rates, "; all must match"));
}

}  // namespace snapshot_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_READER_INTERNAL_H_
